/**
 * Pure reading of a grad document (docs/schema.md, "Grad documents"): the text of
 * tabs, residual chips and gradient rows, which elements of which graph a residual
 * or a link lights up, node roles and their counts, findings order. No DOM here, so
 * all of it is tested in node; the views only place what these functions return.
 *
 * Element keys are the graph viewer's (widgets/graph/model.js): "N:<node id>" for
 * an eqn, "P:<var id>" for an input or const port, "O:<group id>:<i>" for output i.
 */
import { nKey, pKey, oKey, srcText } from "../graph/model.js";
import { num } from "../graph/format.js";

/** '48 bytes', '1.5 KB', '2.0 MB': widgets/ui/format.js, the rule jaxmagic/units.py shares. */
export { bytesText } from "../ui/format.js";
import { bytesText } from "../ui/format.js";

/** "1 call", "3 calls". */
export { plural } from "../ui/words.js";
import { plural } from "../ui/words.js";
import * as elementIds from "../graph/ids.js";

/** A function's name without its `f.<locals>.` prefixes: `mlp.<locals>.loss` -> `loss`. */
export const shortName = (name) => String(name ?? "?").replace(/^.*<locals>\./, "");

/**
 * A tab's text: `{title, stats, badge}`, e.g. "value_and_grad of loss",
 * "3 calls · 1.2 MB residuals", "vmap over 5" (badge: null when not batched).
 */
export function entryTab(entry) {
  const calls = Number(entry.calls) || 0;
  const stats = [plural(calls, "call"), `${bytesText(entry.residual_bytes)} residuals`];
  if (entry.origin === "tangent") {
    return { title: `${entry.kind || "jvp"} of ${shortName(entry.name)}`, stats: `${plural(calls, "call")} · forward mode`,
      badge: entry.batch ? String(entry.batch) : null };
  }
  if (entry.origin === "jit") {
    const kinds = [...new Set((entry.grad_sites || []).map((g) => String(g.kind)))];
    const n = (entry.regions || []).length;
    stats.splice(1, 0, plural(n, "region"));
    return { title: `${kinds.join(", ") || "grad"} inside ${shortName(entry.name)} (jit)`, stats: stats.join(" · "), badge: null };
  }
  return { title: `${entry.kind || "grad"} of ${shortName(entry.name)}`, stats: stats.join(" · "), badge: entry.batch ? String(entry.batch) : null };
}

/** A graph document holding one Function, for the graph viewer. */
export const graphDoc = (fn, title = "") =>
  /** @type {import("../types/documents").GraphDocument} */ ({
    schema: "jaxmagic", version: 2, kind: "graph", title, notes: [], caption: [], error: null, functions: fn ? [fn] : [],
  });

/** Node of `fn` by id (a Map per function, built once). */
const nodeMaps = new WeakMap();
export function nodeOf(fn, id) {
  if (!fn || id == null) return null;
  let m = nodeMaps.get(fn);
  if (!m) nodeMaps.set(fn, (m = new Map((fn.nodes || []).map((n) => [n.id, n]))));
  return m.get(id) || null;
}

/** The root group of a Function. */
export const rootGroup = (fn) => (fn && (fn.groups || []).find((g) => g.id === fn.root)) || null;

/** Residuals largest first (ties in document order): memory is what a user hunts for. */
export function residualOrder(residuals) {
  return (residuals || []).map((r, i) => [r, i]).sort((a, b) => (Number(b[0].bytes) || 0) - (Number(a[0].bytes) || 0) || a[1] - b[1]).map(([r]) => r);
}

/**
 * What made a residual, in words: `tanh · make.py:22`, `input params['w']`,
 * `const 0`, `literal 2.0`, `input` (a jit residual computed outside its region).
 * `fn` is the graph holding the producer (forward, or the jit program).
 */
export function producerText(r, fn) {
  const p = r.producer;
  if (p && typeof p === "object") {
    if (p.input != null) return `input ${p.path ?? p.input}`;
    if (p.const != null) return `const ${p.const}`;
    if (p.literal != null) return `literal ${p.literal}`;
  }
  const line = srcText(r.source);
  if (typeof p === "string") {
    const n = nodeOf(fn, p);
    return [n ? n.prim : p, line].filter(Boolean).join(" · ");
  }
  return r.origin === "input" ? "input" : line || "?";
}

/** A residual chip's parts: {aval, bytes, producer, uses}; `text` joins them with " · ". */
export function chipParts(r, fn) {
  const uses = (r.consumers || []).length;
  const parts = { aval: String(r.aval ?? "?"), bytes: bytesText(r.bytes), producer: producerText(r, fn), uses: plural(uses, "use") };
  return { ...parts, text: [parts.aval, parts.bytes, parts.producer, parts.uses].join(" · ") };
}

