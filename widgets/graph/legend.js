/**
 * The graph view's colour legend (`.jm-graph-legend[data-jm-legend]`): one line under
 * the toolbar saying what the drawing's shapes and colours mean, in the theme's own
 * colours (the swatches are styled by the same variables as the drawing). The last
 * entries follow the label mode: what a forward-mode or vmap-mode edge label says.
 */
import { h, clear } from "../ui/dom.js";

const BASE_ITEMS = [
  ["port-in", "input"],
  ["port-out", "output"],
  ["eqn", "eqn"],
  ["group", "sub-jaxpr, scope (▸ opens)"],
  ["edge", "value (its aval)"],
  ["sel", "selected"],
  ["match", "search match"],
];
const MODE_ITEMS = {
  forward: [["text", "[min … max] μ mean recorded", "1.2"], ["bad", "NaN / Inf", "⚠"]],
  vmap: [["text", "batch dimension", "‹8›"]],
};

/** `div.jm-graph-legend[data-jm-legend]`, with `update(mode)` for the label mode. */
export function graphLegend(ref) {
  const el = h("div", { class: "jm-graph-legend", "data-jm-legend": "graph" }, null, ref);
  const item = ([kind, text, mark]) => h("span", { class: "jm-lg-item jm-lg-item-" + kind }, [
    h("span", { class: "jm-lg-sw jm-lg-" + kind, "aria-hidden": "true" }, mark || null, ref), text,
  ], ref);
  const update = (mode) => {
    clear(el);
    for (const it of [...BASE_ITEMS, ...(MODE_ITEMS[mode] || [])]) el.appendChild(item(it));
  };
  update("trace");
  return { el, update };
}
