/**
 * The story a graph drawing tells when it is played back (widgets/ui/playback.js): its
 * eqns in trace order, one step per drawn eqn or collapsed box. Pure reading of the
 * index (model.js) and the expansion state, no DOM, so it is tested against real
 * documents in node.
 *
 * Trace order is the order JAX's printer lists the eqns in (the document's node order):
 * a collapsed group (a sub-jaxpr's owner, a scope, a run of repeated layers, a chunk) is
 * one step, as it is one box on screen; an expanded one plays its inner eqns in order.
 * So a function with no sub-jaxprs plays exactly `jax.make_jaxpr(f)(x).eqns`.
 */
import { isCollapsible, srcText } from "./model.js";
import { containerName } from "./metrics.js";
import { valueSummary } from "./format.js";
import { plural } from "../ui/words.js";
import * as ids from "./ids.js";

/**
 * The steps of the drawing of `ix` with `expanded` open: `{keys, first, last}`. `keys`
 * are the element keys played, in order (step i, 1-based, is `keys[i - 1]`); `first` and
 * `last` map every open container walked (groups, open scopes, open owners...) to the
 * first step inside it and the last step before leaving it (first > last: nothing inside).
 */
export function storySteps(ix, expanded) {
  const keys = [], first = new Map(), last = new Map();
  const walk = (k) => {
    first.set(k, keys.length + 1);
    for (const c of ix.items.get(k) || []) {
      // An open owner holds its sub-groups; a sub-group is always open with its owner.
      if (ids.isGroup(c) || (isCollapsible(ix, c) && expanded.has(c))) walk(c);
      else keys.push(c);
    }
    last.set(k, keys.length);
  };
  if (ix.root) walk(ix.root);
  return { keys, first, last };
}

/** Ids of the eqn nodes an element stands for, in order: itself and everything inside it. */
export function nodesUnder(ix, key) {
  const out = [];
  const walk = (k) => {
    if (ids.isNode(k)) out.push(ids.body(k));
    for (const c of ix.items.get(k) || []) walk(c);
  };
  walk(key);
  return out;
}

const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

/** `name:aval` of a var, as JAX prints a binder. */
const binder = (ix, v) => {
  const x = ix.vars.get(v);
  return x ? `${x.name}:${x.aval}` : String(v);
};

/** Per index: the lines of the function's jaxpr text, and the text they were split from (a
 * deferred text replaces the first eqns' text when it arrives: deferred.js). */
const textLines = new WeakMap();

/**
 * One eqn as JAX prints it, on one line: `c:f32[3] = integer_pow[y=2] b`. The line of
 * the document's own jaxpr text when the printer put the eqn on one line (JAX leaves
 * out some params, `sin[accuracy=None]` prints as `sin`); else made up from the node
 * with sub-jaxpr params left out (they are the drawing's boxes) and long params cut.
 */
