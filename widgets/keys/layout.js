/**
 * Places the visible forest (tree.js) as a horizontal tidy tree: roots on the left,
 * children to the right. d3-hierarchy's `tree()` (Reingold-Tilford, Buchheim's linear
 * version) gives each item its row, so subtrees never overlap and a parent sits in the
 * middle of its children; columns are as wide as their widest item. Labels are drawn in
 * the monospace font, so their width is known without measuring text.
 */
import { hierarchy, tree } from "../ui/tidy-tree.js";

/**
 * Sizes of the drawing, px: distance between rows, item height, gap between columns (room for
 * the toggle and the edge), width of one character of a label (monospace, so no text is
 * measured), padding each side of a label, and the toggle circle's radius and its centre's
 * distance from the item's right edge, and how far below the item's centre a label's baseline
 * sits. Presentation mode draws labels at 16px instead of
 * 11px (keys.css), so it lays out with its own sizes: a projector needs the larger text and
 * the boxes must still hold it.
 */
export const METRICS = {
  normal: { ROW: 34, H: 20, GAP: 48, CHAR: 6.7, PAD: 9, TOG_R: 6, TOG_DX: 9, LABEL_DY: 4 },
  present: { ROW: 50, H: 30, GAP: 60, CHAR: 9.8, PAD: 12, TOG_R: 8, TOG_DX: 12, LABEL_DY: 6 },
};
/** The ordinary sizes, as constants (tests and callers that do not present). */
export const { ROW, H, GAP, TOG_R, TOG_DX } = METRICS.normal;
/** Longest label drawn, in characters. */
export const MAX_CHARS = 30;

/** An item's label as drawn: cut to MAX_CHARS (the whole text is in its hover card and aria-label). */
export function shownLabel(item) {
  const s = String(item.label);
  return s.length > MAX_CHARS ? s.slice(0, MAX_CHARS - 1) + "…" : s;
}

/**
 * Give every item `x`, `y` (its vertical centre) and `w`, and return
 * `{items, box: {x, y, w, h}, g}` (the drawing's bounds, toggles included, and the sizes `g`
 * it was laid out with, METRICS.normal or METRICS.present).
 */
export function layoutForest(t, g = METRICS.normal) {
  const { ROW, H, GAP, CHAR, PAD, TOG_R, TOG_DX } = g;
  const items = t.items;
  const colW = [];
  for (const it of items) {
    it.w = Math.round(Math.max(H + 8, shownLabel(it).length * CHAR + 2 * PAD));
    colW[it.depth] = Math.max(colW[it.depth] || 0, it.w);
  }
  const colX = [0];
  for (let d = 1; d < colW.length; d++) colX[d] = colX[d - 1] + colW[d - 1] + GAP;
  const top = { children: t.roots };
  const root = hierarchy(top, (d) => d.children);
  tree().nodeSize([ROW, 1]).separation((a, b) => (a.parent === b.parent ? 1 : 1.3))(root);
  let y0 = Infinity, y1 = -Infinity, x1 = 0;
  root.each((d) => {
    if (d.data === top) return;
    const it = d.data;
    it.x = colX[it.depth];
    it.y = Math.round(d.x * 10) / 10;
    y0 = Math.min(y0, it.y);
    y1 = Math.max(y1, it.y);
    x1 = Math.max(x1, it.x + it.w + (it.collapsible ? TOG_DX + TOG_R : 0));
  });
  if (!items.length) return { items, box: { x: 0, y: 0, w: 0, h: 0 }, g };
  for (const it of items) it.y -= y0; // rows from 0 down
  return { items, box: { x: 0, y: -ROW / 2, w: x1, h: y1 - y0 + ROW }, g };
}

/** Where an edge leaves an item (right of its toggle) and where it enters one (its left side). */
export const outX = (it, g = METRICS.normal) => it.x + it.w + (it.collapsible ? g.TOG_DX + g.TOG_R : 0);

/** A parent with more children than this fans out through one vertical bus (elbows), not a sheaf of curves. */
const FAN = 8;

/** The edge from `p` to `c`: a horizontal S curve, an elbow off a bus for wide fans, a straight line (overview). */
export function edgePath(p, c, straight, g = METRICS.normal) {
  const x1 = outX(p, g), x2 = c.x;
  if (straight) return `M${x1} ${p.y}L${x2} ${c.y}`;
  const xm = (x1 + x2) / 2;
  if (p.children.length > FAN) return `M${x1} ${p.y}H${xm}V${c.y}H${x2}`;
  return `M${x1} ${p.y}C${xm} ${p.y} ${xm} ${c.y} ${x2} ${c.y}`;
}
