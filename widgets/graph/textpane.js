/**
 * A read-only text pane (.jm-text): one .jm-line[data-line=i] per line, virtualised.
 *
 * A 50k-eqn jaxpr prints ~100k lines and its StableHLO with debug info several times
 * that; a DOM node per line would take seconds to build. So lines have one fixed
 * height (LINE_H, matched by graph.css), a body sized to all lines gives the scroll
 * height and width, and only the lines in (and a margin around) the viewport exist
 * in the DOM. Short texts (≤ ALL_LINES) simply render every line — the same code
 * with the whole range — which keeps the browser's own find working for them.
 *
 * Line text is untrusted: it goes in with textContent. Long lines do not wrap (the
 * pane scrolls sideways); lines past MAX_CHARS are cut with a count of what is left.
 */
import { h, clear } from "../ui/dom.js";

export const LINE_H = 18; // px, = .jm-line height in graph.css
export const ALL_LINES = 1500;
const OVERSCAN = 40;
const MAX_CHARS = 4000;

/** Lines [a, b) to render for a pane of `n` lines scrolled to `top` with `height` visible. */
export function visibleRange(n, top, height) {
  if (n <= ALL_LINES) return [0, n];
  const hgt = height > 0 ? height : 800; // not laid out (hidden, jsdom): a screenful
  const a = Math.max(0, Math.floor(top / LINE_H) - OVERSCAN);
  return [a, Math.min(n, Math.ceil((top + hgt) / LINE_H) + OVERSCAN)];
}

/**
 * Random access to the lines of a text without splitting it: one indexOf pass
 * records where each line starts (4 bytes a line instead of a string object a
 * line; ~10 ms for 300k lines) and `at(i)` slices a line when it is drawn.
 * Also knows the widest line, for the pane's scroll width.
 */
export function lineIndex(text) {
  const t = String(text ?? "");
  let starts = new Int32Array(1024);
  let n = 0, p = 0, widest = 0;
  for (;;) {
    if (n === starts.length) {
      const bigger = new Int32Array(n * 2);
      bigger.set(starts);
      starts = bigger;
    }
    starts[n++] = p;
    const q = t.indexOf("\n", p);
    const end = q < 0 ? t.length : q;
    if (end - p > widest) widest = end - p;
    if (q < 0) break;
    p = q + 1;
  }
  return {
    length: n,
    widest,
    at: (i) => (i >= 0 && i < n ? t.slice(starts[i], i + 1 < n ? starts[i + 1] - 1 : t.length) : undefined),
  };
}

const shown = (s) => (s.length > MAX_CHARS ? `${s.slice(0, MAX_CHARS)} … (${s.length - MAX_CHARS} more characters)` : s || " ");

/**
 * Fill `pane` (the scroll container) with `lines` (a lineIndex); `onLine(i)` on a
 * click. Returns {mark(indices, scroll), reveal(), dispose(), lines}.
 */
export function createTextPane(pane, lines, onLine) {
  clear(pane);
  const n = lines.length;
  const widest = lines.widest;
  const body = h("div", { class: "jm-text-body" }, null, pane);
  body.style.height = `${n * LINE_H}px`;
  // Monospace: `ch` is one character, so the width is exact without measuring.
  body.style.width = `calc(${Math.min(widest, MAX_CHARS + 32) + 1}ch + 24px)`;
  const win = h("div", { class: "jm-text-win" }, null, pane);
  body.appendChild(win);
  pane.appendChild(body);

  let marked = new Set();
  let range = [0, 0];
  let pending = null; // line to scroll to once the pane is visible

  const render = (force) => {
    const r = visibleRange(n, pane.scrollTop, pane.clientHeight);
    if (!force && r[0] === range[0] && r[1] === range[1]) return;
    range = r;
    clear(win);
    win.style.top = `${r[0] * LINE_H}px`;
    const frag = pane.ownerDocument.createDocumentFragment();
    for (let i = r[0]; i < r[1]; i++) {
      frag.appendChild(h("div", { class: marked.has(i) ? "jm-line jm-line-selected" : "jm-line", "data-line": i }, shown(lines.at(i)), pane));
    }
    win.appendChild(frag);
  };

  /** Scroll so line i is in view (a third from the top) unless it already is. */
  const scrollTo = (i) => {
    const hgt = pane.clientHeight;
    if (!hgt) {
      pending = i; // hidden: scrolling now would do nothing
      return;
    }
    pending = null;
    const y = i * LINE_H;
    if (y < pane.scrollTop || y + LINE_H > pane.scrollTop + hgt) pane.scrollTop = Math.max(0, y - hgt / 3);
    render(false);
  };

  const onScroll = () => render(false);
  const onClick = (e) => {
    const el = e.target.closest && e.target.closest(".jm-line");
    if (el && pane.contains(el)) onLine(Number(el.getAttribute("data-line")));
  };
  pane.addEventListener("scroll", onScroll);
  pane.addEventListener("click", onClick);
  render(true);

  return {
    lines,
    /** Mark these line indices (.jm-line-selected) and, if `scroll`, bring the first into view. */
    mark(indices, scroll = true) {
      marked = new Set((indices || []).filter((i) => Number.isInteger(i) && i >= 0 && i < n));
      // Update classes in place: the window's lines stay the same elements.
      for (const el of win.children) el.classList.toggle("jm-line-selected", marked.has(Number(el.getAttribute("data-line"))));
      if (!scroll || !marked.size) return;
      let first = n;
      for (const i of marked) if (i < first) first = i;
      scrollTo(first);
    },
    /** The pane became visible: apply a scroll that had to wait, re-render for the new size. */
    reveal() {
      if (pending != null) scrollTo(pending);
      else render(false);
    },
    dispose() {
      pane.removeEventListener("scroll", onScroll);
      pane.removeEventListener("click", onClick);
    },
  };
}

const indent = (s) => s.length - s.trimStart().length;

/**
 * Lines of the eqn that starts at line i (`lines`: an array or a lineIndex): the
 * lines after it that are indented deeper (its params, including any sub-jaxprs printed inside them) and the closing
 * `] operands` line at its own indentation; capped at 24 lines so a big loop body
 * does not light up the whole pane.
 */
export function eqnSpan(lines, i) {
  const base = indent(lines.at(i));
  const out = [i];
  if (!/[[{(]\s*$/.test(lines.at(i))) return out; // one-line eqn
  for (let j = i + 1; j < lines.length && out.length < 24; j++) {
    const d = indent(lines.at(j));
    if (d > base) out.push(j);
    else {
      if (d === base && /^\s*[\])}]/.test(lines.at(j))) out.push(j);
      break;
    }
  }
  return out;
}
