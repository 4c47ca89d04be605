/**
 * Laid-out scene -> absolute geometry, shared by both renderers (SVG for small
 * drawings, Canvas 2D for big ones; see render.js, canvas.js), the minimap and hit
 * testing. Computed once per layout, so panning never walks the scene again.
 *
 *   conts  open containers, outermost first: {key, kind: "G"|"S"|"R"|"U"|"K"|"N", x, y, w, h, face}
 *   leaves drawn items: eqns, collapsed boxes, ports: {key, x, y, w, h, face}
 *          (an open owner eqn's header is a leaf too, with `open: true`)
 *   edges  {from, to, vars: varId[], pts: [[x, y]…], ox, oy, x, y, w, h} one polyline
 *          per drawn edge: its points are relative to (ox, oy) (`edgePoints` gives
 *          them absolute); x, y, w, h bounds it (the union of its segments' boxes)
 *   labelGroups  edge labels per container: {key, x, y, w, h (the container), list()
 *          -> [{x, y, text, sid}] relative to (x, y)}, at their place on the drawn curve
 *          (`sid` the segment it labels, as in an edge's `segs`); `labels` lists them
 *          all, absolute (a getter: for SVG and tests)
 *   m      the sizes the scene was measured with (metrics.js), for the renderers
 *   boxes  Map key -> {x, y, w, h} of every container and leaf
 *   bbox   the root box
 *
 * An edge's points are kept relative to the container where its two ends meet, and
 * reused while every container it crosses has the same layout result; an edge whose
 * way changed is joined only when something reads its points (the canvas draws what
 * is in view). Labels are placed per container when first drawn. A toggle in a fully
 * expanded 50k-eqn drawing (80k edges, 50k labels) so joins and places only what the
 * viewport shows.
 */
import { VIN, VOUT } from "./scene.js";
import { controlPoints } from "./curve.js";

/** Absolute points of a placed edge. */
export const edgePoints = (e) => e.pts.map(([x, y]) => [x + e.ox, y + e.oy]);

/** Per chain (scene.js; a changed chain is a new object): its placement record (segmentsBox). */
const joined = new WeakMap();

export function placeScene(scene, results) {
  const boxes = new Map();
  const origin = new Map();
  const conts = [], leaves = [];
  const walk = (c, ox, oy) => {
    const r = results[c.key];
    if (!r) return;
    origin.set(c.id, [ox, oy]);
    const face = scene.faces.get(c.id);
    const box = { key: c.id, kind: c.kind, x: ox, y: oy, w: r.w, h: r.h, face };
    boxes.set(c.id, box);
    conts.push(box);
    if (c.kind === "N") leaves.push({ key: c.id, x: ox, y: oy, w: r.w, h: face.h, face, open: true });
    for (const it of c.items) {
      const p = r.pos[it.id];
      if (!p || it.virtual) continue;
      const x = ox + p[0], y = oy + p[1];
      if (it.child) walk(it.child, x, y);
      else {
        const leaf = { key: it.id, x, y, w: p[2], h: p[3], face: scene.faces.get(it.id) };
        boxes.set(it.id, leaf);
        leaves.push(leaf);
      }
    }
  };
  if (scene.root) walk(scene.root, 0, 0);

  // Placed containers: key -> [layout result, origin]; one lookup per segment.
  const placed = new Map();
  for (const [ck, o] of origin) placed.set(ck, [results[scene.containers.get(ck).key], o]);
  const edges = [];
  for (const ch of scene.chains) {
    const sg = ch.segs, at = placed.get(ch.lca);
    if (!at) continue;
    let g = joined.get(ch);
    for (let q = 0; g && q < sg.length; q += 4) {
      const pc = placed.get(sg[q]);
      if (!pc || pc[0] !== g.rs[q >> 2]) g = null;
    }
    const e = new PlacedEdge(ch, at[1], g, placed);
    if (e.w >= 0) edges.push(e);
  }
  const labelGroups = [];
  for (const [ck, c] of scene.containers) {
    const r = results[c.key], o = origin.get(ck), texts = scene.labels.get(ck);
    if (r && o && texts && texts.size) labelGroups.push({ key: ck, x: o[0], y: o[1], w: r.w, h: r.h, list: () => labelList(r, texts) });
  }
  const rb = scene.root ? boxes.get(scene.root.id) : null;
  return {
    conts, leaves, edges, labelGroups, boxes, m: scene.m, bbox: rb ? { x: rb.x, y: rb.y, w: rb.w, h: rb.h } : { x: 0, y: 0, w: 0, h: 0 },
    get labels() {
      return labelGroups.flatMap((gr) => gr.list().map((l) => ({ x: l.x + gr.x, y: l.y + gr.y, text: l.text })));
    },
  };
}

/** Per chain: its var list (chains are immutable; a changed chain is a new object). */
const varLists = new WeakMap();

/**
 * One drawn edge. Its box is known at once (from its segments' boxes); its points
 * are joined on first read, and kept for the next placement while its way is laid
 * out the same.
 */
