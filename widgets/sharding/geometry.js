/**
 * Where cells go: an array's blocks from their index ranges, a mesh's devices from their
 * positions. Pure functions returning `{width, height, items, labels, hidden}` in px:
 * `items` are cells `{x, y, w, h, ...}`, `labels` facet captions `{x, y, text}`, `hidden`
 * the facets left out past the cap. A cell is a block or a device, never an array
 * element, so a 16-million-element array of 8 blocks is 8 cells.
 */

/** Width of a lone 2-D array or 1-D strip, and of a mesh, px. */
export const PLANE_W = 220;
/** Width of one facet when an array has several, px (three fit a row). */
export const FACET_W = 96;
/** Facets drawn per array; the rest is a "+N more" label. */
export const MAX_FACETS = 6;
/** Width of a mesh of one plane, px: 16 columns of 20 px cells, wide enough for their ids. */
export const MESH_W = 320;
/** Facets drawn per mesh. */
export const MAX_MESH_FACETS = 16;
/** A 1-D mesh wraps after this many devices. */
export const MESH_WRAP = 16;
const STRIP_H = 20;
const SCALAR = 28;
const GAP = 8;
const LABEL_H = 15;
/** Mesh cells are at most this wide, px. */
const MAX_CELL = 40;

/**
 * Sizes for presentation mode (a 1280x720 projector): planes and mesh cells large enough for
 * 15 px ids, facet captions on a taller line. The layouts stay the same functions of the
 * document, only scaled, so a mode switch draws the same cells bigger.
 */
export const PRESENT = { plane: 300, planeH: 96, facet: 128, mesh: 640, cell: 40, label: 22, compact: { long: 64, short: 28 },
  block: { w: 26, h: 22 } };

/** A block is drawn at least this big where the plane allows (its id fits: 10 px ids; PRESENT.block for 15 px ones). */
export const MIN_BLOCK = { w: 18, h: 14 };

/**
 * An array of one block (on one device, or replicated whole) has nothing inside it to show but
 * its holders' colours: it is drawn as a small tile, `long` px on its longer side and at least
 * `short` (room for its `×8`), so a 16-byte f32[4,1] is not a 275 px column.
 */
export const COMPACT = { long: 56, short: 20 };

const prod = (xs) => xs.reduce((p, x) => p * x, 1);
const round = (x) => Math.round(x * 10) / 10;

/** Distinct `[start, stop)` ranges of dimension `d` over the blocks, by start. */
export function intervals(blocks, d) {
  const seen = new Map();
  for (const b of blocks) {
    const r = b.index[d];
    seen.set(`${r[0]}:${r[1]}`, r);
  }
  return [...seen.values()].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
}

/**
 * Facets of an N-D array (N >= 3): one per combination of the leading dimensions' block
 * ranges (every dimension but the last two), in row-major order. Blocks of a JAX sharding
 * tile the array, so each block falls in exactly one facet: `of(block)` is its number.
 * Arrays of fewer dimensions have one facet.
 */
export function facets(arr) {
  const nd = arr.shape.length;
  const lead = nd >= 3 ? [...Array(nd - 2).keys()] : [];
  const lists = lead.map((d) => intervals(arr.blocks, d));
  const keys = lists.map((l) => new Map(l.map((r, i) => [`${r[0]}:${r[1]}`, i])));
  return {
    count: prod(lists.map((l) => l.length)),
    of: (b) => keys.reduce((f, k, d) => f * lists[d].length + k.get(`${b.index[d][0]}:${b.index[d][1]}`), 0),
    /** Caption of facet f: the leading ranges as a slice, `[0:2, 4:6]`. */
    label(f) {
      const parts = [];
      for (let d = lists.length - 1; d >= 0; d--) {
        const r = lists[d][f % lists[d].length];
        parts.unshift(`${r[0]}:${r[1]}`);
        f = Math.floor(f / lists[d].length);
      }
      return `[${parts.join(", ")}]`;
    },
  };
}

/** Height of a plane at most, px: a tall array is drawn narrower, so this cell's arrays stay one short row. */
export const PLANE_H = 150;

