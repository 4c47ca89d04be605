/**
 * The drawing surface of the graph view: one laid-out scene drawn as SVG while it is
 * small and on a Canvas 2D once it has more than CANVAS_THRESHOLD elements (boxes,
 * eqns, ports and edges), plus pan/zoom, the minimap, selection / search / decoration
 * painting and click semantics that are the same in both renderers.
 *
 * The <svg> stays on top in both modes and receives every pointer event: in SVG mode
 * the clicked element says what was hit (classes from render.js); in canvas mode the
 * SVG is empty and `hitTest` (canvas.js) says it from the geometry. Either way the
 * view hears `onSelect(key|null)` and `onToggle(key)`.
 *
 * `.jm-canvas[data-renderer="svg"|"canvas"]` tells which renderer drew the scene.
 *
 * Embedding views (the grad view) add `mirrored` (draw right to left, mirror.js) and
 * paint `marks` (named highlights of elements and of the edges carrying given vars).
 * Playback (replay.js) reads the drawn elements (`drawing()`), draws its moving values
 * in the `flows` layer (over the edges, under the nodes) and hands the canvas renderer
 * its state (`setPlay`).
 */
import { h, s, clear } from "../ui/dom.js";
import { createPanZoom } from "../ui/panzoom.js";
import { placeScene } from "./place.js";
import { drawSvg } from "./render.js";
import { createCanvasRenderer } from "./canvas.js";
import { createMinimap } from "./minimap.js";
import { mirrorGeometry } from "./mirror.js";
import { BASE } from "./metrics.js";
import { frameDrawing } from "./framing.js";
import { paint, setDecorations, nothingPainted } from "./stage-paint.js";
import { bindPointer } from "./stage-pointer.js";
import { createProbe } from "./stage-probe.js";

/** More drawn elements than this: draw on a canvas instead of SVG. */
export const CANVAS_THRESHOLD = 1500;

/** The SVG (layers under a pan/zoom viewport, the arrow marker) and the canvas under it. */
function buildSurface(root, uid) {
  const layers = {
    boxes: s("g", { class: "jm-layer-boxes" }, null, root),
    edges: s("g", { class: "jm-layer-edges" }, null, root),
    flows: s("g", { class: "jm-layer-flows", "aria-hidden": "true" }, null, root),
    labels: s("g", { class: "jm-layer-labels" }, null, root),
    nodes: s("g", { class: "jm-layer-nodes" }, null, root),
  };
  const viewport = s("g", { class: "jm-viewport" }, Object.values(layers), root);
  const markerId = `${uid}-arrow`;
  const tip = s("title", null, "", root);
  const svg = s("svg", { class: "jm-svg", role: "img", "aria-label": "computation graph" }, [
    s("defs", null, s("marker", {
      id: markerId, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
    }, s("path", { d: "M0,1.5L9,5L0,8.5z", class: "jm-arrow" }, null, root), root), root),
    viewport,
  ], root);
  const gl = h("canvas", { class: "jm-gl", hidden: true, "aria-hidden": "true" }, null, root);
  return { layers, viewport, markerId, tip, svg, gl };
}

// ---- what the pane shows (framing.js), published for readers' tools and tests ----

const host = (surface) => surface.svg.parentNode;
/** Smallest label font size of the drawing at zoom 1. */
const labelPx = (surface) => (surface.geo && surface.geo.m ? surface.geo.m : BASE).F_TINY;
const size = (svg) => ({ w: svg.clientWidth || 0, h: svg.clientHeight || 0 });

/**
 * On the pane (.jm-canvas), from the geometry, so both renderers say the same:
 * `data-jm-text-px` (smallest label as drawn, CSS px) and `data-jm-drawing` ("x,y,w,h"
 * of the drawing's box relative to the pane at the current zoom).
 */
function publish(surface, t) {
  const el = host(surface), geo = surface.geo;
  if (!el || !geo) return;
  const b = geo.bbox, k = t.k, r = (v) => Math.round(v);
  el.setAttribute("data-jm-text-px", (labelPx(surface) * k).toFixed(1));
  el.setAttribute("data-jm-drawing", [t.x + b.x * k, t.y + b.y * k, b.w * k, b.h * k].map(r).join(","));
}

