/**
 * The findings list at the top of the keys view, bugs first (model.js sorts them): each
 * a button with its severity, message and source lines (the shared list, widgets/ui/findings.js).
 * A click reports the finding; the view selects its node and brings it into view.
 */
import { findingsList as sharedList } from "../ui/findings.js";
import { sourceText } from "./text.js";

/** `<ul>` of finding buttons, or null when there are none. */
export function findingsList(ref, findings, onPick) {
  const where = (f) => (Array.isArray(f.sources) ? f.sources.filter((x) => x && typeof x === "object").map(sourceText) : []);
  return sharedList(ref, findings, onPick, { prefix: "jm-k", where });
}
