/**
 * Edge-label modes of the graph: what an edge between two eqns says about the
 * value(s) it carries.
 *   trace   — the aval (`f32[8,3]`): what tracing knew.
 *   forward — a summary of the value recorded on a real call (`fn.values`, only
 *             with `%%jaxpr --values`): `[-1.2 … 3.4] μ 0.5`, plus `NaN 3` / `Inf 1`.
 *   vmap    — the aval with the vmap batch dimension marked (`fn.batch`): `f32[‹8›,3]`.
 * Label functions take the var ids an edge carries (one edge may bundle several
 * vars) and return plain text; they are pure so they are tested without a DOM.
 */
import { valueSummary, batchAval } from "./format.js";

export const MODES = ["trace", "forward", "vmap"];

/**
 * Whether `mode` can be shown for function `fn`: `{ok, why, note}`. `why` explains
 * a disabled mode (tooltip), `note` is the document's own remark (values_note /
 * batch_note), shown while the mode is on.
 */
export function modeState(fn, mode) {
  if (mode === "forward") {
    const ok = !!(fn && fn.values && typeof fn.values === "object");
    return {
      ok,
      why: ok ? "" : (fn && fn.values_note) || "No values were recorded: run the cell with `%%jaxpr --values` to see value summaries on the edges.",
      note: (fn && fn.values_note) || "",
    };
  }
  if (mode === "vmap") {
    const ok = !!(fn && fn.batch && typeof fn.batch === "object");
    return {
      ok,
      why: ok ? "" : (fn && fn.batch_note) || "No batch dimensions were recorded: run the cell with `%%jaxpr --vmap` (for programs that use jax.vmap).",
      note: (fn && fn.batch_note) || "",
    };
  }
  return { ok: true, why: "", note: "" };
}

/**
 * One label for a bundle of vars from the text of each: `text` for one var,
 * `text ×3` when all agree, else `3 values`.
 */
export function bundleLabel(varIds, one) {
  const texts = (varIds || []).map(one);
  if (!texts.length) return "";
  const first = texts[0];
  if (texts.every((t) => t === first)) return first + (texts.length > 1 ? ` ×${texts.length}` : "");
  return `${texts.length} values`;
}

/** trace: avals (the view's default labels, kept here so modes can fall back to it). */
export function traceLabel(ix) {
  return (varIds) => bundleLabel(varIds, (v) => (ix.vars.get(v) || {}).aval || "?");
}

/**
 * forward: the value summary of each var; a var with no record (not every var is
 * recorded, see values_note) keeps its aval so no edge goes blank.
 */
export function forwardLabel(ix, values) {
  return (varIds) => bundleLabel(varIds, (v) => {
    const s = valueSummary(values && values[v]);
    if (!s) return (ix.vars.get(v) || {}).aval || "?";
    // ⚠ marks bad values in plain-text labels (renderers draw labels as text only).
    return [s.text, s.bad && `⚠ ${s.bad}`].filter(Boolean).join(" ");
  });
}

/** True when any of the vars carries NaN or Inf (callers colour such labels red). */
export function hasBadValues(values, varIds) {
  return !!values && (varIds || []).some((v) => {
    const r = values[v];
    return !!r && (r.nan > 0 || r.inf > 0);
  });
}

/** vmap: the aval with the batch dimension marked, `f32[‹8›,3]`. */
export function vmapLabel(ix, batch) {
  return (varIds) => bundleLabel(varIds, (v) => batchAval((ix.vars.get(v) || {}).aval || "?", batch ? batch[v] : null));
}

/** The label function of `mode` for function index `ix`, or null for trace. */
export function labelFor(mode, ix) {
  const fn = ix.fn;
  if (mode === "forward" && modeState(fn, mode).ok) return forwardLabel(ix, fn.values);
  if (mode === "vmap" && modeState(fn, mode).ok) return vmapLabel(ix, fn.batch);
  return null;
}

/**
 * The node a value finding is about: the first eqn (graph order) with a NaN in an output
 * and none in its inputs, else the same for Inf (the caption's rule, captions/graph.py
 * first_bad_node). Its id, or null without values or without one.
 */
/** The node of `fn` the document's first finding about it names (a bug or warning first), or null. */
export function findingNode(doc, fn) {
  const fs = Array.isArray(doc && doc.findings) ? doc.findings : [];
  const f = fs.find((x) => x && fn && x.fn === fn.id && x.node != null && x.severity !== "info");
  return f ? String(f.node) : null;
}

export function firstBadNode(fn) {
  const values = fn && fn.values;
  if (!values || typeof values !== "object") return null;
  const bad = (v, w) => v != null && ((values[v] || {})[w] || 0) > 0;
  for (const w of ["nan", "inf"]) {
    for (const n of fn.nodes || []) {
      if ((n.outs || []).some((v) => bad(v, w)) && !(n.ins || []).some((op) => op && bad(op.var, w))) return String(n.id);
    }
  }
  return null;
}
