/**
 * The details panel (.jm-details): everything the document says about the selected
 * eqn, port or container — or, with nothing selected, about the function as a
 * whole (signature, calls, XLA's whole-program cost and memory figures). Text only;
 * every value goes through textContent.
 *
 * `opts.mode` ("trace" | "forward" | "vmap") adds the recorded value summaries or
 * the batch dimensions. A container lists the values crossing its border
 * (boundary.js), which is what a collapsed box stands for.
 */
import { h, clear } from "../ui/dom.js";
import { plural } from "../ui/words.js";
import { operandText, srcPath, srcText } from "./model.js";
import { portFace } from "./metrics.js";
import { si, num, valueSummary, batchAval } from "./format.js";
import { costTable } from "./overlay.js";
import { crumbLabel } from "./breadcrumbs.js";
import { boundaryOf } from "./boundary.js";
import { isDeferred, levelsStatus, loadState } from "./deferred.js";
import * as ids from "./ids.js";

/** Render the selection (element key or null) into `panel`. */
export function showDetails(panel, ix, key, opts = {}) {
  clear(panel);
  if (!key) return functionSummary(panel, ix.fn, opts);
  if (ids.isNode(key) && ix.nodes.has(ids.body(key))) return nodeDetails(panel, ix, ix.nodes.get(ids.body(key)), opts);
  if (ids.isPort(key) || ids.isOutput(key)) return portDetails(panel, ix, key, opts);
  return containerDetails(panel, ix, key, opts);
}

/** Params are short strings per the schema; anything else is shown as JSON. */
const paramText = (v) => (typeof v === "string" ? v : JSON.stringify(v));

const section = (panel, title, body) =>
  panel.appendChild(h("section", { class: "jm-d-sec" }, [h("h4", null, title, panel), body], panel));

const table = (panel, rows) => h("table", { class: "jm-params" },
  rows.map(([k, v]) => h("tr", null, [h("th", null, k, panel), h("td", null, v, panel)], panel)), panel);

/** Operands as a list; long lists (a root's 1,300 params) stop at MAX_OPS with a count. */
const MAX_OPS = 200;
const operandList = (ix, ops, panel) =>
  h("ul", { class: "jm-ops" }, [
    ...ops.slice(0, MAX_OPS).map((op) =>
      h("li", { class: op && op.var == null ? "jm-op-lit" : "jm-op-var" }, operandText(ix, op), panel)),
    ops.length > MAX_OPS ? h("li", { class: "jm-muted" }, `… ${ops.length - MAX_OPS} more`, panel) : null,
  ], panel);

const title = (panel, main, sub) => panel.appendChild(h("div", { class: "jm-d-title" }, [
  h("span", { class: "jm-d-prim" }, main, panel),
  sub ? h("span", { class: "jm-muted" }, " " + sub, panel) : null,
], panel));

/** Value summary of a var as nodes: text, plus NaN/Inf counts in red. */
const valueCell = (values, v, panel) => {
  const r = values && values[v];
  const s = valueSummary(r);
  if (!s) return h("span", { class: "jm-muted" }, "not recorded", panel);
  // A tiny array's printed value in full, as numpy prints it (rows on lines), under its range.
  const stats = r.value != null ? valueSummary({ ...r, value: null }).text : s.text;
  return [stats, s.bad ? h("span", { class: "jm-bad" }, (stats ? " " : "") + s.bad, panel) : null,
    r.value != null ? h("pre", { class: "jm-d-code" }, String(r.value).slice(0, 2000), panel) : null];
};

/** Rows "name: …" for each var, by mode (values or batch dims); null when the mode has no data. */
function modeRows(ix, varIds, mode, panel) {
  const fn = ix.fn;
  const name = (v) => (ix.vars.get(v) || {}).name || v;
  if (mode === "forward" && fn.values) return varIds.map((v) => [name(v), valueCell(fn.values, v, panel)]);
  if (mode === "vmap" && fn.batch) {
    return varIds.map((v) => {
      const pos = fn.batch[v];
      const aval = (ix.vars.get(v) || {}).aval || "?";
      return [name(v), Number.isInteger(pos) ? `${batchAval(aval, pos)}  (batch dim ${pos})` : `${aval}  (not batched)`];
    });
  }
  return null;
}

function modeSection(panel, ix, varIds, mode, what) {
  const rows = modeRows(ix, varIds, mode, panel);
  if (!rows || !rows.length) return;
  const size = mode === "vmap" && ix.fn.batch_size != null ? ` · batch size ${ix.fn.batch_size}` : "";
  section(panel, mode === "forward" ? `${what} values (recorded)` : `${what} batch dims (vmap${size})`, table(panel, rows));
}

