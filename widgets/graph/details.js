/**
 * The details panel (.jm-details): everything the document says about the selected
 * eqn or port. Text only; every value goes through textContent.
 */
import { h, clear } from "../../js/src/dom.js";
import { operandText, srcText } from "./model.js";
import { portFace } from "./metrics.js";

/** Render the selection (element key or null) into `panel`. */
export function showDetails(panel, ix, key) {
  clear(panel);
  if (!key) {
    panel.appendChild(h("div", { class: "jm-muted jm-d-empty" }, "Select a node or port to see its details.", panel));
    return;
  }
  if (key.startsWith("N:")) return nodeDetails(panel, ix, ix.nodes.get(key.slice(2)));
  if (key.startsWith("P:") || key.startsWith("O:")) return portDetails(panel, ix, key);
}

/** Params are short strings per the schema; anything else is shown as JSON. */
const paramText = (v) => (typeof v === "string" ? v : JSON.stringify(v));

const section = (panel, title, body) =>
  panel.appendChild(h("section", { class: "jm-d-sec" }, [h("h4", null, title, panel), body], panel));

const operandList = (ix, ops, panel) =>
  h("ul", { class: "jm-ops" }, ops.map((op) =>
    h("li", { class: op && op.var == null ? "jm-op-lit" : "jm-op-var" }, operandText(ix, op), panel)), panel);

function nodeDetails(panel, ix, n) {
  if (!n) return;
  panel.appendChild(h("div", { class: "jm-d-title" }, [
    h("span", { class: "jm-d-prim" }, n.prim, panel),
    h("span", { class: "jm-muted" }, " " + n.id, panel),
  ], panel));
  // Source first: "which line of mine made this?" is the question users click to answer.
  if (n.src) {
    section(panel, "Source", [
      h("div", { class: "jm-d-src" }, srcText(n.src, false) + (n.src.func ? ` in ${n.src.func}` : ""), panel),
      n.src.code ? h("pre", { class: "jm-d-code" }, n.src.code, panel) : null,
    ]);
  }
  if ((n.scope || []).length) section(panel, "Scope", h("div", { class: "jm-d-scope" }, n.scope.join(" / "), panel));
  const params = Object.entries(n.params || {});
  if (params.length) {
    section(panel, "Params", h("table", { class: "jm-params" },
      params.map(([k, v]) => h("tr", null, [h("th", null, k, panel), h("td", null, paramText(v), panel)], panel)), panel));
  }
  section(panel, `Inputs (${(n.ins || []).length})`, operandList(ix, n.ins || [], panel));
  section(panel, `Outputs (${(n.outs || []).length})`, operandList(ix, (n.outs || []).map((v) => ({ var: v })), panel));
  if ((n.subgroups || []).length) {
    section(panel, "Sub-jaxprs", h("ul", { class: "jm-ops" }, n.subgroups.map((g) => {
      const grp = ix.groups.get(g);
      return h("li", null, grp ? `${grp.label} (${grp.n_eqns ?? ix.count.get("G:" + g)} eqns)` : g, panel);
    }), panel));
  }
}

function portDetails(panel, ix, key) {
  const f = portFace(ix, key);
  const v = f.varId != null ? ix.vars.get(f.varId) : null;
  const what = { in: "Input", const: "Constant", out: "Output" }[f.kind];
  panel.appendChild(h("div", { class: "jm-d-title" }, [
    h("span", { class: "jm-d-prim" }, `${what} port`, panel),
  ], panel));
  const rows = v ? [["var", v.name], ["aval", v.aval], ["id", v.id]] : [["value", f.text]];
  const g = ix.groups.get(v ? v.group : key.slice(2, key.lastIndexOf(":")));
  if (g) rows.push(["jaxpr", g.label]);
  if (f.kind === "const") rows.push(["note", "captured from Python at trace time"]);
  section(panel, "Value", h("table", { class: "jm-params" },
    rows.map(([k, val]) => h("tr", null, [h("th", null, k, panel), h("td", null, String(val), panel)], panel)), panel));
}
