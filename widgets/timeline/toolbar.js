/**
 * The timeline view's toolbar: Fit, zoom out / in, "misses only", the brushed range chip
 * (Zoom, ✕), the PNG / JSON export and the shortcuts help toggle. The view (view.js) owns what
 * the buttons do; this module only builds them.
 */
import { h } from "../ui/dom.js";

/**
 * @param root  widget root (owner document)
 * @param on    `{fit, zoom(f), missesOnly(on), zoomToRange, clearRange, png, json, help}`: what each control does
 * @returns {{el: HTMLElement, rangeChip: HTMLElement, rangeText: HTMLElement}}
 */
export function timelineToolbar(root, on) {
  const btn = (label, title, fn, cls = "") => {
    const b = h("button", { type: "button", class: "jm-btn " + cls, title }, label, root);
    b.addEventListener("click", fn);
    return b;
  };
  const missBox = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", class: "jm-tl-misses-only" }, null, root));
  missBox.addEventListener("change", () => on.missesOnly(missBox.checked));
  const rangeText = h("span", null, "", root);
  const rangeChip = h("span", { class: "jm-tl-range", hidden: true }, [
    rangeText,
    btn("Zoom", "Zoom to the selected time range", on.zoomToRange, "jm-btn-quiet"),
    btn("✕", "Clear the time range (Esc)", on.clearRange, "jm-btn-quiet"),
  ], root);
  const el = h("div", { class: "jm-toolbar" }, [
    btn("Fit", "Show the whole capture (f)", on.fit),
    btn("−", "Zoom out (-)", () => on.zoom(0.5)),
    btn("+", "Zoom in (+)", () => on.zoom(2)),
    h("label", { class: "jm-tl-filter", title: "Draw only cache misses, and only functions that missed or compiled" }, [missBox, " misses only"], root),
    rangeChip,
    h("span", { class: "jm-spacer" }, null, root),
    h("span", { class: "jm-muted jm-export-label jm-clutter" }, "Export", root),
    btn("PNG", "Download the timeline as PNG", on.png, "jm-btn-quiet jm-clutter"),
    btn("JSON", "Download the document as JSON", on.json, "jm-btn-quiet jm-clutter"),
    btn("?", "Keyboard shortcuts (?)", on.help, "jm-btn-quiet jm-clutter"),
  ], root);
  return { el, rangeChip, rangeText };
}
