/**
 * Canvas 2D drawing of the timeline: one row per lane (name at the left), a time
 * axis with µs/ms/s ticks, and an overview strip of the whole capture under the rows.
 *
 * Nothing is drawn per call. Each frame aggregates the visible lanes into 1 px
 * buckets (model.js `aggregate`) and draws per bucket:
 * - a bar whose stacked heights are the share of the bucket's time in each phase
 *   (dispatch at the bottom, then the device-time extension in a lighter shade of it,
 *   then trace, lower, compile); equal neighbours merge into one rectangle, so a long
 *   compile is one rectangle and 100,000 short hits are at most one per pixel;
 * - hits as teal ticks (taller for more calls), misses as orange markers, red when
 *   a recompile-storm finding names the call;
 * - "N calls" in each 64 px cell above dense runs (how many calls the stretch below holds).
 * Rectangles are batched per colour (one path each). Text is fillText only: document
 * strings are never markup here either.
 *
 * Presentation mode draws the same frame at scale `k` (PRESENT_SCALE): every size, font and
 * marker is multiplied, so the smallest text is 17.6 px, and strokes follow
 * the theme's `--jm-stroke-scale`. During playback (`st.playback`) what had not happened yet
 * is veiled, a line marks the present and the step's calls or compiles are framed.
 */
import { aggregate, bucketRow } from "./model.js";
import { ticks } from "./time.js";
import { readVars } from "../ui/theme-watch.js";
import { plural } from "../ui/words.js";

/** Geometry in CSS px. */
export const GEO = { labelW: 170, axisH: 22, rowH: 37, gapH: 8, overviewH: 24, padR: 10 };
/** Row inner bands: count text (baseline), bars, markers (offsets from the row top). */
const BAND = { count: 10, barY: 12, barH: 13, markY: 27, markH: 8 };
/** Cells (px) over which call counts are written when calls are dense. */
const COUNT_CELL = 64;
/** A phase present in a bucket is at least this tall (px), so short spans stay visible. */
const MIN_H = 2;
/** Font sizes (px) at scale 1: lane names, axis and lane subtitles, call counts; none under 11 px (legible at a desk). */
export const FONT = { name: 12, small: 11, count: 11 };
/** Scale of presentation mode: the 11 px texts become 17.6 px (at least 14 px on a projector). */
export const PRESENT_SCALE = 1.6;
/** How much of the not-yet-happened part the playback veil hides. */
const VEIL = 0.84;

const scaled = (o, k) => Object.fromEntries(Object.entries(o).map(([key, v]) => [key, v * k]));
const SIZES = new Map();
/** Geometry, bands and fonts at scale `k` (memoised: two scales are ever used). */
export function sizes(k = 1) {
  let z = SIZES.get(k);
  if (!z) SIZES.set(k, (z = { k, geo: scaled(GEO, k), band: scaled(BAND, k), font: scaled(FONT, k), cell: COUNT_CELL * k, minH: MIN_H * k }));
  return z;
}

/** Frame layout for a canvas `w` px wide showing `rows` lane rows, at scale `k`. */
export function frameLayout(w, rows, k = 1) {
  const { geo, band } = sizes(k);
  const plotX = geo.labelW, plotW = Math.max(40, w - geo.labelW - geo.padR);
  const rowsY = geo.axisH, rowsH = rows * geo.rowH;
  const ovY = rowsY + rowsH + geo.gapH;
  return { w, k, plotX, plotW, rowsY, rowsH, rowH: geo.rowH, markY: band.markY + 3 * k, ovY, ovH: geo.overviewH, h: ovY + geo.overviewH + 6 * k };
}

/**
 * Colours and fonts from the theme variables in effect on `el` (theme.css, and
 * timeline.css for the phase colours, light and dark). `el` must be in a document
 * (plot.js waits for that): a variable read on a detached element is "", which a canvas
 * ignores, painting everything in its default black. One still unresolved takes the theme's
 * fallback value (widgets/ui/theme-watch.js), so no colour is ever "".
 */
export function readPalette(el) {
  const v = readVars(el, ["fg", "fg2", "border2", "bg2", "brand", "teal", "grad", "red", "mono", "sans", "canvas", "tl-trace", "tl-lower", "tl-compile", "tl-exec"]);
  const pal = {};
  for (const k of ["fg", "fg2", "border2", "bg2", "brand", "teal", "grad", "red", "mono", "sans", "canvas"]) pal[k] = v[k];
  for (const k of ["trace", "lower", "compile", "exec"]) pal[k] = v["tl-" + k];
  const cs = el.ownerDocument.defaultView.getComputedStyle(el);
  pal.stroke = Number.parseFloat(cs.getPropertyValue("--jm-stroke-scale")) || 1;
  return pal;
}

