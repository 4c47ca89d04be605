/**
 * Timeline documents (docs/schema.md, `kind: "timeline"`), read for drawing. Pure:
 * no DOM. A cell can make 100,000 calls, so nothing here makes one object per call:
 * the document's columns become typed arrays, each lane gets its calls and spans as
 * index arrays sorted by start, and drawing asks for *pixel buckets* (`aggregate`)
 * whose cost is the number of calls in the window plus the number of buckets.
 *
 * Times are integer µs since the capture started. Derived per call:
 * - dispatch = (end − start) minus the trace/lower/compile spans inside the call
 *   (the lane's `dispatch_us` is the same sum);
 * - device = ready − start minus those spans, when `ready` is known (an upper bound,
 *   see the schema; the lane's `device_us` sums it over its `device_calls`); drawn as
 *   a lighter extension from `end` to `ready`.
 */
import { plural } from "../ui/words.js";

export const PHASES = ["trace", "lower", "compile"];
const PHASE_ID = { trace: 0, lower: 1, compile: 2 };

const arr = (x) => (Array.isArray(x) ? x : []);
const num = (x, d = 0) => (typeof x === "number" && Number.isFinite(x) ? x : d);
const str = (x, d = "") => (x == null ? d : String(x));

/** Column `col` of length n as a typed array; missing or odd entries read `d`. */
function column(col, n, Type, d) {
  const out = new Type(n);
  const src = arr(col);
  for (let i = 0; i < n; i++) {
    const v = src[i];
    out[i] = typeof v === "number" && Number.isFinite(v) ? v : d;
  }
  return out;
}

/**
 * Indices 0..n−1 grouped by `key[i]` (0 <= key < k), each group sorted by `start`
 * (stable: ties keep document order). Returns {off: Int32Array(k+1), idx: Int32Array}.
 */
function groupBy(key, start, n, k) {
  const off = new Int32Array(k + 1);
  for (let i = 0; i < n; i++) if (key[i] >= 0 && key[i] < k) off[key[i] + 1]++;
  for (let l = 0; l < k; l++) off[l + 1] += off[l];
  const idx = new Int32Array(off[k]);
  const fill = off.slice(0, k);
  for (let i = 0; i < n; i++) if (key[i] >= 0 && key[i] < k) idx[fill[key[i]]++] = i;
  for (let l = 0; l < k; l++) {
    let sorted = true;
    for (let j = off[l] + 1; j < off[l + 1]; j++) if (start[idx[j]] < start[idx[j - 1]]) { sorted = false; break; }
    if (!sorted) idx.subarray(off[l], off[l + 1]).sort((a, b) => start[a] - start[b] || a - b);
  }
  return { off, idx };
}

/** Running maximum of `end` over a lane's items in start order (for window queries). */
function prefixMax(idx, end) {
  const out = new Float64Array(idx.length);
  let m = -Infinity;
  for (let j = 0; j < idx.length; j++) out[j] = m = Math.max(m, end[idx[j]]);
  return out;
}

