/**
 * The words the keys view writes about a key, its lines and its uses: shared by the hover
 * card, the details panel, aria labels and the SVG export, so all say the same. Pure
 * functions of the document's values; every result is plain text.
 */
import { shortWhere } from "../ui/source-text.js";

const list = (x) => (Array.isArray(x) ? x : []);

/** `3 keys`, `1 key`. */
export { plural } from "../ui/words.js";
import { plural } from "../ui/words.js";

/** `cell [3], line 7` in a notebook cell, `train.py:12` elsewhere (widgets/ui/source-text.js); null without a file. */
export function whereText(src) {
  if (!src || typeof src !== "object" || src.file == null) return null;
  return shortWhere(String(src.file), src.line) || null;
}

/** `<cell 3>:7  u = jax.random.uniform(k1)`: where and the code, as one line. */
export function sourceText(src) {
  const where = whereText(src);
  const code = src && src.code != null ? String(src.code).trim() : "";
  return [where, code].filter(Boolean).join("  ") || "(unknown line)";
}

/** `f32[3]`; null when the use made no array. */
export function avalText(u) {
  if (!Array.isArray(u.shape)) return null;
  return `${u.dtype ?? ""}[${u.shape.join(",")}]`;
}

/** `sampler normal → f32[3]`, `split`, `fold_in`: what a use did. */
export function useHead(u) {
  const kind = String(u.kind ?? "use");
  const name = u.name != null && String(u.name) !== kind ? ` ${u.name}` : "";
  const aval = avalText(u);
  return `${kind}${name}${aval ? ` → ${aval}` : ""}`;
}

/**
 * Where a use ran, besides its line: library line, jitted function, loop, branch, repeats.
 * One phrase per fact.
 */
export function useFacts(u) {
  return [
    u.via != null ? `via ${u.via}` : null,
    u.function != null ? `in jitted ${u.function}` : null,
    u.loop != null ? `inside ${u.loop}` : null,
    u.branch != null ? String(u.branch) : null,
    u.times == null ? "repeated an unknown number of times" : u.times > 1 ? `×${u.times} per call` : null,
    u.consuming === false ? "does not consume the key" : null,
  ].filter(Boolean);
}

/** Index of the first consuming use of a node (-1 for none): the one a reused key's later uses repeat. */
export const firstConsuming = (n) => list(n.uses).findIndex((u) => u.consuming);

/** The namespace names bound to a key when the cell ended (`key, rng`), or null. */
export function namesText(n) {
  const names = list(n.names).map(String);
  return names.length ? names.join(", ") : null;
}

/** `typed key<fry>`, `legacy uint32 key data`, or null when not known; with the implementation. */
export function kindText(n) {
  const t = n.typed === true ? "typed key" : n.typed === false ? "legacy uint32 key data" : null;
  return [t, n.impl != null ? String(n.impl) : null].filter(Boolean).join(" · ") || null;
}

/** `split 40 · 40 keys`, `scan ×1000`: shape and count where they say more than the label. */
export function shapeText(n) {
  const shape = list(n.shape);
  const parts = [];
  if (shape.length) parts.push(`key array [${shape.join(",")}]`);
  if (n.how === "loop" || (n.count != null && n.count !== 1)) parts.push(n.count == null ? "one key per iteration (count unknown)" : `${plural(n.count, "key")} per call`);
  if (n.index != null) parts.push(`row ${n.index}`);
  else if (n.how === "row") parts.push("row chosen at run time");
  return parts.join(" · ") || null;
}

/** The first use of a node in a few words (`normal at <cell 3>:3`), for aria labels. */
export function firstUseText(n) {
  const u = list(n.uses)[0];
  if (!u) return "no use";
  const where = whereText(u.source);
  return `${u.name ?? u.kind ?? "use"}${where ? ` at ${where}` : ""}`;
}

/**
 * The hover card of a node, as lines: label and state, how it was made, where, every use
 * (with its line and code; on a reused key the first consuming use marked), data, kind.
 */
export function nodeLines(n) {
  const lines = [`${n.label ?? "key"} · ${n.state ?? "unused"}${n.function != null ? ` · in jitted ${n.function}` : ""}`];
  if (n.detail) lines.push(String(n.detail));
  const shape = shapeText(n);
  if (shape) lines.push(shape);
  for (const s of list(n.made)) lines.push(`made at ${sourceText(s)}`);
  const first = n.state === "reused" ? firstConsuming(n) : -1;
  list(n.uses).forEach((u, i) => {
    const mark = i === first ? " (first use)" : n.state === "reused" && u.consuming ? " (reuse)" : "";
    lines.push(`use: ${useHead(u)}${mark}`);
    lines.push(`  ${sourceText(u.source)}`);
    const facts = useFacts(u);
    if (facts.length) lines.push(`  ${facts.join(" · ")}`);
  });
  if (!list(n.uses).length) lines.push("not used");
  const names = namesText(n);
  if (names) lines.push(`bound to ${names} when the cell ended`);
  if (n.data != null) lines.push(`data ${n.data}`);
  const kind = kindText(n);
  if (kind) lines.push(kind);
  return lines;
}

/** aria-label of a drawn item: its label, state and first use (or what the stand-in hides). */
export function ariaText(m, it) {
  if (it.type === "node") {
    const n = m.nodes[it.id];
    const jit = n.function != null ? `, inside jitted ${n.function}` : "";
    return `${it.label}, ${it.state}, first use: ${firstUseText(n)}${jit}`;
  }
  if (it.type === "run") return `run of ${it.run.length} identical steps: ${it.run.label ?? ""}, ${it.state}`;
  if (it.type === "agg") return `${it.label}, rows of ${m.nodes[it.of].label ?? "a key array"}`;
  return `${it.label}: show the next ${it.step}`;
}

/** The hover card of a stand-in item (run, aggregate, more) as lines. */
export function standInLines(m, it) {
  if (it.type === "run") {
    const r = it.run;
    const first = m.nodes[r.first];
    return [
      `run ×${r.length}: ${r.label ?? ""}`,
      `${plural(r.members.length, "key")} folded (${r.length} identical steps)`,
      ...list(first.made).map((s) => `first step made at ${sourceText(s)}`),
      it.expanded ? "click to fold the run" : "click to unfold the run",
    ];
  }
  if (it.type === "agg") {
    return [`${it.label}`, `rows of ${m.nodes[it.of].label ?? "a key array"}`, it.expanded ? "click to fold them" : "click to show them"];
  }
  return [`${it.label} (${it.state} at worst)`, `click to show the next ${it.step}`];
}
