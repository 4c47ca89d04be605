/**
 * The grad view's details panel: what the graph viewer's panel says about the
 * selected element (widgets/graph/details.js), preceded by what differentiation
 * adds: which pass it is in, the node(s) it is linked to in the other pass (buttons
 * that select them), the user's source line both share, whether the backward pass
 * recomputes it (checkpoint) or a custom rule made it, and the residuals it saves or
 * reads. A selected residual, or nothing, get their own summaries. Text only.
 */
import { h, clear } from "../ui/dom.js";
import { plural } from "../ui/words.js";
import { showDetails } from "../graph/details.js";
import { nKey, srcPath, srcText } from "../graph/model.js";
import { nodeOf, userOpOf, chipParts, bytesText, CUSTOM_PRIMS, shortName } from "./model.js";
import * as elementIds from "../graph/ids.js";

const sec = (ref, title, body) => h("section", { class: "jm-d-sec" }, [h("h4", null, title, ref), body], ref);
const rows = (ref, list) => h("table", { class: "jm-params" },
  list.filter(Boolean).map(([k, v]) => h("tr", null, [h("th", null, k, ref), h("td", null, v, ref)], ref)), ref);
const code = (ref, src) => [
  h("div", { class: "jm-d-src", title: srcPath(src) }, srcText(src) + (src.func ? ` in ${src.func}` : ""), ref),
  src.code ? h("pre", { class: "jm-d-code" }, String(src.code), ref) : null,
  src.lib ? h("div", { class: "jm-d-lib" }, `via ${src.lib}`, ref) : null,
];
/** A button naming a node of `graph` that selects it. */
const nodeButton = (ref, fn, graph, id, go, extra = "") => {
  const n = nodeOf(fn, id);
  const b = h("button", { type: "button", class: "jm-btn jm-btn-quiet jm-grad-go", "data-graph": graph, "data-node-id": id },
    `${n ? n.prim : "?"} ${id}${extra}`, ref);
  b.addEventListener("click", () => go(graph, nKey(id)));
  return b;
};

/**
 * Details of `key` (an element of graph `ctx.graph`), or the entry when `key` is null.
 * ctx: {entry, graph: "forward"|"backward"|"program", ix, mode, links (linkMaps),
 *       recomputed: Set, fnOf(graph), go(graph, key), pickResidual(id)}.
 */
export function gradDetails(panel, ctx, key) {
  if (!key) return entrySummary(panel, ctx);
  showDetails(panel, ctx.ix, key, { mode: ctx.mode });
  if (!elementIds.isNode(key)) return;
  const ref = panel, id = elementIds.body(key), { entry, graph, links } = ctx;
  const n = nodeOf(ctx.fnOf(graph), id);
  const parts = [];
  const jit = entry.origin === "jit";
  const role = jit ? (entry.roles || {})[id] || "unknown" : graph;
  parts.push(rows(ref, [["pass", role + (ctx.recomputed.has(id) ? " (recomputed under checkpoint)" : "")]]));
  const other = jit ? "program" : graph === "backward" ? "forward" : "backward";
  const fwdIds = links.toForward.get(id), bwdIds = links.toBackward.get(id);
  if (fwdIds && fwdIds.length && (jit ? role === "backward" : graph === "backward")) {
    const kind = links.kind.get(id);
    parts.push(sec(ref, `Differentiates${jit ? ` (${kind === "exact" ? "exact" : "by source line"})` : ""}`,
      h("div", { class: "jm-grad-links" }, fwdIds.map((f) => nodeButton(ref, ctx.fnOf(other), other, f, ctx.go)), ref)));
  }
  const unlisted = jit && role === "backward" ? links.unlisted.get(id) : undefined;
  if (unlisted) {
    parts.push(sec(ref, "Differentiates (by source line)", h("div", { class: "jm-muted" },
      `one of ${unlisted.toLocaleString("en-US")} forward ops with this source span; JAX records nothing finer`, ref)));
  }
  if (bwdIds && bwdIds.length && (jit ? role !== "backward" : graph === "forward")) {
    parts.push(sec(ref, `Differentiated by (${bwdIds.length})`,
      h("div", { class: "jm-grad-links" }, bwdIds.slice(0, 60).map((b) => nodeButton(ref, ctx.fnOf(other), other, b, ctx.go)), ref)));
  }
  const op = jit ? null : userOpOf(entry, graph, id);
  if (op) parts.push(sec(ref, `Your op: ${op.prim}`, op.src ? code(ref, op.src) : h("div", { class: "jm-muted" }, "no source line", ref)));
  else if (jit && links.source.get(id)) parts.push(sec(ref, "Source span", h("div", { class: "jm-d-src" }, links.source.get(id), ref)));
  if (ctx.recomputed.has(id)) {
    parts.push(h("div", { class: "jm-grad-note" }, "Forward work done again in the backward pass: jax.checkpoint / remat chose to recompute it instead of saving it.", ref));
  }
  if (n && CUSTOM_PRIMS.has(n.prim)) {
    parts.push(h("div", { class: "jm-grad-note" }, `A custom differentiation rule (${n.prim}): JAX differentiates it with the rule you defined, not by tracing its body.`, ref));
  }
  const res = residualsAt(ctx, id);
  if (res.length) {
    parts.push(sec(ref, graph === "backward" || role === "backward" ? "Reads residuals" : "Saves residuals",
      h("div", { class: "jm-grad-links" }, res.map((r) => {
        const b = h("button", { type: "button", class: "jm-btn jm-btn-quiet jm-grad-go", "data-residual-id": String(r.id) },
          `${r.aval} · ${bytesText(r.bytes)}`, ref);
        b.addEventListener("click", () => ctx.pickResidual(String(r.id)));
        return b;
      }), ref)));
  }
  const head = h("section", { class: "jm-grad-d" }, parts, ref);
  panel.insertBefore(head, panel.children[1] || null); // under the title
}

