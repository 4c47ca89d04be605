/**
 * The grad findings (`doc.findings`): one button per finding, warnings (NaN, Inf,
 * vanishing or exploding gradients) before infos (residual memory), each with its
 * kind and message. A click asks the view to select what the finding names: its
 * entry and residual, or its entry and node.
 */
import { h } from "../../js/src/dom.js";
import { sortFindings } from "./model.js";

/** Findings shown before a "N more" line. */
export const MAX_FINDINGS = 40;

/**
 * `ul.jm-grad-findings` (null when there are none); `onPick(finding)`. The first finding
 * naming a node is the view's key element (`data-jm-key-element`): the caption is about it,
 * and its row is on screen where the node, further down in its pass, may not be.
 */
export function findingsList(ref, findings, onPick) {
  const all = sortFindings(findings);
  if (!all.length) return null;
  const key = all.find((f) => f && f.node != null);
  const items = all.slice(0, MAX_FINDINGS).map((f) => {
    const sev = ["bug", "warning", "info"].includes(f.severity) ? f.severity : "info";
    const b = h("button", {
      type: "button", class: `jm-grad-finding jm-grad-sev-${sev}`, "data-kind": String(f.kind ?? ""), "data-severity": sev,
      title: f.entry ? "click: show where" : false, "data-jm-key-element": f === key ? "" : false,
    }, [
      h("span", { class: "jm-grad-sev" }, String(f.kind ?? sev).replace(/_/g, " "), ref),
      h("span", { class: "jm-grad-finding-msg" }, " " + String(f.message ?? ""), ref),
    ], ref);
    b.addEventListener("click", () => onPick(f));
    // Infos (residual memory) are desk detail: presentation mode keeps the warnings and bugs.
    return h("li", { class: sev === "info" ? "jm-clutter" : null }, b, ref);
  });
  if (all.length > MAX_FINDINGS) items.push(h("li", { class: "jm-muted" }, `… ${all.length - MAX_FINDINGS} more`, ref));
  return h("ul", { class: "jm-grad-findings", "aria-label": "findings" }, items, ref);
}
