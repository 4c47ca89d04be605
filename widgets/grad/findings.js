/**
 * The grad findings (`doc.findings`, the shared list: widgets/ui/findings.js): warnings (NaN, Inf,
 * vanishing or exploding gradients) before infos (residual memory), each with its kind and
 * message. A click asks the view to select what the finding names: its entry and residual, or
 * its entry and node.
 */
import { findingsList as sharedList } from "../ui/findings.js";
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
  return sharedList(ref, all, onPick, {
    prefix: "jm-grad", max: MAX_FINDINGS, key: all.find((f) => f && f.node != null),
    label: (f) => String(f.kind ?? f.severity ?? "info").replace(/_/g, " "),
  });
}