/** Residuals produced (forward / program) or read (backward / program) by node `id`. */
function residualsAt(ctx, id) {
  const { entry, graph } = ctx;
  const all = entry.origin === "jit" ? (entry.regions || []).flatMap((r) => r.residuals || []) : entry.residuals || [];
  return all.filter((r) => (graph !== "backward" && r.producer === id) || (graph !== "forward" && (r.consumers || []).includes(id)));
}

/** A selected residual: what it is, who makes it, who reads it, where in the user's code. */
export function residualDetails(panel, ctx, r) {
  clear(panel);
  const ref = panel, { entry } = ctx;
  const fwd = entry.origin === "jit" ? "program" : "forward", bwd = entry.origin === "jit" ? "program" : "backward";
  const p = chipParts(r, ctx.fnOf(fwd));
  panel.appendChild(h("div", { class: "jm-d-title" }, [
    h("span", { class: "jm-d-prim" }, `residual ${r.id}`, ref), h("span", { class: "jm-muted" }, ` ${p.aval} · ${p.bytes}`, ref),
  ], ref));
  panel.appendChild(rows(ref, [
    ["made by", p.producer],
    r.forward_var ? ["forward var", String(r.forward_var)] : null,
    (r.backward_vars || []).length ? ["backward inputs", r.backward_vars.join(", ")] : null,
    ["read by", plural((r.consumers || []).length, "backward eqn")],
  ]));
  if (typeof r.producer === "string") {
    panel.appendChild(sec(ref, "Producer", h("div", { class: "jm-grad-links" }, nodeButton(ref, ctx.fnOf(fwd), fwd, r.producer, ctx.go), ref)));
  }
  if ((r.consumers || []).length) {
    panel.appendChild(sec(ref, "Consumers", h("div", { class: "jm-grad-links" },
      r.consumers.slice(0, 60).map((c) => nodeButton(ref, ctx.fnOf(bwd), bwd, c, ctx.go)), ref)));
  }
  if (r.source) panel.appendChild(sec(ref, "Source", code(ref, r.source)));
  panel.appendChild(h("div", { class: "jm-muted jm-d-empty" }, "Select the chip again or press Esc to clear.", ref));
}

/** Nothing selected: the entry as a whole. */
function entrySummary(panel, ctx) {
  clear(panel);
  const ref = panel, e = ctx.entry;
  panel.appendChild(h("div", { class: "jm-d-title" }, [
    h("span", { class: "jm-d-prim" }, shortName(e.name), ref),
    h("span", { class: "jm-muted" }, e.origin === "jit" ? " jitted step" : ` ${e.kind || "grad"}`, ref),
  ], ref));
  const t = e.totals || {};
  panel.appendChild(rows(ref, [
    ["function", String(e.name ?? "?")],
    ["calls", String(e.calls ?? "?")],
    e.origin === "split" ? ["argnums", (e.argnums || []).join(", ") + (e.has_aux ? " (has_aux)" : "")] : null,
    e.batch ? ["batch", String(e.batch)] : null,
    e.origin === "split" ? ["eqns", `forward ${e.forward ? e.forward.n_eqns : "?"} · backward ${e.backward ? e.backward.n_eqns : "?"}`] : null,
    e.origin === "jit" ? ["eqns", `forward ${t.n_forward ?? "?"} · backward ${t.n_backward ?? "?"} · other ${t.n_other ?? "?"}`] : null,
    ["residuals", bytesText(e.residual_bytes)],
    ctx.recomputed.size ? ["recomputed", `${ctx.recomputed.size} eqns under checkpoint`] : null,
    ctx.mode === "forward" && e.cotangent ? ["cotangent", String(e.cotangent)] : null,
    e.source ? ["defined", srcText(e.source)] : null,
  ]));
  if (e.call_site) panel.appendChild(sec(ref, "Called at", code(ref, e.call_site)));
  panel.appendChild(h("div", { class: "jm-muted jm-d-empty" },
    "Select a node to see what it differentiates, a residual chip to see where it is made and read.", ref));
}