/**
 * Frame the drawing in the pane (framing.js frameDrawing; `o` its options but the
 * drawing box, pane width and label size, which come from here): size the pane with
 * `setHeight(px)`, zoom and pan, say "whole" or "part" (`data-jm-framed`), and show
 * the minimap for a part. Null before a drawing or while the pane has no width.
 */
function frame(surface, o, setHeight) {
  const w = surface.svg.clientWidth;
  if (!surface.geo || !w || !host(surface)) return null;
  const f = frameDrawing({ ...o, box: surface.geo.bbox, paneW: w, labelPx: labelPx(surface) });
  setHeight(f.paneHeight);
  host(surface).setAttribute("data-jm-framed", f.framed);
  surface.minimap.show(f.framed === "part");
  surface.pz.set(f.tx, f.ty, f.scale);
  return f;
}

/** Mark the element the story is about (`data-jm-key-element`, SVG renderer); null: none. */
function setKey(surface, key) {
  surface.keyKey = key;
  if (surface.keyEl) surface.keyEl.removeAttribute("data-jm-key-element");
  surface.keyEl = key && surface.mode === "svg" ? surface.elements.get(key) || null : null;
  if (surface.keyEl) surface.keyEl.setAttribute("data-jm-key-element", "");
}

/** The canvas renderer, made on first use; null while it cannot draw. */
function canvasRenderer(surface) {
  if (!surface.renderer && host(surface)) surface.renderer = createCanvasRenderer(surface.gl, host(surface));
  return surface.renderer && surface.renderer.ready ? surface.renderer : null;
}

// ---- drawing --------------------------------------------------------------------

/** Draw `geo` on the canvas renderer `r` (the SVG stays empty). */
function drawOnCanvas(surface, r) {
  surface.mode = "canvas";
  surface.elements = new Map();
  surface.edgeEls = [];
  surface.labelEls = [];
  surface.gl.hidden = false;
  r.setScene(surface.geo, surface.ix);
  r.setPlay(null); // a new drawing opens complete (a playback states its step again)
  r.setDecorations(surface.decorate);
  r.setView(surface.pz.transform);
}

/** Draw `geo` as SVG elements. */
function drawAsSvg(surface) {
  const { layers } = surface;
  surface.mode = "svg";
  surface.gl.hidden = true;
  if (surface.renderer) surface.renderer.clear();
  const out = {};
  surface.elements = drawSvg(layers, surface.geo, surface.ix, surface.markerId, out);
  surface.edgeEls = [...layers.edges.children];
  surface.labelEls = out.labels;
}

/** Draw a laid-out scene; returns {boxes, bbox, renderer, elements}. */
function draw(surface, scene, results, index) {
  surface.ix = index;
  let geo = placeScene(scene, results);
  if (surface.mirrored) geo = mirrorGeometry(geo);
  surface.geo = geo;
  for (const l of Object.values(surface.layers)) clear(l);
  surface.painted = nothingPainted();
  const n = geo.leaves.length + geo.conts.length + geo.edges.length;
  const r = n > CANVAS_THRESHOLD ? canvasRenderer(surface) : null;
  if (r) drawOnCanvas(surface, r);
  else drawAsSvg(surface);
  if (surface.tip.parentNode) surface.tip.remove();
  const el = host(surface);
  if (el) {
    el.setAttribute("data-renderer", surface.mode);
    el.setAttribute("data-draws", String(++surface.draws)); // tests wait on it
    el.jmProbe = surface.probe;
  }
  if (surface.mode === "svg" && surface.decorate) setDecorations(surface, surface.decorate); // new elements: fill them again
  const { w, h: hh } = size(surface.svg);
  surface.minimap.setScene(geo); // shown for a part (frame)
  surface.minimap.setView(surface.pz.transform, w, hh);
  surface.keyEl = null;
  setKey(surface, surface.keyKey && geo.boxes.has(surface.keyKey) ? surface.keyKey : null);
  return { boxes: geo.boxes, bbox: geo.bbox, renderer: surface.mode, elements: surface.elements };
}

