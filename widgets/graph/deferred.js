/**
 * A function's parts the document left out (`fn.deferred`, docs/schema.md): its StableHLO and
 * HLO texts, each node's lines in them and XLA's whole-program cost ("levels"). The view asks
 * the kernel for them when the user opens a StableHLO/HLO pane or the cost (widgets/ui/requests.js)
 * and merges the answer into the function, so everything drawn afterwards reads it as if the
 * document had carried it. Exported pages are built whole and never defer.
 *
 * Load state lives on the function object: `levelsLoading`, `levelsWaiting` (the sentence shown
 * while a slow answer is awaited), `levelsError` (the sentence shown instead).
 */

/** Whether `what` of `fn` is still to be loaded. */
export function isDeferred(fn, what = "levels") {
  return !!fn && Array.isArray(fn.deferred) && fn.deferred.includes(what);
}

/** The sentence to show where deferred levels would be, or null when they are loaded. */
export function levelsStatus(fn) {
  if (!isDeferred(fn)) return null;
  if (fn.levelsError) return String(fn.levelsError);
  if (fn.levelsLoading) return fn.levelsWaiting || "Loading from the kernel…";
  return "Computed in the kernel when asked for.";
}

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
  fn.deferred = fn.deferred.filter((w) => w !== "levels");
}

/**
 * Ask the kernel for `fn`'s levels once (a second call while loading or after loading does
 * nothing; after a failure only an explicit `retry`, the user's click, asks again: the kernel
 * may have been reconnected); `changed()` hears every state change (loading, waiting, loaded, failed).
 */
export function loadLevels(fn, request, changed, { retry = false } = {}) {
  if (!isDeferred(fn) || fn.levelsLoading || (fn.levelsError && !retry)) return;
  fn.levelsError = null;
  if (typeof request !== "function") {
    fn.levelsError = "Not in this view: it was saved without its kernel's answers; re-run the cell to load the HLO.";
    changed();
    return;
  }
  fn.levelsLoading = true;
  changed();
  request("levels", { function: fn.id }, { onWaiting: (why) => { fn.levelsWaiting = why; changed(); } }).then(
    (data) => applyLevels(fn, data),
    (err) => { fn.levelsError = String((err && err.message) || err); },
  ).finally(() => {
    fn.levelsLoading = false;
    fn.levelsWaiting = null;
    changed();
  });
}
