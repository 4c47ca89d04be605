/**
 * Colours for canvas renderers, read only when they can be read right, and read again when the
 * host's theme changes.
 *
 * A canvas has no stylesheet: a renderer copies the theme's CSS variables (theme.css) into
 * fillStyle strings. Read while the widget's element is not in a document (anywidget may call
 * `render` on a detached element, and a notebook may attach an output later), every variable
 * is "", the canvas ignores an empty fillStyle and keeps its default, black: spans, markers and
 * the overview all drew solid black in JupyterLab. So:
 *
 * - `whenConnected(el, fn)` runs `fn` once `el` is in a document (at once when it already is);
 *   a renderer draws nothing before that;
 * - `readVars(el, names, fallback)` resolves variables on a connected element, taking a
 *   variable that is still unresolved (a host without the sheet, jsdom) from the fallback
 *   palette of the host's light or dark theme, never "";
 * - `watchTheme(el, fn)` calls `fn` when the host switches theme: JupyterLab's
 *   body[data-jp-theme-light] / [data-jp-theme-name] (its theme stylesheet is loaded by then),
 *   or the OS's prefers-color-scheme. The renderer forgets its palette and redraws.
 */
import { nextFrame } from "./frame.js";

/** `name=value name=value …` as an object (values have no spaces): the tables below stay small in the bundle. */
const table = (t) => Object.fromEntries(t.split(" ").map((p) => p.split("=")));
/** What both themes share: the timeline's phase colours, the fonts. */
const SHARED = "tl-trace=#e0a800 tl-lower=#4a90d9 tl-compile=#9b59b6 tl-exec=#8a96a3 mono=monospace sans=sans-serif ";
/** theme.css's plain values, light and dark: what a variable falls back to when unresolved. */
export const FALLBACK = {
  light: table(SHARED + "bg=#fff bg1=#fff bg2=#eee fg=rgba(0,0,0,.92) fg1=rgba(0,0,0,.8) fg2=rgba(0,0,0,.55) border=#bdbdbd " +
    "border2=#e0e0e0 brand=#1976d2 teal=#0f9d8a teal-text=#0b7566 grad=#e8710a red=#d93025 mark=#c2185b canvas=#fbfbfb edge-label=rgba(0,0,0,.55)"),
  dark: table(SHARED + "bg=#1e1e1e bg1=#262626 bg2=#333 fg=rgba(255,255,255,.95) fg1=rgba(255,255,255,.85) fg2=rgba(255,255,255,.58) " +
    "border=#5a5a5a border2=#3c3c3c brand=#64b5f6 teal=#2bbfa9 teal-text=#5ad1bf grad=#f29b4b red=#f28b82 mark=#f06292 canvas=#1b1b1b edge-label=rgba(255,255,255,.58)"),
};

/** Whether the host shows a dark theme: JupyterLab says so on <body>; elsewhere the OS setting. */
export function hostDark(doc) {
  const body = doc && doc.body;
  const jp = body && body.getAttribute("data-jp-theme-light");
  if (jp === "true" || jp === "false") return jp === "false";
  const win = doc && doc.defaultView;
  return !!(win && win.matchMedia && win.matchMedia("(prefers-color-scheme: dark)").matches);
}

/**
 * `--jm-<name>` for each of `names`, resolved on `el` (which must be connected), as
 * {name: value}; an unresolved variable takes `fallback[name]`, else the theme's FALLBACK.
 */
export function readVars(el, names, fallback = {}) {
  const doc = el.ownerDocument;
  const cs = doc.defaultView.getComputedStyle(el);
  const base = FALLBACK[hostDark(doc) ? "dark" : "light"];
  const out = {};
  for (const n of names) {
    const v = cs.getPropertyValue("--jm-" + n).trim();
    // "" (detached, no sheet) or a var() left unsubstituted (a host that does not substitute) is unresolved
    out[n] = (v && !v.includes("var(") ? v : "") || fallback[n] || base[n] || "#888";
  }
  return out;
}

const later = nextFrame;
const cancel = (win, id) => (win.cancelAnimationFrame ? win.cancelAnimationFrame(id) : win.clearTimeout(id));

/**
 * Run `fn` once `el` is in a document: now when it is, else on the first animation frame that
 * finds it attached. Returns a function that stops waiting.
 */
export function whenConnected(el, fn) {
  if (el.isConnected) {
    fn();
    return () => {};
  }
  const win = el.ownerDocument.defaultView;
  let id = 0;
  const poll = () => {
    id = 0;
    if (el.isConnected) fn();
    else id = later(win, poll);
  };
  id = later(win, poll);
  return () => id && cancel(win, id);
}

/**
 * Call `fn` whenever the host's theme changes (JupyterLab's theme attributes on <body>, the
 * OS colour scheme). Once more a moment later, in case a theme's sheet settles after the
 * attributes say it is in use. Returns a function that stops watching.
 */
export function watchTheme(el, fn) {
  const doc = el.ownerDocument, win = doc.defaultView;
  const stops = [];
  let again = 0;
  const changed = () => {
    fn();
    if (again) win.clearTimeout(again);
    again = win.setTimeout(() => {
      again = 0;
      fn();
    }, 300);
  };
  if (win.MutationObserver && doc.body) {
    const mo = new win.MutationObserver(changed);
    mo.observe(doc.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"] });
    stops.push(() => mo.disconnect());
  }
  const mq = win.matchMedia ? win.matchMedia("(prefers-color-scheme: dark)") : null;
  if (mq && mq.addEventListener) {
    mq.addEventListener("change", changed);
    stops.push(() => mq.removeEventListener("change", changed));
  }
  return () => {
    if (again) win.clearTimeout(again);
    for (const s of stops) s();
  };
}
