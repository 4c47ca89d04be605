/**
 * Pointer events on the graph's drawing surface (stage.js): what a click or double
 * click hit (from the SVG element in SVG mode, from the geometry on the canvas, so both
 * mean the same) and the canvas tooltip that follows the pointer. The view hears
 * `onSelect(key|null)` and `onToggle(key)`.
 */
import { srcText } from "./model.js";
import * as ids from "./ids.js";

/** Element key and part ("toggle" / "grouphead" / "body") under an SVG event target, or null. */
function svgHit(t) {
  const keyOf = (el) => {
    if (el.hasAttribute("data-node-id")) return ids.node(el.getAttribute("data-node-id"));
    return el.getAttribute("data-scope-id") || el.getAttribute("data-box-id");
  };
  const mark = t.closest(".jm-toggle, .jm-scope-head, .jm-cbox-head, .jm-scope.jm-collapsed, .jm-cbox.jm-collapsed");
  if (mark) {
    const o = mark.closest("[data-node-id], [data-scope-id], [data-box-id]");
    return o ? { key: keyOf(o), part: "toggle" } : null;
  }
  const gh = t.closest(".jm-group-head");
  if (gh) return { key: ids.group(gh.parentNode.getAttribute("data-group-id")), part: "grouphead" };
  const node = t.closest(".jm-eqn");
  if (node) return { key: keyOf(node), part: "body" };
  const port = t.closest(".jm-port");
  if (port) return { key: port.getAttribute("data-port-id"), part: "body" };
  return null;
}

/** Tooltip text of a drawn element (canvas mode): prim and source of an eqn, a port's text, a box's tip. */
function tipText(surface, key) {
  const l = surface.geo.boxes.get(key);
  const f = l && l.face;
  if (!f) return "";
  if (ids.isNode(key)) {
    const n = surface.ix.nodes.get(ids.body(key));
    return [n.prim, srcText(n.src), n.src && n.src.code, f.tip].filter(Boolean).join("\n");
  }
  if (ids.isAnyPort(key)) return f.text;
  return f.tip ? f.tip + "\n— click to expand" : f.title || "";
}

/** Canvas mode: the tooltip follows the element under the pointer (once per animation frame). */
function hoverTip(surface) {
  const { svg, tip } = surface;
  let hoverPending = false, lastEv = null;
  return (e) => {
    if (surface.mode !== "canvas" || !surface.geo) return;
    lastEv = e;
    if (hoverPending) return;
    hoverPending = true;
    svg.ownerDocument.defaultView.requestAnimationFrame(() => {
      hoverPending = false;
      const hit = lastEv && surface.renderer.hit(lastEv.clientX, lastEv.clientY);
      const text = hit ? tipText(surface, hit.key) : "";
      if (!text) {
        if (tip.parentNode) tip.remove();
        return;
      }
      tip.textContent = text;
      if (!tip.parentNode) svg.insertBefore(tip, svg.firstChild);
    });
  };
}

/** Listen to clicks, double clicks and pointer moves on the surface's SVG; returns the unbinding. */
export function bindPointer(surface, { onSelect, onToggle }) {
  const { svg } = surface;
  const hitOf = (e) => (surface.mode === "canvas" ? surface.renderer.hit(e.clientX, e.clientY) : svgHit(e.target));
  const onClick = (e) => {
    if (!surface.geo) return;
    const hit = hitOf(e);
    if (!hit) return onSelect(null);
    if (hit.part === "toggle") return onToggle(hit.key);
    if (hit.part === "grouphead") {
      const owner = surface.ix.parent.get(hit.key);
      return owner ? onToggle(owner) : undefined;
    }
    onSelect(hit.key);
  };
  const onDbl = (e) => {
    if (!surface.geo) return;
    const hit = hitOf(e);
    if (hit && hit.part === "body" && ids.isNode(hit.key)) onToggle(hit.key);
  };
  const onMove = hoverTip(surface);
  svg.addEventListener("click", onClick);
  svg.addEventListener("dblclick", onDbl);
  svg.addEventListener("pointermove", onMove);
  return () => {
    svg.removeEventListener("click", onClick);
    svg.removeEventListener("dblclick", onDbl);
    svg.removeEventListener("pointermove", onMove);
  };
}
