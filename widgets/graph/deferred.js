import { retold } from "../ui/requests.js";

/**
 * A function's parts the document left out (`fn.deferred`, docs/schema.md), asked of the kernel
 * (widgets/ui/requests.js) and merged into the function, so everything drawn afterwards reads them
 * as if the document had carried them. Exported pages are built whole and never defer.
 *
 * - "levels": its StableHLO and HLO texts, each node's lines in them and XLA's whole-program cost,
 *   asked when the user opens a StableHLO/HLO pane or the cost.
 * - "jaxpr": the whole jaxpr text and each node's line in it (the document carries the text's
 *   first eqns only), asked when the jaxpr pane is shown (it is open at first paint).
 *
 * Load state lives on the function, per part: `fn.loads[what]` = {loading, waiting (the sentence
 * shown while a slow answer is awaited), error (the sentence shown instead)}.
 */

/** Whether `what` of `fn` is still to be loaded. */
export function isDeferred(fn, what = "levels") {
  return !!fn && Array.isArray(fn.deferred) && fn.deferred.includes(what);
}

/** The load state of part `what` of `fn` (made on first use). */
export function loadState(fn, what = "levels") {
  if (!fn.loads) fn.loads = {};
  return (fn.loads[what] ||= { loading: false, waiting: null, error: null });
}

const ASKED = {
  levels: "Computed in the kernel when asked for.",
  jaxpr: "The rest of the text is printed in the kernel when this pane is shown.",
};
const LOADING = { levels: "Loading from the kernel…", jaxpr: "The first eqns: the whole text is loading from the kernel…" };

/** The sentence to show where deferred part `what` would be, or null when it is loaded. */
export function deferredStatus(fn, what = "levels") {
  if (!isDeferred(fn, what)) return null;
  const st = loadState(fn, what);
  if (st.error) return String(st.error);
  if (st.loading) return st.waiting || LOADING[what];
  return ASKED[what];
}

/** The sentence to show where deferred levels would be, or null when they are loaded. */
export const levelsStatus = (fn) => deferredStatus(fn, "levels");

/** Merge a "levels" answer (jaxmagic/model/graph.py level_data) into `fn` and its nodes. */
export function applyLevels(fn, data) {
  fn.levels = data && typeof data.levels === "object" ? data.levels : null;
  fn.cost = data && typeof data.cost === "object" ? data.cost : null;
  const nodes = fn.nodes || [];
  const shlo = Array.isArray(data && data.shlo) ? data.shlo : [];
  shlo.forEach((lines, i) => {
    const n = nodes[i];
    if (!n) return;
    n.shlo = Array.isArray(lines) ? lines : [];
    n.hlo = Array.isArray(data.hlo && data.hlo[i]) ? data.hlo[i] : [];
    n.hlo_comp = data.hlo_comp && data.hlo_comp[i] != null ? String(data.hlo_comp[i]) : null;
  });
  if (Array.isArray(data && data.notes) && data.notes.length) fn.levelNotes = data.notes.map(String);
  loaded(fn, "levels");
}

/** Part `what` of `fn` is no longer deferred. */
function loaded(fn, what) {
  if (Array.isArray(fn.deferred)) fn.deferred = fn.deferred.filter((w) => w !== what);
}

/** Merge a "jaxpr" answer (jaxmagic/model/graph.py Printout.data) into `fn` and its nodes. */
export function applyText(fn, data) {
  if (!data || typeof data.text !== "string") throw new Error("the kernel's answer has no jaxpr text");
  fn.text = data.text;
  const lines = Array.isArray(data.lines) ? data.lines : [];
  (fn.nodes || []).forEach((n, i) => {
    n.line = Number.isInteger(lines[i]) && lines[i] >= 0 ? lines[i] : null;
  });
  loaded(fn, "jaxpr");
}

const APPLY = { levels: applyLevels, jaxpr: applyText };
/** The requester's sentences speak of the HLO; a jaxpr request's tell of its text. */
const told = (what, text) => (what === "jaxpr" ? retold(text, "the whole jaxpr text") : String(text));
const SAVED_WITHOUT = {
  levels: "Not in this view: it was saved without its kernel's answers; re-run the cell to load the HLO.",
  jaxpr: "The first eqns only: this view was saved without its kernel's answers; re-run the cell for the whole text.",
};

/**
 * Ask the kernel for part `what` of `fn` once (a second call while loading or after loading does
 * nothing; after a failure only an explicit `retry`, the user's click, asks again: the kernel
 * may have been reconnected); `changed()` hears every state change (loading, waiting, loaded, failed).
 */
export function loadDeferred(fn, what, request, changed, { retry = false } = {}) {
  if (!isDeferred(fn, what)) return;
  const st = loadState(fn, what);
  if (st.loading || (st.error && !retry)) return;
  st.error = null;
  if (typeof request !== "function") {
    st.error = SAVED_WITHOUT[what];
    changed();
    return;
  }
  st.loading = true;
  changed();
  request(what, { function: fn.id }, { onWaiting: (why) => { st.waiting = told(what, why); changed(); } }).then(
    (data) => APPLY[what](fn, data),
    (err) => { st.error = told(what, (err && err.message) || err); },
  ).finally(() => {
    st.loading = false;
    st.waiting = null;
    changed();
  });
}

/** Ask for `fn`'s levels (loadDeferred's "levels"). */
export const loadLevels = (fn, request, changed, opts) => loadDeferred(fn, "levels", request, changed, opts);
