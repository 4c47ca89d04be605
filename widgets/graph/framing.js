/**
 * Framing: where a drawing sits in its pane, and how tall the pane is. One pure rule
 * for every path that frames a graph (first open, Fit, presentation mode, a resized
 * output area, revealing a selection, a residual chip of the grad view):
 *
 * - "whole" when the whole drawing fits the pane with its smallest text at least
 *   LEGIBLE_PX (PRESENT_PX in presentation mode), never zooming in past 100%: a small
 *   drawing is shown at 100%, centred, and the pane shrinks to it (within a minimum
 *   height), so there is no empty band above or below;
 * - "part" otherwise: the legible scale, anchored on what matters (the anchors: a
 *   selection, a finding's node; else where the computation starts, on the left).
 *   A strip of 5 px text shows nothing a reader can use; the minimap shows where the
 *   part is.
 *
 * Views publish the result on the pane (`data-jm-framed`, `data-jm-text-px`,
 * `data-jm-drawing`), so tests read what the reader sees.
 */

/** Smallest text a reader can read at a desk, and on a 1280x720 projector (CSS px). */
export const LEGIBLE_PX = 11;
export const PRESENT_PX = 14;
/** Room kept around a drawing inside its pane. */
export const MARGIN = 16;

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

/**
 * Offset along one axis: centre the drawing when it fits, else put `focus` (a content
 * coordinate) in the middle, clamped so the drawing's edge never leaves a gap wider
 * than the margin. `start`/`len`: the drawing's extent; `size`: the pane's.
 */
function axis(start, len, size, k, focus, margin) {
  if (len * k <= size - 2 * margin) return (size - len * k) / 2 - start * k;
  const lo = size - margin - (start + len) * k, hi = margin - start * k;
  return clamp(size / 2 - focus * k, lo, hi);
}

/** Union of boxes {x, y, w, h}; null for none. */
export function unionBox(boxes) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const b of boxes || []) {
    if (!b) continue;
    x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h);
  }
  return x0 === Infinity ? null : { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/**
 * Frame `box` (the drawing's bounding box at zoom 1) in a pane `paneW` wide.
 *
 * @param {object} o
 * @param o.box      the drawing box `{x, y, w, h}`, content px
 * @param o.paneW    pane width, CSS px
 * @param o.maxH     tallest the pane may be
 * @param [o.minH]   shortest (toolbars, a one-node graph)
 * @param [o.margin] room kept around the drawing, CSS px (MARGIN)
 * @param [o.fixedH]  a height the reader chose (dragged): the pane keeps it
 * @param o.labelPx  smallest label font size at zoom 1
 * @param [o.present] presentation mode (floor PRESENT_PX, else LEGIBLE_PX)
 * @param [o.anchors] boxes that matter, most important first (selection, finding)
 * @param [o.startY]  where the computation starts (inputs), for a part without anchors
 * @param [o.anchorTop] a part puts its anchor near the pane's top rather than its middle:
 *                   a pane lower on the page than the screen is tall then still shows the
 *                   anchor once the view's top is on screen
 * @returns {{scale, tx, ty, framed: "whole"|"part", paneHeight, textPx}}
 */
export function frameDrawing({ box, paneW, maxH, minH = 0, fixedH = 0, labelPx, present = false, anchors = [], startY = null, margin = MARGIN, anchorTop = false }) {
  const floor = present ? PRESENT_PX : LEGIBLE_PX;
  const legible = floor / Math.max(0.01, labelPx); // the smallest legible zoom
  const room = fixedH || maxH;
  const fitK = Math.min(1, (paneW - 2 * margin) / Math.max(1, box.w), (room - 2 * margin) / Math.max(1, box.h));
  const whole = fitK >= legible - 1e-9;
  // Whole: the fitting zoom (never above 1); part: the legible one (at most 1 when the labels allow it).
  const scale = whole ? fitK : Math.max(legible, Math.min(1, fitK));
  const paneHeight = Math.round(fixedH || clamp(box.h * scale + 2 * margin, Math.min(minH, maxH), maxH));
  let fx = box.x, fy = startY == null ? box.y + box.h / 2 : startY;
  const a = whole ? null : anchorOf(anchors, paneW, paneHeight, scale, margin);
  if (a) {
    fx = a.x + a.w / 2;
    fy = a.y + a.h / 2;
  } else if (!whole) {
    fx = box.x + (paneW / 2 - margin) / scale; // the left edge at the margin: inputs first
    // the top edge too, when the start of the computation is then still in the pane
    const top = box.y + (paneHeight / 2 - margin) / scale;
    if ((fy - box.y) * scale + 2 * margin <= paneHeight) fy = top;
  }
  return {
    scale,
    tx: axis(box.x, box.w, paneW, scale, fx, margin),
    ty: a && anchorTop ? topOf(box, a, scale, margin, paneHeight) : axis(box.y, box.h, paneHeight, scale, fy, margin),
    framed: whole ? "whole" : "part",
    paneHeight,
    textPx: Math.round(labelPx * scale * 10) / 10,
  };
}

/**
 * Vertical offset for an anchor near the pane's top. A drawing as short as the pane sits at
 * its top edge, uncut, when the anchor then lies in the pane's upper half; otherwise anchor
 * `a` goes one and a half margins below the pane's top (its incoming edges still show above
 * it), never leaving a gap above the drawing's top.
 */
function topOf(box, a, k, margin, paneH) {
  const top = margin - box.y * k;
  if (box.h * k <= paneH - 2 * margin && top + (a.y + a.h) * k <= paneH / 2) return top;
  return Math.min(top, 1.5 * margin - a.y * k);
}

/** The anchors to centre: all of them when they fit the pane at `k`, else the first. */
function anchorOf(anchors, w, h, k, margin) {
  const list = (anchors || []).filter(Boolean);
  if (!list.length) return null;
  const all = unionBox(list);
  return all.w * k <= w - 2 * margin && all.h * k <= h - 2 * margin ? all : list[0];
}
