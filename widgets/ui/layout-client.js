/**
 * Runs layouts off the main thread when it can.
 *
 * "virtual:layout-worker" is the layout worker bundle wrapped in one function (see
 * build.mjs). Its source text is started as a Worker from a Blob URL, so the widget
 * stays a single ESM file; where workers are unavailable or blocked (strict CSP,
 * webviews, jsdom) the page calls the same function and runs the identical layout code
 * on the main thread.
 *
 * The choice is made up front, never after a long wait: no `Worker` (or no Blob URLs) or a
 * constructor that throws (SecurityError) means the main thread from the first layout; an
 * `error` event (what Chromium fires, ~10 ms after construction, when a CSP's worker-src or
 * script-src blocks blob: workers) hands every queued layout to the main thread at once. Only a
 * worker that neither answers nor fails is waited for, HANDSHAKE_MS at most.
 */
import workerMain from "virtual:layout-worker";

/**
 * How long a worker that neither says hello nor fails may take before its layouts run here.
 * Measured in Chromium (2 shared cores): the worker bundle says hello 15-31 ms after
 * construction; 1 s leaves a slow laptop 30x that and bounds the cost of a silent failure.
 */
export const HANDSHAKE_MS = 1000;

let shared = null; // one engine per page, shared by all views
let users = 0;
let api = null;

/** The layout module on the main thread (the worker bundle, run here). */
const mainThread = () => (api ||= workerMain());

/** Start the worker, or return null when that is impossible. */
function startWorker() {
  if (typeof Worker !== "function" || typeof Blob === "undefined" || typeof URL === "undefined" || !URL.createObjectURL) return null;
  let url = null;
  try {
    const src = `"use strict";(${workerMain.toString()})();`;
    url = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
    return { w: new Worker(url), url };
  } catch (err) {
    if (url) URL.revokeObjectURL(url);
    return null;
  }
}

/** Results kept on this side, so unchanged subtrees are neither sent nor received again. */
const KNOWN_MAX = 20000;

/**
 * The part of `tree` to lay out: subtrees whose key has a known result become stubs
 * `{key, stub, w, h}` (their size is all a parent needs). A 50k-eqn drawing is tens
 * of MB to copy to the worker and back; a toggle in it re-lays out a few boxes.
 */
export function prune(tree, known) {
  const cut = (c) => {
    const r = known.get(c.key);
    if (r) return { key: c.key, stub: true, w: r.w, h: r.h };
    return { ...c, items: c.items.map((it) => (it.child ? { ...it, child: cut(it.child) } : it)) };
  };
  return cut(tree);
}

/** Results of every container of `tree` from `known` (after the new ones were added). */
export function gather(tree, known) {
  const out = {};
  const walk = (c) => {
    const r = known.get(c.key);
    if (r) out[c.key] = r;
    for (const it of c.items) if (it.child) walk(it.child);
  };
  walk(tree);
  return out;
}

/** Engine shared by views: a worker if possible, else the main thread. */
function engine() {
  if (shared) return shared;
  const pending = new Map();
  const known = new Map();
  let cache = null;
  let seq = 0;
  let worker = startWorker();
  let ready = false;

  const local = (req) =>
    new Promise((resolve) => {
      // Yield first so "laying out…" can paint before a long main-thread layout.
      setTimeout(() => {
        const L = mainThread();
        cache ||= L.createCache();
        resolve(L.layoutTree(req.tree, cache, req.opts));
      }, 0);
    });
  const stopWorker = () => {
    if (!worker) return;
    worker.w.terminate();
    URL.revokeObjectURL(worker.url);
    worker = null;
  };
  const giveUp = () => {
    stopWorker();
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
    // Blocked workers fire `error` (above); one that stays silent gets a bounded handshake.
    setTimeout(() => ready || giveUp(), HANDSHAKE_MS);
  }
  shared = {
    get threaded() {
      return !!worker;
    },
    run(tree, opts) {
      if (!tree) return Promise.resolve({ results: {}, stats: {} });
      const req = { tree: prune(tree, known), opts };
      const done = (out) => {
        for (const [k, r] of Object.entries(out.results)) {
          known.delete(k);
          known.set(k, r);
        }
        const results = gather(tree, known);
        while (known.size > KNOWN_MAX) known.delete(known.keys().next().value);
        return { ...out, results };
      };
      if (!worker) return local(req).then(done);
      return new Promise((resolve, reject) => {
        const id = ++seq;
        pending.set(id, { req, resolve: (out) => resolve(done(out)), reject });
        worker.w.postMessage({ id, tree: req.tree, opts });
      });
    },
    stop() {
      stopWorker();
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
