/**
 * The gradients list of an entry: one row per differentiated input leaf
 * (`entry.grads_of`) with its pytree path and aval, and in values mode its gradient's
 * min / max / mean / L2 norm, with NaN / Inf counts in the warning colour. A click
 * selects what carries that gradient: the backward's output port, or in a jitted step
 * the node that makes it.
 */
import { h } from "../ui/dom.js";
import { gradRows } from "./model.js";

/** `div.jm-grad-grads`; rows are `button.jm-grad-leaf[data-path]`; `onPick(row)`. */
export function gradList(ref, entry, { values = false, onPick }) {
  const rows = gradRows(entry);
  const head = [h("h4", null, `Gradients (${rows.length})`, ref)];
  if (values && entry.cotangent) head.push(h("div", { class: "jm-muted jm-grad-seed" }, `seeded with ${entry.cotangent}`, ref));
  const items = rows.map((r) => {
    const stats = [];
    if (r.lit != null) stats.push(h("span", { class: "jm-muted" }, `constant ${r.lit} (the output does not depend on it)`, ref));
    else if (values && r.value) {
      stats.push(h("span", { class: "jm-grad-stats" }, r.value.text || "—", ref));
      if (r.value.bad) stats.push(h("span", { class: "jm-bad jm-grad-warn" }, " " + r.value.bad, ref));
    } else if (values) stats.push(h("span", { class: "jm-muted" }, "no value recorded", ref));
    const b = h("button", { type: "button", class: "jm-grad-leaf", "data-path": r.path, disabled: r.key ? false : true }, [
      h("span", { class: "jm-grad-path" }, r.path, ref),
      h("span", { class: "jm-grad-aval" }, " " + r.aval, ref),
      stats.length ? h("div", { class: "jm-grad-leaf-stats" }, stats, ref) : null,
    ], ref);
    b.addEventListener("click", () => onPick(r));
    return h("li", null, b, ref);
  });
  if (!rows.length) items.push(h("li", { class: "jm-muted" }, "No differentiated inputs.", ref));
  return h("div", { class: "jm-grad-grads" }, [...head, h("ul", { class: "jm-grad-leaves" }, items, ref)], ref);
}
