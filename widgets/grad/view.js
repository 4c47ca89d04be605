/**
 * The grad view (`kind: "grad"`, what `%%grad_graph` records): header, findings,
 * one tab per differentiation, and the selected entry (split.js for eager
 * differentiations, jit.js for differentiations inside a jitted step). Graphs are
 * the graph viewer's, embedded; this view owns only what spans entries: the tabs,
 * the findings (a click selects what a finding names) and the values / arrangement
 * choices, kept while the user switches tabs.
 *
 * DOM contract (tests): `.jm-grad`, `.jm-grad-findings > li > button.jm-grad-finding
 * [data-kind][data-severity]`, `.jm-grad-tab[data-entry-id]` (`.jm-tab-active`,
 * `.jm-grad-batch`), `.jm-grad-entry[data-origin][data-entry-id]`,
 * `.jm-grad-pane[data-graph=forward|backward|program]` each holding one graph viewer,
 * `.jm-grad-bridge` > `button.jm-grad-chip[data-residual-id]` (`.jm-active`),
 * `button.jm-grad-leaf[data-path]`, `button.jm-grad-values` (aria-pressed; disabled
 * with a title without values), `button.jm-grad-arr[data-arr=stacked|side]`, the
 * graph classes `jm-res` (residual producer / consumers) and `jm-linked` (linked
 * nodes) on `g.jm-eqn` / `g.jm-port`, `.jm-details`.
 */
import { h, clear } from "../ui/dom.js";
import { docHeader } from "../ui/header.js";
import { entryTab, sortFindings } from "./model.js";
import { findingsList } from "./findings.js";
import { splitEntry } from "./split.js";
import { jitEntry } from "./jit.js";
import { tangentEntry } from "./tangent.js";

/** The view of each entry origin (docs/schema.md, grad documents). */
const ENTRY_VIEWS = { split: splitEntry, jit: jitEntry, tangent: tangentEntry };

/**
 * Mount the grad view of `doc` into `root`; returns the cleanup. `options` (widgets/mount.js):
 * `playback`, the shared controls the selected entry plays its story on (playback.js), and
 * `present` (presentation mode: the embedded graphs see it on the root's class).
 * @param {import("../types/documents").GradDocument} doc a grad document
 */
export function gradView(root, doc, engine, options = {}) {
  const entries = (Array.isArray(doc.entries) ? doc.entries : []).filter((e) => e && (e.origin === "split" ? e.forward && e.backward : e.program));
  const state = { values: false, arrangement: "stacked" };
  let current = -1, ctrl = null;

  const tabsSlot = h("div", { class: "jm-tabs-slot" }, null, root);
  const slot = h("div", { class: "jm-grad-slot" }, null, root);
  const findings = findingsList(root, doc.findings, (f) => pickFinding(f));
  const view = h("div", { class: "jm-grad" }, [
    docHeader(doc, root),
    findings ? h("div", { class: "jm-grad-findings-wrap" }, findings, root) : null,
    tabsSlot, slot,
  ], root);
  root.appendChild(view);
  if (!entries.length) {
    slot.appendChild(h("div", { class: "jm-empty" }, "No differentiation was recorded in this cell.", root));
    return () => {};
  }

  const tabs = () => h("nav", { class: "jm-tabs", role: "tablist" }, entries.map((e, i) => {
    const t = entryTab(e);
    const b = h("button", {
      type: "button", role: "tab", class: "jm-tab jm-grad-tab" + (i === current ? " jm-tab-active" : ""),
      "aria-selected": i === current ? "true" : "false", "data-entry-id": String(e.id), title: String(e.name ?? ""),
    }, [
      h("span", { class: "jm-tab-name" }, t.title, root),
      t.badge ? h("span", { class: "jm-grad-batch" }, t.badge, root) : null,
      h("span", { class: "jm-tab-stats" }, t.stats, root),
    ], root);
    b.addEventListener("click", () => i !== current && show(i));
    return b;
  }), root);

  const show = (i) => {
    if (ctrl) ctrl.dispose();
    current = i;
    clear(tabsSlot);
    tabsSlot.appendChild(tabs());
    clear(slot);
    const e = entries[i];
    if (options.playback) options.playback.clear(); // the new entry's graphs set its story once drawn
    // The first finding (as listed) naming a node of this entry: its pass opens on that node.
    const f = sortFindings(doc.findings).find((x) => x && x.entry === e.id && x.node != null);
    const key = f ? { graph: f.graph, node: String(f.node) } : null;
    const ctx = { engine, state, onState: () => {}, playback: options.playback || null, key };
    ctrl = (ENTRY_VIEWS[e.origin] || splitEntry)(slot, e, ctx);
  };

  /** Select what a finding names: its entry, then its residual or node. */
  const pickFinding = (f) => {
    const i = entries.findIndex((e) => e.id === f.entry);
    if (i < 0) return;
    if (i !== current) show(i);
    if (f.residual) ctrl.selectResidual(String(f.residual));
    else if (f.node) ctrl.selectNode(f.graph === "forward" ? "forward" : "backward", String(f.node));
  };

  // Escape anywhere in the view (graphs handle their own first) clears the selection.
  const onKey = (e) => {
    if (e.key !== "Escape" || e.defaultPrevented || (e.target.closest && e.target.closest("input, textarea, select"))) return;
    e.preventDefault(); // handled: the host-key guard keeps it from the notebook (widgets/ui/host-keys.js)
    if (ctrl) ctrl.clear();
  };
  root.addEventListener("keydown", onKey);
  root.setAttribute("tabindex", "0");
  show(0);
  return () => {
    root.removeEventListener("keydown", onKey);
    if (ctrl) ctrl.dispose();
  };
}