/**
 * Size of one plane (rows x cols elements) drawn at most `maxW` wide and `maxH` tall:
 * proportional to the array, narrower for a tall one down to 40 px; never under 16 px
 * tall, so a 1 x 100000 array is still a visible bar.
 */
export function planeSize(rows, cols, maxW, maxH = PLANE_H) {
  if (rows == null) return { w: maxW, h: STRIP_H };
  const aspect = Math.max(1, rows) / Math.max(1, cols);
  if (maxW * aspect <= maxH) return { w: maxW, h: Math.max(16, Math.round(maxW * aspect)) };
  return { w: Math.max(40, Math.round(maxH / aspect)), h: maxH };
}

/** Size of a one-block array's tile: `long` on the longer side, the other in proportion, at least `short`. */
export function tileSize(rows, cols, { long, short }) {
  if (rows == null) return { w: long, h: short };
  const aspect = Math.max(1, rows) / Math.max(1, cols);
  const side = (a) => Math.max(short, Math.min(long, Math.round(long * a)));
  return aspect >= 1 ? { w: side(1 / aspect), h: long } : { w: long, h: side(aspect) };
}

/**
 * Facet placement shared by arrays and meshes: `n` facets of `w` x `h`, `perRow` a row,
 * each under a caption line when `labelled`. Returns the origin of facet k and the size.
 */
function tiles(n, w, h, perRow, labelled, labelH = LABEL_H) {
  const lh = labelled ? labelH : 0;
  const rows = Math.ceil(n / perRow);
  return {
    at: (k) => ({ x: (k % perRow) * (w + GAP), y: Math.floor(k / perRow) * (h + lh + GAP) + lh }),
    width: Math.min(n, perRow) * (w + GAP) - GAP,
    height: rows * (h + lh + GAP) - GAP,
  };
}

/**
 * Layout of an array's blocks: a scalar is one square; 1-D a strip; 2-D a rectangle
 * split in proportion to the index ranges; 3-D and more small multiples over the leading
 * dimensions (at most MAX_FACETS, then `hidden`). Items: `{x, y, w, h, block}` (the
 * block's position in `arr.blocks`). `facetW` and `labelH` are the facet width and caption
 * line (larger in presentation mode).
 */
export function arrayLayout(arr, maxW = PLANE_W, { facetW = FACET_W, labelH = LABEL_H, compact = COMPACT, maxH = PLANE_H,
  block = MIN_BLOCK } = {}) {
  const shape = arr.shape || [];
  const nd = shape.length;
  const blocks = arr.blocks || [];
  if (nd === 0) {
    return { width: SCALAR, height: SCALAR, items: blocks.slice(0, 1).map(() => ({ x: 0, y: 0, w: SCALAR, h: SCALAR, block: 0 })), labels: [], hidden: 0 };
  }
  if (blocks.length === 1) {
    const { w, h } = tileSize(nd >= 2 ? shape[nd - 2] : null, shape[nd - 1], compact);
    return { width: w, height: h, items: [{ x: 0, y: 0, w, h, block: 0 }], labels: [], hidden: 0 };
  }
  const F = facets(arr);
  const shown = Math.min(F.count, MAX_FACETS);
  const rowDim = nd >= 2 ? nd - 2 : null;
  const colDim = nd - 1;
  const ext = (d) => Math.max(1, shape[d]);
  const plane = planeSize(rowDim == null ? null : shape[rowDim], shape[colDim], shown > 1 ? facetW : maxW,
    shown > 1 ? Math.round(facetW * 1.25) : maxH);
  // A short plane split into many rows (or a narrow one into many columns) grows until each block can show its id.
  const w = shown > 1 ? plane.w : Math.min(maxW, Math.max(plane.w, block.w * intervals(blocks, colDim).length));
  const h = shown > 1 || rowDim == null ? plane.h : Math.min(2 * maxW, Math.max(plane.h, block.h * intervals(blocks, rowDim).length));
  const T = tiles(shown, w, h, 3, F.count > 1, labelH);
  const items = [];
  blocks.forEach((b, i) => {
    const f = F.count > 1 ? F.of(b) : 0;
    if (!(f < shown)) return;
    const o = T.at(f);
    const [c0, c1] = b.index[colDim];
    const [r0, r1] = rowDim == null ? [0, 1] : b.index[rowDim];
    const rows = rowDim == null ? 1 : ext(rowDim);
    const x = o.x + (w * c0) / ext(colDim), y = o.y + (h * r0) / rows;
    items.push({ x: round(x), y: round(y), w: round((w * (c1 - c0)) / ext(colDim)), h: round((h * (r1 - r0)) / rows), block: i });
  });
  const labels = F.count > 1 ? [...Array(shown).keys()].map((f) => ({ x: T.at(f).x, y: T.at(f).y - labelH, text: F.label(f) })) : [];
  return { width: T.width, height: T.height, items, labels, hidden: F.count - shown };
}