function costRows(cost) {
  const rows = [];
  if (cost && typeof cost.flops === "number") rows.push(["FLOPs", si(cost.flops, "FLOP")]);
  // exp, tanh, sqrt … count here, not in FLOPs, as in XLA's cost analysis (docs/cost.md).
  if (cost && cost.transcendentals) rows.push(["transcendentals", si(cost.transcendentals, "").trim()]);
  if (cost && typeof cost.bytes === "number") rows.push(["bytes", si(cost.bytes, "B")]);
  if (cost && cost.note) rows.push(["note", String(cost.note)]);
  return rows;
}

function nodeDetails(panel, ix, n, opts) {
  title(panel, n.prim, n.id);
  // Source first: "which line of mine made this?" is the question users click to answer.
  if (n.src) {
    section(panel, "Source", [
      h("div", { class: "jm-d-src", title: srcPath(n.src) }, srcText(n.src) + (n.src.func ? ` in ${n.src.func}` : ""), panel),
      n.src.code ? h("pre", { class: "jm-d-code" }, n.src.code, panel) : null,
      n.src.lib ? h("div", { class: "jm-d-lib", title: "the library code your line called, where JAX saw the op" },
        `via ${n.src.lib}`, panel) : null,
    ]);
  }
  if ((n.scope || []).length) section(panel, "Scope", h("div", { class: "jm-d-scope" }, n.scope.join(" / "), panel));
  const cost = costRows(n.cost);
  if (cost.length) section(panel, "Cost (estimate)", table(panel, cost));
  if (n.hlo_comp) section(panel, "HLO computation", h("div", { class: "jm-d-scope" }, String(n.hlo_comp), panel));
  const params = Object.entries(n.params || {});
  if (params.length) section(panel, "Params", table(panel, params.map(([k, v]) => [k, paramText(v)])));
  section(panel, `Inputs (${(n.ins || []).length})`, operandList(ix, n.ins || [], panel));
  section(panel, `Outputs (${(n.outs || []).length})`, operandList(ix, (n.outs || []).map((v) => ({ var: v })), panel));
  modeSection(panel, ix, n.outs || [], opts.mode, "Output");
  if (opts.mode === "vmap") modeSection(panel, ix, (n.ins || []).filter((o) => o && o.var != null).map((o) => o.var), opts.mode, "Input");
  if ((n.subgroups || []).length) {
    section(panel, "Sub-jaxprs", h("ul", { class: "jm-ops" }, n.subgroups.map((g) => {
      const grp = ix.groups.get(g);
      return h("li", null, grp ? `${grp.label} (${grp.n_eqns ?? ix.count.get(ids.group(g))} eqns)` : g, panel);
    }), panel));
  }
}

function portDetails(panel, ix, key, opts) {
  const f = portFace(ix, key);
  const v = f.varId != null ? ix.vars.get(f.varId) : null;
  const what = { in: "Input", const: "Constant", out: "Output" }[f.kind];
  title(panel, `${what} port`);
  const rows = v ? [["var", v.name], ["aval", v.aval], ["id", v.id]] : [["value", f.text]];
  const g = ix.groups.get(v ? v.group : ids.splitOutput(key)[0]);
  if (g) rows.push(["jaxpr", g.label]);
  if (f.kind === "const") rows.push(["note", "captured from Python at trace time"]);
  section(panel, "Value", table(panel, rows.map(([k, val]) => [k, String(val)])));
  if (v) modeSection(panel, ix, [v.id], opts.mode, "Port");
}

/** Costs of containers: summed once per function and metric. */
const tables = new WeakMap();
function containerCost(ix, key) {
  if (!tables.has(ix)) tables.set(ix, { flops: costTable(ix, "flops"), bytes: costTable(ix, "bytes") });
  const t = tables.get(ix);
  return { flops: t.flops.get(key), bytes: t.bytes.get(key) };
}

const KIND = { group: "jaxpr", scope: "scope", repeat: "repeated blocks", unit: "block", chunk: "chunk" };

