/**
 * The key tree scene's events (draw.js): clicks (on an item, its toggle, or in the overview the
 * item nearest the pointer), hover and focus for the card, keys on a focused item, and resizes
 * (a frame made blind, or one the reader has not moved since, is made again for the new size).
 */

/** The item of an element inside a drawn item's <g>, or null. */
function itemAt(sc, target) {
  const g = target && target.closest ? target.closest("[data-key]") : null;
  return g ? sc.byKey.get(g.getAttribute("data-key")) || null : null;
}

/** The item nearest the content point `p` when it is within four rows of it, else null. */
function nearestItem(sc, p) {
  let best = null, bd = Infinity;
  for (const c of sc.lay.items) {
    const dx = Math.max(c.x - p.x, 0, p.x - c.x - c.w), dy = Math.abs(c.y - p.y);
    const d2 = dx * dx + dy * dy;
    if (d2 < bd) [best, bd] = [c, d2];
  }
  return best && bd < (sc.g.ROW * 4) ** 2 ? best : null;
}

/**
 * Listen on the scene's svg. `on`: `{onActivate, onHover, onKey, onSized, schedule, centerOn}`.
 * @returns {{framed(t: object): void, dispose(): void}} `framed(t)` records the transform a
 *   framing set (a resize frames again while it is unchanged)
 */
export function listenScene(svg, sc, pz, { onActivate, onHover, onKey, onSized, schedule, centerOn }) {
  const itemOf = (target) => itemAt(sc, target);
  const onClick = (e) => {
    const it = itemOf(e.target);
    if (it) {
      onActivate(it, { toggle: it.type !== "node" || !!e.target.closest(".jm-k-tog") });
      return;
    }
    if (!sc.overview) return;
    // Overview: zoom to the item nearest the pointer.
    const r = svg.getBoundingClientRect(), t = pz.transform;
    const best = nearestItem(sc, { x: (e.clientX - r.left - t.x) / t.k, y: (e.clientY - r.top - t.y) / t.k });
    if (best) {
      centerOn(best, 1);
      onActivate(best, { toggle: false, zoomed: true });
    }
  };
  const leave = (e) => {
    if (!itemOf(e.relatedTarget)) onHover(null);
  };
  const enter = (e) => onHover(itemOf(e.target));
  const onKeyDown = (e) => {
    const it = itemOf(e.target);
    if (it) onKey(it, e);
  };
  const listeners = { click: onClick, mouseover: enter, mouseout: leave, focusin: enter, focusout: leave, keydown: onKeyDown };
  for (const [type, fn] of Object.entries(listeners)) svg.addEventListener(type, fn);
  let framedAt = null; // the transform the last framing set
  const onResize = () => {
    const t = pz.transform, f = framedAt;
    if (onSized && svg.clientWidth && f && t.x === f.x && t.y === f.y && t.k === f.k) onSized();
    else schedule();
  };
  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(onResize) : null;
  if (ro) ro.observe(svg);
  return {
    framed(t) {
      framedAt = t;
    },
    dispose() {
      if (ro) ro.disconnect();
      for (const [type, fn] of Object.entries(listeners)) svg.removeEventListener(type, fn);
    },
  };
}
