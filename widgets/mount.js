/**
 * What every bundle entry shares: `mount(el, doc)`, `mountAll()` for static pages, the
 * anywidget `render`, and the auto-mount of static pages. An entry (widgets/index.js,
 * widgets/entries/*.js) passes the kinds it draws (each kind's `kind.js`), so a bundle
 * carries only those views, their CSS and, for kinds that lay out graphs, the layout
 * engine: the timeline bundle has neither dagre nor the layout worker.
 *
 * A kind is `{kind, versions, view, css, layout}`: `view(root, doc, engine, options)` returns a
 * cleanup (`options`: `{present, playback, request}`: `request(what, args)` asks the kernel for
 * what the document left out (widgets/ui/requests.js; absent in static pages), whether presentation mode is on, and the shared
 * playback controller the view gives its story to with `playback.set(spec)`, widgets/ui/playback.js), `versions` are the document versions it reads, `css` its style sheets (text,
 * in cascade order; a sheet shared by two kinds is included once), `layout` returns a
 * layout engine to share between the view's graphs, or is null.
 */
import { h, clear } from "./ui/dom.js";
import { decodeDocument } from "./graph/decode.js";
import { theme } from "./ui/styles.js";
import { stageBar, placeStageBar } from "./ui/stagebar.js";
import { rememberCells } from "./ui/source-text.js";
import { guardHostKeys } from "./ui/host-keys.js";
import { createRequester } from "./ui/requests.js";

/** Narrow layout below this root width (px): panes stack under the canvas. */
const NARROW_PX = 760;

/** Box shown instead of a view (unsupported documents, loading, errors). */
function messageBox(root, text, cls = "jm-unsupported") {
  root.appendChild(h("div", { class: cls }, text, root));
  return () => {};
}

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

/** All CSS of `kinds` as one string: every rule is scoped under `.jm-root`, so nothing leaks into the notebook. */
function styleOf(kinds) {
  return [theme, ...new Set(kinds.flatMap((k) => k.css))].join("\n");
}

/** The document as an object: a model may carry it as JSON text (unreadable text: null). */
function parsed(doc) {
  if (typeof doc !== "string") return doc;
  try {
    return JSON.parse(doc);
  } catch (err) {
    return null;
  }
}

/** Why `doc` cannot be shown by these kinds (not a jaxmagic document, unknown kind or version), or null. */
function refusal(doc, kind) {
  if (!doc || typeof doc !== "object" || doc.schema !== "jaxmagic") return "jaxmagic: nothing to show (not a jaxmagic document).";
  if (!kind) return `This jaxmagic version cannot show kind "${String(doc.kind)}". Update the jaxmagic package to view it.`;
  const known = kind.versions;
  if (!known.includes(doc.version)) {
    return `This jaxmagic version cannot show ${doc.kind} documents of version ${String(doc.version)} (it knows version${known.length > 1 ? "s" : ""} ${known.join(", ")}).`;
  }
  return null;
}

/**
 * The drawing of one mounted document: `draw(logical)` (re)draws the view of the decoded
 * document under its stage bar (the bar's presentation toggle draws it again), `stop()` removes
 * what the last drawing set up. `M`: `{el, root, kind, css, engine, request, present, disposed}`.
 */
function drawer(M) {
  let stop = () => {};
  let shown = null; // the decoded document last drawn
  const { el, root, kind, css } = M;
  const draw = (logical) => {
    if (M.disposed) return;
    stop();
    stop = () => {};
    shown = logical;
    clear(root);
    root.classList.toggle("jm-present", M.present);
    root.appendChild(h("style", null, css, el));
    const bar = stageBar(root, logical, { present: M.present, onPresent: (next) => {
      M.present = next;
      draw(shown);
      root.focus({ preventScroll: true });
    } });
    try {
      const cleanup = kind.view(root, logical, M.engine, { present: M.present, playback: bar.playback, request: M.request });
      placeStageBar(root, bar.el);
      stop = () => {
        bar.dispose();
        if (typeof cleanup === "function") cleanup();
      };
    } catch (err) {
      bar.dispose();
      messageBox(root, `jaxmagic could not draw this document: ${err && err.message}`);
    }
  };
  return { draw, stop: () => stop() };
}

/** Mount every embedded document of a static page (each once) with `mount`. */
function mountEmbedded(mount, doc) {
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

/** The anywidget default export: draws the model's `doc`, again when it changes. */
function anywidget(mount) {
  return {
    render({ model, el }) {
      // What the document left out (`deferred`) is asked of the kernel (widgets/ui/requests.js).
      const requester = createRequester(model);
      const opts = { request: requester.request };
      let cleanup = mount(el, model.get("doc"), opts);
      const onChange = () => {
        cleanup();
        cleanup = mount(el, model.get("doc"), opts);
      };
      model.on("change:doc", onChange);
      return () => {
        model.off("change:doc", onChange);
        requester.dispose();
        cleanup();
      };
    },
  };
}

/**
 * The front end for `kinds`: `{mount, mountAll, widget}` (widget is the anywidget
 * default export). When the page set `window.__jaxmagic_static = true` before loading
 * the bundle, every embedded document is mounted once the page has loaded.
 */
export function frontEnd(kinds) {
  const byKind = new Map(kinds.map((k) => [k.kind, k]));
  const css = styleOf(kinds);

  /**
   * Render `doc` into `el`; returns a cleanup function. Safe to call repeatedly on
   * the same element (the previous content is removed).
   * @param {HTMLElement} el
   * @param {any} doc  a document, or its JSON text
   * @param {{request?: Function}} [options]  `request(what, args)` asks the kernel (widgets/ui/requests.js)
   */
  function mount(el, doc, { request } = {}) {
    clear(el);
    doc = parsed(doc);
    const root = h("div", { class: "jm-root", tabindex: "0" }, null, el); // focus: keyboard control
    root.appendChild(h("style", null, css, el));
    el.appendChild(root);
    const kind = doc && typeof doc === "object" ? byKind.get(doc.kind) : undefined;
    const refused = refusal(doc, kind);
    if (refused) return messageBox(root, refused);
    rememberCells(doc.cells); // which notebook cell each source file is: `cell [3], line 7` (widgets/ui/source-text.js)
    const unwatch = watchWidth(root);
    const unguard = guardHostKeys(el, root); // typed and handled keys never reach the notebook (widgets/ui/host-keys.js)
    const engine = kind.layout ? kind.layout() : null; // only graphs are laid out (starts a worker)
    // `--present` asks for presentation mode; the bar's toggle flips it
    const M = { el, root, kind, css, engine, request, present: doc.present === true, disposed: false };
    const { draw, stop } = drawer(M);
    if (doc.encoding) {
      // Large documents travel compressed: inflate off the critical path, then draw.
      messageBox(root, "jaxmagic: loading…", "jm-loading");
      decodeDocument(doc).then(draw, (err) => {
        if (!M.disposed) messageBox(root, `jaxmagic could not read this document: ${err && err.message}`);
      });
    } else draw(doc);
    return () => {
      M.disposed = true;
      stop();
      unwatch();
      unguard();
      if (engine) engine.release();
      clear(el);
    };
  }

  /** Mount every embedded document of a static page (each once). */
  const mountAll = (doc = globalThis.document) => mountEmbedded(mount, doc);
  const widget = anywidget(mount);
  if (globalThis.__jaxmagic_static && globalThis.document) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => mountAll());
    else mountAll();
  }
  return { mount, mountAll, widget };
}
