/**
 * Entry of the layout Web Worker (bundled on its own and inlined into the main
 * bundle as a string by build.mjs). Keeps one layout cache for the worker's life,
 * so toggles re-lay out only the containers whose keys changed.
 */
import { layoutTree, createCache } from "./layout.js";

const cache = createCache();
self.onmessage = (ev) => {
  const { id, tree, opts } = ev.data || {};
  try {
    const out = layoutTree(tree, cache, opts);
    self.postMessage({ id, ...out });
  } catch (err) {
    self.postMessage({ id, error: String((err && err.message) || err) });
  }
};
self.postMessage({ ready: true });
