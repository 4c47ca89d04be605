/**
 * Canvas 2D renderer of placed geometry (place.js), for drawings too big for SVG
 * (thousands of DOM nodes make every pan and style change slow). It draws what the
 * SVG renderer draws — frames, headers, edges, edge labels, eqn boxes, chips, ports —
 * from the same geometry, so a layout looks the same in both.
 *
 * - Culling: only what intersects the viewport is drawn.
 * - Level of detail: no text that would be under TEXT_MIN_PX on screen; straight
 *   edge polylines and no arrowheads when zoomed far out.
 * - Batching: boxes are grouped by style and edges by colour, one path each, so a
 *   frame costs a few dozen canvas calls plus one subpath per visible element.
 * - Redraws are coalesced to one per animation frame.
 * - Hit testing (`hitTest`) maps a point to the element and part under it, with the
 *   same meaning as the SVG classes (toggle marker, box header, body).
 * - Playback (`setPlay`, replay.js): what a step has not reached yet is drawn faded and
 *   without text, the step just taken outlined; each step is one redraw (no animation).
 *
 * Colours come from the theme's CSS variables, read once per scene (`readPalette`) when the
 * canvas is in a document (read on a detached element they are all unresolved), and read
 * again when the host's theme changes (widgets/ui/theme-watch.js).
 */
import { BASE, textW, chipW, badgeBox } from "./metrics.js";
import { traceCurve, pieceSet } from "./curve.js";
import { readVars, watchTheme, whenConnected } from "../ui/theme-watch.js";
import { now } from "./timing.js";
import { indexOf } from "./spatial.js";
import * as ids from "./ids.js";

/** Text smaller than this on screen (px) is not drawn. */
export const TEXT_MIN_PX = 5;
/** Below this zoom edges are straight polylines without arrowheads. */
const SIMPLE_EDGES_K = 0.35;
/** Opacity of what a playback has not reached yet (theme.css `.jm-pb-future`). */
const FUTURE_ALPHA = 0.08;
/** How many recent frame times the canvas element keeps (`jmFrameMs`). */
const FRAME_LOG = 512;

// ---- colours -------------------------------------------------------------------

/**
 * The renderer's colours (as rgba() strings) and font, from the theme variables in
 * effect on `el` (connected: see createCanvasRenderer). Each variable is resolved by the
 * browser's own colour parser (a 1×1 canvas), one still unresolved from the theme's
 * fallback palette, and the colour-mixes of graph.css are computed here.
 */
