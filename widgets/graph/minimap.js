/**
 * Minimap (.jm-minimap): an overview of the whole layout in a corner of the graph
 * area, with the part on screen outlined. Clicking or dragging in it pans the main
 * view there. Boxes are drawn once per layout to an offscreen canvas; a pan only
 * copies that image and draws the viewport rectangle.
 *
 * Shown only when the layout is over twice the size of the graph area (when Fit
 * would shrink it below 50%).
 */
import { h } from "../../js/src/dom.js";

const MAX_W = 200, MAX_H = 140;

/** Scale and size of a minimap for layout box `bbox`. */
export function minimapFrame(bbox) {
  const s = Math.min(MAX_W / Math.max(1, bbox.w), MAX_H / Math.max(1, bbox.h));
  return { s, w: Math.max(24, Math.ceil(bbox.w * s)), h: Math.max(16, Math.ceil(bbox.h * s)) };
}

/**
 * @param host   the graph area (.jm-canvas)
 * @param pan    (worldX, worldY) => void: centre the main view on that point
 */
export function createMinimap(host, pan, ref) {
  const cv = h("canvas", { class: "jm-minimap", "aria-label": "overview: click or drag to pan", hidden: true }, null, ref);
  let ctx = null; // asked for on first use: jsdom has no canvas and says so loudly
  const doc = host.ownerDocument;
  let image = null, frame = null, bbox = null, view = null, pending = 0;
  const win = doc.defaultView;
  const raf = win.requestAnimationFrame ? (f) => win.requestAnimationFrame(f) : (f) => setTimeout(f, 16);

  const paint = () => {
    pending = 0;
    if (!ctx || !image || cv.hidden) return;
    const dpr = win.devicePixelRatio || 1;
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
  };
  const schedule = () => {
    if (!pending) pending = raf(paint);
  };

  // Click or drag: pan the main view to the point under the pointer.
  let dragging = false;
  const toWorld = (e) => {
    const r = cv.getBoundingClientRect();
    return [bbox.x + (e.clientX - r.left) / frame.s, bbox.y + (e.clientY - r.top) / frame.s];
  };
  const onDown = (e) => {
    if (!bbox || e.button !== 0) return;
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
  const listeners = [["pointerdown", onDown], ["pointermove", onMove], ["pointerup", onUp], ["pointercancel", onUp],
    ["click", stop], ["dblclick", stop], ["wheel", stop]];
  for (const [ev, fn] of listeners) cv.addEventListener(ev, fn);

  return {
    el: cv,
    /** New layout: draw every box once, offscreen. `big` decides whether to show. */
    setScene(geo, big) {
      bbox = geo.bbox;
      if (big && !ctx) ctx = cv.getContext("2d");
      cv.hidden = !big || !ctx || !bbox.w;
      if (cv.hidden) return;
      frame = minimapFrame(bbox);
      const dpr = win.devicePixelRatio || 1;
      cv.width = Math.round(frame.w * dpr);
      cv.height = Math.round(frame.h * dpr);
      cv.style.width = frame.w + "px";
      cv.style.height = frame.h + "px";
      image = doc.createElement("canvas");
      image.width = cv.width;
      image.height = cv.height;
      const ic = image.getContext("2d");
      const cs = getComputedStyle(cv);
      ic.setTransform(dpr * frame.s, 0, 0, dpr * frame.s, -dpr * frame.s * bbox.x, -dpr * frame.s * bbox.y);
      const px = 1 / frame.s; // one minimap pixel in layout units
      ic.fillStyle = cs.getPropertyValue("--jm-mm-frame").trim() || "rgba(0,0,0,0.05)";
      for (const c of geo.conts) ic.fillRect(c.x, c.y, c.w, c.h);
      ic.fillStyle = cs.getPropertyValue("--jm-mm-box").trim() || "rgba(0,0,0,0.45)";
      for (const l of geo.leaves) ic.fillRect(l.x, l.y, Math.max(l.w, px), Math.max(l.h, px));
      schedule();
    },
    setView(t, w, hh) {
      view = { ...t, w, h: hh };
      schedule();
    },
    clear() {
      bbox = null;
      image = null;
      cv.hidden = true;
    },
    dispose() {
      for (const [ev, fn] of listeners) cv.removeEventListener(ev, fn);
    },
  };
}
