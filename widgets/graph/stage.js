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
import { visibleRep, srcText } from "./model.js";
import * as ids from "./ids.js";
import { placeScene } from "./place.js";
import { drawSvg } from "./render.js";
import { createCanvasRenderer } from "./canvas.js";
import { createMinimap } from "./minimap.js";
import { mirrorGeometry } from "./mirror.js";
import { badgeBox, BASE } from "./metrics.js";
import { frameDrawing } from "./framing.js";

/** More drawn elements than this: draw on a canvas instead of SVG. */
export const CANVAS_THRESHOLD = 1500;

/**
 * @param root  the widget root (owner document for new elements)
 * @param uid   page-unique id prefix (the SVG arrow marker id)
 * @param {object} on
 * @param on.onSelect  called with the key a click selects (null: the background)
 * @param on.onToggle  called with the key a click expands or collapses
 * @param [on.mirrored] flip the drawing left-right
 */
export function createStage(root, uid, { onSelect, onToggle, mirrored = false }) {
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
  const host = () => svg.parentNode;

  let mode = "svg";
  let geo = null, ix = null, elements = new Map(), edgeEls = [], labelEls = [];
  let renderer = null;
  let decorate = null;
  let painted = { sel: [], match: [], hl: [], fills: [], marks: [] };
  let lastPaint = null;
  let draws = 0;

  // ---- what the pane shows (framing.js), published for readers' tools and tests ----

  let keyEl = null, keyKey = null;
  /** Smallest label font size of the drawing at zoom 1. */
  const labelPx = () => (geo && geo.m ? geo.m : BASE).F_TINY;
  /**
   * On the pane (.jm-canvas), from the geometry, so both renderers say the same:
   * `data-jm-text-px` (smallest label as drawn, CSS px) and `data-jm-drawing` ("x,y,w,h"
   * of the drawing's box relative to the pane at the current zoom).
   */
  const publish = (t) => {
    const el = host();
    if (!el || !geo) return;
    const b = geo.bbox, k = t.k, r = (v) => Math.round(v);
    el.setAttribute("data-jm-text-px", (labelPx() * k).toFixed(1));
    el.setAttribute("data-jm-drawing", [t.x + b.x * k, t.y + b.y * k, b.w * k, b.h * k].map(r).join(","));
  };
  /**
   * Frame the drawing in the pane (framing.js frameDrawing; `o` its options but the
   * drawing box, pane width and label size, which come from here): size the pane with
   * `setHeight(px)`, zoom and pan, say "whole" or "part" (`data-jm-framed`), and show
   * the minimap for a part. Null before a drawing or while the pane has no width.
   */
  const frame = (o, setHeight) => {
    const w = svg.clientWidth;
    if (!geo || !w || !host()) return null;
    const f = frameDrawing({ ...o, box: geo.bbox, paneW: w, labelPx: labelPx() });
    setHeight(f.paneHeight);
    host().setAttribute("data-jm-framed", f.framed);
    minimap.show(f.framed === "part");
    pz.set(f.tx, f.ty, f.scale);
    return f;
  };
  /** Mark the element the story is about (`data-jm-key-element`, SVG renderer); null: none. */
  const setKey = (key) => {
    keyKey = key;
    if (keyEl) keyEl.removeAttribute("data-jm-key-element");
    keyEl = key && mode === "svg" ? elements.get(key) || null : null;
    if (keyEl) keyEl.setAttribute("data-jm-key-element", "");
  };

  const size = () => ({ w: svg.clientWidth || 0, h: svg.clientHeight || 0 });
  let minimap = null;
  const pz = createPanZoom(svg, viewport, {
    onChange: (t) => {
      if (mode === "canvas" && renderer) renderer.setView(t);
      const { w, h: hh } = size();
      if (minimap) minimap.setView(t, w, hh);
      publish(t);
    },
  });
  minimap = createMinimap(svg, (wx, wy) => {
    const t = pz.transform, { w, h: hh } = size();
    pz.set(w / 2 - wx * t.k, hh / 2 - wy * t.k, t.k);
  }, root);

  const canvasRenderer = () => {
    if (!renderer && host()) renderer = createCanvasRenderer(gl, host());
    return renderer && renderer.ready ? renderer : null;
  };

  // ---- drawing --------------------------------------------------------------------

  /** Draw a laid-out scene; returns {boxes, bbox, renderer, elements}. */
  const draw = (scene, results, index) => {
    ix = index;
    geo = placeScene(scene, results);
    if (mirrored) geo = mirrorGeometry(geo);
    for (const l of Object.values(layers)) clear(l);
    painted = { sel: [], match: [], hl: [], fills: [], marks: [] };
    const n = geo.leaves.length + geo.conts.length + geo.edges.length;
    const r = n > CANVAS_THRESHOLD ? canvasRenderer() : null;
    if (r) {
      mode = "canvas";
      elements = new Map();
      edgeEls = [];
      labelEls = [];
      gl.hidden = false;
      r.setScene(geo, ix);
      r.setPlay(null); // a new drawing opens complete (a playback states its step again)
      r.setDecorations(decorate);
      r.setView(pz.transform);
    } else {
      mode = "svg";
      gl.hidden = true;
      if (renderer) renderer.clear();
      const out = {};
      elements = drawSvg(layers, geo, ix, markerId, out);
      edgeEls = [...layers.edges.children];
      labelEls = out.labels;
    }
    if (tip.parentNode) tip.remove();
    if (host()) {
      host().setAttribute("data-renderer", mode);
      host().setAttribute("data-draws", String(++draws)); // tests wait on it
      host().jmProbe = probe;
    }
    if (mode === "svg" && decorate) setDecorations(decorate); // new elements: fill them again
    const { w, h: hh } = size();
    minimap.setScene(geo); // shown for a part (frame)
    minimap.setView(pz.transform, w, hh);
    keyEl = null;
    setKey(keyKey && geo.boxes.has(keyKey) ? keyKey : null);
    return { boxes: geo.boxes, bbox: geo.bbox, renderer: mode, elements };
  };

  // ---- painting ---------------------------------------------------------------------

  /**
   * Marks to paint: `marks` is a Map cls -> {keys, vars}; an element key stands for
   * its visible representative (a collapsed box hiding a marked node is marked), and
   * a drawn edge carrying one of `vars` is marked. Returns {leaves: Map rep -> [cls],
   * edges: Map edge index -> [cls]}.
   */
  const markedOf = (marks, pix, expanded) => {
    const leaves = new Map(), edges = new Map();
    const add = (m, k, cls) => (m.get(k) || m.set(k, []).get(k)).push(cls);
    for (const [cls, m] of marks || []) {
      for (const k of m.keys || []) add(leaves, visibleRep(pix, k, expanded), cls);
      const vars = m.vars && m.vars.size ? m.vars : null;
      if (vars) geo.edges.forEach((e, i) => e.vars.some((v) => vars.has(v)) && add(edges, i, cls));
    }
    return { leaves, edges };
  };

  /**
   * Paint selection (and the edges at it), search matches (a collapsed box hiding a
   * match is marked "has match"), marks and decorations, for the current expansion.
   */
  const paint = (state) => {
    lastPaint = state;
    if (!geo) return;
    const { selected, matches, expanded } = state;
    const pix = state.ix || ix;
    const rep = selected ? visibleRep(pix, selected, expanded) : null;
    const match = new Map();
    for (const k of matches || []) {
      const r = visibleRep(pix, k, expanded);
      if (match.get(r) !== "match") match.set(r, r === k ? "match" : "has");
    }
    const marked = markedOf(state.marks, pix, expanded);
    if (mode === "canvas") {
      const hl = new Set();
      if (rep) geo.edges.forEach((e, i) => (e.from === rep || e.to === rep) && hl.add(i));
      renderer.setPaint({ sel: rep, hl, match, marks: marked.leaves, markEdges: marked.edges });
      return;
    }
    for (const el of painted.sel) el.classList.remove("jm-selected");
    for (const el of painted.hl) el.classList.remove("jm-edge-hl");
    for (const el of painted.match) el.classList.remove("jm-match", "jm-has-match");
    for (const [el, cls] of painted.marks) el.classList.remove(...cls);
    painted.sel = [];
    painted.hl = [];
    painted.match = [];
    painted.marks = [];
    const markEl = (el, cls, base) => {
      if (!el) return;
      const all = [base, ...cls];
      el.classList.add(...all);
      painted.marks.push([el, all]);
    };
    for (const [k, cls] of marked.leaves) markEl(elements.get(k), cls, "jm-mark");
    for (const [i, cls] of marked.edges) markEl(edgeEls[i], cls, "jm-edge-mark");
    const el = rep && elements.get(rep);
    if (el) {
      el.classList.add("jm-selected");
      painted.sel.push(el);
    }
    if (rep) {
      for (const e of edgeEls) {
        if (e.getAttribute("data-from") === rep || e.getAttribute("data-to") === rep) {
          e.classList.add("jm-edge-hl");
          painted.hl.push(e);
        }
      }
    }
    for (const [k, how] of match) {
      const m = elements.get(k);
      if (!m) continue;
      m.classList.add(how === "match" ? "jm-match" : "jm-has-match");
      painted.match.push(m);
    }
  };

  /**
   * `fn(key) -> {fill?, stroke?, dash?, badge?} | null` decorates node boxes (cost
   * overlay, grad roles): fill and stroke colours, a dash pattern ("4,2"), and a short
   * badge text on the box's top-right corner; null = none.
   */
  const setDecorations = (fn) => {
    decorate = fn || null;
    if (mode === "canvas") return renderer && renderer.setDecorations(decorate);
    for (const x of painted.fills) {
      if (x.classList.contains("jm-badge")) x.remove();
      else for (const p of ["fill", "stroke", "stroke-dasharray"]) x.style.removeProperty(p);
    }
    painted.fills = [];
    if (!decorate || !geo) return;
    for (const l of geo.leaves) {
      const d = decorate(l.key);
      const el = d && elements.get(l.key);
      const box = el && el.querySelector(":scope > .jm-box");
      if (!box) continue;
      if (d.fill) box.style.fill = d.fill;
      if (d.stroke) box.style.stroke = d.stroke;
      if (d.dash) box.style.strokeDasharray = d.dash.replace(",", " ");
      painted.fills.push(box);
      if (d.badge) {
        const m = geo.m || BASE;
        const b = badgeBox(d.badge, l.w, m);
        const pill = s("rect", { width: b.w, height: b.h, rx: b.h / 2 }, null, root);
        if (d.stroke) pill.style.stroke = d.stroke;
        const g = s("g", { class: "jm-badge", transform: `translate(${b.x},${b.y})` }, [
          pill, s("text", { x: 5 * m.z, y: b.h - 3.5 * m.z }, d.badge, root),
        ], root);
        el.appendChild(g);
        painted.fills.push(g);
      }
    }
  };

  /**
   * Automation hook (bench/browser.py, browser tests), as `.jm-canvas`'s `jmProbe`:
   * `visible()` lists the drawn leaves in view, in client coordinates, with whether
   * each can open: the same in both renderers, so a test can click a canvas box.
   */
  const client = (l) => {
    const b = svg.getBoundingClientRect(), t = pz.transform;
    return { x: b.left + t.x + l.x * t.k, y: b.top + t.y + l.y * t.k, w: l.w * t.k, h: l.h * t.k };
  };
  const probe = {
    /** Drawn leaves in view: [{key, canOpen, x, y, w, h}] (client px). */
    visible() {
      if (!geo) return [];
      const b = svg.getBoundingClientRect();
      const out = [];
      for (const l of geo.leaves) {
        const r = client(l);
        if (r.x + r.w < b.left || r.y + r.h < b.top || r.x > b.right || r.y > b.bottom) continue;
        const canOpen = !l.open && !(l.face && l.face.title && l.face.title.startsWith("▾")) &&
          (ids.isMadeBox(l.key) || (ids.isNode(l.key) && ix.items.has(l.key)));
        out.push({ key: l.key, canOpen, ...r });
      }
      return out;
    },
    /** Open containers in view (not the root), innermost last: [{key, x, y, w, h}]. */
    open() {
      if (!geo) return [];
      const b = svg.getBoundingClientRect();
      return geo.conts.slice(1).map((c) => ({ key: c.key, ...client(c) }))
        .filter((r) => r.x < b.right && r.y < b.bottom && r.x + r.w > b.left && r.y + r.h > b.top);
    },
    /** Client box of a drawn leaf or open container, or null. */
    box: (key) => (geo && geo.boxes.has(key) ? client(geo.boxes.get(key)) : null),
    /** Keys of every drawn leaf, in view or not. */
    keys: () => (geo ? geo.leaves.map((l) => l.key) : []),
    /** Pan (zoom kept) so that drawn element `key` is in the middle, as a reader drags it there. */
    centre(key) {
      const b = geo && geo.boxes.get(key);
      if (b) pz.centerOn(b.x + Math.min(b.w, 360) / 2, b.y + Math.min(b.h, 42) / 2);
    },
  };

  // ---- clicks ---------------------------------------------------------------------

  const svgHit = (t) => {
    const keyOf = (el) => {
      if (el.hasAttribute("data-node-id")) return ids.node(el.getAttribute("data-node-id"));
      return el.getAttribute("data-scope-id") || el.getAttribute("data-box-id");
    };
    const mark = t.closest(".jm-toggle, .jm-scope-head, .jm-cbox-head, .jm-scope.jm-collapsed, .jm-cbox.jm-collapsed");
    if (mark) {
      const o = mark.closest("[data-node-id], [data-scope-id], [data-box-id]");
      return o ? { key: keyOf(o), part: "toggle" } : null;
    }
    const gh = t.closest(".jm-group-head");
    if (gh) return { key: ids.group(gh.parentNode.getAttribute("data-group-id")), part: "grouphead" };
    const node = t.closest(".jm-eqn");
    if (node) return { key: keyOf(node), part: "body" };
    const port = t.closest(".jm-port");
    if (port) return { key: port.getAttribute("data-port-id"), part: "body" };
    return null;
  };
  const hitOf = (e) => (mode === "canvas" ? renderer.hit(e.clientX, e.clientY) : svgHit(e.target));
  const onClick = (e) => {
    if (!geo) return;
    const hit = hitOf(e);
    if (!hit) return onSelect(null);
    if (hit.part === "toggle") return onToggle(hit.key);
    if (hit.part === "grouphead") {
      const owner = ix.parent.get(hit.key);
      return owner ? onToggle(owner) : undefined;
    }
    onSelect(hit.key);
  };
  const onDbl = (e) => {
    if (!geo) return;
    const hit = hitOf(e);
    if (hit && hit.part === "body" && ids.isNode(hit.key)) onToggle(hit.key);
  };
  // Canvas mode: the tooltip follows the element under the pointer.
  let hoverPending = false, lastEv = null;
  const onMove = (e) => {
    if (mode !== "canvas" || !geo) return;
    lastEv = e;
    if (hoverPending) return;
    hoverPending = true;
    svg.ownerDocument.defaultView.requestAnimationFrame(() => {
      hoverPending = false;
      const hit = lastEv && renderer.hit(lastEv.clientX, lastEv.clientY);
      const text = hit ? tipText(hit.key) : "";
      if (!text) {
        if (tip.parentNode) tip.remove();
        return;
      }
      tip.textContent = text;
      if (!tip.parentNode) svg.insertBefore(tip, svg.firstChild);
    });
  };
  const tipText = (key) => {
    const l = geo.boxes.get(key);
    const f = l && l.face;
    if (!f) return "";
    if (ids.isNode(key)) {
      const n = ix.nodes.get(ids.body(key));
      return [n.prim, srcText(n.src), n.src && n.src.code, f.tip].filter(Boolean).join("\n");
    }
    if (ids.isPort(key) || ids.isOutput(key)) return f.text;
    return f.tip ? f.tip + "\n— click to expand" : f.title || "";
  };
  svg.addEventListener("click", onClick);
  svg.addEventListener("dblclick", onDbl);
  svg.addEventListener("pointermove", onMove);

  return {
    svg,
    /** Elements for the graph area, in stacking order: canvas under svg; minimap on top. */
    els: [gl, svg, minimap.el],
    pz,
    draw,
    frame,
    setKey,
    /** Publish the pane's text size and drawing box again (after the pane changed size). */
    publish: () => publish(pz.transform),
    paint,
    /** Repaint with the last paint state (after a decoration or label change). */
    repaint: () => lastPaint && paint(lastPaint),
    setDecorations,
    get renderer() {
      return mode;
    },
    /**
     * What the last draw drew, for playback: `{geo, index, renderer, conts, leaves, edges
     * (SVG elements, by index in geo.conts / geo.leaves / geo.edges: render.js draws one
     * each, in order), labels ([{el, key, sid}]), flows (the layer for moving values)}`;
     * element lists are empty on the canvas. Null before the first draw.
     */
    drawing: () => (geo ? {
      geo, index: ix, renderer: mode, conts: [...layers.boxes.children], leaves: [...layers.nodes.children],
      edges: edgeEls, labels: labelEls, flows: layers.flows,
    } : null),
    /** Playback state for the canvas renderer (canvas.js drawFrame's `play`), or null. */
    setPlay: (play) => mode === "canvas" && renderer && renderer.setPlay(play),
    /** Elements drawn for keys (SVG mode only; empty on canvas). */
    get elements() {
      return elements;
    },
    /**
     * Run `fn(svg)` with the whole drawing in the SVG (for export): in canvas mode it is
     * drawn into the SVG for the call and removed after.
     */
    withSvg(fn) {
      if (mode === "svg" || !geo) return fn(svg);
      drawSvg(layers, geo, ix, markerId);
      try {
        return fn(svg);
      } finally {
        for (const l of Object.values(layers)) clear(l);
      }
    },
    /** Draw the canvas now (before a screenshot / in tests). */
    flush: () => mode === "canvas" && renderer && renderer.render(),
    dispose() {
      pz.dispose();
      minimap.dispose();
      svg.removeEventListener("click", onClick);
      svg.removeEventListener("dblclick", onDbl);
      svg.removeEventListener("pointermove", onMove);
    },
  };
}
