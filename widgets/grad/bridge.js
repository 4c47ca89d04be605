/**
 * The residual bridge: one chip per value the forward pass saves for the backward
 * pass (aval, bytes, what made it and where, how many backward eqns read it), largest
 * first, under a line with their count and total. It only reports picks; the entry
 * view lights the producer and consumers up (model.js residualTargets).
 *
 * Chips are buttons (`.jm-grad-chip[data-residual-id]`, `.jm-active` when selected):
 * Tab reaches them, Enter / Space picks, ←/→ move to the neighbour and pick it.
 */
import { h } from "../ui/dom.js";
import { chipParts, residualOrder, bytesText } from "./model.js";

/** Chips for `residuals` (producers looked up in `fn`); `onPick(id)`. Returns {el, setActive(id|null)}. */
export function residualChips(ref, residuals, fn, onPick, caption = "") {
  const list = residualOrder(residuals);
  const total = list.reduce((s, r) => s + (Number(r.bytes) || 0), 0);
  const head = h("div", { class: "jm-grad-bridge-head" }, [
    h("span", { class: "jm-grad-bridge-title" }, caption || "Residuals", ref),
    h("span", { class: "jm-muted" }, ` ${list.length} saved · ${bytesText(total)} held between the passes` + (list.length > 1 ? " · largest first" : ""), ref),
  ], ref);
  const box = h("div", { class: "jm-grad-chips", role: "listbox", "aria-label": caption || "residuals" }, null, ref);
  const chips = list.map((r) => {
    const p = chipParts(r, fn);
    const code = r.source && r.source.code ? "\n" + String(r.source.code) : "";
    const b = h("button", {
      type: "button", class: "jm-grad-chip", role: "option", "aria-selected": "false", "data-residual-id": String(r.id),
      title: `${p.text}${code}\nclick: light up where it is made and read`,
    }, [
      h("span", { class: "jm-grad-chip-aval" }, p.aval, ref),
      h("span", { class: "jm-grad-chip-bytes" }, p.bytes, ref),
      h("span", { class: "jm-grad-chip-prod" }, p.producer, ref),
      h("span", { class: "jm-grad-chip-uses" }, p.uses, ref),
    ], ref);
    box.appendChild(b);
    return b;
  });
  if (!list.length) box.appendChild(h("span", { class: "jm-muted" }, "Nothing is saved: the backward pass needs no forward values.", ref));
  box.addEventListener("click", (e) => {
    const b = e.target.closest(".jm-grad-chip");
    if (b) onPick(b.getAttribute("data-residual-id"));
  });
  box.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    const i = chips.indexOf(e.target.closest(".jm-grad-chip"));
    const next = chips[i + (e.key === "ArrowRight" ? 1 : -1)];
    if (i < 0 || !next) return;
    e.preventDefault();
    next.focus();
    onPick(next.getAttribute("data-residual-id"));
  });
  const el = h("div", { class: "jm-grad-bridge" }, [head, box], ref);
  return {
    el,
    setActive(id) {
      for (const b of chips) {
        const on = b.getAttribute("data-residual-id") === id;
        b.classList.toggle("jm-active", on);
        b.setAttribute("aria-selected", on ? "true" : "false");
      }
    },
  };
}
