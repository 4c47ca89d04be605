/**
 * Building blocks the grad entry views share: a titled graph pane holding one
 * embedded graph viewer (widgets/graph/view.js, compact), the "values" toggle, and
 * the legend line of the entry toolbar.
 */
import { h } from "../ui/dom.js";
import { graphView } from "../graph/view.js";
import { graphDoc, RECOMPUTED_STROKE, CUSTOM_STROKE, plural } from "./model.js";

/**
 * The controller an embedded graph viewer carries on its cleanup function (graph/view.js
 * graphView's return value): what the grad entries drive.
 * @typedef {(() => void) & {
 *   dispose(): void, select(key: (string | null)): void, selected(): (string | null),
 *   highlight(keys: string[], cls: string, vars?: any): void, reveal(keys: string[]): void,
 *   setMode(m: string): void, setDecorations(fn: Function | null): void, setKey(key: string, frame?: boolean): void,
 *   fit(): void, index(): any, story(): any, play(p: number, from: number, how?: object): void,
 * }} GraphViewer
 */

/**
 * `section.jm-grad-pane[data-graph]`: a title line and a focusable host with a
 * compact graph viewer of `fn` (keys typed in it go to that graph only).
 * Returns {el, view} (view: the graph viewer's controller), after mounting into `parent`.
 * @returns {{el: HTMLElement, view: GraphViewer}}
 */
export function graphPane(parent, { fn, graph, title, sub, engine, opts = {} }) {
  const ref = parent;
  const host = h("div", { class: "jm-grad-host" }, null, ref);
  const el = h("section", { class: "jm-grad-pane", "data-graph": graph }, [
    h("div", { class: "jm-grad-pane-head" }, [
      h("span", { class: "jm-grad-pane-title" }, title, ref),
      sub ? h("span", { class: "jm-muted" }, " " + sub, ref) : null,
    ], ref),
    host,
  ], ref);
  parent.appendChild(el);
  const pane = graph === "forward" || graph === "backward" ? graph : "graph"; // data-jm-pane
  const view = /** @type {GraphViewer} */ (graphView(host, graphDoc(fn, title), engine, { compact: true, label: title, pane, ...opts }));
  return { el, view };
}

export const VALUES_WHY = "No gradient values were recorded: run the cell with `%%grad_graph --values`.";

/** Mark a toolbar toggle button pressed or not (`.jm-active`, aria-pressed). */
export function press(b, on) {
  b.classList.toggle("jm-active", on);
  b.setAttribute("aria-pressed", on ? "true" : "false");
}

/**
 * The values toggle (`button.jm-grad-values`, aria-pressed): disabled, with a tooltip
 * saying how to get values, when the entry has none. `onChange(on)` after it flipped.
 */
export function valuesToggle(ref, available, on, onChange) {
  const b = h("button", {
    type: "button", class: "jm-btn jm-grad-values", disabled: !available,
    title: available ? "Edge labels and gradients: summaries of the recorded values (cotangents in the backward pass)" : VALUES_WHY,
  }, "values", ref);
  press(b, on && available);
  b.addEventListener("click", () => {
    const next = b.getAttribute("aria-pressed") !== "true";
    press(b, next);
    onChange(next);
  });
  return b;
}

/**
 * Legend items for what a selection lights up, recomputed (checkpoint) nodes and custom-rule
 * nodes. A legend explains what is drawn: with nothing recomputed there is no dashed node to
 * explain, so the entry is left out (as the custom-rule one is).
 */
export const markLegend = (recomputed, customs) => [
  { key: "lit", text: "lit up: selection, residual and links", line: "var(--jm-mark)" },
  recomputed ? { key: "recomputed", text: `↻ ${plural(recomputed, "eqn")} recomputed under checkpoint`, line: RECOMPUTED_STROKE, cls: "jm-grad-swatch-dash" } : null,
  customs ? { key: "custom", text: plural(customs, "custom rule"), line: CUSTOM_STROKE } : null,
];

/** `span.jm-grad-legend[data-jm-legend]`: items [{text, swatch?: css colour, line?: css colour, cls?}]. */
export function legendLine(ref, items) {
  return h("span", { class: "jm-grad-legend", "data-jm-legend": "grad" }, items.filter(Boolean).map((it) => {
    const sw = h("span", { class: "jm-grad-swatch" + (it.line ? " jm-grad-swatch-line" : "") + (it.cls ? " " + it.cls : "") }, null, ref);
    if (it.swatch) sw.style.background = it.swatch;
    if (it.line) sw.style.borderColor = it.line;
    return h("span", { class: "jm-grad-legend-item", "data-legend": it.key || false }, [sw, it.text], ref);
  }), ref);
}
