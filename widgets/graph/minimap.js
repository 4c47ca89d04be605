/**
 * Minimap (.jm-minimap): an overview of the whole layout in a corner of the graph
 * area, with the part on screen outlined. Clicking or dragging in it pans the main
 * view there. Boxes are drawn once per layout to an offscreen canvas; a pan only
 * copies that image and draws the viewport rectangle.
 *
 * Shown while the graph area holds only a part of the drawing (framing.js: the
 * whole would be too small to read).
 */
import { h } from "../ui/dom.js";
import { nextFrame } from "../ui/frame.js";

const MAX_W = 200, MAX_H = 140;

/** Scale and size of a minimap for layout box `bbox`. */
export function minimapFrame(bbox) {
  const s = Math.min(MAX_W / Math.max(1, bbox.w), MAX_H / Math.max(1, bbox.h));
  return { s, w: Math.max(24, Math.ceil(bbox.w * s)), h: Math.max(16, Math.ceil(bbox.h * s)) };
}

/**
 * Past this many boxes the minimap marks the pixels they cover itself and hands the
 * canvas one image: 50k fillRects cost 40 ms of script and more to rasterise, on
 * every layout.
 */
const RASTER_LEAVES = 2000;

/**
 * A canvas of `w`×`h` device px with every pixel that some leaf covers (at scale
 * `s` from `bbox`, at least one pixel each) in colour `rgba` ([r, g, b, a 0–255]).
 */
function coverage(doc, leaves, bbox, s, w, h, rgba) {
  const hit = new Uint8Array(w * h);
  for (const l of leaves) {
    const x0 = Math.max(0, Math.floor((l.x - bbox.x) * s)), y0 = Math.max(0, Math.floor((l.y - bbox.y) * s));
    const x1 = Math.min(w, Math.max(x0 + 1, Math.ceil((l.x + l.w - bbox.x) * s)));
    const y1 = Math.min(h, Math.max(y0 + 1, Math.ceil((l.y + l.h - bbox.y) * s)));
    for (let y = y0; y < y1; y++) hit.fill(1, y * w + x0, y * w + x1);
  }
  const cv = canvasOf(doc, w, h);
  const c = cv.getContext("2d");
  const img = c.createImageData(w, h);
  for (let i = 0; i < hit.length; i++) {
    if (!hit[i]) continue;
    img.data.set(rgba, 4 * i);
  }
  c.putImageData(img, 0, 0);
  return cv;
}

/** [r, g, b, a] (0–255) of a CSS colour, by the browser's own parser. */
function rgbaOf(doc, css) {
  const scratch = canvasOf(doc, 1, 1).getContext("2d", { willReadFrequently: true });
  scratch.fillStyle = "rgba(0,0,0,0.45)";
  scratch.fillStyle = css;
  scratch.fillRect(0, 0, 1, 1);
  return [...scratch.getImageData(0, 0, 1, 1).data];
}

/** An offscreen canvas of w×h px. */
function canvasOf(doc, w, h) {
  const cv = doc.createElement("canvas");
  cv.width = w;
  cv.height = h;
  return cv;
}

/** Copy the offscreen image and outline the part of the drawing on screen (once per animation frame). */
function paint(mm) {
  mm.pending = 0;
  const { ctx, image, cv, frame, bbox, view } = mm;
  if (!ctx || !image || cv.hidden) return;
  const dpr = mm.win.devicePixelRatio || 1;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, frame.w, frame.h);
  ctx.drawImage(image, 0, 0, frame.w, frame.h);
  if (!view) return;
  // The viewport in layout coordinates, clipped to the minimap.
  const { x, y, k, w, h: vh } = view;
  const rx = (-x / k - bbox.x) * frame.s, ry = (-y / k - bbox.y) * frame.s;
  const rw = (w / k) * frame.s, rh = (vh / k) * frame.s;
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = getComputedStyle(cv).color || "#1976d2";
  ctx.fillStyle = "rgba(25,118,210,0.08)";
  ctx.beginPath();
  ctx.rect(Math.max(0, rx), Math.max(0, ry), Math.min(frame.w, rx + rw) - Math.max(0, rx), Math.min(frame.h, ry + rh) - Math.max(0, ry));
  ctx.fill();
  ctx.stroke();
}