/** `s` cut with "…" to fit `maxW` px (measureText when the context has it, else ~0.6 em a char). */
export function fitText(ctx, s, maxW, em) {
  const width = (x) => {
    const m = ctx.measureText && ctx.measureText(x);
    return m && typeof m.width === "number" ? m.width : x.length * em * 0.6;
  };
  if (width(s) <= maxW) return s;
  let lo = 0, hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (width(s.slice(0, mid) + "…") <= maxW) lo = mid;
    else hi = mid - 1;
  }
  return s.slice(0, lo) + "…";
}

/** Rectangles batched by style: add(key, x, y, w, h), then fill each batch as one path. */
function batches() {
  const m = new Map();
  return {
    add(key, x, y, w, h) {
      let b = m.get(key);
      if (!b) m.set(key, (b = []));
      b.push(x, y, w, h);
    },
    fill(ctx, style) {
      let n = 0;
      for (const [key, b] of m) {
        const [fill, alpha] = style(key);
        ctx.globalAlpha = alpha;
        ctx.fillStyle = fill;
        ctx.beginPath();
        for (let i = 0; i < b.length; i += 4) ctx.rect(b[i], b[i + 1], b[i + 2], b[i + 3]);
        ctx.fill();
        n += b.length / 4;
      }
      ctx.globalAlpha = 1;
      m.clear();
      return n;
    },
  };
}

/** Stack order of the bar (bottom first) and each layer's colour key and alpha. */
const STACK = [["exec", "exec", 0.9], ["device", "exec", 0.35], ["trace", "trace", 1], ["lower", "lower", 1], ["compile", "compile", 1]];

/**
 * Bars of one aggregated row into `out` (batches keyed by STACK index): heights are the
 * share of the bucket's time per phase, at least MIN_H when present, scaled down to
 * `barH` when they add up to more, rounded to quarter pixels; equal neighbouring
 * rectangles merge.
 */
function rowBars(agg, r, x0, bw, yBottom, barH, out, heights, minH = MIN_H) {
  const nb = agg.nb, bu = agg.bucketUs;
  const rows = STACK.map(([f]) => bucketRow(agg, f, r));
  const run = STACK.map(() => ({ x: 0, w: 0, y: 0, h: 0 }));
  const flush = (i) => {
    const q = run[i];
    if (q.w > 0 && q.h > 0) out.add(i, q.x, q.y, q.w, q.h);
    q.w = 0;
  };
  for (let b = 0; b < nb; b++) {
    let total = 0;
    for (let i = 0; i < STACK.length; i++) {
      const v = rows[i][b];
      const hgt = v > 0.001 * bu ? Math.max(minH, (Math.min(v, bu) / bu) * barH) : 0;
      heights[i] = hgt;
      total += hgt;
    }
    const k = total > barH ? barH / total : 1;
    let y = yBottom;
    const x = x0 + b * bw;
    for (let i = 0; i < STACK.length; i++) {
      const hgt = Math.round(heights[i] * k * 4) / 4; // quarter px: neighbours that look equal merge
      const q = run[i];
      if (hgt > 0 && q.w > 0 && q.y === y - hgt && q.h === hgt && Math.abs(q.x + q.w - x) < 1e-6) q.w += bw;
      else {
        flush(i);
        if (hgt > 0) Object.assign(q, { x, w: bw, y: y - hgt, h: hgt });
      }
      y -= hgt;
    }
  }
  for (let i = 0; i < STACK.length; i++) flush(i);
}

/**
 * Markers of one row: hit ticks (height ~ log of the count), miss triangles (red in a
 * storm), and call counts per COUNT_CELL px where more than two calls share a cell.
 * Returns the count labels [{x, y, text}] (drawn after the shapes).
 */