/** First position j in [lo, hi) with f(j) true, for f false…false true…true. */
function firstTrue(lo, hi, f) {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (f(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The calls' columns (typed arrays, missing values filled). */
function readCalls(doc) {
  const C = (doc.calls && typeof doc.calls === "object") ? doc.calls : {};
  const n = arr(C.lane).length;
  return {
    n,
    lane: column(C.lane, n, Int32Array, -1),
    start: column(C.start, n, Float64Array, 0),
    end: column(C.end, n, Float64Array, 0),
    hit: column(C.hit, n, Uint8Array, 0),
    ready: column(C.ready, n, Float64Array, NaN),
    sig: column(C.sig, n, Int32Array, -1),
    miss: column(C.miss, n, Int32Array, -1),
    site: column(C.site, n, Int32Array, -1),
    errors: C.errors && typeof C.errors === "object" ? C.errors : {},
  };
}

/** The spans' columns; an unknown phase reads as compile, a call out of range as none. */
function readSpans(doc, n) {
  const S = (doc.spans && typeof doc.spans === "object") ? doc.spans : {};
  const ns = arr(S.lane).length;
  const spans = {
    n: ns,
    lane: column(S.lane, ns, Int32Array, -1),
    call: column(S.call, ns, Int32Array, -1),
    phase: new Uint8Array(ns),
    start: column(S.start, ns, Float64Array, 0),
    end: column(S.end, ns, Float64Array, 0),
  };
  const ph = arr(S.phase);
  for (let i = 0; i < ns; i++) {
    spans.phase[i] = PHASE_ID[ph[i]] ?? 2; // an unknown phase draws as compile (it cost compile-like time)
    if (spans.call[i] >= n) spans.call[i] = -1;
  }
  return spans;
}

/** Per lane: calls, spans and misses in start order, each with its running maximum end (calls' includes `ready`). */
function laneIndex(calls, spans, L, effEnd) {
  const n = calls.n, ns = spans.n;
  const byLaneCalls = groupBy(calls.lane, calls.start, n, L);
  const byLaneSpans = groupBy(spans.lane, spans.start, ns, L);
  const missLane = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) if (!calls.hit[i]) missLane[i] = calls.lane[i];
  const byLaneMisses = groupBy(missLane, calls.start, n, L);
  const laneOf = (g, l) => g.idx.subarray(g.off[l], g.off[l + 1]);
  return Array.from({ length: L }, (_, l) => {
    const c = laneOf(byLaneCalls, l), s = laneOf(byLaneSpans, l), m = laneOf(byLaneMisses, l);
    return { calls: c, callMax: prefixMax(c, effEnd), spans: s, spanMax: prefixMax(s, spans.end), misses: m, missMax: prefixMax(m, effEnd) };
  });
}

/** Spans of each call (CSR over calls): the timing breakdown of one call. */
function callSpans(n, spans) {
  const ns = spans.n;
  const callSpanOff = new Int32Array(n + 1);
  for (let i = 0; i < ns; i++) if (spans.call[i] >= 0) callSpanOff[spans.call[i] + 1]++;
  for (let i = 0; i < n; i++) callSpanOff[i + 1] += callSpanOff[i];
  const callSpanIdx = new Int32Array(callSpanOff[n]);
  const cur = callSpanOff.slice(0, n);
  for (let i = 0; i < ns; i++) if (spans.call[i] >= 0) callSpanIdx[cur[spans.call[i]]++] = i;
  return { callSpanOff, callSpanIdx };
}

/** Calls named by a recompile-storm finding: their misses are drawn red. */
function stormCalls(findings, n) {
  const storm = new Uint8Array(n);
  for (const f of findings) {
    if (f.kind !== "recompile_storm") continue;
    for (const c of arr(f.calls)) if (c >= 0 && c < n) storm[c] = 1;
  }
  return storm;
}

/** Hits, and the capture's duration: the document's, or the last end of a call or span when later. */
function totalsOf(doc, calls, spans, effEnd) {
  let hits = 0, duration = num(doc.duration_us);
  for (let i = 0; i < calls.n; i++) {
    hits += calls.hit[i];
    if (effEnd[i] > duration) duration = effEnd[i];
  }
  for (let i = 0; i < spans.n; i++) if (spans.end[i] > duration) duration = spans.end[i];
  return { hits, duration };
}

/**
 * Read a timeline document into the indexed form every other module uses.
 * Never throws on a malformed field: what is missing reads as empty.
 */
export function readTimeline(doc) {
  // Lanes as the document has them (figures shown as given), plus their position.
  const lanes = arr(doc.lanes).map((l, i) => ({ ...l, pos: i, name: str(l && l.name, "?"), origin: l && l.origin === "events" ? "events" : "call" }));
  const L = lanes.length;
  const calls = readCalls(doc), n = calls.n;
  const spans = readSpans(doc, n);
  const effEnd = new Float64Array(n);
  for (let i = 0; i < n; i++) effEnd[i] = Math.max(calls.end[i], calls.ready[i] || 0);
  const findings = arr(doc.findings).filter((f) => f && typeof f === "object");
  // Every miss in call order (n / p step through them).
  const missCalls = [];
  for (let i = 0; i < n; i++) if (!calls.hit[i] && calls.lane[i] >= 0 && calls.lane[i] < L) missCalls.push(i);
  let compiles = 0;
  for (const l of lanes) compiles += num(l.compiles);
  const { hits, duration } = totalsOf(doc, calls, spans, effEnd);
  return {
    lanes, calls, spans, misses: arr(doc.misses), findings, perLane: laneIndex(calls, spans, L, effEnd), storm: stormCalls(findings, n), effEnd,
    missCalls: Int32Array.from(missCalls),
    ...callSpans(n, spans),
    signatures: arr(doc.signatures), sites: arr(doc.sites),
    cache: doc.cache && typeof doc.cache === "object" ? doc.cache : null,
    options: doc.options && typeof doc.options === "object" ? doc.options : {},
    duration,
    totals: { calls: n, hits, misses: n - hits, compiles },
  };
}

/** Lane index arrays for drawing: all calls, or only the misses. */
const laneCallIdx = (tl, l, missesOnly) => (missesOnly ? tl.perLane[l].misses : tl.perLane[l].calls);

/**
 * Positions [a, b) of `idx` (a lane's items in start order) that can touch [t0, t1):
 * from the first whose running max end exceeds t0 to the last starting before t1.
 */
function windowRange(idx, start, runMax, t0, t1) {
  const a = firstTrue(0, idx.length, (j) => runMax[j] > t0);
  const b = firstTrue(a, idx.length, (j) => start[idx[j]] >= t1);
  return [a, b];
}

// ---- aggregation ------------------------------------------------------------------

/** Fields of a bucket row: µs of each phase in the bucket, counts by start, longest call. */
export const FIELDS = ["trace", "lower", "compile", "exec", "device"];

/**
 * Per-lane pixel buckets for the window [t0, t1) drawn `width` px wide, `bucketPx`
 * px per bucket. For each lane in `lanes` (positions) the result has, per bucket:
 * - `trace`, `lower`, `compile`: µs of those spans inside the bucket (overlap),
 * - `exec`: µs of calls inside the bucket minus their own spans (dispatch time),
 * - `device`: µs from `end` to `ready` (the lighter extension),
 * - `hits`, `misses`, `storm` (misses in a recompile storm): calls *starting* in it,
 * - `maxDur`: the longest call (end − start) starting in it.
 * Summed over the buckets, each time field equals the raw sum of the overlaps with the
 * window, and each count the number of calls starting in the window.
 *
 * `reuse` (the previous result) saves the allocation when sizes match (every pan frame).
 */
export function aggregate(tl, lanes, t0, t1, width, { bucketPx = 1, missesOnly = false, reuse = null } = {}) {
  const nb = Math.max(1, Math.ceil(width / bucketPx));
  const span = Math.max(1e-9, t1 - t0);
  const bu = span / nb;
  const L = lanes.length, size = L * nb;
  let out = reuse && reuse.size === size ? reuse : null;
  if (out) {
    for (const k of [...FIELDS, "hits", "misses", "storm", "maxDur"]) out[k].fill(0);
  } else {
    out = { size, hits: new Uint32Array(size), misses: new Uint32Array(size), storm: new Uint32Array(size), maxDur: new Float64Array(size) };
    for (const k of FIELDS) out[k] = new Float64Array(size);
  }
  Object.assign(out, { nb, t0, t1, bucketUs: bu, lanes });
  const { calls, spans } = tl;

  /** Add the overlap of [s, e) with the window to field array `a` at row offset `base`, times `sign`. */
  const spread = (a, base, s, e, sign) => {
    if (s < t0) s = t0;
    if (e > t1) e = t1;
    if (e <= s) return;
    const b0 = Math.min(nb - 1, Math.floor((s - t0) / bu));
    const b1 = Math.min(nb - 1, Math.floor((e - t0) / bu));
    if (b0 === b1) {
      a[base + b0] += sign * (e - s);
      return;
    }
    a[base + b0] += sign * (t0 + (b0 + 1) * bu - s);
    for (let b = b0 + 1; b < b1; b++) a[base + b] += sign * bu;
    a[base + b1] += sign * (e - (t0 + b1 * bu));
  };
  const phaseArr = [out.trace, out.lower, out.compile];

  for (let r = 0; r < L; r++) {
    const l = lanes[r], base = r * nb, pl = tl.perLane[l];
    if (!pl) continue;
    const idx = laneCallIdx(tl, l, missesOnly);
    const runMax = missesOnly ? pl.missMax : pl.callMax;
    const [a, b] = windowRange(idx, calls.start, runMax, t0, t1);
    for (let j = a; j < b; j++) {
      const c = idx[j];
      const s = calls.start[c], e = calls.end[c];
      spread(out.exec, base, s, e, 1);
      const rd = calls.ready[c];
      if (rd > e) spread(out.device, base, e, rd, 1);
      if (s >= t0 && s < t1) {
        const k = base + Math.min(nb - 1, Math.floor((s - t0) / bu));
        if (calls.hit[c]) out.hits[k]++;
        else {
          out.misses[k]++;
          if (tl.storm[c]) out.storm[k]++;
        }
        if (e - s > out.maxDur[k]) out.maxDur[k] = e - s;
      }
    }
    const [sa, sb] = windowRange(pl.spans, spans.start, pl.spanMax, t0, t1);
    for (let j = sa; j < sb; j++) {
      const i = pl.spans[j];
      const c = spans.call[i];
      if (missesOnly && c >= 0 && calls.hit[c]) continue;
      spread(phaseArr[spans.phase[i]], base, spans.start[i], spans.end[i], 1);
      // Time inside a call spent in a phase is not dispatch time.
      if (c >= 0 && calls.lane[c] === l) {
        const s = Math.max(spans.start[i], calls.start[c]), e = Math.min(spans.end[i], calls.end[c]);
        spread(out.exec, base, s, e, -1);
      }
    }
  }
  return out;
}

/** One field of lane row `r` of an aggregate, as a view (no copy). */
export const bucketRow = (agg, field, r) => agg[field].subarray(r * agg.nb, (r + 1) * agg.nb);

// ---- summary rows -----------------------------------------------------------------

/** Columns of the summary table: key, heading, kind (text | count | us). */
export const COLUMNS = [
  ["name", "function", "text"],
  ["calls", "calls", "count"],
  ["hits", "hits", "count"],
  ["misses", "misses", "count"],
  ["compiles", "compiles", "count"],
  ["trace_us", "trace", "us"],
  ["lower_us", "lower", "us"],
  ["compile_us", "compile", "us"],
  ["dispatch_us", "dispatch", "us"],
  ["device_us", "device", "us"],
];

/**
 * One summary row per lane. Without `range` the document's own per-lane totals; with
 * `range` = [r0, r1) the same figures counted from the columns: calls starting in it,
 * spans starting in it (traces = trace spans, compiles = compile spans), dispatch and
 * device per call as defined at the top of this file.
 */
export function laneRows(tl, range = null) {
  if (!range) return tl.lanes.map((l) => ({ ...l, lane: l.pos }));
  const [r0, r1] = range;
  const { calls, spans } = tl;
  return tl.lanes.map((l) => {
    const row = { lane: l.pos, name: l.name, origin: l.origin, calls: 0, hits: 0, misses: 0, traces: 0, compiles: 0,
      trace_us: 0, lower_us: 0, compile_us: 0, dispatch_us: 0, device_us: null, device_calls: 0 };
    const pl = tl.perLane[l.pos];
    const a = firstTrue(0, pl.calls.length, (j) => calls.start[pl.calls[j]] >= r0);
    for (let j = a; j < pl.calls.length && calls.start[pl.calls[j]] < r1; j++) {
      const c = pl.calls[j];
      row.calls++;
      if (calls.hit[c]) row.hits++;
      else row.misses++;
      row.dispatch_us += dispatchOf(tl, c);
      const d = deviceOf(tl, c);
      if (d != null) {
        row.device_us = (row.device_us || 0) + d;
        row.device_calls++;
      }
    }
    const sa = firstTrue(0, pl.spans.length, (j) => spans.start[pl.spans[j]] >= r0);
    for (let j = sa; j < pl.spans.length && spans.start[pl.spans[j]] < r1; j++) {
      const i = pl.spans[j], d = spans.end[i] - spans.start[i];
      const p = PHASES[spans.phase[i]];
      row[p + "_us"] += d;
      if (p === "trace") row.traces++;
      if (p === "compile") row.compiles++;
    }
    return row;
  });
}

/**
 * Rows sorted by column `key`, descending when `desc`. Numbers compare as numbers,
 * text by locale; missing values (null) go last either way; ties keep lane order.
 */
export function sortRows(rows, key, desc = false) {
  const sgn = desc ? -1 : 1;
  return rows.slice().sort((a, b) => {
    const x = a[key], y = b[key];
    const xn = x == null, yn = y == null;
    if (xn || yn) return xn && yn ? a.lane - b.lane : xn ? 1 : -1;
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return c ? sgn * c : a.lane - b.lane;
  });
}

// ---- one call ------------------------------------------------------------------------

/** Spans recorded inside call `c` (indices into tl.spans). */
export const spansOf = (tl, c) => tl.callSpanIdx.subarray(tl.callSpanOff[c], tl.callSpanOff[c + 1]);

/** Time of each phase inside call `c`: {trace, lower, compile} in µs. */
export function phasesOf(tl, c) {
  const out = { trace: 0, lower: 0, compile: 0 };
  for (const i of spansOf(tl, c)) out[PHASES[tl.spans.phase[i]]] += tl.spans.end[i] - tl.spans.start[i];
  return out;
}

/** Dispatch time of call `c`: the call's duration minus the phase spans inside it. */
export function dispatchOf(tl, c) {
  const { calls, spans } = tl;
  let d = calls.end[c] - calls.start[c];
  for (const i of spansOf(tl, c)) d -= Math.min(spans.end[i], calls.end[c]) - Math.max(spans.start[i], calls.start[c]);
  return Math.max(0, d);
}

/** Device time of call `c` (ready − start − its phase spans), or null when `ready` is unknown. */
export function deviceOf(tl, c) {
  const r = tl.calls.ready[c];
  if (!Number.isFinite(r)) return null;
  let d = r - tl.calls.start[c];
  for (const i of spansOf(tl, c)) d -= tl.spans.end[i] - tl.spans.start[i];
  return Math.max(0, d);
}

/**
 * Persistent compilation cache outcomes on lane `l` between t0 and t1 (µs): "hit" (the
 * executable was loaded from the cache directory), "miss", "2 hits, 1 miss", or "" when
 * the cache was off or not asked.
 */
export function persistentIn(tl, l, t0, t1) {
  const events = tl.cache && Array.isArray(tl.cache.events) ? tl.cache.events : [];
  let hit = 0, miss = 0;
  for (const e of events) {
    if (!e || e.lane !== l || !(e.t >= t0 && e.t <= t1)) continue;
    if (e.kind === "hit") hit++;
    else if (e.kind === "miss") miss++;
  }
  if (hit + miss === 1) return hit ? "hit: the executable was loaded from the cache directory" : "miss";
  return [hit && plural(hit, "hit"), miss && plural(miss, "miss")].filter(Boolean).join(", ");
}

/** 1-based position of call `c` among its lane's calls ("call 12 of f"). */
export function callNumber(tl, c) {
  const idx = tl.perLane[tl.calls.lane[c]]?.calls;
  if (!idx) return 0;
  const s = tl.calls.start;
  let j = firstTrue(0, idx.length, (k) => s[idx[k]] >= s[c]);
  while (j < idx.length && idx[j] !== c) j++;
  return j + 1;
}

/**
 * "What changed since the previous call" for call `c`: a hit is the same signature;
 * a miss carries the document's reason (`words`, `changes`, `fix`, `jax`: JAX's text, `from`,
 * `hint`: JAX's own guess, "JAX suggests: …", never the reason; "" when JAX made none).
 */
export function whatChanged(tl, c) {
  if (tl.calls.hit[c]) return { hit: true, kind: "hit", words: "cache hit, same signature", changes: [] };
  const m = tl.misses[tl.calls.miss[c]] || { words: "cache miss (no reason was recorded)" };
  return { ...m, hit: false, kind: str(m.kind, "unknown"), words: str(m.words, "cache miss"), hint: str(m.hint, ""), changes: arr(m.changes).filter((x) => x && typeof x === "object") };
}

/** Signature object of call `c` or null (hits after a function's first 8 calls have none). */
export function signatureOf(tl, c) {
  const s = tl.signatures[tl.calls.sig[c]];
  return s && typeof s === "object" ? s : null;
}

/** The error call `c` raised ("Type: message"), or null. */
export const errorOf = (tl, c) => (Object.prototype.hasOwnProperty.call(tl.calls.errors, String(c)) ? str(tl.calls.errors[String(c)]) : null);

// ---- lookups ---------------------------------------------------------------------

/**
 * The call of lane `l` under time `t`: the one whose [start, end] contains t, else
 * the nearest within `tol` µs (ties: the earlier). -1 when none. `missesOnly` looks
 * at misses only (what is drawn under that filter).
 */
export function callAt(tl, l, t, tol, { missesOnly = false } = {}) {
  const pl = tl.perLane[l];
  if (!pl) return -1;
  const idx = missesOnly ? pl.misses : pl.calls;
  const { start, end } = tl.calls;
  // Calls of one lane run one after another, so the candidates are the last call
  // starting at or before t and the first one after it.
  const j = firstTrue(0, idx.length, (k) => start[idx[k]] > t);
  let best = -1, bestD = Infinity;
  for (const k of [j - 1, j]) {
    if (k < 0 || k >= idx.length) continue;
    const c = idx[k];
    const d = t < start[c] ? start[c] - t : t > end[c] ? t - end[c] : 0;
    if (d < bestD) { best = c; bestD = d; }
  }
  return bestD <= tol ? best : -1;
}

/** The span of lane `l` under time `t` (within `tol` µs; the innermost), or -1. */
export function spanAt(tl, l, t, tol) {
  const pl = tl.perLane[l];
  if (!pl) return -1;
  const { start, end } = tl.spans;
  const [a, b] = windowRange(pl.spans, start, pl.spanMax, t - tol, t + tol + 1e-9);
  let best = -1, bestKey = Infinity;
  for (let j = a; j < b; j++) {
    const i = pl.spans[j];
    const d = t < start[i] ? start[i] - t : t > end[i] ? t - end[i] : 0;
    if (d > tol) continue;
    const key = d * 1e12 + (end[i] - start[i]); // nearest, then shortest (innermost)
    if (key < bestKey) { best = i; bestKey = key; }
  }
  return best;
}

/**
 * The next (dir = 1) or previous (−1) miss after call `from` in call order (-1: from
 * the start / end). Returns a call index or -1.
 */
export function stepMiss(tl, from, dir) {
  const m = tl.missCalls;
  const j = dir > 0 ? firstTrue(0, m.length, (k) => m[k] > from) : (from < 0 ? m.length : firstTrue(0, m.length, (k) => m[k] >= from)) - 1;
  return j >= 0 && j < m.length ? m[j] : -1;
}

/**
 * The first recompile, in call order: the first miss that is not a function's first call
 * (JAX compiled again because something about the call changed). -1 when there is none.
 */
export function firstRecompile(tl) {
  for (const c of tl.missCalls) if (whatChanged(tl, c).kind !== "first") return c;
  return -1;
}

/** Findings sorted severity first (bug, warning, info), then document order. */
const SEVERITY = { bug: 0, warning: 1, info: 2 };
export function sortedFindings(tl) {
  return tl.findings.map((f, i) => ({ f, i }))
    .sort((a, b) => (SEVERITY[a.f.severity] ?? 3) - (SEVERITY[b.f.severity] ?? 3) || a.i - b.i)
    .map((x) => x.f);
}