/**
 * What selecting a residual lights up. Split entries: in the forward graph its
 * producer (node, or the input / const port) and the edges of `forward_var`; in the
 * backward graph every consumer and the input ports receiving it (consumers first:
 * the view centres on the first key when all do not fit). Jit entries: the
 * producer and consumers in the one program, and the edges from one to the others.
 * Returns {forward?, backward?, program?: {keys, vars}}.
 */
export function residualTargets(entry, r) {
  if (entry.origin === "jit") {
    const fn = entry.program;
    const keys = [], vars = new Set();
    const prod = typeof r.producer === "string" ? nodeOf(fn, r.producer) : null;
    if (prod) keys.push(nKey(prod.id));
    const outs = new Set(prod ? prod.outs || [] : []);
    for (const c of r.consumers || []) {
      keys.push(nKey(c));
      for (const op of (nodeOf(fn, c) || {}).ins || []) if (op && outs.has(op.var)) vars.add(op.var);
    }
    return { program: { keys, vars: [...vars] } };
  }
  const fwd = [];
  const p = r.producer;
  const root = rootGroup(entry.forward);
  if (typeof p === "string") fwd.push(nKey(p));
  else if (p && p.input != null && root && root.invars[p.input] != null) fwd.push(pKey(root.invars[p.input]));
  else if (p && p.const != null && root && (root.constvars || [])[p.const] != null) fwd.push(pKey(root.constvars[p.const]));
  const bvars = r.backward_vars || [];
  return {
    forward: { keys: fwd, vars: r.forward_var ? [r.forward_var] : [] },
    backward: { keys: [...(r.consumers || []).map(nKey), ...bvars.map(pKey)], vars: bvars },
  };
}

/**
 * Links both ways: `toForward` backward node id -> forward node ids, `toBackward`
 * forward node id -> backward node ids (in document order), `kind` backward node id
 * -> "exact" | "by_source" (jit; split links are exact), `source` (jit: the span text),
 * `unlisted` backward node id -> how many forward nodes share its source span when the
 * document counts them instead of listing them (a loop's line: every layer's op).
 */
export function linkMaps(entry) {
  const toForward = new Map(), toBackward = new Map(), kind = new Map(), source = new Map(), unlisted = new Map();
  const add = (b, fs, k, src) => {
    toForward.set(b, fs);
    kind.set(b, k);
    if (src) source.set(b, String(src));
    for (const f of fs) (toBackward.get(f) || toBackward.set(f, []).get(f)).push(b);
  };
  if (entry.origin === "jit") {
    for (const reg of entry.regions || []) {
      for (const [b, l] of Object.entries(reg.links || {})) {
        add(b, (l && l.forward) || [], l && l.kind === "exact" ? "exact" : "by_source", l && l.source);
        if (l && Number.isInteger(l.n_forward)) unlisted.set(b, l.n_forward);
      }
    }
  } else {
    for (const [b, f] of Object.entries((entry.links && entry.links.backward) || {})) add(b, [f], "exact", null);
  }
  return { toForward, toBackward, kind, source, unlisted };
}

/** The UserOp a node comes from (split entries), or null. */
export function userOpOf(entry, graph, nodeId) {
  const l = entry.links || {};
  const id = graph === "forward" ? (l.forward || {})[nodeId] : (l.backward_user || {})[nodeId];
  return id ? (entry.user_ops || []).find((u) => u.id === id) || null : null;
}

/** Primitives of custom differentiation rules: their nodes get a "custom rule" badge. */
export const CUSTOM_PRIMS = new Set(["custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"]);

/** Node roles of a jit entry, their colours (rgba: both renderers) and legend order. */
export const ROLES = ["forward", "backward", "other", "unknown"];
export const ROLE_FILL = {
  forward: "rgba(15,157,138,0.18)",
  backward: "rgba(232,113,10,0.22)",
  other: "rgba(128,128,128,0.16)",
  unknown: null,
};
/** Recomputed (checkpoint) and custom-rule strokes. */
export const RECOMPUTED_STROKE = "rgb(124,77,210)";
export const CUSTOM_STROKE = "rgb(232,113,10)";

/**
 * Role counts of a jit entry: from `totals` (the document's own count), else counted
 * from `roles`. `[[role, n]]` in legend order.
 */
export function roleCounts(entry) {
  const t = entry.totals || {};
  const counted = { forward: 0, backward: 0, other: 0, unknown: 0 };
  for (const r of Object.values(entry.roles || {})) if (r in counted) counted[r]++;
  return ROLES.map((r) => [r, Number.isInteger(t["n_" + r]) ? t["n_" + r] : counted[r]]);
}

