/**
 * Places the visible forest (tree.js) as a horizontal tidy tree: roots on the left,
 * children to the right. d3-hierarchy's `tree()` (Reingold-Tilford, Buchheim's linear
 * version) gives each item its row, so subtrees never overlap and a parent sits in the
 * middle of its children; columns are as wide as their widest item. Labels are drawn in
 * the monospace font, so their width is known without measuring text.
 */
import { hierarchy, tree } from "../../js/src/tidy-tree.js";

/** Distance between rows, item height, gap between columns (room for the toggle and the edge), px. */
export const ROW = 34;
export const H = 20;
export const GAP = 48;
/** Width of one character of an item's label (11px monospace), padding each side, longest label drawn. */
const CHAR = 6.7;
const PAD = 9;
export const MAX_CHARS = 30;
/** Toggle circle: radius and its centre's distance from the item's right edge. */
export const TOG_R = 6;
export const TOG_DX = 9;

/** An item's label as drawn: cut to MAX_CHARS (the whole text is in its hover card and aria-label). */
export function shownLabel(item) {
  const s = String(item.label);
  return s.length > MAX_CHARS ? s.slice(0, MAX_CHARS - 1) + "…" : s;
}

/**
 * Give every item `x`, `y` (its vertical centre) and `w`, and return
 * `{items, box: {x, y, w, h}}` (the drawing's bounds, toggles included).
 */
export function layoutForest(t) {
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
  if (!items.length) return { items, box: { x: 0, y: 0, w: 0, h: 0 } };
  for (const it of items) it.y -= y0; // rows from 0 down
  return { items, box: { x: 0, y: -ROW / 2, w: x1, h: y1 - y0 + ROW } };
}

/** Where an edge leaves an item (right of its toggle) and where it enters one (its left side). */
export const outX = (it) => it.x + it.w + (it.collapsible ? TOG_DX + TOG_R : 0);

/** A parent with more children than this fans out through one vertical bus (elbows), not a sheaf of curves. */
const FAN = 8;

/** The edge from `p` to `c`: a horizontal S curve, an elbow off a bus for wide fans, a straight line (overview). */
export function edgePath(p, c, straight) {
  const x1 = outX(p), x2 = c.x;
  if (straight) return `M${x1} ${p.y}L${x2} ${c.y}`;
  const xm = (x1 + x2) / 2;
  if (p.children.length > FAN) return `M${x1} ${p.y}H${xm}V${c.y}H${x2}`;
  return `M${x1} ${p.y}C${xm} ${p.y} ${xm} ${c.y} ${x2} ${c.y}`;
}
