/**
 * Keeps a view's keystrokes away from the page around it. Notebook hosts bind plain keys to
 * notebook commands with listeners on `document` / `window`: VS Code's Jupyter extension deletes
 * the cell on Delete typed into an output's <input>, JupyterLab, Notebook and Colab insert,
 * cut or merge cells on `a`, `b`, `x`, `dd`, `m`, `z`… in command mode. A view must keep two
 * kinds of key events to itself:
 *
 * - every key typed into one of its controls (search boxes, the depth field, the cost and
 *   speed <select>s, the playback slider, checkboxes, anything contenteditable): the control
 *   gets its text as usual (only propagation stops, never the default action);
 * - every key a view handles itself (space, arrows, Home/End, Escape, f, +/-…). View handlers
 *   mark such a key by calling `preventDefault()` on its keydown (they already do, so two
 *   handlers never take the same key); the guard stops it, and the keypress and keyup of that
 *   same key, which hosts would otherwise see without their keydown.
 *
 * - Enter and space on the view's buttons, links and tree items: the browser (or the view)
 *   activates them; to a notebook in command mode they would mean "edit this cell".
 *
 * Keys a view does not handle, typed while the view (not a control) has focus, still reach the
 * notebook: its shortcuts keep working when the widget merely holds focus.
 *
 * `input` / `beforeinput` events are left alone: notebook hosts bind their commands to key events.
 */

/** What counts as a control that takes typed keys. */
export const EDITABLE = "input, textarea, select, [contenteditable]:not([contenteditable='false'])";

/** What Enter and space activate. */
const ACTIVATABLE = "button, a[href], summary, [role='button'], [role='treeitem'], [role='tab'], [role='option']";

/** Key events a host can bind commands to. */
const KEY_EVENTS = ["keydown", "keypress", "keyup"];

/** Whether `target` is (inside) a control that takes typed keys. */
export function isEditable(target) {
  return !!(target && typeof target.closest === "function" && target.closest(EDITABLE));
}

/** Whether `e` activates the button, link or item it was typed on. */
function activates(e) {
  return (e.key === "Enter" || e.key === " ") && !!(e.target && typeof e.target.closest === "function" && e.target.closest(ACTIVATABLE));
}

/** Identity of a physical key across its keydown, keypress and keyup. */
const keyId = (e) => e.code || e.key;

/**
 * Guard the view in `root`; the listeners go on `el`, the element `root` was mounted in.
 * Why the parent: listeners on one element run in the order they were added, and views add
 * theirs to `root` on every draw, after any guard there. On `el` the bubble-phase listener runs
 * once every view handler has run, so `defaultPrevented` is final. A capture-phase listener on
 * `el` remembers each keydown, so the keyup of a handled key is stopped too, even when a handler
 * inside the view already stopped the keydown itself. Returns the function that removes it all.
 */
export function guardHostKeys(el, root) {
  const downs = new Map(); // keyId -> its last keydown event (its flags stay readable after dispatch)
  const ours = (e) => root.contains(e.target);
  const remember = (e) => {
    if (ours(e)) downs.set(keyId(e), e);
  };
  const stop = (e) => {
    if (!ours(e)) return;
    const down = e.type === "keydown" ? e : downs.get(keyId(e));
    if (e.type === "keyup") downs.delete(keyId(e));
    if (isEditable(e.target) || activates(e) || e.defaultPrevented || (down && down.defaultPrevented)) e.stopPropagation();
  };
  el.addEventListener("keydown", remember, true);
  for (const type of KEY_EVENTS) el.addEventListener(type, stop);
  return () => {
    el.removeEventListener("keydown", remember, true);
    for (const type of KEY_EVENTS) el.removeEventListener(type, stop);
    downs.clear();
  };
}
