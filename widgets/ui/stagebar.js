/**
 * The bar under every view's header: the "what to look at" caption the model wrote from the
 * capture (`doc.caption`, docs/schema.md), the presentation-mode toggle and the playback
 * controls (playback.js). widgets/mount.js builds it around each draw, so every kind gets the
 * same controls in the same place without each view re-implementing them.
 */
import { h } from "./dom.js";
import { createPlayback } from "./playback.js";

/** The caption sentences of a document: strings only, at most 6 (a caption is not a report). */
export function captionOf(doc) {
  const c = doc && doc.caption;
  if (!Array.isArray(c)) return [];
  return c.filter((s) => typeof s === "string" && s.trim()).slice(0, 6);
}

/**
 * The "what to look at" note. In presentation mode only the first sentence shows, with a
 * "+N more" toggle for the rest: at 20 px a caption of four sentences fills a third of a
 * projector's 600 px of output, pushing what it is about (the view's key element) off the
 * first screen; the speaker says the rest, or opens it.
 */
function captionBlock(root, sentences, present) {
  if (!sentences.length) return null;
  const items = sentences.map((s) => h("li", null, s, root));
  const list = h("ul", { class: "jm-caption-list" }, items, root);
  const rest = present ? items.slice(1) : [];
  let more = null;
  if (rest.length) {
    for (const li of rest) li.hidden = true;
    more = h("button", { type: "button", class: "jm-caption-more", "aria-expanded": "false",
      title: "show the whole caption" }, `+${rest.length} more`, root);
    more.addEventListener("click", () => {
      const open = more.getAttribute("aria-expanded") !== "true";
      for (const li of rest) li.hidden = !open;
      more.setAttribute("aria-expanded", String(open));
      more.textContent = open ? "less" : `+${rest.length} more`;
      more.title = open ? "show the first sentence only" : "show the whole caption";
    });
  }
  return h("div", { class: "jm-caption", role: "note", "aria-label": "what to look at" }, [
    h("span", { class: "jm-caption-tag" }, "What to look at", root), list, more,
  ], root);
}

/**
 * Build the bar for one draw of `doc` in `root`. `present` is the current presentation state;
 * `onPresent(next)` asks mount.js to redraw in the other state (layouts measure text, so a
 * mode change is a fresh draw, not a restyle).
 * Returns `{el, playback, dispose}`; `playback` is what views receive as `options.playback`.
 */
export function stageBar(root, doc, { present, onPresent }) {
  const caption = captionBlock(root, captionOf(doc), present);
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
