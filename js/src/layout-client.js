/**
 * Runs layouts off the main thread when it can.
 *
 * The worker source is a string inlined by the build ("virtual:layout-worker") and
 * started from a Blob URL, so the widget stays a single ESM file. Where workers are
 * unavailable or blocked (strict CSP, jsdom, unbundled tests) the very same
 * `layoutTree` runs on the main thread instead; results are identical.
 */
import { layoutTree, createCache } from "./layout.js";
// The build resolves this to the bundled worker source; tests resolve it to null.
import WORKER_SRC from "virtual:layout-worker";
const READY_TIMEOUT_MS = 4000;

let shared = null; // one worker per page, shared by all views
let users = 0;

/** Start the worker, or return null when that is impossible. */
function startWorker() {
  if (!WORKER_SRC || typeof Worker === "undefined" || typeof Blob === "undefined") return null;
  let url = null;
  try {
    url = URL.createObjectURL(new Blob([WORKER_SRC], { type: "text/javascript" }));
    const w = new Worker(url);
    return { w, url };
  } catch (err) {
    if (url) URL.revokeObjectURL(url);
    return null;
  }
}

/** Engine shared by views: a worker if possible, else the main thread. */
function engine() {
  if (shared) return shared;
  const cache = createCache();
  const pending = new Map();
  let seq = 0;
  let worker = startWorker();
  let ready = false;

  const local = (req) =>
    new Promise((resolve) => {
      // Yield first so "laying out…" can paint before a long main-thread layout.
      setTimeout(() => resolve(layoutTree(req.tree, cache, req.opts)), 0);
    });
  const giveUp = () => {
    if (!worker) return;
    worker.w.terminate();
    URL.revokeObjectURL(worker.url);
    worker = null;
    for (const [id, p] of pending) {
      pending.delete(id);
      local(p.req).then(p.resolve, p.reject);
    }
  };
  if (worker) {
    worker.w.onmessage = (ev) => {
      const msg = ev.data || {};
      if (msg.ready) return void (ready = true);
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.error) p.reject(new Error(msg.error));
      else p.resolve(msg);
    };
    worker.w.onerror = (ev) => {
      if (ev && ev.preventDefault) ev.preventDefault();
      giveUp();
    };
    // A worker blocked by CSP may fail silently: give it a few seconds to say hello.
    setTimeout(() => ready || giveUp(), READY_TIMEOUT_MS);
  }
  shared = {
    get threaded() {
      return !!worker;
    },
    run(tree, opts) {
      const req = { tree, opts };
      if (!worker) return local(req);
      return new Promise((resolve, reject) => {
        const id = ++seq;
        pending.set(id, { req, resolve, reject });
        worker.w.postMessage({ id, tree, opts });
      });
    },
    stop() {
      if (worker) {
        worker.w.terminate();
        URL.revokeObjectURL(worker.url);
      }
      for (const p of pending.values()) p.reject(new Error("layout engine stopped"));
      pending.clear();
      shared = null;
    },
  };
  return shared;
}

/**
 * Get a handle on the shared engine; `release()` stops the worker when the last
 * view using it is gone.
 */
export function acquireLayout() {
  users++;
  const e = engine();
  let released = false;
  return {
    run: (tree, opts) => e.run(tree, opts),
    get threaded() {
      return e.threaded;
    },
    release() {
      if (released) return;
      released = true;
      if (--users === 0) e.stop();
    },
  };
}
