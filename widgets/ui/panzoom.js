/**
 * Pan and zoom for an <svg> whose content sits in one <g> "viewport".
 * Wheel zooms around the cursor, dragging pans, `centerOn` brings a point to the
 * middle (framing a drawing is widgets/graph/framing.js's, through `set`). A drag suppresses the click that ends it, so
 * panning never selects the node under the pointer. `onChange(t)` hears every
 * change of the transform (a canvas renderer and a minimap follow it).
 */
export function createPanZoom(svg, viewport, { minScale = 0.005, maxScale = 4, onChange = null } = {}) {
  const t = { x: 0, y: 0, k: 1 };
  const apply = () => {
    viewport.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
    if (onChange) onChange({ ...t });
  };
  const size = () => ({ w: svg.clientWidth || 0, h: svg.clientHeight || 0 });
  const clampK = (k) => Math.min(maxScale, Math.max(minScale, k));

  /** Zoom by `f` keeping the screen point (px, py) fixed. */
  const zoomAt = (px, py, f) => {
    const k = clampK(t.k * f);
    t.x = px - ((px - t.x) * k) / t.k;
    t.y = py - ((py - t.y) * k) / t.k;
    t.k = k;
    apply();
  };

  const onWheel = (e) => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    const unit = e.deltaMode === 1 ? 0.05 : e.deltaMode === 2 ? 1 : 0.0025;
    zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * unit));
  };

  const listeners = [["wheel", onWheel, { passive: false }], ...dragListeners(svg, t, apply)];
  for (const [type, fn, options] of listeners) svg.addEventListener(type, fn, options);
  apply();

  return {
    get transform() {
      return { ...t };
    },
    set(x, y, k) {
      Object.assign(t, { x, y, k: clampK(k) });
      apply();
    },
    zoomAt,
    /** Centre content point (cx, cy), zooming in to at least `minK`. */
    centerOn(cx, cy, minK = 0) {
      const { w, h } = size();
      t.k = clampK(Math.max(t.k, minK));
      t.x = w / 2 - cx * t.k;
      t.y = h / 2 - cy * t.k;
      apply();
    },
    dispose() {
      for (const [type, fn, options] of listeners) svg.removeEventListener(type, fn, options);
    },
  };
}

/**
 * Dragging pans: the listeners (type, handler, options) that move `t` with a left-button drag, and swallow
 * the click that ends a drag so panning never selects what is under the pointer.
 * @param {SVGElement} svg
 * @param {{x: number, y: number, k: number}} t the transform, changed in place
 * @param {() => void} apply
 * @returns {Array<[string, (e: any) => void, any]>}
 */
function dragListeners(svg, t, apply) {
  let drag = null;
  let suppressClick = false;
  const onDown = (e) => {
    if (e.button !== 0) return;
    drag = { sx: e.clientX, sy: e.clientY, x: t.x, y: t.y, moved: false, id: e.pointerId };
  };
  const onMove = (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.sx, dy = e.clientY - drag.sy;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) {
      drag.moved = true;
      svg.classList.add("jm-panning");
      try {
        svg.setPointerCapture(drag.id);
      } catch (err) {
        /* pointer already gone; panning still works while it moves over the svg */
      }
    }
    t.x = drag.x + dx;
    t.y = drag.y + dy;
    apply();
  };
  const onUp = () => {
    if (drag && drag.moved) suppressClick = true;
    drag = null;
    svg.classList.remove("jm-panning");
  };
  const onClick = (e) => {
    if (!suppressClick) return;
    suppressClick = false;
    e.stopPropagation();
    e.preventDefault();
  };
  return [
    ["pointerdown", onDown, undefined],
    ["pointermove", onMove, undefined],
    ["pointerup", onUp, undefined],
    ["pointercancel", onUp, undefined],
    ["click", onClick, true],
  ];
}
