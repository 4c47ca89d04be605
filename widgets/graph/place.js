/**
 * Laid-out scene -> absolute geometry, shared by both renderers (SVG for small
 * drawings, Canvas 2D for big ones; see render.js, canvas.js), the minimap and hit
 * testing. Computed once per layout, so panning never walks the scene again.
 *
 *   conts  open containers, outermost first: {key, kind: "G"|"S"|"R"|"U"|"K"|"N", x, y, w, h, face}
 *   leaves drawn items: eqns, collapsed boxes, ports: {key, x, y, w, h, face}
 *          (an open owner eqn's header is a leaf too, with `open: true`)
 *   edges  {from, to, vars: varId[], pts: [[x, y]…]} one polyline per drawn edge
 *   labels {x, y, text} edge labels, at their place on the drawn curve
 *   boxes  Map key -> {x, y, w, h} of every container and leaf
 *   bbox   the root box
 */
import { VIN, VOUT } from "./scene.js";
import { controlPoints } from "./curve.js";

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

  // Placed containers: key -> [layout edges, origin]; one lookup per segment.
  const placed = new Map();
  for (const [ck, o] of origin) placed.set(ck, [results[scene.containers.get(ck).key].edges, o]);
  const edges = [];
  for (const ch of scene.chains) {
    // Join segments at box borders: the virtual entry/exit point on the border
    // replaces the box-boundary end of the neighbouring segment.
    const pts = [], sg = ch.segs;
    let ok = true, prevW = "";
    for (let q = 0; q < sg.length; q += 4) {
      const pc = placed.get(sg[q]);
      const e = pc && pc[0][sg[q + 1]];
      if (!e) {
        ok = false;
        break;
      }
      if (sg[q + 2].startsWith(VIN)) pts.pop();
      const ox = pc[1][0], oy = pc[1][1], src = e.pts;
      for (let j = prevW.startsWith(VOUT) ? 1 : 0; j < src.length; j++) {
        const x = src[j][0] + ox, y = src[j][1] + oy, last = pts[pts.length - 1];
        if (!last || Math.abs(last[0] - x) > 0.5 || Math.abs(last[1] - y) > 0.5) pts.push([x, y]);
      }
      prevW = sg[q + 3];
    }
    if (ok && pts.length >= 2) edges.push({ from: ch.from, to: ch.to, vars: [...ch.vars], pts });
  }
  const labels = [];
  for (const [ck, c] of scene.containers) {
    const r = results[c.key], o = origin.get(ck);
    if (!r || !o) continue;
    const at = labelSpots(r);
    for (const sid in at) {
      const text = scene.labels.get(ck + "|" + sid);
      if (!text) continue;
      const [lx, ly] = at[sid];
      labels.push({ x: lx + o[0], y: ly + o[1], text });
    }
  }
  const rb = scene.root ? boxes.get(scene.root.id) : null;
  return { conts, leaves, edges, labels, boxes, bbox: rb ? { x: rb.x, y: rb.y, w: rb.w, h: rb.h } : { x: 0, y: 0, w: 0, h: 0 } };
}

/**
 * Label spots of one container's layout result, relative to its box: segment id ->
 * [x, y] on the drawn curve. Kept per result object: the layout client hands back
 * the same object for a container key that did not change, so a toggle in a big
 * drawing recomputes only the containers it re-laid out (tens of thousands of
 * labels otherwise).
 */
const spotsOf = new WeakMap();
function labelSpots(r) {
  let at = spotsOf.get(r);
  if (at) return at;
  at = {};
  for (const sid in r.edges) {
    const e = r.edges[sid];
    if (e.lx != null) at[sid] = onCurve(e.pts, e.lx, e.ly);
  }
  spotsOf.set(r, at);
  return at;
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
