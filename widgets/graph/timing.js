/**
 * Phase timings as `performance.measure` entries named "jm:<phase>" (index,
 * expansion, scene, layout, draw): visible in the browser's performance panel and
 * read by bench/browser.py. Costs one clock read per phase; no-op without
 * `performance.measure` (old hosts, some test environments).
 */
const perf = globalThis.performance;
const ok = !!(perf && typeof perf.measure === "function" && typeof perf.now === "function");

/** Run `fn`, record its duration as "jm:<name>", return its result. */
export function timed(name, fn) {
  if (!ok) return fn();
  const t0 = perf.now();
  try {
    return fn();
  } finally {
    record(name, t0);
  }
}

/** Record a phase that started at `t0` (from `now()`) and ends now. */
export function record(name, t0) {
  if (!ok) return;
  try {
    perf.measure("jm:" + name, { start: t0, end: perf.now() });
  } catch (err) {
    /* measure() with options is missing in very old browsers: timings are optional */
  }
}

export const now = () => (ok ? perf.now() : 0);
