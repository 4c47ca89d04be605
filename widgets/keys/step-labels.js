/**
 * The words of the keys view's playback (story.js): one line per step, saying where in the
 * code an event happened and what it did to which key (`line 7 · jr.split(key) splits key into
 * k1 (…)`), or, for the events gathered in one stand-in item (a folded run, an aggregate of
 * rows), what they did together.
 */
import { linesWhere, shortWhere } from "../ui/source-text.js";
import { plural } from "../ui/words.js";
import { timesOf } from "./events.js";

/** Longest code shown in a step's label, in characters (the whole line is in the details panel). */
const CODE_MAX = 64;
/** Most child labels a split's label lists. */
const KIDS_MAX = 4;

const list = (x) => (Array.isArray(x) ? x : []);
const ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];
const ordinal = (n) => ORDINALS[n] || `${n}th`;

/** `cell [3], line 7` for a line of a cell, `train.py:12` elsewhere (widgets/ui/source-text.js). */
export function lineText(src) {
  if (!src || typeof src !== "object") return null;
  const line = Number.isFinite(src.line) ? src.line : null;
  return shortWhere(src.file == null ? "" : String(src.file), line) || null;
}

/** The code of a line, trimmed and cut for a one-line label; null when unknown. */
function codeText(src) {
  const code = src && src.code != null ? String(src.code).trim().replace(/\s+/g, " ") : "";
  if (!code) return null;
  return code.length > CODE_MAX ? code.slice(0, CODE_MAX - 1) + "…" : code;
}

/** `line 7 · jr.normal(sub, (3,))`: where and what, or the fallback when the line is unknown. */
function head(src, fallback) {
  const where = lineText(src);
  const code = codeText(src);
  if (where && code) return `${where} · ${code}`;
  return where || code || fallback;
}

/** A key's name in a label: its label, and the array a row was taken from. */
function keyName(m, i) {
  const n = m.nodes[i];
  const label = String(n.label ?? `key ${i}`);
  const p = m.parent[i];
  if (n.how === "loop") return `the key carried through ${label}`;
  return n.how === "row" && p >= 0 ? `${label} of ${m.nodes[p].label ?? "a key array"}` : label;
}

/** `split 2 ([1], [0])`: what a split or fold_in made, from the nodes appearing with it. */
function madeText(m, ev, e, node) {
  const kids = ev.appearing[e].filter((i) => m.parent[i] === node);
  if (!kids.length) return null;
  const k = kids[0];
  const rows = ev.appearing[e].filter((i) => m.parent[i] === k);
  const label = String(m.nodes[k].label ?? "a key");
  if (!rows.length) return label;
  const shown = rows.slice(0, KIDS_MAX).map((r) => String(m.nodes[r].label ?? "?"));
  return `${label} (${shown.join(", ")}${rows.length > KIDS_MAX ? `, … ${plural(rows.length, "key")}` : ""})`;
}

/** The reuse part of a label: `second use: reuse (first at line 4)`, or null. */
function reuseText(m, ev, e, node) {
  const own = ev.changes[e].find((c) => c.node === node && c.state === "reused");
  const u = m.nodes[node].uses[ev.events[e].use];
  if (own) {
    if (own.nth >= 2) {
      const f = ev.events[own.first];
      const fu = f && f.kind === "use" ? m.nodes[f.node].uses[f.use] : null;
      const where = fu ? lineText(fu.source) : null;
      return `${ordinal(own.nth)} use: reuse${where ? ` (first at ${where})` : ""}`;
    }
    return `reuse${u.loop != null ? ` inside ${u.loop}` : ""}`;
  }
  const rows = ev.changes[e].filter((c) => c.node !== node && c.state === "reused").length;
  return rows ? `${plural(rows, "key")} taken from it reused` : null;
}

