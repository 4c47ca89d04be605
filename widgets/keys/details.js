/**
 * The details panel of the keys view: everything the document says about the selected
 * key (how and where it was made, every use with its line, data, kind, findings) and the
 * path from its root as breadcrumbs; for a reused key the uses come with both lines and
 * the first consuming use marked. Stand-ins (runs, aggregates) say what they hold.
 */
import { h } from "../../js/src/dom.js";
import { pathTo } from "./model.js";
import { firstConsuming, kindText, namesText, shapeText, standInLines, useFacts, useHead, whereText } from "./text.js";

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

/** Breadcrumbs from the root to node `id`: every ancestor a button that selects it. */
function crumbs(ref, m, id, onPick) {
  const path = pathTo(m, id);
  return h("nav", { class: "jm-k-crumbs", "aria-label": "path from the root" }, path.map((i, k) => {
    const label = String(m.nodes[i].label ?? `key ${i}`);
    if (i === id) return h("span", { class: "jm-k-crumb-here" }, label, ref);
    const b = h("button", { type: "button", class: "jm-k-crumb" }, label, ref);
    b.addEventListener("click", () => onPick(i));
    return [b, k < path.length - 1 ? h("span", { class: "jm-muted" }, " › ", ref) : null];
  }), ref);
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
  if (kids) parts.push(h("div", { class: "jm-muted jm-k-kids" }, `${kids} key${kids === 1 ? "" : "s"} made from it`, ref));
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