export function readPalette(el) {
  const cs = el.ownerDocument.defaultView.getComputedStyle(el);
  const names = ["bg", "bg1", "bg2", "fg", "fg1", "fg2", "border", "border2", "brand", "teal", "teal-text", "edge-label", "mark", "mono"];
  const vars = readVars(el, names);
  const c = el.ownerDocument.createElement("canvas");
  c.width = c.height = 1;
  const x = c.getContext("2d", { willReadFrequently: true });
  const v = (name) => {
    x.clearRect(0, 0, 1, 1);
    x.fillStyle = "#888";
    x.fillStyle = vars[name];
    x.fillRect(0, 0, 1, 1);
    const d = x.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const s = (q) => `rgba(${q[0]},${q[1]},${q[2]},${q[3].toFixed(3)})`;
  /** color-mix(in srgb, a p, b); b null = transparent. */
  const mix = (a, b, p) => {
    if (!b) return s([a[0], a[1], a[2], a[3] * p]);
    const al = a[3] * p + b[3] * (1 - p) || 1;
    return s([0, 1, 2].map((i) => Math.round((a[i] * a[3] * p + b[i] * b[3] * (1 - p)) / al)).concat(al));
  };
  const [bg, bg1, bg2, fg, fg1, fg2, border, border2, brand, teal, tealText, label, mark] =
    ["bg", "bg1", "bg2", "fg", "fg1", "fg2", "border", "border2", "brand", "teal", "teal-text", "edge-label", "mark"].map(v);
  return {
    mono: vars.mono,
    frame: mix(fg, null, 0.025), frameStroke: s(border), rootFrame: s(bg1), rootStroke: s(border2),
    ownerFrame: mix(fg, null, 0.03), ownerStroke: mix(fg2, null, 0.6), headTitle: s(fg), muted: s(fg2),
    box: s(bg1), boxStroke: s(border), strong: s(fg2), bg2: s(bg2), prim: s(fg), text1: s(fg1), avals: s(tealText),
    port: mix(teal, bg1, 0.13), portStroke: s(teal), edge: mix(teal, bg, 0.62), arrow: mix(teal, bg, 0.75),
    halo: s(bg1), brand: s(brand), match: mix(brand, bg1, 0.18), label: s(label), mark: s(mark),
    // presentation mode draws every line thicker (theme.css --jm-stroke-scale)
    sw: parseFloat(cs.getPropertyValue("--jm-stroke-scale")) || 1,
  };
}

// ---- geometry helpers ------------------------------------------------------------

const overlaps = (b, r) => b.x < r.x1 && b.x + b.w > r.x0 && b.y < r.y1 && b.y + b.h > r.y0;
/** Below this many elements a list is filtered directly, above through its grid index (spatial.js). */
const INDEX_MIN = 512;
/** Indices (ascending) of the boxes of `list` (a list of `geo`) meeting rectangle r. */
function inView(geo, list, r) {
  if (list.length >= INDEX_MIN) return indexOf(list, geo.bbox).query(r);
  const out = [];
  for (let i = 0; i < list.length; i++) if (overlaps(list[i], r)) out.push(i);
  return out;
}
/** The boxes of `list` meeting r, in list order. */
const pick = (geo, list, r) => inView(geo, list, r).map((i) => list[i]);

/**
 * A container frame reaching beyond the view rectangle `r` (which has a margin past
 * the screen): only its part in `r` is filled and only its sides in `r` are stroked,
 * dashes anchored to the frame's corner so they stay put while panning. Stroking the
 * whole frame of a box 7 million px wide costs the rasteriser its every dash (a
 * quarter of a second per frame) although the screen shows a few hundred of them.
 */
function frameInView(ctx, c, r, fill, line, width, dash, k = 1) {
  const x0 = Math.max(c.x, r.x0), y0 = Math.max(c.y, r.y0);
  const x1 = Math.min(c.x + c.w, r.x1), y1 = Math.min(c.y + c.h, r.y1);
  if (x1 <= x0 || y1 <= y0) return;
  ctx.fillStyle = fill;
  ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
  const alpha = ctx.globalAlpha;
  ctx.globalAlpha = alpha * setDash(ctx, dash, k);
  ctx.lineWidth = width;
  ctx.strokeStyle = line;
  const side = (ax, ay, bx, by, phase) => {
    ctx.lineDashOffset = phase;
    ctx.beginPath();
    ctx.moveTo(ax, ay);
    ctx.lineTo(bx, by);
    ctx.stroke();
  };
  if (c.y >= r.y0) side(x0, c.y, x1, c.y, x0 - c.x);
  if (c.y + c.h <= r.y1) side(x0, c.y + c.h, x1, c.y + c.h, x0 - c.x);
  if (c.x >= r.x0) side(c.x, y0, c.x, y1, y0 - c.y);
  if (c.x + c.w <= r.x1) side(c.x + c.w, y0, c.x + c.w, y1, y0 - c.y);
  ctx.lineDashOffset = 0;
  ctx.globalAlpha = alpha;
}

/** Below this many screen px per period a dash pattern is drawn as a solid line. */
const DASH_MIN_PX = 3;

/**
 * Set dash pattern `dash` ("5,3", "" for solid) for zoom k; returns the opacity factor
 * to stroke with. A pattern whose period is under DASH_MIN_PX on screen is drawn as a
 * solid line as light as its dashes cover (a 7-million-px frame seen whole is thousands
 * of sub-pixel dashes to rasterise, and looks the same).
 */
function setDash(ctx, dash, k) {
  if (!dash) {
    ctx.setLineDash([]);
    return 1;
  }
  const d = dash.split(",").map(Number);
  const period = d.length % 2 ? 2 * d.reduce((a, b) => a + b, 0) : d.reduce((a, b) => a + b, 0);
  if (period * k >= DASH_MIN_PX) {
    ctx.setLineDash(d);
    return 1;
  }
  ctx.setLineDash([]);
  const on = d.reduce((a, b, i) => (i % 2 ? a : a + b), 0) + (d.length % 2 ? d.reduce((a, b, i) => (i % 2 ? a + b : a), 0) : 0);
  return Math.max(0.2, Math.min(1, on / period));
}

/**
 * Edge `e` as straight lines (far zoom), each cut to rectangle `r` (Liang–Barsky):
 * the edges across a whole 50k-eqn drawing cross any view, and the canvas then gets
 * the few hundred px of them in it, not lines thousands of screens long to clip. A
 * line already in this path (`seen`, a pieceSet: values sharing a route) is left out:
 * thousands of residuals of a 50k-eqn grad share their lines, and rasterising each
 * copy was most of a far-zoom frame.
 */
function polyline(ctx, e, r, seen) {
  const p = e.pts, ox = e.ox, oy = e.oy;
  let pen = false;
  for (let j = 1; j < p.length; j++) {
    const ax = p[j - 1][0] + ox, ay = p[j - 1][1] + oy, bx = p[j][0] + ox, by = p[j][1] + oy;
    if (Math.max(ax, bx) < r.x0 || Math.min(ax, bx) > r.x1 || Math.max(ay, by) < r.y0 || Math.min(ay, by) > r.y1 ||
      !seen(ax, ay, ax, ay, bx, by, bx, by)) {
      pen = false;
      continue;
    }
    const dx = bx - ax, dy = by - ay;
    let t0 = 0, t1 = 1;
    /** Cut to the side where d * t <= q. */
    const side = (d, q) => {
      if (d === 0) {
        if (q < 0) t1 = -1;
      } else if (d < 0) t0 = Math.max(t0, q / d);
      else t1 = Math.min(t1, q / d);
    };
    side(-dx, ax - r.x0);
    side(dx, r.x1 - ax);
    side(-dy, ay - r.y0);
    side(dy, r.y1 - ay);
    if (t0 > t1) {
      pen = false;
      continue;
    }
    if (!pen || t0 > 0) ctx.moveTo(ax + t0 * dx, ay + t0 * dy);
    ctx.lineTo(ax + t1 * dx, ay + t1 * dy);
    pen = t1 === 1;
  }
}

/** Where the ▸/▾ marker of an eqn face sits, relative to the box. */
function markerBox(face, w, m) {
  const mw = textW(face.marker, m.F_SMALL) + 8 * m.z;
  return { x: w - m.PAD_X - mw + 4 * m.z, y: m.MARK_Y, w: mw, h: m.MARK_H };
}

/**
 * The element under world point (x, y): `{key, part}` or null. Parts:
 * "toggle" (▸/▾ marker, a collapsed box, an open box's header), "grouphead"
 * (header of a sub-jaxpr group: toggles its owner), "body" (select).
 */
export function hitTest(geo, x, y) {
  const m = geo.m || BASE;
  const inside = (b, dx = 0, dy = 0) => x >= b.x + dx && x <= b.x + dx + b.w && y >= b.y + dy && y <= b.y + dy + b.h;
  // candidates from the grid index (spatial.js) of a big drawing, topmost (last drawn) first
  const near = { x0: x - 0.5, y0: y - 0.5, x1: x + 0.5, y1: y + 0.5 };
  const leaves = inView(geo, geo.leaves, near);
  for (let j = leaves.length - 1; j >= 0; j--) {
    const l = geo.leaves[leaves[j]], k = l.key;
    if (!inside(l)) continue;
    if (ids.isNode(k)) {
      const mb = l.face.marker && markerBox(l.face, l.w, m);
      return { key: k, part: mb && inside(mb, l.x, l.y) ? "toggle" : "body" };
    }
    return { key: k, part: ids.isAnyPort(k) ? "body" : "toggle" };
  }
  const conts = inView(geo, geo.conts, near);
  for (let j = conts.length - 1; j >= 0; j--) {
    const i = conts[j], c = geo.conts[i];
    if (!inside(c)) continue;
    if (c.kind === "G") return y <= c.y + m.HEAD_G && i > 0 ? { key: c.key, part: "grouphead" } : null;
    return c.kind !== "N" && y <= c.y + m.HEAD_HIT ? { key: c.key, part: "toggle" } : null;
  }
  return null;
}

// ---- drawing ---------------------------------------------------------------------

/**
 * Draw one frame of `geo` on `ctx` for view `v` = {x, y, k, w, h, dpr} (pan/zoom
 * transform and canvas size in CSS px). `paint` = {sel: key|null, hl: Set of edge
 * indices, match: Map key -> "match"|"has", marks?: Map key -> classes, markEdges?:
 * Map edge index -> classes}; `decorate(key)` -> {fill, stroke, dash, badge}|null.
 * `play` (replay.js, or null): `{p, current, leaf(key), edge(i), label(groupKey, sid)}`,
 * the step each element appears at; what appears after step `p` is drawn faded.
 * Returns counts of what was drawn (for tests and profiling).
 */
export function drawFrame(ctx, geo, ix, v, paint, decorate, pal, play = null) {
  const fc = frameContext(ctx, geo, ix, v, paint, decorate, pal, play);
  ctx.setTransform(v.dpr, 0, 0, v.dpr, 0, 0);
  ctx.clearRect(0, 0, v.w, v.h);
  ctx.setTransform(v.dpr * v.k, 0, 0, v.dpr * v.k, v.dpr * v.x, v.dpr * v.y);
  drawContainers(fc);
  drawEdges(fc);
  drawEdgeLabels(fc);
  const leaves = drawBoxes(fc);
  // Text, one font at a time (font changes are slow), and eqn chips and markers; not
  // on what a playback has not reached.
  const shown = play ? leaves.filter((l) => !fc.future(l.key)) : leaves;
  drawBoxTexts(fc, shown);
  drawChips(fc, shown);
  drawBadges(fc, shown);
  ctx.setLineDash([]);
  return fc.stats;
}

/**
 * What every part of one frame shares: the arguments of drawFrame, the sizes (`M`),
 * the culling rectangle `r` (content coordinates, with a margin), the counts drawn so
 * far, and the small drawing helpers.
 */
function frameContext(ctx, geo, ix, v, paint, decorate, pal, play) {
  const { k } = v;
  const m = 20 / k;
  const stats = { conts: 0, leaves: 0, edges: 0, texts: 0 };
  return {
    ctx, geo, ix, v, paint, decorate, pal, play, k, stats,
    M: geo.m || BASE,
    r: { x0: -v.x / k - m, y0: -v.y / k - m, x1: (v.w - v.x) / k + m, y1: (v.h - v.y) / k + m },
    future: play ? (key) => play.leaf(key) > play.p : () => false,
    futureEdge: play ? (i) => play.edge(i) > play.p : () => false,
    legible: (px) => px * k >= TEXT_MIN_PX,
    font: (px, bold) => (ctx.font = `${bold ? "600 " : ""}${px}px ${pal.mono}`),
    text: (t, x, y, colour) => {
      ctx.fillStyle = colour;
      ctx.fillText(t, x, y);
      stats.texts++;
    },
    rr: (x, y, w, h, rad) => (ctx.roundRect && k > 0.15 ? ctx.roundRect(x, y, w, h, rad) : ctx.rect(x, y, w, h)),
    stroke: (colour, width, dash) => {
      const alpha = ctx.globalAlpha;
      ctx.globalAlpha = alpha * setDash(ctx, dash, k);
      ctx.lineWidth = width * pal.sw;
      ctx.strokeStyle = colour;
      ctx.stroke();
      ctx.globalAlpha = alpha;
    },
  };
}

/** Frames of open containers, outermost first (their order in geo), then their headers. */
function drawContainers(fc) {
  const { ctx, geo, ix, paint, pal, r, k, M, rr, stroke, future, font, text } = fc;
  const conts = pick(geo, geo.conts, r);
  fc.stats.conts = conts.length;
  for (const c of conts) {
    ctx.globalAlpha = future(c.key) ? FUTURE_ALPHA : 1;
    const root = c.key === ix.root, sel = paint.sel === c.key;
    const fill = root ? pal.rootFrame : c.kind === "N" ? pal.ownerFrame : pal.frame;
    const line = sel ? pal.brand : root ? pal.rootStroke : c.kind === "N" ? pal.ownerStroke : pal.frameStroke;
    const dash = c.kind === "G" || c.kind === "N" ? "" : "5,3";
    if (c.x >= r.x0 && c.y >= r.y0 && c.x + c.w <= r.x1 && c.y + c.h <= r.y1) {
      ctx.beginPath();
      rr(c.x, c.y, c.w, c.h, 8);
      ctx.fillStyle = fill;
      ctx.fill();
      stroke(line, sel ? 2.5 : 1, dash);
    } else frameInView(ctx, c, r, fill, line, (sel ? 2.5 : 1) * pal.sw, dash, k);
  }
  ctx.globalAlpha = 1;
  if (!fc.legible(M.F_PRIM)) return;
  for (const c of conts) {
    if (c.kind === "N" || future(c.key)) continue;
    const tx = c.x + (c.kind === "G" ? 12 : 10) * M.z, ty = c.y + (c.kind === "G" ? M.HEAD_TY : M.SCOPE_TY);
    font(M.F_PRIM, true);
    text(c.face.title, tx, ty, pal.headTitle);
    font(M.F_SMALL);
    text(c.face.sub, tx + textW(c.face.title, M.F_PRIM) + 10 * M.z, ty, pal.muted);
  }
}

/** Edges: one path per colour; marked, then highlighted ones last, on top. */
function drawEdges(fc) {
  const { ctx, geo, paint, pal, r, k, v, stroke } = fc;
  const simple = k < SIMPLE_EDGES_K;
  // Tier 0 is what a playback has not reached: drawn first, faded.
  const lists = [[], [], [], []];
  const markEdges = paint.markEdges || new Map();
  for (const i of inView(geo, geo.edges, r)) {
    lists[fc.futureEdge(i) ? 0 : paint.hl.has(i) ? 3 : markEdges.has(i) ? 2 : 1].push(geo.edges[i]);
  }
  fc.stats.edges = lists[0].length + lists[1].length + lists[2].length + lists[3].length;
  lists.forEach((list, tier) => {
    if (!list.length) return;
    ctx.globalAlpha = tier ? 1 : FUTURE_ALPHA;
    const colour = [pal.edge, pal.edge, pal.mark, pal.brand][tier], head = [pal.arrow, pal.arrow, pal.mark, pal.brand][tier];
    ctx.beginPath();
    const seen = pieceSet();
    for (const e of list) {
      if (!simple) traceCurve(e.pts, ctx, e.ox, e.oy, r, seen, e.dir);
      else polyline(ctx, e, r, seen);
    }
    // at least one device pixel wide: a line shared by many values is drawn once (seen), and
    // a sub-pixel hairline drawn once would fade where their copies used to add up
    stroke(colour, Math.max(tier > 1 ? 2 : 1.3, 1 / (k * v.dpr * pal.sw)));
    if (simple) return;
    // No closePath(): fill() closes each triangle anyway, and Chromium's closePath
    // costs time linear in the path so far (20k arrowheads: 1.4 s instead of 2 ms).
    ctx.beginPath();
    for (const e of list) {
      const z = e.pts[e.pts.length - 1], x = z[0] + e.ox, y = z[1] + e.oy, back = 8 * (e.dir || 1);
      if (x < r.x0 || x > r.x1 || y < r.y0 || y > r.y1) continue;
      ctx.moveTo(x, y);
      ctx.lineTo(x - back, y - 3.4);
      ctx.lineTo(x - back, y + 3.4);
    }
    ctx.fillStyle = head;
    ctx.fill();
  });
  ctx.globalAlpha = 1;
}

/** Edge labels (haloed), when legible and reached by a playback. */
function drawEdgeLabels(fc) {
  const { ctx, geo, pal, r, M, play } = fc;
  if (!fc.legible(M.F_TINY)) return;
  fc.font(M.F_TINY);
  ctx.textAlign = "center";
  ctx.lineJoin = "round";
  ctx.lineWidth = 3;
  ctx.strokeStyle = pal.halo;
  ctx.setLineDash([]);
  for (const gr of pick(geo, geo.labelGroups, r)) {
    for (const l of gr.list()) {
      const x = l.x + gr.x, y = l.y + gr.y;
      if (x < r.x0 || x > r.x1 || y < r.y0 || y > r.y1) continue;
      if (play && play.label(gr.key, l.sid) > play.p) continue;
      ctx.strokeText(l.text, x, y + M.LABEL_DY);
      fc.text(l.text, x, y + M.LABEL_DY, pal.label);
    }
  }
  ctx.textAlign = "start";
}

/** Leaf boxes in view, batched by style; returns them. */
function drawBoxes(fc) {
  const { ctx, geo, ix, paint, decorate, pal, play, r } = fc;
  const leaves = pick(geo, geo.leaves, r);
  fc.stats.leaves = leaves.length;
  const groups = new Map();
  for (const l of leaves) {
    const st = boxStyle(l, ix, paint, decorate, pal, play);
    const id = st.join("|");
    if (!groups.has(id)) groups.set(id, [st, []]);
    groups.get(id)[1].push(l);
  }
  for (const [[fill, line, width, dash, alpha], list] of groups.values()) {
    ctx.globalAlpha = alpha;
    ctx.beginPath();
    for (const l of list) fc.rr(l.x, l.y, l.w, l.open ? l.face.h : l.h, ids.isPortColumn(l.key) ? l.h / 2 : 6);
    ctx.fillStyle = fill;
    ctx.fill();
    fc.stroke(line, width, dash);
  }
  ctx.globalAlpha = 1;
  ctx.setLineDash([]);
  return leaves;
}

/** Titles, port texts, subtitles, avals and in/out lines of the boxes `shown`. */
function drawBoxTexts(fc, shown) {
  const { pal, M, font, text } = fc;
  const { PAD_X } = M;
  if (fc.legible(M.F_PRIM)) {
    font(M.F_PRIM, true);
    for (const { key, x, y, h, face: f } of shown) {
      if (ids.isNode(key)) text(f.prim, x + PAD_X, y + M.Y1, pal.prim);
      else if (f.title) text(f.title, x + (f.bundle ? M.PORT_TX : PAD_X), y + (f.bundle ? h / 2 + M.PORT_TY : M.Y1), pal.prim);
    }
  }
  if (fc.legible(M.F_SMALL)) {
    font(M.F_SMALL);
    for (const { key, x, y, h, open, face: f } of shown) {
      const n = ids.isNode(key);
      if (ids.isAnyPort(key)) text(f.text, x + M.PORT_TX, y + h / 2 + M.PORT_TY, pal.prim);
      if (f.sub) text(f.sub, x + PAD_X, y + M.Y2, pal.muted);
      if (f.avals) text(f.avals, x + PAD_X, y + (n ? M.Y2 : M.Y3), pal.avals);
      if (f.io && !open) text(f.io, x + PAD_X, y + M.Y3, pal.muted);
    }
  }
}

/** An eqn's chips (after its prim) and its expand marker. */
function drawChips(fc, shown) {
  const { ctx, pal, M, stroke } = fc;
  const { F_PRIM, F_TINY, F_SMALL } = M;
  const chip = (x, y, w, h, label, dash, px) => {
    ctx.beginPath();
    ctx.rect(x, y, w, h);
    ctx.fillStyle = pal.bg2;
    ctx.fill();
    stroke(dash ? pal.strong : pal.boxStroke, 0.75, dash);
    if (fc.legible(px)) {
      fc.font(px);
      fc.text(label, x + 4 * M.z, y + (px === F_TINY ? M.CHIP_TY : M.MARK_TY), pal.text1);
    }
  };
  for (const l of shown) {
    const f = l.face;
    if (!ids.isNode(l.key)) continue;
    let cx = l.x + M.PAD_X + textW(f.prim, F_PRIM) + M.GAP;
    for (const c of f.chips) {
      chip(cx, l.y + M.CHIP_Y, chipW(c, M), M.CHIP_H, c, "2,1.5", F_TINY);
      cx += chipW(c, M) + 4 * M.z;
    }
    if (f.marker) {
      const mb = markerBox(f, l.w, M);
      chip(l.x + mb.x, l.y + mb.y, mb.w, mb.h, f.marker, "", F_SMALL);
    }
  }
}

/** Decoration badges, across the top edge of their box. */
function drawBadges(fc, shown) {
  const { ctx, decorate, pal, M } = fc;
  for (const l of decorate ? shown : []) {
    const d = decorate(l.key);
    if (!d || !d.badge) continue;
    const b = badgeBox(d.badge, l.w, M);
    ctx.beginPath();
    fc.rr(l.x + b.x, l.y + b.y, b.w, b.h, b.h / 2);
    ctx.fillStyle = pal.halo;
    ctx.fill();
    fc.stroke(d.stroke || pal.strong, 1);
    if (fc.legible(M.F_BADGE)) {
      fc.font(M.F_BADGE);
      fc.text(d.badge, l.x + b.x + 5 * M.z, l.y + b.y + b.h - 3.5 * M.z, pal.text1);
    }
  }
}

/** [fill, stroke, lineWidth, dash, alpha] of a leaf box, as SVG's CSS would paint it. */
function boxStyle(l, ix, paint, decorate, pal, play) {
  const k = l.key, kind = l.face.kind;
  let fill = pal.box, line = pal.boxStroke, width = 1, dash = "";
  if (ids.isPortColumn(k)) {
    fill = kind === "in" || ids.isBundle(k) ? pal.port : pal.box;
    line = pal.portStroke;
    width = kind === "out" && !ids.isBundle(k) ? 1.6 : 1.2;
    dash = ids.isBundle(k) ? "5,3" : kind === "const" ? "4,2.5" : "";
  } else if (l.open) {
    fill = pal.bg2;
    line = pal.ownerStroke;
  } else if (!ids.isNode(k)) {
    fill = pal.bg2;
    line = pal.strong;
    dash = "5,3";
  } else if (ix.items.has(k)) {
    line = pal.strong;
    width = 1.5;
  }
  const d = decorate && decorate(k);
  if (d && d.fill) fill = d.fill;
  if (d && d.stroke) line = d.stroke;
  if (d && d.dash) dash = d.dash;
  if (paint.marks && paint.marks.has(k)) {
    line = pal.mark;
    width = 2.5;
  }
  const m = paint.match.get(k);
  if (m) {
    line = pal.brand;
    if (m === "match") fill = pal.match;
    else dash = "3,2";
  }
  if (paint.sel === k) {
    line = pal.brand;
    width = 2.5;
  }
  if (play && play.current === k) {
    line = pal.brand;
    width = 3;
  }
  return [fill, line, width, dash, play && play.leaf(k) > play.p ? FUTURE_ALPHA : 1];
}

// ---- the renderer ------------------------------------------------------------------

/** A frame drawing more leaves and edges than this is worth keeping for a pan (panCache). */
const CACHE_MIN_DRAWN = 1500;
/** Most device pixels a pan cache may hold (4 bytes each). */
const CACHE_MAX_PX = 16e6;

/**
 * A pan cache: while only the translation changes (a drag), frames copy from an image
 * of the view with a margin around it, drawn once at this zoom, instead of drawing
 * thousands of elements again. It is drawn for the current state (`version`, which
 * every change but a pan bumps), zoom, size and pixel ratio only, so a copy shows
 * exactly what a full draw would; a shift of a fraction of a device pixel, or past the
 * margin, draws again.
 */
function panCache(doc) {
  let c = null;
  return {
    /** Copy the cached image to `ctx` for view `v` if it shows it; whether it did. */
    blit(ctx, v, version) {
      if (!c || c.version !== version || c.k !== v.k || c.dpr !== v.dpr || c.w !== v.w || c.h !== v.h) return false;
      const dx = (v.x - c.x) * v.dpr, dy = (v.y - c.y) * v.dpr;
      const whole = Math.abs(dx - Math.round(dx)) < 1e-6 && Math.abs(dy - Math.round(dy)) < 1e-6;
      if (!whole || Math.abs(dx) > c.mx * v.dpr || Math.abs(dy) > c.my * v.dpr) return false;
      const sx = Math.round(c.mx * v.dpr - dx), sy = Math.round(c.my * v.dpr - dy);
      const sw = Math.round(v.w * v.dpr), sh = Math.round(v.h * v.dpr);
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, sw, sh);
      ctx.drawImage(c.cv, sx, sy, sw, sh, 0, 0, sw, sh);
      return true;
    },
    /** Draw view `v` with a margin into the cache with `draw(ctx, v)`; its stats. */
    fill(v, version, draw) {
      const f = Math.min(0.5, (Math.sqrt(CACHE_MAX_PX / Math.max(1, v.w * v.h * v.dpr * v.dpr)) - 1) / 2);
      if (f < 0.1) return null;
      const mx = Math.round(v.w * f), my = Math.round(v.h * f);
      const cv = (c && c.cv) || doc.createElement("canvas");
      const W = Math.round((v.w + 2 * mx) * v.dpr), H = Math.round((v.h + 2 * my) * v.dpr);
      if (cv.width !== W || cv.height !== H) {
        cv.width = W;
        cv.height = H;
      }
      const cctx = cv.getContext("2d");
      if (!cctx) return null;
      const stats = draw(cctx, { ...v, x: v.x + mx, y: v.y + my, w: v.w + 2 * mx, h: v.h + 2 * my });
      c = { cv, version, k: v.k, dpr: v.dpr, w: v.w, h: v.h, x: v.x, y: v.y, mx, my, stats };
      return stats;
    },
    stats: () => c && c.stats,
    drop() {
      c = null;
    },
  };
}