/** Coordinates of row-major position p in `shape`. */
export function unravel(p, shape) {
  const out = new Array(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    out[d] = p % shape[d];
    p = Math.floor(p / shape[d]);
  }
  return out;
}

/**
 * Layout of a mesh's devices: 1-D a row (wrapped every MESH_WRAP), 2-D rows by the first
 * axis and columns by the second, 3-D and more small multiples over the leading axes
 * (captioned `a=0, b=1`; at most MAX_MESH_FACETS). Items: `{x, y, w, h, device, pos}`,
 * `device` null for an abstract mesh, `pos` the row-major position. `maxCell`, `facetW` and
 * `labelH` bound a cell, a facet and a caption line (larger in presentation mode).
 */
export function meshLayout(mesh, maxW = MESH_W, { maxCell = MAX_CELL, facetW = FACET_W, labelH = LABEL_H } = {}) {
  const shape = mesh.shape && mesh.shape.length ? mesh.shape : [Array.isArray(mesh.devices) ? mesh.devices.length : 1];
  const nd = shape.length;
  const n = prod(shape);
  const cols = nd === 1 ? Math.min(n, MESH_WRAP) : shape[nd - 1];
  const rows = nd === 1 ? Math.ceil(n / cols) : shape[nd - 2];
  const nf = nd > 2 ? prod(shape.slice(0, nd - 2)) : 1;
  const shown = Math.min(nf, MAX_MESH_FACETS);
  const cell = Math.max(12, Math.min(maxCell, Math.floor((nf > 1 ? facetW : maxW) / cols)));
  const T = tiles(shown, cols * cell, rows * cell, nf > 1 ? 3 : 1, nf > 1, labelH);
  const per = rows * cols;
  const items = [];
  for (let p = 0; p < Math.min(n, shown * per); p++) {
    const o = T.at(Math.floor(p / per)), q = p % per;
    items.push({ x: o.x + (q % cols) * cell, y: o.y + Math.floor(q / cols) * cell, w: cell, h: cell,
      device: Array.isArray(mesh.devices) ? mesh.devices[p] ?? null : null, pos: p });
  }
  const names = mesh.axis_names || [];
  const labels = nf > 1 ? [...Array(shown).keys()].map((f) => {
    const c = unravel(f, shape.slice(0, nd - 2));
    return { x: T.at(f).x, y: T.at(f).y - labelH, text: c.map((v, d) => `${names[d] ?? d}=${v}`).join(", ") };
  }) : [];
  return { width: T.width, height: T.height, items, labels, hidden: nf - shown, shape };
}

/**
 * The cell an arrow key moves to from cell i: the nearest whose centre lies that way,
 * off-axis distance counting double. -1 when there is none.
 */
export function neighbour(items, i, key) {
  const dir = { ArrowRight: [1, 0], ArrowLeft: [-1, 0], ArrowDown: [0, 1], ArrowUp: [0, -1] }[key];
  if (!dir || !items[i]) return -1;
  const cx = (it) => it.x + it.w / 2, cy = (it) => it.y + it.h / 2;
  const x = cx(items[i]), y = cy(items[i]);
  let best = -1, bestScore = Infinity;
  items.forEach((it, j) => {
    const dx = cx(it) - x, dy = cy(it) - y;
    const along = dx * dir[0] + dy * dir[1];
    if (j === i || along <= 0.5) return;
    const score = along + 2 * Math.abs(dir[0] ? dy : dx);
    if (score < bestScore) [best, bestScore] = [j, score];
  });
  return best;
}
