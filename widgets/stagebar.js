/**
 * The bar under every view's header: the "what to look at" caption the model wrote from the
 * capture (`doc.caption`, docs/schema.md), the presentation-mode toggle and the playback
 * controls (playback.js). widgets/mount.js builds it around each draw, so every kind gets the
 * same controls in the same place without each view re-implementing them.
 */
import { h } from "../js/src/dom.js";
import { createPlayback } from "./playback.js";

/** The caption sentences of a document: strings only, at most 6 (a caption is not a report). */
export function captionOf(doc) {
  const c = doc && doc.caption;
  if (!Array.isArray(c)) return [];
  return c.filter((s) => typeof s === "string" && s.trim()).slice(0, 6);
}

/**
 * Build the bar for one draw of `doc` in `root`. `present` is the current presentation state;
 * `onPresent(next)` asks mount.js to redraw in the other state (layouts measure text, so a
 * mode change is a fresh draw, not a restyle).
 * Returns `{el, playback, dispose}`; `playback` is what views receive as `options.playback`.
 */
export function stageBar(root, doc, { present, onPresent }) {
  const sentences = captionOf(doc);
  const caption = sentences.length
    ? h("div", { class: "jm-caption", role: "note", "aria-label": "what to look at" }, [
      h("span", { class: "jm-caption-tag" }, "What to look at", root),
      h("ul", { class: "jm-caption-list" }, sentences.map((s) => h("li", null, s, root)), root),
    ], root)
    : null;
  const toggle = h("button", {
    type: "button", class: "jm-present-toggle", "aria-pressed": present ? "true" : "false",
    title: present ? "leave presentation mode" : "presentation mode: large text, thick lines, high contrast",
  }, present ? "Exit presentation" : "Present", root);
  toggle.addEventListener("click", () => onPresent(!present));
  const slot = h("div", { class: "jm-pb-slot" }, null, root);
  const tools = h("div", { class: "jm-stage-tools" }, [slot, toggle], root);
  const el = h("div", { class: "jm-stagebar" }, [caption, tools], root);
  const playback = createPlayback(root, slot);
  return { el, playback, dispose: () => playback.dispose() };
}

/**
 * Put the bar right under the view's header (the title, notes and error stay first), or at the
 * top of the view when it has no header (compact views).
 */
export function placeStageBar(root, bar) {
  const header = root.querySelector(".jm-header");
  if (header && header.parentNode) header.after(bar);
  else {
    const style = root.querySelector(":scope > style");
    if (style) style.after(bar);
    else root.prepend(bar);
  }
}
