/**
 * Functions as tabs in the graph view (view.js): switching function (saving the pane
 * and transform of the one left, restoring or framing the one shown), functions listed
 * without their graph (listed.js) becoming tabs once loaded, and the deferred parts
 * (deferred.js: StableHLO/HLO and XLA's cost, loaded when asked; the whole jaxpr text, loaded when
 * its pane shows). Installs methods on `v`.
 */
import { clear } from "../ui/dom.js";
import { loadDeferred } from "./deferred.js";
import { afterPaint } from "../ui/frame.js";
import { functionTabs } from "./tabs.js";
import { modeState } from "./modes.js";
import { install } from "./view-state.js";

/** Show function `i`: tabs, panes, code strip, mode, search, labels, overlay, then its drawing. */
function show(v, i) {
  const { ui } = v, pz = ui.stage.pz;
  ui.hood.exit(); // a neighbourhood belongs to the function it was opened on
  if (v.drawn && v.states.has(v.current)) Object.assign(v.states.get(v.current), { transform: pz.transform, paneH: v.frame.setH });
  v.current = i;
  const st = v.stateOf(i);
  clear(ui.tabsSlot);
  ui.tabsSlot.appendChild(functionTabs(v.fns, i, (j) => j !== v.current && v.show(j), v.root));
  if (v.listed) {
    for (const el of v.listed.els) ui.tabsSlot.appendChild(el);
    v.listed.refresh();
  }
  ui.panes.setFunction(v.fns[i], st.ix);
  if (ui.panes.active !== "jaxpr") v.wantLevels(false);
  ui.strip.setFunction(st.ix);
  if (!modeState(v.fns[i], v.mode).ok) v.mode = "trace";
  ui.modes.update(v.fns[i], v.mode);
  if (ui.legendLine) ui.legendLine.update(v.mode);
  ui.searchBox.value = st.query;
  v.runSearch();
  v.select(st.selected, false);
  v.drawn = null;
  v.applyLabels();
  v.applyOverlay();
  v.relayout(() => {
    if (st.transform) {
      if (st.paneH) v.setHeight(st.paneH);
      pz.set(st.transform.x, st.transform.y, st.transform.k);
    } else v.firstView();
    v.select(st.selected, false);
    // The jaxpr pane is showing: its whole text is wanted now, asked once the graph is drawn (the
    // kernel prints it while the page is idle, not while it lays out and paints the first frame).
    afterPaint(v.root.ownerDocument.defaultView, () => {
      if (!v.disposed && !v.compact && ui.panes.active === "jaxpr" && v.current === i) v.wantText(false);
    });
  });
}

/**
 * Functions listed without their graph (`opts.listed`: listed.js listedControl, which the graph
 * kind passes; the grad view embeds the viewer without it): a loaded one becomes a tab of its own.
 */
function listedFunctions(v) {
  const { opts, fns } = v;
  const byId = (fid) => fns.findIndex((f) => f && f.id === fid);
  return v.compact || !opts.listed ? null : opts.listed(v.root, v.doc, {
    request: opts.request,
    isLoaded: (fid) => byId(fid) >= 0,
    onPick: (fid) => v.show(byId(fid)),
    onLoaded: (fn) => {
      if (v.disposed) return;
      const i = fns.push(fn) - 1;
      try {
        v.stateOf(i); // index it first: a malformed answer leaves the tabs as they were
      } catch (err) {
        fns.pop();
        v.states.delete(i);
        throw err;
      }
      v.show(i);
    },
  });
}

/** Install wantLevels, wantText and show on `v`, and the listed functions' control (`v.listed`). */
export function installTabs(v) {
  install(v, { wantLevels: (w, retry) => want(w, "levels", retry), wantText: (w, retry) => want(w, "jaxpr", retry), show });
  v.listed = listedFunctions(v);
}

/** Load part `what` of the current function from the kernel (`retry`: the user asked, after a failure too). */
function want(v, what, retry) {
  const f = v.fns[v.current];
  loadDeferred(f, what, v.opts.request, () => {
    if (v.disposed || v.fns[v.current] !== f) return;
    v.ui.panes.refresh();
    v.select(v.st().selected, false);
  }, { retry });
}
