/**
 * The code strip (`.jm-codestrip`): the source lines a function's eqns come from, in
 * file order, with the lines of the step just played highlighted. It sits between the
 * toolbar and the graph and shows while a playback is under way or in presentation
 * mode (CSS: `.jm-root.jm-pb-active`, `.jm-root.jm-present`), so an audience sees
 * which line of Python made the eqn that just appeared.
 *
 * Rows: `.jm-cs-row[data-line-key]` (`file:line`, story.js codeLines) holding the line
 * number and the code as text; `.jm-cs-current` on the highlighted ones.
 */
import { h, clear } from "../ui/dom.js";
import { codeLines } from "./story.js";
import { shortWhere } from "../ui/source-text.js";

/** Returns {el, setFunction(ix), mark(keys: Set|null)}. */
export function codeStrip(ref) {
  const list = h("div", { class: "jm-cs-list", role: "list" }, null, ref);
  const el = h("div", { class: "jm-codestrip", "aria-label": "source lines" }, list, ref);
  let rows = new Map(), marked = [];

  return {
    el,
    /** Rows for the function of index `ix`. */
    setFunction(ix) {
      clear(list);
      rows = new Map();
      marked = [];
      const lines = codeLines(ix);
      if (!lines.length) {
        list.appendChild(h("div", { class: "jm-cs-none" }, "No source lines were recorded for these eqns.", ref));
        return;
      }
      for (const l of lines) {
        const where = shortWhere(l.file, l.line); // `cell [3], line 5` or `model.py:5`
        const row = h("div", { class: "jm-cs-row", role: "listitem", "data-line-key": l.key }, [
          h("span", { class: "jm-cs-no" }, where, ref),
          h("span", { class: "jm-cs-code" }, l.code || "(source not readable)", ref),
        ], ref);
        rows.set(l.key, row);
        list.appendChild(row);
      }
    },
    /** Highlight the rows of `keys` (null or empty: none) and scroll the first into view. */
    mark(keys) {
      for (const r of marked) r.classList.remove("jm-cs-current");
      marked = [];
      for (const k of keys || []) {
        const r = rows.get(k);
        if (!r) continue;
        r.classList.add("jm-cs-current");
        marked.push(r);
      }
      const first = marked[0];
      // Scroll the strip itself, never the page (scrollIntoView would move the notebook).
      if (first && (first.offsetTop < el.scrollTop || first.offsetTop + first.offsetHeight > el.scrollTop + el.clientHeight)) {
        el.scrollTop = Math.max(0, first.offsetTop - el.clientHeight / 3);
      }
    },
  };
}
