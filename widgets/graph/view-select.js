/**
 * Selection and search for the graph view (view.js): painting the selection and
 * matches, selecting (details, panes, breadcrumbs, the host's onSelect), focusing
 * (reveal, select, centre), findings, and stepping through search matches.
 * Installs methods on the view state `v`.
 */
import { search, step, countText } from "../ui/search.js";
import * as ids from "./ids.js";
import { reveal } from "./expansion.js";
import { showDetails } from "./details.js";
import { searchRecords } from "./find.js";
import { install } from "./view-state.js";

/**
 * Select an element key (node, port, container) or null; update details, panes,
 * path. `report` false: the selection is only re-applied (a new layout, a new
 * mode), so a host's onSelect does not hear it again.
 */
function select(v, key, report = true) {
  const st = v.st();
  st.selected = key;
  v.paintSelection();
  if (!v.compact) {
    showDetails(v.ui.details, st.ix, key, { mode: v.mode, loadLevels: () => v.wantLevels(true) });
    v.ui.panes.highlight(key);
  }
  v.ui.crumbs.update(st.ix, key);
  if (report && v.opts.onSelect) v.opts.onSelect(key, st.ix);
}

/** Select `key`, opening whatever hides it, and centre it. */
function focus(v, key) {
  const { hood } = v.ui;
  if (hood.active() && !v.st().ix.parent.has(key)) hood.exit(); // not in the neighbourhood
  const st = v.st();
  const center = () => {
    v.select(key);
    const b = v.drawn && v.anchorBox(key);
    if (b && !v.inView(b)) v.reframe([b]);
  };
  if (reveal(st.ix, st.expanded, key)) v.relayout(center);
  else center();
}

/** A finding's function becomes the current one, and its node is revealed, selected and centred. */
function pickFinding(v, f) {
  const i = v.fns.findIndex((fn) => fn && fn.id === f.fn);
  if (i < 0) return;
  if (i !== v.current) v.show(i);
  if (f.node != null) v.onceDrawn(() => v.focus(ids.node(String(f.node))));
}

function runSearch(v) {
  const { searchBox, matchCount } = v.ui;
  const st = v.st();
  st.query = searchBox.value;
  if (!st.records && st.query.trim()) st.records = searchRecords(st.ix);
  st.matches = st.records ? search(st.records, st.query) : [];
  st.matchIdx = -1;
  matchCount.textContent = countText(st.matches.length, st.query);
  v.paintMatches();
}

/** Go to the next (+1) / previous (-1) match: Enter, the ‹ › buttons, n / N. */
function stepMatch(v, dir) {
  const st = v.st();
  if (st.query !== v.ui.searchBox.value) v.runSearch();
  if (!st.matches.length) return;
  st.matchIdx = step(st.matchIdx, st.matches.length, dir);
  v.ui.matchCount.textContent = `${st.matchIdx + 1} of ${countText(st.matches.length, st.query)}`;
  v.focus(st.matches[st.matchIdx]);
}

/** Selection, the edges at it, and search matches, in whichever renderer drew (stage.js). */
function paintSelection(v) {
  const st = v.st();
  v.ui.stage.paint({ ix: st.ix, expanded: st.expanded, selected: st.selected, matches: st.matches, marks: st.marks });
}

/** Escape empties the search, Enter steps to the next match (Shift: previous). */
function onSearchKey(v, e) {
  if (e.key === "Escape") {
    v.ui.searchBox.value = "";
    v.runSearch();
    return;
  }
  if (e.key !== "Enter") return;
  e.preventDefault();
  v.stepMatch(e.shiftKey ? -1 : 1);
}

/** Install selection and search methods on `v`. */
export const installSelection = (v) => install(v, {
  paintSelection, select, focus, pickFinding, paintMatches: paintSelection, runSearch, onSearchKey, stepMatch,
});
