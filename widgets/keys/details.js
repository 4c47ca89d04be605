/**
 * The details panel of the keys view: everything the document says about the selected
 * key (how and where it was made, every use with its line, data, kind, findings) and the
 * path from its root as breadcrumbs; for a reused key the uses come with both lines and
 * the first consuming use marked. Stand-ins (runs, aggregates) say what they hold.
 */
import { h, clear } from "../ui/dom.js";
import { pathTo } from "./model.js";
import { firstConsuming, kindText, namesText, plural, shapeText, standInLines, useFacts, useHead, whereText } from "./text.js";

const sec = (ref, title, body) => h("div", { class: "jm-d-sec" }, [h("h4", null, title, ref), body], ref);

/** One source line: `file:line` and the code under it. */
function srcBlock(ref, src) {
  const where = whereText(src) || "(unknown line)";
  return h("div", { class: "jm-k-srcline" }, [
    h("div", { class: "jm-d-src" }, where, ref),
    src && src.code != null ? h("pre", { class: "jm-d-code" }, String(src.code), ref) : null,
  ], ref);
}

/** The hint shown while nothing is selected. */
export function emptyDetails(ref) {
  return h("div", { class: "jm-d-empty jm-muted" },
    "Click a key for its details; hover or Tab to a key for a summary. Enter or Space folds and unfolds; arrows move; Esc clears.", ref);
}

/** Levels a breadcrumb shows at its start and at its end (the node itself included) when it is long. */
export const CRUMBS_HEAD = 2, CRUMBS_TAIL = 4;

/**
 * Which of `n` path positions a breadcrumb shows: all of them when short, else the first
 * CRUMBS_HEAD, a gap standing for the rest, and the last CRUMBS_TAIL. A key made on the
 * hundredth iteration of a folded loop is a hundred levels deep: its whole path filled the
 * details pane. Returns [index | {gap: count}].
 */
export function crumbPlan(n, head = CRUMBS_HEAD, tail = CRUMBS_TAIL) {
  const all = Array.from({ length: n }, (_, i) => i);
  if (n <= head + tail + 1) return all; // a gap of one level would save nothing
  return [...all.slice(0, head), { gap: n - head - tail }, ...all.slice(n - tail)];
}

/**
 * Breadcrumbs from the root to node `id`: every ancestor shown is a button that selects it; a
 * long path shows its first and last levels around "… N levels …", a button that shows them all.
 */
function crumbs(ref, m, id, onPick) {
  const path = pathTo(m, id);
  const nav = h("nav", { class: "jm-k-crumbs", "aria-label": "path from the root" }, null, ref);
  const crumb = (i) => {
    const label = String(m.nodes[i].label ?? `key ${i}`);
    if (i === id) return h("span", { class: "jm-k-crumb-here" }, label, ref);
    const b = h("button", { type: "button", class: "jm-k-crumb" }, label, ref);
    b.addEventListener("click", () => onPick(i));
    return b;
  };
  const sep = () => h("span", { class: "jm-muted" }, " › ", ref);
  const fill = (plan) => {
    clear(nav);
    plan.forEach((p, k) => {
      if (k > 0) nav.appendChild(sep());
      if (typeof p === "number") nav.appendChild(crumb(path[p]));
      else {
        const more = h("button", { type: "button", class: "jm-k-crumb jm-k-crumb-gap", title: "Show every level of the path" }, `… ${plural(p.gap, "level")} …`, ref);
        more.addEventListener("click", () => fill(path.map((_, i) => i)));
        nav.appendChild(more);
      }
    });
  };
  fill(crumbPlan(path.length));
  return nav;
}

/** Details of a document node. */
function nodeDetails(ref, m, id, onPick) {
  const n = m.nodes[id];
  const state = ["unused", "consumed", "reused"].includes(n.state) ? n.state : "unused";
  const parts = [
    h("div", { class: "jm-d-title" }, [
      h("span", { class: "jm-d-prim" }, String(n.label ?? `key ${id}`), ref), " ",
      h("span", { class: `jm-k-chip jm-k-s-${state}` }, state, ref), " ",
      h("span", { class: "jm-muted" }, String(n.how ?? ""), ref),
    ], ref),
    m.parent[id] >= 0 ? crumbs(ref, m, id, onPick) : null, // a root's path is itself
  ];
  if (n.detail) parts.push(h("div", { class: "jm-k-detail" }, String(n.detail), ref));
  const facts = [
    ["names", namesText(n)], ["shape", shapeText(n)], ["kind", kindText(n)], ["data", n.data],
    ["program", n.function != null ? `jitted ${n.function}${n.call != null ? ` (call #${n.call})` : ""}` : null],
    ["loop", n.loop],
  ].filter(([, v]) => v != null && v !== "");
  if (facts.length) {
    parts.push(h("table", { class: "jm-params" }, facts.map(([k, v]) => h("tr", null, [h("th", null, k, ref), h("td", null, String(v), ref)], ref)), ref));
  }
  for (const f of m.findingsOf.get(id) || []) {
    parts.push(h("div", { class: `jm-k-dfind jm-k-sev-${f.severity === "bug" || f.severity === "warning" ? f.severity : "info"}` }, String(f.message ?? f.kind), ref));
  }
  if (n.made.length) parts.push(sec(ref, n.made.length > 1 ? `Made (${n.made.length} times)` : "Made", n.made.map((src) => srcBlock(ref, src))));
  const first = n.state === "reused" ? firstConsuming(n) : -1;
  parts.push(sec(ref, `Uses (${n.uses.length})`, n.uses.length ? h("ol", { class: "jm-k-uses" }, n.uses.map((u, i) => {
    const mark = i === first ? "first use" : n.state === "reused" && u.consuming ? "reuse" : null;
    return h("li", { class: mark ? `jm-k-use jm-k-use-${mark === "reuse" ? "again" : "first"}` : "jm-k-use" }, [
      h("div", null, [h("b", null, useHead(u), ref), mark ? h("span", { class: "jm-k-mark" }, ` ${mark}`, ref) : null], ref),
      srcBlock(ref, u.source),
      useFacts(u).length ? h("div", { class: "jm-muted" }, useFacts(u).join(" · "), ref) : null,
    ], ref);
  }), ref) : h("div", { class: "jm-muted" }, "not used: this key is still available", ref)));
  const kids = m.children[id].length;
  if (kids) parts.push(h("div", { class: "jm-muted jm-k-kids" }, `${plural(kids, "key")} made from it`, ref));
  return parts;
}

/**
 * The panel's content for `item` (a drawn item; null: the hint). `onPick(id)` selects a
 * node (breadcrumbs), `onToggle(item)` unfolds a stand-in.
 */
export function detailsOf(ref, m, item, { onPick, onToggle }) {
  if (!item) return emptyDetails(ref);
  if (item.type === "node") return h("div", { class: "jm-k-dbody" }, nodeDetails(ref, m, item.id, onPick), ref);
  const lines = standInLines(m, item);
  const btn = h("button", { type: "button", class: "jm-btn" },
    item.type === "more" ? `Show ${item.step} more` : item.expanded ? "Fold" : "Unfold", ref);
  btn.addEventListener("click", () => onToggle(item));
  return h("div", { class: "jm-k-dbody" }, [
    h("div", { class: "jm-d-title" }, h("span", { class: "jm-d-prim" }, lines[0], ref), ref),
    ...lines.slice(1, -1).map((l) => h("div", null, l, ref)),
    h("div", { class: "jm-d-sec" }, btn, ref),
  ], ref);
}