function containerDetails(panel, ix, key, opts) {
  const kind = KIND[ids.kindOf(key)] || "group";
  title(panel, crumbLabel(ix, key), key === ix.root ? "function body" : kind);
  const rows = [];
  const n = ix.count.get(key);
  if (n != null) rows.push(["eqns", String(n)]);
  const sc = ix.scopes.get(key);
  if (sc) rows.push(["path", sc.path.join(" / ")]);
  if (rows.length) section(panel, "Contents", table(panel, rows));
  const cost = costRows(containerCost(ix, key));
  if (cost.length) section(panel, "Cost (sum of estimates)", table(panel, cost));
  const b = boundaryOf(ix, key);
  const ops = (xs) => xs.map((v) => ({ var: v }));
  section(panel, `Inputs (${b.ins.length})`, operandList(ix, ops(b.ins), panel));
  section(panel, `Outputs (${b.outs.length})`, operandList(ix, ops(b.outs), panel));
  modeSection(panel, ix, b.outs, opts.mode, "Output");
}

/** A cost_analysis figure with the unit its key implies (flops, bytes …, … seconds). */
const fig = (k, v) => {
  const unit = k === "flops" ? "FLOP" : /bytes/.test(k) ? "B" : /seconds/.test(k) ? "s" : "";
  return typeof v !== "number" ? String(v) : unit ? si(v, unit) : num(v);
};

/** Where XLA's figures would be while they are deferred: what state they are in, and a button to load them. */
function deferredCost(panel, fn, load) {
  const status = levelsStatus(fn), st = loadState(fn, "levels");
  const body = [h("div", { class: "jm-muted jm-d-note jm-deferred-status" }, status, panel)];
  if (!st.loading && typeof load === "function") {
    const b = h("button", { type: "button", class: "jm-btn jm-load-levels" }, st.error ? "Try again" : "Load", panel);
    b.addEventListener("click", () => load());
    body.push(b);
  }
  section(panel, "XLA's cost and memory analysis, StableHLO and HLO", h("div", { class: "jm-deferred" }, body, panel));
}

function functionSummary(panel, fn, opts = {}) {
  title(panel, String(fn.name ?? fn.id ?? "function"), `(${fn.signature ?? ""})`);
  const calls = Number(fn.calls) || 0, hits = Number(fn.cache_hits) || 0;
  const rows = [
    ["calls", `${calls} (${plural(hits, "cache hit")})`],
    ["eqns", `${fn.n_eqns ?? (fn.nodes || []).length}${fn.truncated ? " (truncated)" : ""}`],
  ];
  if (Number(fn.wrappers) > 1) rows.push(["jit wrappers", `× ${fn.wrappers} (one definition, signature and program: folded into one entry)`]);
  if (fn.source) rows.push(["defined", srcText(fn.source)]);
  if (fn.values || fn.values_note) rows.push(["values", fn.values_note || "recorded (forward mode)"]);
  if (fn.batch || fn.batch_note) rows.push(["vmap", [fn.batch_size != null ? `batch size ${fn.batch_size}` : "", fn.batch_note].filter(Boolean).join(" · ") || "recorded"]);
  section(panel, "Function", table(panel, rows));
  if (isDeferred(fn)) deferredCost(panel, fn, opts.loadLevels);
  const cost = fn.cost && typeof fn.cost === "object" ? fn.cost : null;
  const prog = cost && cost.program && typeof cost.program === "object" ? cost.program : null;
  if (prog) {
    // Per-operand keys ("bytes accessed0{}", "utilization1{}") are XLA internals: left out.
    const rows1 = Object.keys(prog).filter((k) => !k.includes("{")).sort().map((k) => [k, fig(k, prog[k])]);
    section(panel, "Whole program (from XLA's cost analysis)", table(panel, rows1));
  }
  const mem = cost && cost.memory && typeof cost.memory === "object" ? cost.memory : null;
  if (mem) {
    const rows2 = Object.entries(mem).filter(([k, v]) => typeof v === "number" && !(v === 0 && k.startsWith("host_")))
      .map(([k, v]) => [k.replace(/_size_in_bytes$|_in_bytes$/, "").replace(/_/g, " "), si(v, "B")]);
    section(panel, "Memory (from XLA's memory analysis)", table(panel, rows2));
  }
  if (cost && cost.note) panel.appendChild(h("div", { class: "jm-muted jm-d-note" }, String(cost.note), panel));
  for (const note of [...(Array.isArray(fn.notes) ? fn.notes : []), ...(fn.levelNotes || [])]) panel.appendChild(h("div", { class: "jm-muted jm-d-note" }, note, panel));
  panel.appendChild(h("div", { class: "jm-muted jm-d-empty" }, "Select a node, port or box to see its details.", panel));
}