function rowMarks(agg, r, x0, bw, y, ticksOut, missPath, stormPath, z = sizes(1)) {
  const { band: B, cell: CELL, k } = z;
  const hits = bucketRow(agg, "hits", r), misses = bucketRow(agg, "misses", r), storm = bucketRow(agg, "storm", r);
  const labels = [];
  let lastMiss = -Infinity, cell = -1, cellN = 0, cellX = 0;
  const em = 0.6 * z.font.count; // a character of the count's text, about
  const endCell = () => {
    if (cellN <= 2) return;
    const x = Math.min(cellX + CELL, x0 + agg.nb * bw) - 2 * k, prev = labels[labels.length - 1];
    // A cell cut short by the plot's end would write over its neighbour's count: one count for both.
    if (prev && x - countText(cellN).length * em < prev.x + 4 * k) {
      prev.n += cellN;
      prev.x = x;
      prev.text = countText(prev.n);
    } else labels.push({ x, y: y + B.count, n: cellN, text: countText(cellN) });
  };
  for (let b = 0; b < agg.nb; b++) {
    const x = x0 + b * bw;
    const c = Math.floor((b * bw) / CELL);
    if (c !== cell) {
      endCell();
      cell = c;
      cellN = 0;
      cellX = x0 + c * CELL;
    }
    const nh = hits[b], nm = misses[b];
    cellN += nh + nm;
    if (nh) {
      const th = Math.min(B.markH, k * (3 + 1.5 * Math.log2(nh)));
      ticksOut.add(0, x, y + B.markY + B.markH - th, Math.max(k, bw), th);
    }
    if (nm && x - lastMiss >= 3 * k) {
      const cx = x + bw / 2, ty = y + B.markY;
      const p = storm[b] ? stormPath : missPath;
      p.push(cx - 3.5 * k, ty, cx + 3.5 * k, ty, cx, ty + 7 * k);
      lastMiss = x;
    }
  }
  endCell();
  return labels;
}

/** The count written over a dense stretch: "12 calls", "3.4k calls" (fits the 64 px cell). */
export function countText(n) {
  return `${n >= 10000 ? Math.round(n / 1000) + "k" : n >= 1000 ? (n / 1000).toFixed(1).replace(/\.0$/, "") + "k" : n} calls`;
}

/** Fill triangles given as flat [x0, y0, x1, y1, x2, y2, …] in one path. */
function triangles(ctx, pts, fill) {
  if (!pts.length) return;
  ctx.fillStyle = fill;
  ctx.beginPath();
  for (let i = 0; i < pts.length; i += 6) {
    ctx.moveTo(pts[i], pts[i + 1]);
    ctx.lineTo(pts[i + 2], pts[i + 3]);
    ctx.lineTo(pts[i + 4], pts[i + 5]);
  }
  ctx.fill();
}

/**
 * Sum of all lanes' buckets over the whole capture, `width` px wide (the overview).
 * Lanes are aggregated 32 at a time so memory stays small with many lanes.
 */
export function overviewAgg(tl, width, missesOnly) {
  const nb = Math.max(1, Math.ceil(width / 2));
  const sum = { nb, bucketUs: Math.max(1, tl.duration) / nb, phases: new Float64Array(nb), exec: new Float64Array(nb), misses: new Uint32Array(nb), storm: new Uint32Array(nb) };
  let reuse = null;
  for (let l0 = 0; l0 < tl.lanes.length; l0 += 32) {
    const lanes = [];
    for (let l = l0; l < Math.min(tl.lanes.length, l0 + 32); l++) lanes.push(l);
    const a = aggregate(tl, lanes, 0, Math.max(1, tl.duration), width, { bucketPx: 2, missesOnly, reuse: reuse && reuse.size === lanes.length * nb ? reuse : null });
    reuse = a;
    for (let r = 0; r < lanes.length; r++) {
      for (let b = 0, o = r * nb; b < nb; b++, o++) {
        sum.phases[b] += a.trace[o] + a.lower[o] + a.compile[o];
        sum.exec[b] += a.exec[o] + a.device[o];
        sum.misses[b] += a.misses[o];
        sum.storm[b] += a.storm[o];
      }
    }
  }
  return sum;
}

/** Row backgrounds: stripes, the focused lane. */
function rowBackgrounds(f) {
  const { ctx, v, pal, L } = f;
  v.rows.forEach((l, r) => {
    const y = L.rowsY + r * L.rowH;
    if (l === v.focus) {
      ctx.globalAlpha = 0.1;
      ctx.fillStyle = pal.brand;
      ctx.fillRect(0, y, v.w, L.rowH);
    } else if (r % 2) {
      ctx.globalAlpha = 0.5;
      ctx.fillStyle = pal.bg2;
      ctx.fillRect(0, y, v.w, L.rowH);
    }
    ctx.globalAlpha = 1;
  });
}

