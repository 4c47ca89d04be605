/**
 * The jaxpr text pane (.jm-text): one .jm-line[data-line=i] per line of the
 * function's `text`. Clicking a line reports its index; `highlight(i)` marks the
 * eqn starting at line i (.jm-line-selected: its first line, plus the continuation
 * lines of a multi-line eqn such as `dot_general[` … `] a b`) and scrolls the pane —
 * not the page — to show it.
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
  let current = [];
  return {
    highlight(i) {
      for (const el of current) el.classList.remove("jm-line-selected");
      current = Number.isInteger(i) && els[i] ? eqnSpan(lines, i).map((j) => els[j]) : [];
      if (!current.length) return;
      for (const el of current) el.classList.add("jm-line-selected");
      const first = current[0], last = current[current.length - 1];
      const top = first.offsetTop, bottom = last.offsetTop + last.offsetHeight;
      if (top < pane.scrollTop || bottom > pane.scrollTop + pane.clientHeight) {
        pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
      }
    },
    dispose() {
      pane.removeEventListener("click", onClick);
    },
  };
}

const indent = (s) => s.length - s.trimStart().length;

/**
 * Lines of the eqn that starts at line i: the lines after it that are indented
 * deeper (its params, including any sub-jaxprs printed inside them) and the closing
 * `] operands` line at its own indentation; capped at 24 lines so a big loop body
 * does not light up the whole pane.
 */
export function eqnSpan(lines, i) {
  const base = indent(lines[i]);
  const out = [i];
  if (!/[[{(]\s*$/.test(lines[i])) return out; // one-line eqn
  for (let j = i + 1; j < lines.length && out.length < 24; j++) {
    const d = indent(lines[j]);
    if (d > base) out.push(j);
    else {
      if (d === base && /^\s*[\])}]/.test(lines[j])) out.push(j);
      break;
    }
  }
  return out;
}
