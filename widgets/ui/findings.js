/**
 * The findings list every view draws from its document's `findings` (one type: docs/schema.md,
 * Finding; the model sorts them, bugs first): a button per finding with its severity, its
 * message and where it is. A click hands the finding to the view, which selects what it names.
 *
 * Each view keeps its own class prefix (`jm-g`, `jm-sh`, `jm-k`, `jm-tl`) for its layout; the
 * list, its buttons and severities also carry the shared `jm-findings`, `jm-finding` and
 * `jm-sev-<severity>` classes.
 */
import { h } from "./dom.js";

const SEVERITIES = ["bug", "warning", "info"];

/** A severity the views know; anything else reads as "info". */
export function severityOf(f) {
  return f && SEVERITIES.includes(f.severity) ? f.severity : "info";
}

/**
 * `<ul>` of finding buttons, or null when there are none. `opts.prefix`: the view's class prefix;
 * `opts.where(f)`: the source texts to show after the message (none by default); `opts.max`:
 * findings drawn before a "… N more" line; `opts.label(f)`: the badge's text (the severity by
 * default); `opts.key`: the finding marked as the view's key element (`data-jm-key-element`).
 * Infos are desk detail (`jm-clutter`): presentation mode keeps the bugs and warnings.
 * `opts.clamp`: each finding reads as one line (its CSS cuts it) until a click opens it whole
 * (`jm-finding-open`, `aria-expanded`), so a long fix does not push the drawing off screen.
 */
export function findingsList(ref, findings, onPick, opts = {}) {
  const all = (Array.isArray(findings) ? findings : []).filter((f) => f && typeof f === "object");
  if (!all.length) return null;
  const p = opts.prefix || "jm";
  const max = opts.max || all.length;
  const items = all.slice(0, max).map((f) => {
    const sev = severityOf(f);
    const where = opts.where ? opts.where(f).filter(Boolean) : [];
    const b = h("button", {
      type: "button", class: `jm-finding ${p}-finding`, "data-kind": String(f.kind ?? ""), "data-severity": sev,
      "data-jm-key-element": f === opts.key ? "" : false, "aria-expanded": opts.clamp ? "false" : false,
      title: opts.clamp ? String(f.message ?? "") : false,
    }, [
      h("span", { class: `jm-sev jm-sev-${sev} ${p}-sev ${p}-sev-${sev}` }, opts.label ? opts.label(f) : sev, ref), " ",
      h("span", { class: `jm-finding-msg ${p}-msg` }, String(f.message ?? f.kind ?? ""), ref),
      where.length ? " " : null,
      where.length ? h("span", { class: `jm-finding-where ${p}-srcs` }, where.map((w) => h("code", { class: `${p}-src` }, String(w), ref)), ref) : null,
    ], ref);
    b.addEventListener("click", () => {
      if (opts.clamp) b.setAttribute("aria-expanded", String(b.classList.toggle("jm-finding-open")));
      onPick(f);
    });
    return h("li", { class: sev === "info" ? "jm-clutter" : null }, b, ref);
  });
  if (all.length > max) items.push(h("li", { class: "jm-muted" }, `… ${all.length - max} more`, ref));
  return h("ul", { class: `jm-findings ${p}-findings`, "aria-label": "findings" }, items, ref);
}
