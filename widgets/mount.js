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
   */
  function mount(el, doc, { request } = {}) {
    clear(el);
    if (typeof doc === "string") {
      try {
        doc = JSON.parse(doc); // a model may carry the document as JSON text
      } catch (err) {
        doc = null;
      }
    }
    const root = h("div", { class: "jm-root", tabindex: "0" }, null, el); // focus: keyboard control
    root.appendChild(h("style", null, css, el));
    el.appendChild(root);
    if (!doc || typeof doc !== "object" || doc.schema !== "jaxmagic") {
      return messageBox(root, "jaxmagic: nothing to show (not a jaxmagic document).");
    }
    const kind = byKind.get(doc.kind);
    if (!kind) {
      return messageBox(root, `This jaxmagic version cannot show kind "${String(doc.kind)}". Update the jaxmagic package to view it.`);
    }
    const known = kind.versions;
    if (!known.includes(doc.version)) {
      return messageBox(root, `This jaxmagic version cannot show ${doc.kind} documents of version ${String(doc.version)} (it knows version${known.length > 1 ? "s" : ""} ${known.join(", ")}).`);
    }
    rememberCells(doc.cells); // which notebook cell each source file is: `cell [3], line 7` (widgets/ui/source-text.js)
    const unwatch = watchWidth(root);
    const unguard = guardHostKeys(el, root); // typed and handled keys never reach the notebook (widgets/ui/host-keys.js)
    const engine = kind.layout ? kind.layout() : null; // only graphs are laid out (starts a worker)
    let stop = () => {};
    let disposed = false;
    let present = doc.present === true; // `--present` asks for it; the bar's toggle flips it
    let shown = null; // the decoded document last drawn
    const draw = (logical) => {
      if (disposed) return;
      stop();
      stop = () => {};
      shown = logical;
      clear(root);
      root.classList.toggle("jm-present", present);
      root.appendChild(h("style", null, css, el));
      const bar = stageBar(root, logical, { present, onPresent: (next) => {
        present = next;
        draw(shown);
        root.focus({ preventScroll: true });
      } });
      try {
        const cleanup = kind.view(root, logical, engine, { present, playback: bar.playback, request });
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
      unguard();
      if (engine) engine.release();
      clear(el);
    };
  }

  /** Mount every embedded document of a static page (each once). */
  function mountAll(doc = globalThis.document) {
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

  const widget = {
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

  if (globalThis.__jaxmagic_static && globalThis.document) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => mountAll());
    else mountAll();
  }
  return { mount, mountAll, widget };
}