/**
 * A renderer bound to one <canvas> that fills `host`. `setScene`, `setView`,
 * `setPaint` and `setDecorations` schedule one redraw per animation frame. A pan of a
 * big drawing copies from a pan cache (panCache) after its first frame.
 */
export function createCanvasRenderer(cv, host) {
  const ctx = cv.getContext("2d");
  /**
   * The renderer's state. `version` is bumped by every change but a pan (the pan cache's
   * validity); `last` is the last frame drawn; `pending` the scheduled frame;
   * `waiting` the wait for a detached host to be attached again.
   */
  const cr = {
    cv, ctx, host, win: host.ownerDocument.defaultView, cache: panCache(host.ownerDocument),
    geo: null, ix: null, pal: null, decorate: null, play: null, pending: 0, waiting: null,
    view: { x: 0, y: 0, k: 1 }, paint: { sel: null, hl: new Set(), match: new Map() },
    version: 0, last: null, drawnOnce: false,
  };
  // The host changed theme: read the colours again (a renderer whose host was drawn and has
  // since left the document stops watching: nobody disposes it).
  const unwatch = watchTheme(host, () => {
    if (cr.drawnOnce && !host.isConnected) return unwatch();
    cr.pal = null;
    cr.version++;
    if (cr.geo) schedule(cr);
  });
  /** A setter: apply `f`, count a change of what is drawn unless it is a pan, draw next frame. */
  const later = (f, pan = false) => () => {
    f();
    if (!pan) cr.version++;
    schedule(cr);
  };
  return {
    ready: !!ctx,
    setScene: (g, index) => later(() => {
      cr.geo = g;
      cr.ix = index;
      cr.pal = null; // read when drawn, on a connected element
    })(),
    setView: (t) => later(() => (cr.view = { x: t.x, y: t.y, k: t.k }), true)(),
    setPaint: (p) => later(() => (cr.paint = p))(),
    setDecorations: (fn) => later(() => (cr.decorate = fn))(),
    /** Playback state (drawFrame's `play`), or null for the complete drawing. */
    setPlay: (p) => later(() => (cr.play = p))(),
    /** The element under client point (cx, cy), see hitTest. */
    hit(cx, cy) {
      const b = cv.getBoundingClientRect(), view = cr.view;
      return cr.geo && hitTest(cr.geo, (cx - b.left - view.x) / view.k, (cy - b.top - view.y) / view.k);
    },
    /** Draw now (tests, and before a screenshot). */
    render: () => render(cr),
    /** Stop watching the host's theme. */
    dispose() {
      unwatch();
      if (cr.waiting) cr.waiting();
    },
    clear() {
      cr.geo = null;
      cr.play = null;
      cr.version++;
      cr.cache.drop();
      if (ctx) ctx.clearRect(0, 0, cv.width, cv.height);
    },
  };
}

