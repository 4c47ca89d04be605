/**
 * Durations and time-axis ticks for the timeline. Documents count integer µs; people
 * read µs, ms or s with few digits, so every time shown goes through `fmtUs` (the one
 * rule of widgets/ui/format.js `durationText`, which the Python side shares) and the
 * axis picks 1-2-5 steps whose labels share one unit and one precision.
 */

/** `750 µs`, `1.25 ms`, `2.5 s`, `—` for a missing figure: widgets/ui/format.js `durationText`. */
export { durationText as fmtUs } from "../ui/format.js";

/** A 1-2-5 step (µs) near `raw`, never below 1 µs. */
export function niceStep(raw) {
  if (!(raw > 1)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

/**
 * Unit from the biggest time on the axis (`ref`), decimals from the step, so that
 * every multiple of `step` prints exactly: [divisor, suffix, decimals].
 * @returns {[number, string, number]}
 */
function unitFor(step, ref) {
  /** @type {[number, string]} */
  const [div, suf] = ref >= 1e6 ? [1e6, "s"] : ref >= 1000 ? [1000, "ms"] : [1, "µs"];
  const d = Math.max(0, -Math.floor(Math.log10(step / div) + 1e-9));
  return [div, suf, d];
}

/**
 * Label of tick time `t` for ticks `step` apart on an axis reaching `ref` µs:
 * `0`, `250 µs`, `1.5 ms`, `12 s`.
 */
export function tickLabel(t, step, ref = t) {
  if (t === 0) return "0";
  const [div, suf, d] = unitFor(step, Math.abs(ref));
  return `${(t / div).toFixed(d)} ${suf}`;
}

/**
 * Ticks for the window [t0, t1] drawn `px` wide, at least `minPx` apart:
 * [{t, label}], t multiples of a 1-2-5 step.
 */
export function ticks(t0, t1, px, minPx = 90) {
  if (!(t1 > t0) || !(px > 0)) return [];
  const step = niceStep(((t1 - t0) * minPx) / px);
  const out = [], ref = Math.max(Math.abs(t0), Math.abs(t1));
  for (let t = Math.ceil(t0 / step) * step; t <= t1 && out.length < 200; t += step) {
    const r = Math.round(t / step) * step; // no accumulated float error in labels
    out.push({ t: r, label: tickLabel(r, step, ref) });
  }
  return out;
}