/** Axis: tick labels on top, grid lines through the rows. */
function drawAxis(f) {
  const { ctx, v, pal, L, xOf } = f, { k, font: F } = f.z;
  const { plotX, rowsY } = L;
  ctx.font = `${F.small}px ${pal.sans}`;
  ctx.textBaseline = "middle";
  ctx.textAlign = "center";
  ctx.strokeStyle = pal.border2;
  ctx.beginPath();
  const tk = ticks(v.t0, v.t1, L.plotW, 90 * k);
  for (const t of tk) {
    const x = Math.round(xOf(t.t)) + 0.5;
    ctx.moveTo(x, rowsY - 4 * k);
    ctx.lineTo(x, rowsY + L.rowsH);
  }
  ctx.moveTo(plotX - 0.5, 0);
  ctx.lineTo(plotX - 0.5, rowsY + L.rowsH);
  ctx.moveTo(0, rowsY - 0.5);
  ctx.lineTo(v.w, rowsY - 0.5);
  ctx.stroke();
  ctx.fillStyle = pal.fg2;
  for (const t of tk) ctx.fillText(t.label, xOf(t.t), rowsY / 2);
}

/** Lane labels; during playback the counts so far, and lanes with nothing yet faded. */
function laneLabels(f) {
  const { ctx, tl, v, pal, L, z, pb } = f, { k, font: F } = z;
  ctx.textAlign = "left";
  v.rows.forEach((l, r) => {
    const lane = tl.lanes[l], y = L.rowsY + r * L.rowH;
    const so = pb && pb.counts ? pb.counts[l] : null;
    const idle = so && !so.calls && !so.traces && !so.compiles;
    ctx.globalAlpha = idle ? 0.35 : 1;
    ctx.font = `${l === v.focus ? "600 " : ""}${F.name}px ${pal.mono}`;
    ctx.fillStyle = l === v.focus ? pal.brand : pal.fg;
    ctx.fillText(fitText(ctx, lane.name, z.geo.labelW - 16 * k, F.name), 8 * k, y + 11.5 * k);
    ctx.font = `${F.small}px ${pal.sans}`;
    ctx.fillStyle = pal.fg2;
    const c = so || lane;
    const sub = lane.origin === "events" ? `compile events · ${plural(c.compiles, "compile")}`
      : `${plural(c.calls, "call")} · ${plural(c.misses, "miss", "misses")}`;
    ctx.fillText(fitText(ctx, sub, z.geo.labelW - 16 * k, F.small), 8 * k, y + 27 * k);
    ctx.globalAlpha = 1;
  });
}

/** Stacked phase bars, hit ticks, miss markers and counts of the rows shown (clipped by the caller). */
function laneMarks(f, cache) {
  const { ctx, tl, v, st, pal, L, z } = f, { band: B, font: F } = z;
  const agg = aggregate(tl, v.rows, v.t0, v.t1, L.plotW, { bucketPx: 1, missesOnly: st.missesOnly, reuse: cache.agg });
  cache.agg = agg;
  const bw = L.plotW / agg.nb;
  const bars = batches(), tickB = batches(), heights = new Float64Array(STACK.length);
  const missPts = [], stormPts = [];
  let labels = [];
  for (let r = 0; r < v.rows.length; r++) {
    const y = L.rowsY + r * L.rowH;
    rowBars(agg, r, L.plotX, bw, y + B.barY + B.barH, B.barH, bars, heights, z.minH);
    labels = labels.concat(rowMarks(agg, r, L.plotX, bw, y, tickB, missPts, stormPts, z));
  }
  let rects = bars.fill(ctx, (i) => [pal[STACK[i][1]], STACK[i][2]]);
  rects += tickB.fill(ctx, () => [pal.teal, 1]);
  triangles(ctx, missPts, pal.grad);
  triangles(ctx, stormPts, pal.red);
  ctx.font = `${F.count}px ${pal.sans}`;
  ctx.textAlign = "right";
  ctx.textBaseline = "alphabetic";
  ctx.fillStyle = pal.fg2;
  for (const q of labels) ctx.fillText(q.text, q.x, q.y);
  return { agg, rects, labels: labels.length };
}