/** The one-line label of event `e`. */
export function eventLabel(m, ev, e) {
  const { kind, node, use } = ev.events[e];
  const n = m.nodes[node];
  const name = keyName(m, node);
  if (kind === "root") {
    const made = list(n.made)[0];
    const where = made ? head(made, null) : null;
    const what = n.how === "seed" ? `makes root key ${name}` : `root key ${name} appears: ${n.detail ?? n.how ?? "first seen"}`;
    return where ? `${where} ${what}` : what;
  }
  const u = n.uses[use];
  const where = head(u.source, `${u.name ?? u.kind ?? "use"}(…)`);
  const jit = u.function != null ? ` (in jitted ${u.function})` : "";
  let what;
  if (u.kind === "sampler") {
    const times = timesOf(u);
    const repeat = !Number.isFinite(times) ? " an unknown number of times per call" : times > 1 ? ` ${times} times per call` : "";
    what = `consumes ${name}${repeat}`;
  } else if (u.kind === "split") {
    const made = madeText(m, ev, e, node);
    what = made ? `splits ${name} into ${made}` : `splits ${name} again`;
  } else if (u.kind === "fold_in") {
    const made = madeText(m, ev, e, node);
    what = `derives ${made ?? "a key"} from ${name} (fold_in does not consume it)`;
  } else if (u.kind === "clone") what = `copies ${name} (clone)`;
  else if (u.kind === "data") what = `reads the data of ${name} (does not consume it)`;
  else if (u.kind === "wrap") what = `wraps the data of ${name} as a key again: the same key`;
  else what = `uses ${name}`;
  const reuse = u.consuming ? reuseText(m, ev, e, node) : null;
  return `${where}${jit} ${what}${reuse ? ` — ${reuse}` : ""}`;
}

/** `cell [3], lines 44–45`, `train.py:12–14`, `line 54`, or the distinct places joined. */
function linesOf(srcs) {
  const known = srcs.filter((x) => x && typeof x === "object" && Number.isFinite(x.line));
  const texts = [...new Set(srcs.map(lineText).filter(Boolean))];
  if (texts.length <= 1) return texts[0] || null;
  const files = new Set(known.map((x) => (x.file == null ? "" : String(x.file))));
  if (files.size === 1) {
    const range = linesWhere([...files][0], known.map((x) => x.line));
    if (range) return range;
  }
  return texts.slice(0, 3).join(", ") + (texts.length > 3 ? ", …" : "");
}

/** The label of several events inside one stand-in item (a run, an aggregate, a folded subtree). */
export function groupLabel(m, ev, es, item) {
  const uses = es.map((e) => ev.events[e]).filter((x) => x.kind === "use").map((x) => m.nodes[x.node].uses[x.use]);
  const made = es.reduce((a, e) => a + ev.appearing[e].length, 0);
  const keys = new Set(es.map((e) => ev.events[e].node)).size;
  const reused = new Set(es.flatMap((e) => ev.changes[e].filter((c) => c.state === "reused").map((c) => c.node))).size;
  const where = linesOf(uses.map((u) => u.source)) || "";
  let what;
  if (item.type === "run") {
    what = `×${item.run.length} identical steps, folded into one run (${item.run.label ?? ""})`;
  } else if (item.type === "agg") {
    what = `${plural(item.rows.length, "key")} of ${m.nodes[item.of].label ?? "a key array"}`;
  } else if (item.type === "more") what = `${plural(item.list.length - item.shown, "key")} not shown (${item.label})`;
  else what = `inside folded ${m.nodes[item.id].label ?? "key"}`;
  const byName = new Map();
  for (const u of uses) {
    const nm = String(u.name ?? u.kind ?? "use");
    byName.set(nm, (byName.get(nm) || 0) + 1);
  }
  const verbs = [...byName].map(([nm, c]) => `${nm} ×${c}`).join(", ");
  const sameLine = uses.length > 1 && uses.every((u) => u.kind === "sampler" && lineText(u.source) === lineText(uses[0].source));
  if (sameLine && item.type === "agg") {
    const all = head(uses[0].source, String(uses[0].name));
    return `${all} consumes ${plural(keys, "key")} of ${m.nodes[item.of].label ?? "a key array"} (${plural(uses.length, "use")})` +
      (reused ? ` — ${reused} reused` : "");
  }
  const facts = [verbs, made ? `${plural(made, "key")} made` : null].filter(Boolean).join("; ");
  return `${where ? `${where} · ` : ""}${what}: ${facts || `${es.length} events`}${reused ? ` — ${reused} reused` : ""}`;
}
