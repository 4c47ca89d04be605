/**
 * Header shared by every document kind: title, notes (muted list) and the error
 * the cell raised (red banner). Document strings are text, never markup.
 */
import { h } from "./dom.js";
import { shortWhere } from "./source-text.js";

export function docHeader(doc, ref) {
  const parts = [h("div", { class: "jm-title" }, String(doc.title || "jaxmagic"), ref)];
  const err = doc.error;
  if (err && typeof err === "object") {
    const where = err.file || err.line != null ? shortWhere(err.file, err.line) : ""; // `cell [3], line 5`, `train.py:12`
    parts.push(h("div", { class: "jm-error", role: "alert" }, [
      h("div", { class: "jm-error-msg" }, `Cell raised ${err.type || "an exception"}: ${err.message ?? ""}`, ref),
      where ? h("div", { class: "jm-error-where" }, where, ref) : null,
      err.code ? h("pre", { class: "jm-error-code" }, String(err.code), ref) : null,
      err.explanation ? h("div", { class: "jm-error-explain" }, String(err.explanation), ref) : null,
    ], ref));
  }
  const notes = Array.isArray(doc.notes) ? doc.notes : [];
  if (notes.length) {
    parts.push(h("ul", { class: "jm-notes" }, notes.map((n) => h("li", null, String(n), ref)), ref));
  }
  return h("header", { class: "jm-header" }, parts, ref);
}
