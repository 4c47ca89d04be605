/**
 * jaxmagic front end entry (bundled to jaxmagic/static/jaxmagic.js).
 *
 * - anywidget: `export default { render({ model, el }) }` renders `model.get("doc")`
 *   and re-renders on `change:doc`.
 * - static pages: `mount(el, doc)`; and when the page sets
 *   `window.__jaxmagic_static = true` before loading this module, every
 *   `<script type="application/json" data-jaxmagic-doc>` gets a view right after it.
 */
import { h, clear } from "../js/src/dom.js";
import { acquireLayout } from "../js/src/layout-client.js";
import { graphView } from "./graph/view.js";
import { timelineView } from "./timeline/view.js";
import { gradView } from "./grad/view.js";
import { decodeDocument } from "./graph/decode.js";
import css from "./styles.js";

/** Graph document versions this front end draws (2 adds optional fields to 1). */
const GRAPH_VERSIONS = [1, 2];
/** Timeline document versions this front end draws. */
const TIMELINE_VERSIONS = [1];
/** Grad document versions this front end draws. */
const GRAD_VERSIONS = [1];

/** Views by document kind. Each takes (root, doc, engine) and returns a cleanup. */
const VIEWS = { graph: graphView, timeline: timelineView, grad: gradView };
/** Versions each kind's view reads. */
const VERSIONS = { graph: GRAPH_VERSIONS, timeline: TIMELINE_VERSIONS, grad: GRAD_VERSIONS };
/** Kinds whose views lay out graphs: they share one layout engine (a worker). */
const LAID_OUT = new Set(["graph", "grad"]);

/** Box shown for documents this version cannot draw. */
function messageBox(root, text, cls = "jm-unsupported") {
  root.appendChild(h("div", { class: cls }, text, root));
  return () => {};
}

/**
 * Render `doc` into `el`; returns a cleanup function. Safe to call repeatedly on
 * the same element (the previous content is removed).
 */
export function mount(el, doc) {
  clear(el);
  if (typeof doc === "string") {
    try {
      doc = JSON.parse(doc); // a model may carry the document as JSON text
    } catch (err) {
      doc = null;
    }
  }
  const root = h("div", { class: "jm-root" }, null, el);
  root.appendChild(h("style", null, css, el));
  el.appendChild(root);
  if (!doc || typeof doc !== "object" || doc.schema !== "jaxmagic") {
    return messageBox(root, "jaxmagic: nothing to show (not a jaxmagic document).");
  }
  const view = VIEWS[doc.kind];
  if (!view) {
    return messageBox(root, `This jaxmagic version cannot show kind "${String(doc.kind)}". Update the jaxmagic package to view it.`);
  }
  const known = VERSIONS[doc.kind];
  if (known && !known.includes(doc.version)) {
    return messageBox(root, `This jaxmagic version cannot show ${doc.kind} documents of version ${String(doc.version)} (it knows version${known.length > 1 ? "s" : ""} ${known.join(", ")}).`);
  }
  const unwatch = watchWidth(root);
  const engine = LAID_OUT.has(doc.kind) ? acquireLayout() : null; // only graphs are laid out (starts a worker)
  let stop = () => {};
  let disposed = false;
  const draw = (logical) => {
    if (disposed) return;
    clear(root);
    root.appendChild(h("style", null, css, el));
    try {
      stop = view(root, logical, engine);
    } catch (err) {
      messageBox(root, `jaxmagic could not draw this document: ${err && err.message}`);
    }
  };
  if (doc.encoding) {
    // Large documents travel compressed: inflate off the critical path, then draw.
    messageBox(root, "jaxmagic: loading…", "jm-loading");
    decodeDocument(doc).then(draw, (err) => {
      if (!disposed) messageBox(root, `jaxmagic could not read this document: ${err && err.message}`);
    });
  } else draw(doc);
  return () => {
    disposed = true;
    stop();
    unwatch();
    if (engine) engine.release();
    clear(el);
  };
}

/** Narrow layout below this root width (px): panes stack under the canvas. */
const NARROW_PX = 760;

/**
 * Toggle `.jm-narrow` from the root's own width. A ResizeObserver rather than a CSS
 * container query: size containment can collapse the root to zero width inside
 * some notebook output containers.
 */
function watchWidth(root) {
  const apply = () => root.classList.toggle("jm-narrow", root.clientWidth > 0 && root.clientWidth < NARROW_PX);
  if (typeof ResizeObserver === "undefined") return () => {};
  const ro = new ResizeObserver(apply);
  ro.observe(root);
  return () => ro.disconnect();
}

/** Mount every embedded document of a static page (each once). */
export function mountAll(doc = globalThis.document) {
  for (const script of doc.querySelectorAll('script[type="application/json"][data-jaxmagic-doc]')) {
    if (script.hasAttribute("data-jaxmagic-mounted")) continue;
    script.setAttribute("data-jaxmagic-mounted", "");
    const div = doc.createElement("div");
    div.className = "jaxmagic-view";
    script.after(div);
    let data;
    try {
      data = JSON.parse(script.textContent);
    } catch (err) {
      data = null;
    }
    mount(div, data);
  }
}

export default {
  render({ model, el }) {
    let cleanup = mount(el, model.get("doc"));
    const onChange = () => {
      cleanup();
      cleanup = mount(el, model.get("doc"));
    };
    model.on("change:doc", onChange);
    return () => {
      model.off("change:doc", onChange);
      cleanup();
    };
  },
};

if (globalThis.__jaxmagic_static && globalThis.document) {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => mountAll());
  else mountAll();
}