/**
 * @param root  the widget root (owner document for new elements)
 * @param uid   page-unique id prefix (the SVG arrow marker id)
 * @param {object} on
 * @param on.onSelect  called with the key a click selects (null: the background)
 * @param on.onToggle  called with the key a click expands or collapses
 * @param [on.mirrored] flip the drawing left-right
 */
export function createStage(root, uid, { onSelect, onToggle, mirrored = false }) {
  /** The stage's state, shared with stage-paint.js, stage-pointer.js and stage-probe.js. */
  const surface = {
    ...buildSurface(root, uid), root, mirrored,
    mode: "svg", geo: null, ix: null, elements: new Map(), edgeEls: [], labelEls: [],
    renderer: null, decorate: null, painted: nothingPainted(), lastPaint: null, draws: 0,
    keyEl: null, keyKey: null, minimap: null, pz: null, probe: null,
  };
  const { svg, viewport } = surface;
  const pz = (surface.pz = createPanZoom(svg, viewport, {
    onChange: (t) => {
      if (surface.mode === "canvas" && surface.renderer) surface.renderer.setView(t);
      const { w, h: hh } = size(svg);
      if (surface.minimap) surface.minimap.setView(t, w, hh);
      publish(surface, t);
    },
  }));
  surface.minimap = createMinimap(svg, (wx, wy) => {
    const t = pz.transform, { w, h: hh } = size(svg);
    pz.set(w / 2 - wx * t.k, hh / 2 - wy * t.k, t.k);
  }, root);
  surface.probe = createProbe(surface);
  const unbindPointer = bindPointer(surface, { onSelect, onToggle });
  return stageApi(surface, unbindPointer);
}

/** What the view sees of the stage (view.js, replay.js, the grad view through the view). */
function stageApi(surface, unbindPointer) {
  const { svg, gl, minimap, pz, layers } = surface;
  const live = (mode) => surface.mode === mode && surface.renderer;
  return {
    svg,
    /** Elements for the graph area, in stacking order: canvas under svg; minimap on top. */
    els: [gl, svg, minimap.el],
    pz,
    draw: (scene, results, index) => draw(surface, scene, results, index),
    frame: (o, setHeight) => frame(surface, o, setHeight),
    setKey: (key) => setKey(surface, key),
    /** Publish the pane's text size and drawing box again (after the pane changed size). */
    publish: () => publish(surface, pz.transform),
    paint: (state) => paint(surface, state),
    /** Repaint with the last paint state (after a decoration or label change). */
    repaint: () => surface.lastPaint && paint(surface, surface.lastPaint),
    setDecorations: (fn) => setDecorations(surface, fn),
    get renderer() {
      return surface.mode;
    },
    /**
     * What the last draw drew, for playback: `{geo, index, renderer, conts, leaves, edges
     * (SVG elements, by index in geo.conts / geo.leaves / geo.edges: render.js draws one
     * each, in order), labels ([{el, key, sid}]), flows (the layer for moving values)}`;
     * element lists are empty on the canvas. Null before the first draw.
     */
    drawing: () => (surface.geo ? {
      geo: surface.geo, index: surface.ix, renderer: surface.mode, conts: [...layers.boxes.children], leaves: [...layers.nodes.children],
      edges: surface.edgeEls, labels: surface.labelEls, flows: layers.flows,
    } : null),
    /** Playback state for the canvas renderer (canvas.js drawFrame's `play`), or null. */
    setPlay: (play) => live("canvas") && surface.renderer.setPlay(play),
    /** Elements drawn for keys (SVG mode only; empty on canvas). */
    get elements() {
      return surface.elements;
    },
    /**
     * Run `fn(svg)` with the whole drawing in the SVG (for export): in canvas mode it is
     * drawn into the SVG for the call and removed after.
     */
    withSvg(fn) {
      if (surface.mode === "svg" || !surface.geo) return fn(svg);
      drawSvg(layers, surface.geo, surface.ix, surface.markerId);
      try {
        return fn(svg);
      } finally {
        for (const l of Object.values(layers)) clear(l);
      }
    },
    /** Draw the canvas now (before a screenshot / in tests). */
    flush: () => live("canvas") && surface.renderer.render(),
    dispose() {
      pz.dispose();
      minimap.dispose();
      unbindPointer();
    },
  };
}
