/**
 * The timeline's legend: what each colour and mark of the canvas means, drawn with the same
 * theme variables the canvas reads (timeline.css `--jm-tl-*`, the theme's accents), so it
 * follows light and dark themes. Only what this capture can draw is listed: the device
 * extension when ready times were polled, red misses when a recompile storm was found.
 * It is the view's `data-jm-legend` (the shared contract) in normal and presentation mode.
 */
import { h, s } from "../ui/dom.js";

/** A 14x12 swatch: a bar (`rect` with a class of timeline.css) or a mark (tick, triangle). */
function swatch(ref, shape, cls) {
  const body = shape === "tick" ? s("rect", { class: cls, x: 6, y: 3, width: 2.5, height: 9 }, null, ref)
    : shape === "miss" ? s("path", { class: cls, d: "M3 3H11L7 10Z" }, null, ref)
      : s("rect", { class: cls, x: 1, y: 2, width: 12, height: 9, rx: 1.5 }, null, ref);
  return s("svg", { class: "jm-tl-swatch", width: 14, height: 12, viewBox: "0 0 14 12", "aria-hidden": "true" }, body, ref);
}

/** Whether any call of the capture has a ready time (the lighter device extension is drawn). */
const hasDevice = (tl) => tl.calls.ready.some((r) => Number.isFinite(r));

/** The entries this capture draws: [shape, class, words]. */
export function legendEntries(tl) {
  const list = [
    ["bar", "jm-tl-c-trace", "trace"],
    ["bar", "jm-tl-c-lower", "lower"],
    ["bar", "jm-tl-c-compile", "compile"],
    ["bar", "jm-tl-c-exec", "run (dispatch)"],
  ];
  if (hasDevice(tl)) list.push(["bar", "jm-tl-c-device", "on device until ready"]);
  if (tl.totals.hits) list.push(["tick", "jm-tl-c-hit", "cache hit"]);
  if (tl.totals.misses) list.push(["miss", "jm-tl-c-miss", "cache miss: traced and compiled"]);
  if (tl.storm.some((x) => x)) list.push(["miss", "jm-tl-c-storm", "miss in a recompile storm"]);
  return list;
}

/** The legend row; "N calls" over a dense stretch explains itself. */
export function timelineLegend(ref, tl) {
  return h("div", { class: "jm-tl-legend", "data-jm-legend": "", "aria-label": "legend" },
    legendEntries(tl).map(([shape, cls, words]) => h("span", { class: "jm-tl-legend-item" }, [swatch(ref, shape, cls), words], ref)), ref);
}