/** The brushed range and the selected call. */
function drawSelection(f) {
  const { ctx, tl, v, st, pal, L, xOf, z, line } = f;
  if (st.brush) {
    const a = xOf(st.brush[0]), b = xOf(st.brush[1]);
    ctx.globalAlpha = 0.13;
    ctx.fillStyle = pal.brand;
    ctx.fillRect(a, L.rowsY, Math.max(1, b - a), L.rowsH);
    ctx.globalAlpha = 1;
    ctx.strokeStyle = pal.brand;
    ctx.strokeRect(a, L.rowsY + 0.5, Math.max(1, b - a), L.rowsH - 1);
  }
  if (st.selected >= 0 && st.selected < tl.calls.n) {
    const c = st.selected, r = v.rows.indexOf(tl.calls.lane[c]);
    if (r >= 0) frameCall(ctx, xOf(tl.calls.start[c]), xOf(tl.effEnd[c]), L.rowsY + r * L.rowH, z, pal.brand, 2 * line);
  }
}

/**
 * Draw one frame.
 * @param ctx  a 2D context (or a recording stand-in)
 * @param tl   readTimeline(doc)
 * @param v    `{w, h, dpr, t0, t1, rows, focus, k}`: rows are lane positions top to bottom,
 *             focus a lane or null, k the scale (1)
 * @param st   `{selected, brush, pick, missesOnly, playback}`: selected a call or -1, brush
 *             [a, b] or null, pick [a, b] or null (a window being chosen on the overview),
 *             playback null or `{now, marks: [{lane, t0, t1}], counts}` (counts: per-lane rows
 *             so far, model.js laneRows, or null)
 * @param pal  readPalette(...)
 * @param cache object kept between frames (aggregate buffers, the overview)
 * @returns {{agg: any, rects: number, labels: number}} the aggregate drawn, the rectangles
 *   filled and the count labels written
 */
export function drawFrame(ctx, tl, v, st, pal, cache = {}) {
  const z = sizes(v.k || 1), k = z.k;
  const L = frameLayout(v.w, v.rows.length, k);
  const span = Math.max(1e-9, v.t1 - v.t0);
  const xOf = (t) => L.plotX + ((t - v.t0) / span) * L.plotW;
  const dpr = v.dpr || 1;
  const line = (pal.stroke || 1) * Math.max(1, k * 0.75);
  const pb = st.playback || null;
  const f = { ctx, tl, v, st, pal, z, L, xOf, line, pb };
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, v.w, v.h);
  ctx.lineWidth = Math.max(1, k * 0.75); // grid lines stay thin: structure, not data
  rowBackgrounds(f);
  drawAxis(f);
  laneLabels(f);
  // Bars, ticks and markers of the visible lanes, clipped to the plot.
  ctx.save();
  ctx.beginPath();
  ctx.rect(L.plotX, L.rowsY, L.plotW, L.rowsH);
  ctx.clip();
  const drawn = laneMarks(f, cache);
  if (pb) drawPresent(ctx, tl, L, v, pb, pal, xOf, z, line);
  drawSelection(f);
  ctx.restore();
  drawn.rects += drawOverview(ctx, tl, L, v, st, pal, cache, z);
  return drawn;
}

/** A frame around the extent [a, b] (px) of one row whose top is `y`: at least 5 px wide. */
function frameCall(ctx, a, b, y, z, color, width) {
  const { band: B, k } = z;
  const min = 5 * k, w = Math.max(min, b - a), x = b - a < min ? (a + b) / 2 - min / 2 : a;
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.strokeRect(x - width / 2, y + B.barY - 2 * k, w + width, B.markY + B.markH - B.barY + 3 * k);
  ctx.lineWidth = 1;
}

/**
 * Playback: veil what had not happened by `pb.now`, draw the present as a line and frame the
 * step's extents (`pb.marks`). Inside the plot's clip.
 */
