/**
 * The findings list at the top of the keys view, bugs first (model.js sorts them): each
 * a button with its severity, message and source lines. A click reports the finding; the
 * view selects its node and brings it into view.
 */
import { h } from "../../js/src/dom.js";
import { sourceText } from "./text.js";

/** `<ul>` of finding buttons, or null when there are none. */
export function findingsList(ref, findings, onPick) {
  if (!findings.length) return null;
  return h("ul", { class: "jm-k-findings", "aria-label": "findings" }, findings.map((f) => {
    const sev = f.severity === "warning" || f.severity === "bug" ? f.severity : "info";
    const srcs = Array.isArray(f.sources) ? f.sources.filter((x) => x && typeof x === "object") : [];
    const b = h("button", { type: "button", class: "jm-k-finding", "data-kind": String(f.kind) }, [
      h("span", { class: "jm-k-sev jm-k-sev-" + sev }, sev, ref), " ",
      h("span", { class: "jm-k-msg" }, String(f.message ?? f.kind), ref),
      srcs.length ? h("span", { class: "jm-k-srcs" }, srcs.map((x) => h("code", { class: "jm-k-src" }, sourceText(x), ref)), ref) : null,
    ], ref);
    b.addEventListener("click", () => onPick(f));
    return h("li", null, b, ref);
  }), ref);
}