/** Every box of `geo`, once, into the offscreen image a pan copies. */
function drawImage(mm, geo) {
  const { cv, doc, bbox } = mm;
  const frame = (mm.frame = minimapFrame(bbox));
  const dpr = mm.win.devicePixelRatio || 1;
  cv.width = Math.round(frame.w * dpr);
  cv.height = Math.round(frame.h * dpr);
  cv.style.width = frame.w + "px";
  cv.style.height = frame.h + "px";
  const image = (mm.image = doc.createElement("canvas"));
  image.width = cv.width;
  image.height = cv.height;
  const ic = image.getContext("2d");
  const cs = getComputedStyle(cv);
  ic.setTransform(dpr * frame.s, 0, 0, dpr * frame.s, -dpr * frame.s * bbox.x, -dpr * frame.s * bbox.y);
  const px = 1 / frame.s; // one minimap pixel in layout units
  ic.fillStyle = cs.getPropertyValue("--jm-mm-frame").trim() || "rgba(0,0,0,0.05)";
  for (const c of geo.conts) ic.fillRect(c.x, c.y, c.w, c.h);
  const boxColour = cs.getPropertyValue("--jm-mm-box").trim() || "rgba(0,0,0,0.45)";
  if (geo.leaves.length > RASTER_LEAVES) {
    ic.setTransform(1, 0, 0, 1, 0, 0);
    ic.drawImage(coverage(doc, geo.leaves, bbox, dpr * frame.s, image.width, image.height, rgbaOf(doc, boxColour)), 0, 0);
  } else {
    ic.fillStyle = boxColour;
    for (const l of geo.leaves) ic.fillRect(l.x, l.y, Math.max(l.w, px), Math.max(l.h, px));
  }
}

/** Click or drag: pan the main view to the point under the pointer. Returns [event, listener] pairs. */
function pointerListeners(mm, pan) {
  const { cv } = mm;
  let dragging = false;
  const toWorld = (e) => {
    const r = cv.getBoundingClientRect();
    return [mm.bbox.x + (e.clientX - r.left) / mm.frame.s, mm.bbox.y + (e.clientY - r.top) / mm.frame.s];
  };
  const onDown = (e) => {
    if (!mm.bbox || e.button !== 0) return;
    e.stopPropagation(); // the main view must not start a pan of its own
    e.preventDefault();
    dragging = true;
    try {
      cv.setPointerCapture(e.pointerId);
    } catch (err) {
      /* the pointer is gone; this click still pans */
    }
    pan(...toWorld(e));
  };
  const onMove = (e) => {
    if (dragging) pan(...toWorld(e));
  };
  const onUp = () => {
    dragging = false;
  };
  const stop = (e) => e.stopPropagation(); // no select / toggle / zoom behind the minimap
  return [["pointerdown", onDown], ["pointermove", onMove], ["pointerup", onUp], ["pointercancel", onUp],
    ["click", stop], ["dblclick", stop], ["wheel", stop]];
}

/**
 * @param host   the graph area (.jm-canvas)
 * @param pan    (worldX, worldY) => void: centre the main view on that point
 */
export function createMinimap(host, pan, ref) {
  const doc = host.ownerDocument, win = doc.defaultView;
  /** The minimap's state; `ctx` is asked for on first use: jsdom has no canvas and says so loudly. */
  const mm = {
    cv: h("canvas", { class: "jm-minimap", "aria-label": "overview: click or drag to pan", hidden: true }, null, ref),
    ctx: null, doc, win, image: null, frame: null, bbox: null, view: null, pending: 0, scene: null,
  };
  const { cv } = mm;
  const raf = (f) => nextFrame(win, f);
  const schedule = () => {
    if (!mm.pending) mm.pending = raf(() => paint(mm));
  };
  const listeners = pointerListeners(mm, pan);
  for (const [ev, fn] of listeners) cv.addEventListener(ev, fn);

  /**
   * Show or hide: shown while the pane holds only a part of the drawing (framing.js),
   * so the reader sees where that part is. Draws every box once per layout.
   */
  const show = (on) => {
    if (on && !mm.ctx && mm.bbox) mm.ctx = cv.getContext("2d");
    cv.hidden = !on || !mm.ctx || !mm.bbox || !mm.bbox.w;
    if (cv.hidden || mm.image) return;
    drawImage(mm, mm.scene);
    schedule();
  };

  return {
    el: cv,
    /** New layout: kept, and drawn offscreen once it is shown (`show`). */
    setScene(geo, on = !cv.hidden) {
      mm.scene = geo;
      mm.bbox = geo.bbox;
      mm.image = null;
      show(on);
    },
    show,
    setView(t, w, hh) {
      mm.view = { ...t, w, h: hh };
      schedule();
    },
    clear() {
      mm.bbox = null;
      mm.image = null;
      mm.scene = null;
      cv.hidden = true;
    },
    dispose() {
      for (const [ev, fn] of listeners) cv.removeEventListener(ev, fn);
    },
  };
}
