/**
 * The jaxpr text pane (.jm-text): one .jm-line[data-line=i] per line of the
 * function's `text`. Clicking a line reports its index; `highlight(i)` marks a line
 * (.jm-line-selected) and scrolls the pane — not the page — to show it.
 */
import { h, clear } from "../../js/src/dom.js";

export function createTextPane(pane, text, onLine) {
  clear(pane);
  const lines = String(text || "").split("\n");
  const els = lines.map((ln, i) => h("div", { class: "jm-line", "data-line": i }, ln || " ", pane));
  const body = h("div", { class: "jm-text-body" }, els, pane);
  pane.appendChild(body);
  const onClick = (e) => {
    const el = e.target.closest && e.target.closest(".jm-line");
    if (el && pane.contains(el)) onLine(Number(el.getAttribute("data-line")));
  };
  pane.addEventListener("click", onClick);
  let current = null;
  return {
    highlight(i) {
      if (current) current.classList.remove("jm-line-selected");
      current = Number.isInteger(i) ? els[i] || null : null;
      if (!current) return;
      current.classList.add("jm-line-selected");
      const top = current.offsetTop, bottom = top + current.offsetHeight;
      if (top < pane.scrollTop || bottom > pane.scrollTop + pane.clientHeight) {
        pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
      }
    },
    dispose() {
      pane.removeEventListener("click", onClick);
    },
  };
}
