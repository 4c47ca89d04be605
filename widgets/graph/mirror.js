/**
 * Mirrored drawings: placed geometry (place.js) flipped left-right, so a graph flows
 * right to left. The grad view draws a backward pass this way under its forward pass:
 * the gradient of each input comes out on the left, under that input, and the
 * cotangents run against the forward's direction.
 *
 * Positions are flipped, never glyphs: every box keeps its width and draws its text
 * left to right at its new place. Layout is untouched (the layout caches are shared
 * with unmirrored drawings); edges carry `dir: -1` so their end stubs and arrowheads
 * point the other way (curve.js, canvas.js). Edge points stay lazy, as in place.js:
 * a flipped edge flips its points when something first reads them.
 */

/** `geo` flipped around the vertical middle of its bounding box; `geo.mirrored` is true. */
export function mirrorGeometry(geo) {
  const X = 2 * geo.bbox.x + geo.bbox.w; // x -> X - x
  const flip = (b) => ({ ...b, x: X - b.x - b.w });
  const moved = new Map();
  const conts = geo.conts.map((c) => {
    const m = flip(c);
    moved.set(c, m);
    return m;
  });
  const leaves = geo.leaves.map((l) => {
    const m = flip(l);
    moved.set(l, m);
    return m;
  });
  const boxes = new Map();
  for (const [k, b] of geo.boxes) boxes.set(k, moved.get(b) || flip(b));
  const edges = geo.edges.map((e) => new MirroredEdge(e, X));
  const labelGroups = geo.labelGroups.map((gr) => {
    let list = null;
    return {
      key: gr.key, x: X - gr.x - gr.w, y: gr.y, w: gr.w, h: gr.h,
      list: () => (list ||= gr.list().map((l) => ({ x: gr.w - l.x, y: l.y, text: l.text, sid: l.sid }))),
    };
  });
  return {
    conts, leaves, edges, labelGroups, boxes, bbox: geo.bbox, m: geo.m, mirrored: true,
    get labels() {
      return labelGroups.flatMap((gr) => gr.list().map((l) => ({ x: l.x + gr.x, y: l.y + gr.y, text: l.text })));
    },
  };
}

/** A placed edge, flipped: absolute x = X - (ox + px) is (X - ox) + (-px). */
class MirroredEdge {
  constructor(e, X) {
    this.e = e;
    this.from = e.from;
    this.to = e.to;
    this.ox = X - e.ox;
    this.oy = e.oy;
    this.x = X - e.x - e.w;
    this.y = e.y;
    this.w = e.w;
    this.h = e.h;
    this.dir = -1;
    this.p = null;
  }
  get pts() {
    return (this.p ||= this.e.pts.map(([x, y]) => [-x, y]));
  }
  get vars() {
    return this.e.vars;
  }
  get segs() {
    return this.e.segs;
  }
}
