/**
 * The graph view's state (view.js): one object every view-*.js module reads and
 * drives, in place of one closure holding it all. Its methods are the modules'
 * functions with the state bound as their first argument (`install`).
 */
import { BASE, PRESENT } from "./metrics.js";

let viewCounter = 0;
/** Per-module-instance tag: SVG ids (the arrow marker) must be unique in the page. */
const instance = Math.random().toString(36).slice(2, 7);

/** A fresh view state for `doc` mounted in `root`; `ui` and the methods come later. */
export function createViewState(root, doc, engine, opts) {
  // Presentation mode: mount.js says so, and an embedding view's root carries the class.
  const present = !!(opts.present || (root.closest && root.closest(".jm-present")));
  return {
    root, doc, engine, opts, present,
    compact: !!opts.compact,
    M: present ? PRESENT : BASE,
    uid: `jm${instance}${++viewCounter}`,
    fns: Array.isArray(doc.functions) ? [...doc.functions] : [], // and functions loaded later (listed.js)
    states: new Map(), // function index -> per-function state
    current: 0,
    disposed: false,
    seq: 0,
    drawn: null, // {boxes, bbox}
    whenDrawn: [], // a host's requests made before the first drawing (controller)
    elements: new Map(), // element key -> drawn element (SVG renderer only)
    labelMode: "aval", labelOf: null, // edge labels: setLabelMode(name, fn)
    mode: "trace", // edge labels: trace | forward | vmap (modes.js)
    overlay: "none", // cost colouring: none | flops | bytes (overlay.js)
    hostDecorate: null, // a host's decorations (controller), shown while the overlay is off
  };
}

/** Make each `fns[name](v, ...args)` a method `v[name](...args)`. */
export function install(v, fns) {
  for (const name of Object.keys(fns)) v[name] = (...args) => fns[name](v, ...args);
}
