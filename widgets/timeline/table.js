/**
 * Below the timeline: the findings list (severity first) and the per-function summary
 * table (one row per lane, sortable by any column). Both only report picks; the view
 * decides what follows (focus a lane, select a call).
 */
import { h, clear } from "../ui/dom.js";
import { srcText } from "../graph/model.js";
import { findingsList as sharedList } from "../ui/findings.js";
import { COLUMNS, sortRows, sortedFindings } from "./model.js";
import { fmtUs } from "./time.js";

/** Rows shown at most; the rest is one "N more" row (sorting still sees all). */
export const MAX_ROWS = 500;

/**
 * The summary table (.jm-tl-table). `update({rows, sortKey, desc, focus, caption, rowClass})`
 * redraws it (`rowClass(row)`: extra classes of a row, e.g. playback's current and not-yet
 * lanes); a header click calls `onSort(key)`, a row click `onPick(lane)`.
 */
export function summaryTable(ref, { onSort, onPick }) {
  const caption = h("div", { class: "jm-tl-caption jm-muted" }, "", ref);
  const body = h("table", { class: "jm-tl-table" }, null, ref);
  body.addEventListener("click", (e) => {
    const th = e.target.closest("th[data-key]"), tr = e.target.closest("tr[data-lane]");
    if (th) onSort(th.getAttribute("data-key"));
    else if (tr) onPick(Number(tr.getAttribute("data-lane")));
  });
  return {
    el: h("div", { class: "jm-tl-summary" }, [caption, body], ref),
    update({ rows, sortKey, desc, focus, caption: text, rowClass = null }) {
      caption.textContent = text;
      clear(body);
      const num = (kind) => (kind === "text" ? "" : "jm-tl-num");
      body.appendChild(h("tr", null, COLUMNS.map(([key, label, kind]) => h("th", {
        "data-key": key, class: num(kind), "aria-sort": key === sortKey ? (desc ? "descending" : "ascending") : "none",
        title: `Sort by ${label}; again to reverse`,
      }, label + (key === sortKey ? (desc ? " ▾" : " ▴") : ""), ref)), ref));
      const sorted = sortKey ? sortRows(rows, sortKey, desc) : rows;
      for (const row of sorted.slice(0, MAX_ROWS)) {
        const cls = [row.lane === focus ? "jm-tl-focus" : "", rowClass ? rowClass(row) : ""].filter(Boolean).join(" ");
        body.appendChild(h("tr", { "data-lane": row.lane, class: cls || null }, COLUMNS.map(([key, , kind]) => {
          const v = row[key];
          return h("td", { class: num(kind) }, [
            v == null ? "—" : kind === "us" ? fmtUs(v) : v,
            key === "name" && row.origin === "events" ? h("span", { class: "jm-muted" }, " (compile events)", ref) : null,
          ], ref);
        }), ref));
      }
      if (sorted.length > MAX_ROWS) {
        body.appendChild(h("tr", null, h("td", { colspan: COLUMNS.length, class: "jm-muted" }, `${sorted.length - MAX_ROWS} more`, ref), ref));
      }
    },
  };
}

/** The findings list (.jm-tl-findings, widgets/ui/findings.js), severity first; a click calls `onPick(finding)`. Null when none. */
export function findingsList(ref, tl, onPick) {
  return sharedList(ref, sortedFindings(tl), onPick, { prefix: "jm-tl", where: (f) => [f.source && f.source.file ? srcText(f.source) : null] });
}