function drawPresent(ctx, tl, L, v, pb, pal, xOf, z, line) {
  const x = Math.max(L.plotX, Math.min(L.plotX + L.plotW, xOf(pb.now)));
  ctx.globalAlpha = VEIL;
  ctx.fillStyle = pal.canvas || "#ffffff";
  ctx.fillRect(x, L.rowsY, L.plotX + L.plotW - x, L.rowsH);
  ctx.globalAlpha = 1;
  ctx.strokeStyle = pal.brand;
  ctx.lineWidth = 1.5 * line;
  ctx.beginPath();
  ctx.moveTo(x, L.rowsY);
  ctx.lineTo(x, L.rowsY + L.rowsH);
  ctx.stroke();
  for (const m of pb.marks || []) {
    const r = v.rows.indexOf(m.lane);
    if (r < 0) continue;
    // Only what has happened so far of the step is framed (the sweep reveals it).
    const end = Math.min(m.t1, Math.max(m.t0, pb.now));
    ctx.globalAlpha = 0.12;
    ctx.fillStyle = pal.brand;
    const a = xOf(m.t0), b = xOf(end);
    ctx.fillRect(a, L.rowsY + r * L.rowH, Math.max(2 * z.k, b - a), L.rowH);
    ctx.globalAlpha = 1;
    frameCall(ctx, a, b, L.rowsY + r * L.rowH, z, pal.brand, 2.5 * line);
  }
}

/** The overview strip: the whole capture summed over lanes, the window and the brush. */
function drawOverview(ctx, tl, L, v, st, pal, cache, z = sizes(1)) {
  const key = `${L.plotW}|${st.missesOnly ? 1 : 0}|${tl.duration}`;
  if (!cache.overview || cache.overviewKey !== key) {
    cache.overview = overviewAgg(tl, L.plotW, st.missesOnly);
    cache.overviewKey = key;
  }
  const { k } = z;
  const o = cache.overview, bw = L.plotW / o.nb, y0 = L.ovY, hh = L.ovH;
  const dur = Math.max(1, tl.duration);
  const xOf = (t) => L.plotX + (t / dur) * L.plotW;
  ctx.fillStyle = pal.bg2;
  ctx.fillRect(L.plotX, y0, L.plotW, hh);
  ctx.font = `${z.font.small}px ${pal.sans}`;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillStyle = pal.fg2;
  ctx.fillText("whole capture", 8 * k, y0 + hh / 2);
  const out = batches();
  // Heights: share of the bucket busy (summed over lanes, so it may exceed one: capped).
  const top = 4 * k, room = hh - 8 * k;
  for (let b = 0; b < o.nb; b++) {
    const x = L.plotX + b * bw;
    const he = Math.min(1, o.exec[b] / o.bucketUs), hp = Math.min(1, o.phases[b] / o.bucketUs);
    const e = he > 0 ? Math.max(1.5 * k, he * room) : 0, p = hp > 0 ? Math.max(1.5 * k, hp * room) : 0;
    if (e) out.add("exec", x, y0 + hh - e, bw, e);
    if (p) out.add("compile", x, y0 + hh - e - p < y0 + top ? y0 + top : y0 + hh - e - p, bw, p);
    if (o.misses[b]) out.add(o.storm[b] ? "red" : "grad", x, y0, Math.max(1, bw), top);
  }
  const n = out.fill(ctx, (key) => [pal[key], key === "exec" ? 0.8 : 1]);
  if (st.playback) {
    const x = Math.max(L.plotX, Math.min(L.plotX + L.plotW, xOf(st.playback.now)));
    ctx.globalAlpha = VEIL;
    ctx.fillStyle = pal.bg2;
    ctx.fillRect(x, y0, L.plotX + L.plotW - x, hh);
    ctx.globalAlpha = 1;
  }
  // Outside the window dimmed, the window framed, the brush shaded.
  const a = Math.max(L.plotX, xOf(v.t0)), b = Math.min(L.plotX + L.plotW, xOf(v.t1));
  ctx.globalAlpha = 0.12;
  ctx.fillStyle = pal.fg;
  if (a > L.plotX) ctx.fillRect(L.plotX, y0, a - L.plotX, hh);
  if (b < L.plotX + L.plotW) ctx.fillRect(b, y0, L.plotX + L.plotW - b, hh);
  ctx.globalAlpha = 1;
  ctx.strokeStyle = pal.brand;
  ctx.lineWidth = Math.max(1, k * 0.75) * (pal.stroke || 1);
  ctx.strokeRect(a + 0.5, y0 + 0.5, Math.max(2, b - a - 1), hh - 1);
  ctx.lineWidth = 1;
  for (const r of [st.brush, st.pick]) {
    if (!r) continue;
    ctx.globalAlpha = 0.25;
    ctx.fillStyle = pal.brand;
    ctx.fillRect(xOf(r[0]), y0, Math.max(1, xOf(r[1]) - xOf(r[0])), hh);
    ctx.globalAlpha = 1;
  }
  return n;
}
