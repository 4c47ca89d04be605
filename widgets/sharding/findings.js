/**
 * The findings list at the top of the view, warnings first (the model sorts them). A
 * finding names an array, a call or a collective of a call; a click reports the finding
 * and the view selects what it names.
 */
import { h } from "../../js/src/dom.js";

/** `<ul>` of finding buttons, or null when there are none. */
export function findingsList(ref, findings, onPick) {
  if (!findings.length) return null;
  return h("ul", { class: "jm-sh-findings", "aria-label": "findings" }, findings.map((f) => {
    const sev = f.severity === "warning" || f.severity === "bug" ? f.severity : "info";
    const b = h("button", { type: "button", class: "jm-sh-finding", "data-kind": String(f.kind) }, [
      h("span", { class: "jm-sh-sev jm-sh-sev-" + sev }, sev, ref), " ", String(f.message ?? f.kind),
    ], ref);
    b.addEventListener("click", () => onPick(f));
    return h("li", null, b, ref);
  }), ref);
}