export function eqnText(ix, node) {
  let kept = textLines.get(ix);
  if (!kept || kept.text !== ix.fn.text) textLines.set(ix, (kept = { text: ix.fn.text, lines: String(ix.fn.text || "").split("\n") }));
  const lines = kept.lines;
  const printed = Number.isInteger(node.line) ? lines[node.line] : null;
  const binders = (node.outs || []).map((v) => binder(ix, v)).join(" ");
  if (printed && binders && printed.trim().startsWith(binders + " = ") && !/[[{(]\s*$/.test(printed)) {
    return cut(spokenParams(printed.trim(), binders.length + 3), 120);
  }
  return madeUpText(ix, node);
}

/** A param read aloud says something: `axes=(1,)`, not `out_sharding=None` or a 60-character spec. */
const SPOKEN_PARAM_CHARS = 24;

/**
 * The printed eqn with its params as a speaker would read them: params that are None are left out,
 * and params longer than SPOKEN_PARAM_CHARS become "…" (`dot_general[…] f c`). The full line stays
 * in the jaxpr pane; a step's label is read from across a room. `at` is where the primitive starts.
 */
export function spokenParams(line, at) {
  const open = line.indexOf("[", at);
  if (open < 0 || !/^\w+$/.test(line.slice(at, open))) return line;
  let depth = 0, close = -1;
  for (let i = open; i < line.length; i++) {
    const c = line[i];
    if (c === "[" || c === "(" || c === "{") depth++;
    else if ((c === "]" || c === ")" || c === "}") && --depth === 0) { close = i; break; }
  }
  if (close < 0) return line;
  const params = topLevelWords(line.slice(open + 1, close)).filter((p) => !/=None$/.test(p));
  const kept = params.filter((p) => p.length <= SPOKEN_PARAM_CHARS);
  const inner = [...kept, ...(kept.length < params.length ? ["…"] : [])].join(" ");
  return line.slice(0, open) + (inner ? `[${inner}]` : "") + line.slice(close + 1);
}

/** Split `a=1 b=(2, 3) c=[x y]` at the spaces outside brackets. */
function topLevelWords(text) {
  const out = [];
  let depth = 0, start = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === "[" || c === "(" || c === "{") depth++;
    else if (c === "]" || c === ")" || c === "}") depth--;
    if ((c === " " && depth === 0) || i === text.length) {
      if (i > start) out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return out;
}

function madeUpText(ix, node) {
  const outs = node.outs || [];
  const lhs = outs.slice(0, 3).map((v) => binder(ix, v)).join(" ") + (outs.length > 3 ? ` …+${outs.length - 3}` : "");
  const all = Object.entries(node.params || {})
    .filter(([, v]) => !/^<jaxpr /.test(String(v)) && String(v) !== "None")
    .map(([k, v]) => `${k}=${String(v).replace(/\s+/g, " ")}`);
  const params = all.filter((p) => p.length <= SPOKEN_PARAM_CHARS); // as spokenParams reads them
  if (params.length < all.length) params.push("…");
  const prim = String(node.prim ?? "?") + (params.length ? `[${params.join(" ")}]` : "");
  const ins = node.ins || [];
  const args = ins.slice(0, 6).map((op) => {
    if (!op) return "?";
    if (op.var != null) return (ix.vars.get(op.var) || {}).name ?? String(op.var);
    return op.aval ? `${op.lit}:${op.aval}` : String(op.lit);
  }).join(" ") + (ins.length > 6 ? ` …+${ins.length - 6}` : "");
  return cut(`${lhs ? lhs + " = " : ""}${prim}${args ? " " + args : ""}`, 120);
}

/** Per index: the files its eqns come from. */
const fileLists = new WeakMap();
/** Files the function's eqns come from, in first-seen order. */
function filesOf(ix) {
  let files = fileLists.get(ix);
  if (!files) {
    const seen = new Set();
    for (const n of ix.fn.nodes || []) {
      const f = n && n.src && n.src.file;
      if (f != null) seen.add(String(f));
    }
    fileLists.set(ix, (files = [...seen]));
  }
  return files;
}

/** `cell [3], line 5` or `model.py:5` (widgets/ui/source-text.js). */
export function lineText(ix, src) {
  if (!src || src.line == null) return "";
  return srcText(src) || `line ${src.line}`;
}

/**
 * The source lines of a function's eqns, for the code strip: `[{key, file, line, code}]`,
 * files in the order their eqns come, lines in file order, each line once. `key` is
 * `file:line`, what `stepLines` returns.
 */
export function codeLines(ix) {
  const files = filesOf(ix);
  const seen = new Map();
  for (const n of ix.fn.nodes || []) {
    const s = n && n.src;
    if (!s || s.file == null || !Number.isInteger(s.line)) continue;
    const key = `${s.file}:${s.line}`;
    if (!seen.has(key) || (!seen.get(key).code && s.code)) {
      seen.set(key, { key, file: String(s.file), line: s.line, code: s.code != null ? String(s.code) : "" });
    }
  }
  return [...seen.values()].sort((a, b) => files.indexOf(a.file) - files.indexOf(b.file) || a.line - b.line);
}

/** The `file:line` keys (codeLines) of the eqns a step stands for. */
export function stepLines(ix, key) {
  const out = new Set();
  for (const id of nodesUnder(ix, key)) {
    const s = (ix.nodes.get(id) || {}).src;
    if (s && s.file != null && Number.isInteger(s.line)) out.add(`${s.file}:${s.line}`);
  }
  return out;
}

/** `lines 3–7` (or one line) of the eqns under a box, in the first file they come from. */
function linesOfBox(ix, key) {
  const files = filesOf(ix);
  let file = null, lo = Infinity, hi = -Infinity;
  for (const id of nodesUnder(ix, key)) {
    const s = (ix.nodes.get(id) || {}).src;
    if (!s || !Number.isInteger(s.line)) continue;
    if (file == null) file = s.file;
    if (s.file !== file) continue;
    lo = Math.min(lo, s.line);
    hi = Math.max(hi, s.line);
  }
  if (file == null) return "";
  const where = files.length > 1 ? `${String(file).split(/[\\/]/).pop()}:` : "line" + (lo === hi ? " " : "s ");
  return `${where}${lo === hi ? lo : `${lo}–${hi}`}`;
}

/**
 * What one step shows, in words: the eqn as JAX prints it (a collapsed owner with the
 * count of eqns inside; a collapsed box by its name and count), and its source line.
 * `values` (forward mode: the function's recorded values) adds the first output's summary.
 */
export function stepText(ix, key, { values = null } = {}) {
  if (ids.isNode(key)) {
    const n = ix.nodes.get(ids.body(key));
    if (!n) return key;
    const inner = isCollapsible(ix, key) ? ` (${(ix.count.get(key) || 1) - 1} eqns inside)` : "";
    const parts = [eqnText(ix, n) + inner, lineText(ix, n.src)];
    const out = (n.outs || [])[0];
    const v = values && out != null ? valueSummary(values[out]) : null;
    if (v) parts.push(`${(ix.vars.get(out) || {}).name ?? out} = ${[v.text, v.bad && `⚠ ${v.bad}`].filter(Boolean).join(" ")}`);
    return parts.filter(Boolean).join(" · ");
  }
  const count = ix.count.get(key) || 0;
  return [`${containerName(ix, key)} (${plural(count, "eqn")})`, linesOfBox(ix, key)].filter(Boolean).join(" · ");
}

/** Where playback starts: the function's inputs. */
export function startText(ix, n) {
  const g = ix.groups.get(ix.root ? ids.body(ix.root) : "");
  const ins = g ? (g.invars || []).map((v) => binder(ix, v)) : [];
  const name = String(ix.fn.name ?? "function");
  return `0 of ${n} · ${cut(`${name}(${ins.join(", ")})`, 90)} · ${plural(n, "step")} to play`;
}

/** The label of position `p` of a story of `keys` (playback.js `label`). */
export function storyLabel(ix, keys, p, { values = null } = {}) {
  const n = keys.length;
  if (p <= 0) return startText(ix, n);
  return `${p} of ${n} · ${stepText(ix, keys[p - 1], { values })}`;
}