/** Draw on the next animation frame (once, however many changes come before it). */
function schedule(cr) {
  if (!cr.pending) cr.pending = cr.win.requestAnimationFrame(() => render(cr));
}

/** One frame of view `v`: from the pan cache while panning a big drawing, else drawn. */
function frame(cr, v) {
  const { cache, last, version } = cr;
  const draw = (c, at) => drawFrame(c, cr.geo, cr.ix, at, cr.paint, cr.decorate, cr.pal, cr.play);
  if (cache.blit(cr.ctx, v, version)) return cache.stats();
  const whole = (d) => Math.abs(d * v.dpr - Math.round(d * v.dpr)) < 1e-6;
  const panning = last && last.version === version && last.k === v.k && last.w === v.w && last.h === v.h &&
    last.dpr === v.dpr && (last.x !== v.x || last.y !== v.y) && whole(v.x - last.x) && whole(v.y - last.y);
  if (panning && last.drawn > CACHE_MIN_DRAWN) {
    const stats = cache.fill(v, version, draw);
    if (stats && cache.blit(cr.ctx, v, version)) return stats;
  }
  return draw(cr.ctx, v);
}

/** Draw the current state now; its counts (null when nothing could be drawn). */
function render(cr) {
  const { cv, host } = cr;
  cr.pending = 0;
  if (!cr.ctx || !cr.geo) return null;
  if (!host.isConnected) {
    // Colours cannot be read off a detached element (they would paint black): draw once attached.
    cr.waiting = cr.waiting || whenConnected(host, () => {
      cr.waiting = null;
      schedule(cr);
    });
    return null;
  }
  if (!cr.pal) {
    cr.pal = readPalette(host);
    cr.version++;
  }
  cr.drawnOnce = true;
  const dpr = cr.win.devicePixelRatio || 1, w = host.clientWidth, h = host.clientHeight;
  if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(h * dpr)) {
    cv.width = Math.round(w * dpr);
    cv.height = Math.round(h * dpr);
  }
  const t0 = now();
  const v = { ...cr.view, w, h, dpr };
  const stats = frame(cr, v);
  cr.last = { ...v, version: cr.version, drawn: stats ? stats.leaves + stats.edges : 0 };
  // The last frames' draw times (ms), for bench/browser.py's pan/zoom measurement.
  const times = cv.jmFrameMs || (cv.jmFrameMs = []);
  if (times.push(now() - t0) > FRAME_LOG) times.shift();
  cv.jmStats = stats;
  return stats;
}
