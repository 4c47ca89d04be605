/**
 * The keys view's legend (what the colours and shapes mean, drawn with the tree's own
 * classes so the theme and dark mode apply) and its one-line summary from `doc.summary`.
 */
import { h, s } from "../ui/dom.js";
import { plural } from "./text.js";

/** `12 keys · 2 roots · 9 consumed · 1 reused · 3 unused · 2 programs` (counted from the nodes when the summary is missing). */
export function summaryText(m) {
  const sm = m.summary || {};
  const count = (st) => m.nodes.filter((n) => n.state === st).length;
  const num = (v, f) => (Number.isFinite(v) ? v : f());
  return [
    plural(num(sm.keys, () => m.nodes.length), "key"),
    plural(num(sm.roots, () => m.roots.length), "root"),
    `${num(sm.consumed, () => count("consumed"))} consumed`,
    `${num(sm.reused, () => count("reused"))} reused`,
    `${num(sm.unused, () => count("unused"))} unused`,
    Number.isFinite(sm.uses) ? plural(sm.uses, "use") : null,
    Number.isFinite(sm.programs) ? plural(sm.programs, "program") : null,
  ].filter(Boolean).join(" · ");
}

/** A small swatch: the tree's item classes on a 26x14 shape. */
function swatch(ref, cls, { rx = 7, stack = false } = {}) {
  return s("svg", { class: "jm-k-swatch", width: 30, height: 18, "aria-hidden": "true" }, s("g", { class: `jm-k-item ${cls}`, transform: "translate(1,9)" }, [
    stack ? s("rect", { class: "jm-k-back", x: 3, y: -8, width: 24, height: 13, rx }, null, ref) : null,
    s("rect", { class: "jm-k-shape", x: 0, y: -6, width: 24, height: 13, rx }, null, ref),
  ], ref), ref);
}

/**
 * Legend and summary line. The three states are what an audience must read off the tree; the
 * shapes are secondary, so presentation mode hides them (`jm-clutter`), and the summary too
 * when the stage bar's caption (`captioned`) already gives the counts.
 */
export function legend(ref, m, captioned = false) {
  const entry = (sw, text, cls = "") => h("span", { class: `jm-k-legend-item${cls}` }, [sw, text], ref);
  return h("div", { class: "jm-k-legend", "data-jm-legend": "" }, [
    h("span", { class: `jm-k-summary${captioned ? " jm-clutter" : ""}` }, summaryText(m), ref),
    entry(swatch(ref, "jm-k-s-unused"), "unused (available)"),
    entry(swatch(ref, "jm-k-s-consumed"), "consumed once"),
    entry(swatch(ref, "jm-k-s-reused"), "reused: a bug"),
    entry(swatch(ref, "jm-k-s-unused jm-k-jit"), "made inside a jitted program", " jm-clutter"),
    entry(swatch(ref, "jm-k-s-unused", { rx: 2 }), "key array (split)", " jm-clutter"),
    entry(swatch(ref, "jm-k-s-unused", { stack: true }), "loop: one key per iteration", " jm-clutter"),
    entry(swatch(ref, "jm-k-s-consumed jm-k-t-run", { rx: 2 }), "run of identical steps", " jm-clutter"),
  ], ref);
}
