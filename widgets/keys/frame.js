/**
 * Framing of the key tree: the shared rule (widgets/graph/framing.js) with the tree's own
 * sizes. The whole tree when its labels read at 11 px (14 px in presentation mode) without
 * zooming past 100%; otherwise the part that matters at that legible scale: the reused key
 * (the point of a %%prng cell), else the selection, else the first root on the left; the anchor
 * sits near the pane's top, so it is on screen as soon as the view's top is. The pane's
 * height follows the drawing (within PANE_H), so a small tree has no empty band around it.
 *
 * The pane (`[data-jm-pane="keys"]`) publishes what the reader sees: `data-jm-framed`,
 * `data-jm-text-px` (the smallest label as drawn) and `data-jm-drawing` (the tree's box, pane
 * relative, at the current zoom).
 */
import { frameDrawing, LEGIBLE_PX, PRESENT_PX } from "../graph/framing.js";

/** Tallest and shortest the tree pane may be, CSS px (the details pane beside it scrolls). */
export const PANE_H = { normal: { max: 540, min: 260 }, present: { max: 460, min: 240 } };
/** Label and badge font sizes at zoom 1 (keys.css): the badge is the smaller in presentation mode. */
export const FONT_PX = { normal: { label: 11, badge: 11 }, present: { label: 16, badge: 14 } };

/** Smallest text the tree draws at zoom 1: the labels, and the badges when an item has one. */
export function labelPx(present, badges) {
  const f = present ? FONT_PX.present : FONT_PX.normal;
  return badges ? Math.min(f.label, f.badge) : f.label;
}

/** The least zoom at which the smallest text is legible (never above 1 unless the text needs it). */
export function legibleZoom(present, badges) {
  return (present ? PRESENT_PX : LEGIBLE_PX) / labelPx(present, badges);
}

/** An item's box at zoom 1 (items are placed by their vertical centre). */
export const itemBox = (it, g) => (it ? { x: it.x, y: it.y - g.H / 2, w: it.w, h: g.H } : null);

/**
 * Frame the laid-out forest `lay` ({items, box, g}) in a pane `paneW` wide.
 * `anchors`: items that matter, most important first (the reused key, the selection).
 * @returns frameDrawing's {scale, tx, ty, framed, paneHeight, textPx}
 */
export function frameTree(lay, { paneW, fixedH = 0, present = false, anchors = [], badges = false }) {
  const lim = present ? PANE_H.present : PANE_H.normal;
  const first = lay.items.find((it) => !it.parent) || null; // the first root: where a part without anchors starts
  return frameDrawing({
    box: lay.box, paneW, maxH: lim.max, minH: lim.min, fixedH, labelPx: labelPx(present, badges), present,
    anchors: anchors.map((it) => itemBox(it, lay.g)), startY: first ? first.y : null, anchorTop: true,
  });
}

/**
 * The contract attributes for transform `t` ({x, y, k}): "whole" when the tree's box is
 * inside the pane (`w` x `h`), the smallest label as drawn, the box pane-relative.
 */
export function paneState(lay, t, w, h, px) {
  const b = lay.box;
  const x = t.x + b.x * t.k, y = t.y + b.y * t.k, bw = b.w * t.k, bh = b.h * t.k;
  const whole = x >= -1 && y >= -1 && x + bw <= w + 1 && y + bh <= h + 1;
  return { framed: whole ? "whole" : "part", textPx: (Math.round(px * t.k * 10) / 10).toFixed(1), drawing: [x, y, bw, bh].map((v) => Math.round(v)).join(",") };
}