/**
 * The decoration of each node of a graph (graph viewer's setDecorations): role fill
 * (jit), dashed violet stroke and "↻" badge for recomputed nodes, "custom rule" badge.
 * `roles` may be null (split graphs); `recomputed` a Set of node ids; `fills`: role -> fill
 * (ROLE_FILL, or the tangent view's primal / tangent fills).
 * @param {any} fn
 * @param {{roles?: any, recomputed?: Set<any>, custom?: any, fills?: Record<string, (string | null)>}} [o]
 */
export function decorator(fn, { roles = null, recomputed = new Set(), custom = null, fills = ROLE_FILL } = {}) {
  const customs = new Set(custom || customNodes(fn));
  return (key) => {
    if (!elementIds.isNode(key)) return null;
    const id = elementIds.body(key);
    const d = {};
    const fill = roles ? fills[roles[id]] : null;
    if (fill) d.fill = fill;
    if (recomputed.has(id)) Object.assign(d, { stroke: RECOMPUTED_STROKE, dash: "4,2", badge: "↻ recomputed" });
    if (customs.has(id)) Object.assign(d, { stroke: CUSTOM_STROKE, badge: "custom rule" });
    return Object.keys(d).length ? d : null;
  };
}

/**
 * Custom-rule node ids of one graph of an entry, in order: nodes whose primitive is a custom
 * call, and the nodes the rules became (`entry.custom_rules[].forward / .backward`: JAX inlines
 * the jvp rule into the forward and a custom_vjp bwd rule into the backward).
 * `side`: "forward" | "backward" | "program".
 */
export function customNodes(fn, entry = null, side = null) {
  const made = new Set();
  for (const r of (entry && entry.custom_rules) || []) for (const id of r[side] || []) made.add(id);
  return ((fn && fn.nodes) || []).filter((n) => CUSTOM_PRIMS.has(n.prim) || made.has(n.id)).map((n) => n.id);
}

const SEVERITY = { bug: 0, warning: 1, info: 2 };
/** Findings with warnings (and bugs) before infos; document order within a severity. */
export function sortFindings(findings) {
  const rank = (f) => SEVERITY[f && f.severity] ?? 3;
  return (findings || []).map((f, i) => [f, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]).map(([f]) => f);
}

/** Whether an entry carries gradient values (`%%grad_graph --values`). */
export function hasValues(entry) {
  const ok = (fn) => !!(fn && fn.values && typeof fn.values === "object");
  return entry.origin === "jit" ? ok(entry.program) : ok(entry.forward) || ok(entry.backward);
}

/**
 * A gradient's value summary, as label parts: `[["min", "-1.2"], …, ["norm", "3.4"]]`
 * and `bad` ("NaN 3 Inf 1", or ""). Null without a summary.
 */
export function gradValue(v) {
  if (!v || typeof v !== "object") return null;
  const parts = [["min", v.min], ["max", v.max], ["mean", v.mean], ["norm", v.norm]]
    .filter(([, x]) => x != null).map(([k, x]) => [k, num(x)]);
  const bad = [v.nan > 0 ? `NaN ${v.nan}` : "", v.inf > 0 ? `Inf ${v.inf}` : ""].filter(Boolean).join(" ");
  return { parts, bad, text: parts.map(([k, x]) => `${k} ${x}`).join(" · ") };
}

/**
 * One row per differentiated leaf: {path, aval, key, value (gradValue, when recorded), lit}.
 * `key` selects what carries the gradient: the backward's output port (split), or the
 * program node that makes it (a jitted step, whose gradients are inner values).
 */
export function gradRows(entry) {
  const root = entry.origin === "jit" ? null : rootGroup(entry.backward);
  const made = new Map();
  if (entry.origin === "jit") for (const n of (entry.program && entry.program.nodes) || []) for (const v of n.outs || []) made.set(v, n.id);
  const keyOf = (g) => (entry.origin === "jit" ? (made.has(g.var) ? nKey(made.get(g.var)) : null)
    : root && Number.isInteger(g.output) ? oKey(root.id, g.output) : null);
  return (entry.grads_of || []).map((g) => ({
    path: String(g.path ?? "?"), aval: String(g.aval ?? "?"), key: keyOf(g),
    value: gradValue(g.value), lit: g.lit != null ? String(g.lit) : null,
  }));
}

/** Regions' residuals of a jit entry with the region each belongs to: [{region, residual}]. */
export const jitResiduals = (entry) => (entry.regions || []).flatMap((reg) => (reg.residuals || []).map((r) => ({ region: reg, residual: r })));

/** A residual of an entry by id (split: `residuals`; jit: any region's). */
export function residualById(entry, id) {
  if (entry.origin === "jit") return (jitResiduals(entry).find((x) => x.residual.id === id) || {}).residual || null;
  return (entry.residuals || []).find((r) => r.id === id) || null;
}
