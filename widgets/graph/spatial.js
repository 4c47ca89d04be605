/**
 * A uniform grid over boxes ({x, y, w, h}), so a frame of a big drawing visits what is
 * near the viewport instead of every eqn, edge and frame of the drawing (a fully
 * expanded 50k-eqn drawing has 50k leaves and 80k edges; walking them all was a
 * quarter of a frame before anything was drawn).
 *
 * Built once per placed geometry (canvas.js keeps one per list), in two counting
 * passes into flat arrays. A box spanning more than BIG_CELLS cells (the root frame,
 * an edge across the whole drawing) goes to a coarser grid (or, when few, a list
 * checked on every query) instead of being copied into every cell. `query(r)` returns the indices of the boxes
 * meeting rectangle r = {x0, y0, x1, y1} in ascending order: the list's drawing
 * order, which the renderer keeps (outer frames first, later leaves on top).
 */

/** About this many cells over the drawing's box. */
const TARGET_CELLS = 1 << 16;
/** A box over more cells than this goes to a coarser grid, or a list checked on every query. */
const BIG_CELLS = 32;
/** How much bigger the cells of the next coarser grid are; how many big boxes make one worth it. */
const COARSER = 8, COARSE_MIN = 256;

/** Whether box b meets rectangle r. */
export const meets = (b, r) => b.x < r.x1 && b.x + b.w > r.x0 && b.y < r.y1 && b.y + b.h > r.y0;

/**
 * A grid index of `items` (boxes) over bounding box `bbox` ({x, y, w, h}). The boxes
 * too big for its cells go to a grid of cells `COARSER` times bigger (when there are
 * many: thousands of edges run across a whole 50k-eqn drawing), and so on.
 */
export function gridIndex(items, bbox, cellSize = 0) {
  const n = items.length;
  const bw = Math.max(1, bbox.w), bh = Math.max(1, bbox.h), bx = bbox.x, by = bbox.y;
  const cell = cellSize || Math.max(64, Math.sqrt((bw * bh) / TARGET_CELLS));
  const nx = Math.ceil(bw / cell) + 1, ny = Math.ceil(bh / cell) + 1, last = nx * ny;
  const cx = (v) => {
    const c = Math.floor((v - bx) / cell);
    return c < 0 ? 0 : c >= nx ? nx - 1 : c;
  };
  const cy = (v) => {
    const c = Math.floor((v - by) / cell);
    return c < 0 ? 0 : c >= ny ? ny - 1 : c;
  };
  const span = new Int32Array(4 * n);
  const big = [];
  const count = new Int32Array(last + 1);
  for (let i = 0, q = 0; i < n; i++, q += 4) {
    const b = items[i];
    const x0 = cx(b.x), x1 = cx(b.x + b.w), y0 = cy(b.y), y1 = cy(b.y + b.h);
    if ((x1 - x0 + 1) * (y1 - y0 + 1) > BIG_CELLS || !(b.w >= 0 && b.h >= 0)) {
      big.push(i);
      span[q] = -1;
      continue;
    }
    span[q] = x0;
    span[q + 1] = x1;
    span[q + 2] = y0;
    span[q + 3] = y1;
    for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) count[y * nx + x + 1]++;
  }
  for (let c = 1; c <= last; c++) count[c] += count[c - 1];
  const slots = new Int32Array(count[last]);
  const fill = count.slice(0, last);
  for (let i = 0, q = 0; i < n; i++, q += 4) {
    if (span[q] < 0) continue;
    for (let y = span[q + 2]; y <= span[q + 3]; y++) {
      for (let x = span[q]; x <= span[q + 1]; x++) slots[fill[y * nx + x]++] = i;
    }
  }
  const stamp = new Uint32Array(n);
  let epoch = 0;
  // the big boxes: in a coarser grid when there are many, else checked one by one
  const coarse = big.length > COARSE_MIN && cell * COARSER < 2 * Math.max(bw, bh) ?
    gridIndex(big.map((i) => items[i]), bbox, cell * COARSER) : null;
  return {
    /** Indices (ascending) of the items meeting r. */
    query(r) {
      const x0 = cx(r.x0), x1 = cx(r.x1), y0 = cy(r.y0), y1 = cy(r.y1);
      let out = [];
      let listed = 0;
      for (let y = y0; y <= y1; y++) listed += count[y * nx + x1 + 1] - count[y * nx + x0];
      if (listed > 2 * n) {
        // the view's cells list more than the items: one pass over the items is less
        for (let i = 0; i < n; i++) if (meets(items[i], r)) out.push(i);
        return out;
      }
      if (++epoch === 0xffffffff) {
        stamp.fill(0);
        epoch = 1;
      }
      if (coarse) for (const j of coarse.query(r)) out.push(big[j]);
      else for (const i of big) if (meets(items[i], r)) out.push(i);
      for (let y = y0; y <= y1; y++) {
        for (let s = count[y * nx + x0], e = count[y * nx + x1 + 1]; s < e; s++) {
          const i = slots[s];
          if (stamp[i] === epoch) continue;
          stamp[i] = epoch;
          const b = items[i];
          if (b.x < r.x1 && b.x + b.w > r.x0 && b.y < r.y1 && b.y + b.h > r.y0) out.push(i);
        }
      }
      return Array.from(Int32Array.from(out).sort());
    },
  };
}

/** Per list: its grid index, built on first use (lists of a placed geometry never change). */
const indexes = new WeakMap();

/** The grid index of box list `items` within `bbox`, built once per list. */
export function indexOf(items, bbox) {
  let ix = indexes.get(items);
  if (!ix) indexes.set(items, (ix = gridIndex(items, bbox)));
  return ix;
}
