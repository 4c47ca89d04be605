/**
 * Toolbar controls of the graph view that are more than a button: the edge-label
 * mode switch (.jm-mode[data-mode], segmented, .jm-active) and the cost overlay
 * select (.jm-overlay). They only report picks; the view decides what follows.
 */
import { h } from "../ui/dom.js";
import { MODES, modeState } from "./modes.js";
import { METRICS } from "./overlay.js";

const MODE_TIPS = {
  trace: "Edge labels: avals, as traced",
  forward: "Edge labels: summaries of the values of a real call",
  vmap: "Edge labels: avals with the vmap batch dimension marked ‹ ›",
};

/** Segmented "trace | forward | vmap". Returns {el, update(fn, mode)}. */
export function modeControl(ref, onPick) {
  const buttons = MODES.map((m) => {
    const b = h("button", { type: "button", class: "jm-mode", "data-mode": m, "aria-pressed": "false" }, m, ref);
    b.addEventListener("click", () => !b.disabled && onPick(m));
    return b;
  });
  const note = h("span", { class: "jm-mode-note jm-muted" }, "", ref);
  const el = h("span", { class: "jm-modes", role: "group", "aria-label": "edge labels" }, [...buttons, note], ref);
  return {
    el,
    /** Enable per what `fn` recorded, mark `mode` active, show the document's note for it. */
    update(fn, mode) {
      for (const b of buttons) {
        const m = b.getAttribute("data-mode");
        const st = modeState(fn, m);
        b.disabled = !st.ok;
        b.title = st.ok ? MODE_TIPS[m] : st.why;
        b.classList.toggle("jm-active", m === mode);
        b.setAttribute("aria-pressed", m === mode ? "true" : "false");
      }
      const st = modeState(fn, mode);
      // The document's note on the mode (values_note, batch_note) as a marker with a
      // tooltip: the toolbar has no room for a sentence; the details panel shows it in full.
      note.textContent = "ⓘ";
      note.title = st.note;
      note.hidden = !st.note;
    },
  };
}

/** "Colour: none | FLOPs | bytes". Returns the wrapping element; the select is `.jm-overlay`. */
export function overlayControl(ref, onPick) {
  const sel = h("select", { class: "jm-overlay", "aria-label": "colour nodes by cost", title: "Colour eqns by estimated cost (log scale)" }, [
    h("option", { value: "none" }, "none", ref),
    ...Object.entries(METRICS).map(([k, m]) => h("option", { value: k }, m.label, ref)),
  ], ref);
  sel.addEventListener("change", () => onPick(sel.value));
  return h("label", { class: "jm-overlay-wrap" }, [h("span", { class: "jm-muted" }, "Colour", ref), sel], ref);
}