class PlacedEdge {
  constructor(ch, base, g, placed) {
    this.from = ch.from;
    this.to = ch.to;
    this.ox = base[0];
    this.oy = base[1];
    this.ch = ch;
    if (!g) {
      g = segmentsBox(ch, placed, base);
      if (!g) return void (this.w = -1); // a segment is missing from the layout: not drawn
      joined.set(ch, g);
    }
    this.g = g;
    this.placed = placed;
    this.x = g.box.x + base[0];
    this.y = g.box.y + base[1];
    this.w = g.box.w;
    this.h = g.box.h;
  }
  get pts() {
    const g = this.g;
    if (!g.pts) g.pts = join(this.ch, this.placed, [this.ox, this.oy]);
    return g.pts;
  }
  get vars() {
    let v = varLists.get(this.ch);
    if (!v) varLists.set(this.ch, (v = [...this.ch.vars.keys()]));
    return v;
  }
  /** The segments it is drawn from, [container, segment id, v, w] flat (scene.js chains). */
  get segs() {
    return this.ch.segs;
  }
}

/** Per layout result: segment id -> [x0, y0, x1, y1] of its points. */
const segBoxes = new WeakMap();
/**
 * Chain `ch`'s placement record relative to `base`: {rs: the layout results on its
 * way, box: the union of its segments' boxes, pts: null until joined}; null when a
 * segment is missing from the layout.
 */
function segmentsBox(ch, placed, base) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  const sg = ch.segs, rs = [];
  for (let q = 0; q < sg.length; q += 4) {
    const pc = placed.get(sg[q]);
    if (!pc || !pc[0]) return null;
    rs.push(pc[0]);
    let bs = segBoxes.get(pc[0]);
    if (!bs) segBoxes.set(pc[0], (bs = new Map()));
    let b = bs.get(sg[q + 1]);
    if (!b) {
      const e = pc[0].edges[sg[q + 1]];
      if (!e) return null;
      b = [Infinity, Infinity, -Infinity, -Infinity];
      for (const [x, y] of e.pts) {
        if (x < b[0]) b[0] = x;
        if (y < b[1]) b[1] = y;
        if (x > b[2]) b[2] = x;
        if (y > b[3]) b[3] = y;
      }
      bs.set(sg[q + 1], b);
    }
    const dx = pc[1][0] - base[0], dy = pc[1][1] - base[1];
    if (b[0] + dx < x0) x0 = b[0] + dx;
    if (b[1] + dy < y0) y0 = b[1] + dy;
    if (b[2] + dx > x1) x1 = b[2] + dx;
    if (b[3] + dy > y1) y1 = b[3] + dy;
  }
  return x1 >= x0 ? { rs, box: { x: x0, y: y0, w: x1 - x0, h: y1 - y0 }, pts: null } : null;
}

/**
 * Join chain `ch`'s segments into one polyline (its points) relative to `base` (the origin of the
 * container where its ends meet): the virtual entry/exit point on a box border
 * replaces the box-boundary end of the neighbouring segment. The caller checked
 * that every segment is in the layout (segmentsBox).
 */
function join(ch, placed, base) {
  const pts = [], sg = ch.segs;
  let prevW = "";
  for (let q = 0; q < sg.length; q += 4) {
    const pc = placed.get(sg[q]);
    const e = pc[0].edges[sg[q + 1]];
    if (sg[q + 2].startsWith(VIN)) pts.pop();
    const ox = pc[1][0] - base[0], oy = pc[1][1] - base[1], src = e.pts;
    for (let j = prevW.startsWith(VOUT) ? 1 : 0; j < src.length; j++) {
      const x = src[j][0] + ox, y = src[j][1] + oy, last = pts[pts.length - 1];
      if (!last || Math.abs(last[0] - x) > 0.5 || Math.abs(last[1] - y) > 0.5) pts.push([x, y]);
    }
    prevW = sg[q + 3];
  }
  return pts;
}

/**
 * Labels of one container's layout result, relative to its box: [{x, y, text}] on
 * the drawn curves. Kept per result object: the layout client hands back the same
 * object for a container key that did not change, and a container's label texts
 * depend only on the container (scene.js), so each is placed once, when first drawn.
 */
const listOf = new WeakMap();
function labelList(r, texts) {
  let out = listOf.get(r);
  if (out) return out;
  out = [];
  for (const sid in r.edges) {
    const e = r.edges[sid], text = texts.get(sid);
    if (e.lx == null || !text) continue;
    const [x, y] = onCurve(e.pts, e.lx, e.ly);
    out.push({ x, y, text, sid });
  }
  listOf.set(r, out);
  return out;
}

/**
 * Where the B-spline passes near control point (x, y) of `pts`: dagre puts an
 * edge label on a bend point, which the smooth curve does not go through, so the
 * label moves onto the drawn line.
 */
export function onCurve(pts, x, y) {
  const p = controlPoints(pts);
  let j = 0;
  p.forEach((q, i) => {
    if (Math.hypot(q[0] - x, q[1] - y) < Math.hypot(p[j][0] - x, p[j][1] - y)) j = i;
  });
  if (j === 0 || j === p.length - 1) return [x, y];
  return [0, 1].map((k) => (p[j - 1][k] + 4 * p[j][k] + p[j + 1][k]) / 6);
}
