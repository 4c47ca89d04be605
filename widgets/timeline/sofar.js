/**
 * The per-function counters "so far" that playback shows at every step: the rows of
 * model.js `laneRows(tl, [-Infinity, t])` (calls and spans that started before `t`), answered
 * from running sums instead of a pass over the calls.
 *
 * Why: a step must stay cheap at any position of a long capture (the slider jumps anywhere);
 * a pass over 100,000 calls costs about 10 ms per step, the running sums two binary searches
 * per lane. They are built once per document, on the first step asked for (O(calls + spans)).
 */
import { PHASES, dispatchOf, deviceOf } from "./model.js";

/** Number of positions j in [0, len) with key(j) < t, for key non-decreasing. */
function countBefore(len, key, t) {
  let lo = 0, hi = len;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(mid) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Running sums of one lane: entry j sums the lane's first j calls / spans (in start order). */
function laneSums(tl, l) {
  const pl = tl.perLane[l], nc = pl.calls.length, ns = pl.spans.length;
  const hits = new Float64Array(nc + 1), dispatch = new Float64Array(nc + 1);
  const device = new Float64Array(nc + 1), deviceCalls = new Float64Array(nc + 1);
  for (let j = 0; j < nc; j++) {
    const c = pl.calls[j], d = deviceOf(tl, c);
    hits[j + 1] = hits[j] + tl.calls.hit[c];
    dispatch[j + 1] = dispatch[j] + dispatchOf(tl, c);
    device[j + 1] = device[j] + (d == null ? 0 : d);
    deviceCalls[j + 1] = deviceCalls[j] + (d == null ? 0 : 1);
  }
  const us = PHASES.map(() => new Float64Array(ns + 1)), count = PHASES.map(() => new Float64Array(ns + 1));
  for (let j = 0; j < ns; j++) {
    const i = pl.spans[j], p = tl.spans.phase[i];
    for (let q = 0; q < PHASES.length; q++) {
      us[q][j + 1] = us[q][j] + (q === p ? tl.spans.end[i] - tl.spans.start[i] : 0);
      count[q][j + 1] = count[q][j] + (q === p ? 1 : 0);
    }
  }
  return { hits, dispatch, device, deviceCalls, us, count };
}

const SUMS = new WeakMap();

/** One row per lane, as `laneRows(tl, [-Infinity, t])` gives them. */
export function rowsSoFar(tl, t) {
  let sums = SUMS.get(tl);
  if (!sums) SUMS.set(tl, (sums = tl.lanes.map((_, l) => laneSums(tl, l))));
  const { calls, spans } = tl;
  return tl.lanes.map((lane, l) => {
    const pl = tl.perLane[l], z = sums[l];
    const j = countBefore(pl.calls.length, (k) => calls.start[pl.calls[k]], t);
    const k = countBefore(pl.spans.length, (q) => spans.start[pl.spans[q]], t);
    const row = { lane: l, name: lane.name, origin: lane.origin, calls: j, hits: z.hits[j], misses: j - z.hits[j],
      traces: z.count[0][k], compiles: z.count[2][k], trace_us: z.us[0][k], lower_us: z.us[1][k], compile_us: z.us[2][k],
      dispatch_us: z.dispatch[j], device_us: z.deviceCalls[j] ? z.device[j] : null, device_calls: z.deviceCalls[j] };
    return row;
  });
}
