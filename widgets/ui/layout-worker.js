/**
 * The layout worker bundle. build.mjs bundles this file on its own (IIFE exposing
 * `__jmLayoutWorker`) and inlines that bundle into the main bundle wrapped in one
 * function (module "virtual:layout-worker"). The page calls the function for a
 * main-thread fallback; the worker runs the same function's source text, so the
 * layout code (and dagre) ship once and both paths run identical code.
 *
 * Inside a worker it serves layout requests, keeping one cache for its lifetime so
 * toggles re-lay out only the containers whose keys changed.
 */
import { layoutTree, createCache } from "./layout.js";

export { layoutTree, createCache };

if (typeof WorkerGlobalScope !== "undefined" && self instanceof WorkerGlobalScope) {
  const cache = createCache();
  self.onmessage = (ev) => {
    const { id, tree, opts } = ev.data || {};
    try {
      self.postMessage({ id, ...layoutTree(tree, cache, opts) });
    } catch (err) {
      self.postMessage({ id, error: String((err && err.message) || err) });
    }
  };
  self.postMessage({ ready: true });
}
