/**
 * The findings list at the top of the view, warnings first (the model sorts them; the shared
 * list, widgets/ui/findings.js). A finding names an array, a call or a collective of a call; a
 * click reports the finding and the view selects what it names.
 */
import { findingsList as sharedList } from "../ui/findings.js";
import { srcText } from "../graph/model.js";

/** `<ul>` of finding buttons, or null when there are none. */
export function findingsList(ref, findings, onPick) {
  return sharedList(ref, findings, onPick, { prefix: "jm-sh", where: (f) => [f.source && f.source.file ? srcText(f.source) : null] });
}
