/**
 * Keyboard shortcuts of the graph view, active while the widget has focus (the
 * root is focusable). Keys typed into inputs (the search box) or with a modifier
 * are never taken: the notebook and the browser keep theirs.
 */
import { h } from "../ui/dom.js";
import { isCollapsible } from "./model.js";
import * as ids from "./ids.js";

/** key -> [action, description]; the help overlay lists them in this order. */
export const SHORTCUTS = [
  ["f", "fit", "fit the graph to the view"],
  ["e", "expand", "expand everything below the selection (everything when nothing is selected)"],
  ["c", "collapse", "collapse everything"],
  ["n", "next", "next search match"],
  ["N", "prev", "previous search match"],
  ["/", "search", "focus the search box"],
  ["Escape", "clear", "clear the selection"],
  ["?", "help", "show / hide this help"],
];
const ACTIONS = new Map(SHORTCUTS.map(([k, a]) => [k, a]));

/** The action a keydown asks for, or null when it is not ours to take. */
export function keyAction(e) {
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return null;
  const t = e.target;
  if (t && t.closest && t.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']")) return null;
  return ACTIONS.get(e.key) || null;
}

/**
 * Keys to open for "expand below `key`": `key` itself when it can open, and every
 * collapsible element inside it. A leaf eqn or a port expands its container; null
 * expands everything (from the root).
 */
export function expandBelow(ix, key) {
  let top = key || ix.root;
  while (top && !isCollapsible(ix, top) && !ids.isGroup(top)) top = ix.parent.get(top);
  const out = new Set();
  const walk = (k) => {
    if (isCollapsible(ix, k)) out.add(k);
    for (const c of ix.items.get(k) || []) walk(c);
  };
  if (top) walk(top);
  return out;
}

/** The shortcuts help (.jm-help), a small table; hidden until `?`. */
export function helpPanel(ref) {
  return h("div", { class: "jm-help", role: "dialog", "aria-label": "keyboard shortcuts", hidden: true }, [
    h("div", { class: "jm-help-title" }, "Keyboard shortcuts", ref),
    h("table", null, SHORTCUTS.map(([k, , d]) =>
      h("tr", null, [h("td", null, h("kbd", null, k === "Escape" ? "Esc" : k, ref), ref), h("td", null, d, ref)], ref)), ref),
  ], ref);
}

/** Listen for shortcuts on `root`; `run(action, event)`. Returns the unbind function. */
export function bindKeys(root, run) {
  const onKey = (e) => {
    const a = keyAction(e);
    if (!a) return;
    e.preventDefault();
    e.stopPropagation(); // keep Jupyter's command-mode keys (c, f, …) out of it
    run(a, e);
  };
  root.addEventListener("keydown", onKey);
  return () => root.removeEventListener("keydown", onKey);
}
