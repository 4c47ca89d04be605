/**
 * The keys view's keyboard: moving through the tree (↑ ↓ Home End, → opens or goes to the first
 * child, ← closes or goes to the parent, Enter / space select and fold), Escape clears the
 * selection, and Enter / Escape in the search box. A key with a modifier is never taken, and a
 * key taken stops there (Jupyter's command mode never sees it).
 */
import { clearSelection, nextMatch, runSearch, selectItem, toggleItem } from "./control.js";

const focusItem = (v, it) => it && v.scene.show(it, { focus: true });

function toggleAndFocus(v, it) {
  toggleItem(v, it);
  const again = v.scene.itemOf(it.key);
  if (again) focusItem(v, again);
}

/** Enter or space on an item: select a node; fold a foldable item or page a "more"; select any other stand-in. */
function activate(v, it) {
  if (it.type === "node") selectItem(v, it);
  if (it.collapsible || it.type === "more") toggleAndFocus(v, it);
  else if (it.type !== "node") selectItem(v, it);
}

/** A key on a focused tree item (the scene's `onKey`). */
export function onItemKey(v, it, e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const items = v.st.tree.items;
  const handled = {
    Enter: () => activate(v, it),
    " ": () => activate(v, it),
    ArrowDown: () => focusItem(v, items[it.index + 1]),
    ArrowUp: () => focusItem(v, items[it.index - 1]),
    ArrowRight: () => (it.collapsible && !it.expanded ? toggleAndFocus(v, it) : focusItem(v, it.children[0])),
    ArrowLeft: () => (it.collapsible && it.expanded ? toggleAndFocus(v, it) : focusItem(v, it.parent)),
    Home: () => focusItem(v, items[0]),
    End: () => focusItem(v, items[items.length - 1]),
  }[e.key];
  if (!handled) return;
  e.preventDefault();
  e.stopPropagation(); // keep Jupyter's command mode out of it
  handled();
}

/** The search box: typing searches, Enter / shift-Enter go to the next / previous match, Escape empties it. */
export function listenSearch(v) {
  const input = v.tb.input;
  input.addEventListener("input", () => runSearch(v));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      nextMatch(v, e.shiftKey ? -1 : 1);
    } else if (e.key === "Escape" && input.value) {
      e.preventDefault();
      e.stopPropagation();
      input.value = "";
      runSearch(v);
    }
  });
}

/** Escape on the view clears the selection. Returns the listener's removal. */
export function listenEscape(v) {
  const onKey = (e) => {
    if (e.key !== "Escape" || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    e.stopPropagation();
    clearSelection(v);
  };
  v.root.setAttribute("tabindex", "0");
  v.root.addEventListener("keydown", onKey);
  return () => v.root.removeEventListener("keydown", onKey);
}
