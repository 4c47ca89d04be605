/**
 * One tab (.jm-tab) per Function: name, signature, calls and cache hits.
 */
import { h } from "../../js/src/dom.js";

import { plural } from "../../js/src/words.js";
import { srcPath, srcText } from "./model.js";

export function functionTabs(fns, current, onPick, ref) {
  const tabs = fns.map((fn, i) => {
    const calls = Number(fn.calls) || 0, hits = Number(fn.cache_hits) || 0;
    const stats = [plural(calls, "call"), hits ? plural(hits, "cache hit") : null, plural(fn.n_eqns ?? (fn.nodes || []).length, "eqn"), fn.truncated ? "truncated" : null]
      .filter(Boolean).join(" · ");
    const b = h("button", {
      type: "button", class: "jm-tab" + (i === current ? " jm-tab-active" : ""), role: "tab",
      "aria-selected": i === current ? "true" : "false", "data-function-id": fn.id,
      title: fn.source ? `${srcText(fn.source)} · ${srcPath(fn.source)}` : false,
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
