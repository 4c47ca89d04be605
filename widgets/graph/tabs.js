/**
 * One tab (.jm-tab) per Function: name, signature, calls and cache hits; the tooltip says where
 * it is defined and how many jit wrappers were folded into it (`wrappers`, docs/schema.md).
 */
import { h } from "../ui/dom.js";

import { plural } from "../ui/words.js";
import { srcPath, srcText } from "./model.js";

/** "× 1500 wrappers (…) · cell [2], line 4 · /tmp/…/x.py:4": what a tab's name does not say. */
export function tabTitle(fn) {
  const wrappers = Number(fn.wrappers) || 0;
  return [wrappers > 1 ? `× ${plural(wrappers, "wrapper")} (jit wrappers of one definition, signature and program)` : null,
    fn.source ? srcText(fn.source) : null, fn.source ? srcPath(fn.source) : null].filter(Boolean).join(" · ");
}

export function functionTabs(fns, current, onPick, ref) {
  const tabs = fns.map((fn, i) => {
    const calls = Number(fn.calls) || 0, hits = Number(fn.cache_hits) || 0;
    const stats = [plural(calls, "call"), hits ? plural(hits, "cache hit") : null, plural(fn.n_eqns ?? (fn.nodes || []).length, "eqn"), fn.truncated ? "truncated" : null]
      .filter(Boolean).join(" · ");
    const b = h("button", {
      type: "button", class: "jm-tab" + (i === current ? " jm-tab-active" : ""), role: "tab",
      "aria-selected": i === current ? "true" : "false", "data-function-id": fn.id,
      title: tabTitle(fn) || false,
    }, [
      h("span", { class: "jm-tab-name" }, String(fn.name ?? fn.id ?? "?"), ref),
      h("span", { class: "jm-tab-sig" }, `(${fn.signature ?? ""})`, ref),
      h("span", { class: "jm-tab-stats" }, stats, ref),
    ], ref);
    b.addEventListener("click", () => onPick(i));
    return b;
  });
  return h("nav", { class: "jm-tabs", role: "tablist" }, tabs, ref);
}
