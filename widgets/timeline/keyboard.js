/**
 * Keyboard shortcuts of the timeline view, active while the widget has focus. As in
 * the graph view (graph/keyboard.js), keys typed into inputs or with a modifier are never
 * taken, so the notebook and the browser keep theirs; the table differs, hence its own.
 * Space and ← → belong to playback, as in every view (widgets/ui/playback.js), so panning is
 * a / d (as in Perfetto and chrome://tracing); a key playback already took is left alone.
 */
import { h } from "../ui/dom.js";

/** key -> action. */
const ACTIONS = {
  f: "fit", "+": "in", "=": "in", "-": "out", a: "left", d: "right", ArrowUp: "up", ArrowDown: "down",
  n: "next", p: "prev", Escape: "clear", "?": "help",
};
/** The help, in the order it is read: [keys, what they do]. */
const HELP = [
  ["space", "play / pause the calls in order"], ["← →", "step back / forward"], ["Home End", "start / end of the replay"],
  ["f", "fit"], ["+ −", "zoom"], ["a d", "pan"], ["↑ ↓", "more lanes"], ["n p", "next / previous miss"],
  ["Esc", "clear selection and range"], ["wheel", "zoom at the pointer"], ["drag", "pan"],
  ["shift-drag", "select a time range (the table follows)"], ["overview", "drag: choose the window; click: centre"],
];

/** The action a keydown asks for, or null when it is not ours to take. */
export function keyAction(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return null;
  if (e.target && e.target.closest && e.target.closest("input, textarea, select, [contenteditable]")) return null;
  return Object.prototype.hasOwnProperty.call(ACTIONS, e.key) ? ACTIONS[e.key] : null;
}

/** The shortcuts help (.jm-help), hidden until `?`. */
export const helpPanel = (ref) => h("div", { class: "jm-help", role: "dialog", "aria-label": "keyboard shortcuts", hidden: true },
  h("table", null, HELP.map(([k, d]) => h("tr", null, [h("td", null, h("kbd", null, k, ref), ref), h("td", null, d, ref)], ref)), ref), ref);

/** Listen for shortcuts on `root`; `run(action)`. Returns the unbind function. */
export function bindKeyboard(root, run) {
  const onKey = (e) => {
    const a = keyAction(e);
    if (!a) return;
    e.preventDefault();
    e.stopPropagation(); // keep Jupyter's command-mode keys (f, p, …) out of it
    run(a);
  };
  root.addEventListener("keydown", onKey);
  return () => root.removeEventListener("keydown", onKey);
}
