/**
 * The keys view's toolbar: the "only paths to reused keys" filter (and how many keys it hides),
 * the search box and its match count, Fit, and the SVG / JSON export. The view (view.js) owns
 * what the buttons do; this module only builds them.
 */
import { h } from "../ui/dom.js";

/**
 * @param root  widget root (owner document)
 * @param o     `{reusable, onFilter, onFit, onSvg, onJson}`: whether any key is reused (else the
 *              filter is disabled), and what each button does
 * @returns {{el: HTMLElement, filterBtn: HTMLButtonElement, hiddenText: HTMLElement, input: HTMLInputElement, countText: HTMLElement}}
 */
export function keysToolbar(root, { reusable, onFilter, onFit, onSvg, onJson }) {
  const btn = (label, title, fn, cls = "") => {
    const b = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: "jm-btn " + cls, title }, label, root));
    b.addEventListener("click", fn);
    return b;
  };
  const filterBtn = btn("Only paths to reused keys", reusable ? "Show only reused keys, their ancestors and the keys made from them"
    : "No key is reused in this cell", onFilter);
  filterBtn.setAttribute("aria-pressed", "false");
  if (!reusable) filterBtn.disabled = true;
  const hiddenText = h("span", { class: "jm-muted jm-k-hidden", "aria-live": "polite" }, "", root);
  const input = /** @type {HTMLInputElement} */ (
    h("input", { type: "search", class: "jm-search", placeholder: "Search keys, uses, file:line", "aria-label": "search keys" }, null, root));
  const countText = h("span", { class: "jm-match-count", "aria-live": "polite" }, "", root);
  const el = h("div", { class: "jm-toolbar" }, [
    filterBtn, hiddenText,
    h("span", { class: "jm-search-wrap jm-clutter" }, [input, countText], root),
    h("span", { class: "jm-spacer" }, null, root),
    btn("Fit", "Show the whole tree, or the part that matters at a legible size", onFit),
    h("span", { class: "jm-muted jm-export-label jm-clutter" }, "Export", root),
    btn("SVG", "Download the tree as SVG", onSvg, "jm-btn-quiet jm-clutter"),
    btn("JSON", "Download the document as JSON", onJson, "jm-btn-quiet jm-clutter"),
  ], root);
  return { el, filterBtn, hiddenText, input, countText };
}
