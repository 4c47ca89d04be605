/**
 * Automation hook of the graph's drawing surface (stage.js; bench/browser.py, browser
 * tests), as `.jm-canvas`'s `jmProbe`: `visible()` lists the drawn leaves in view, in
 * client coordinates, with whether each can open: the same in both renderers, so a test
 * can click a canvas box.
 */
import * as ids from "./ids.js";

/** The probe of `surface` (read at call time: it follows each new drawing). */
export function createProbe(surface) {
  const { svg, pz } = surface;
  const client = (l) => {
    const b = svg.getBoundingClientRect(), t = pz.transform;
    return { x: b.left + t.x + l.x * t.k, y: b.top + t.y + l.y * t.k, w: l.w * t.k, h: l.h * t.k };
  };
  return {
    /** Drawn leaves in view: [{key, canOpen, x, y, w, h}] (client px). */
    visible() {
      const { geo, ix } = surface;
      if (!geo) return [];
      const b = svg.getBoundingClientRect();
      const out = [];
      for (const l of geo.leaves) {
        const r = client(l);
        if (r.x + r.w < b.left || r.y + r.h < b.top || r.x > b.right || r.y > b.bottom) continue;
        const canOpen = !l.open && !(l.face && l.face.title && l.face.title.startsWith("▾")) &&
          (ids.isMadeBox(l.key) || (ids.isNode(l.key) && ix.items.has(l.key)));
        out.push({ key: l.key, canOpen, ...r });
      }
      return out;
    },
    /** Open containers in view (not the root), innermost last: [{key, x, y, w, h}]. */
    open() {
      const { geo } = surface;
      if (!geo) return [];
      const b = svg.getBoundingClientRect();
      return geo.conts.slice(1).map((c) => ({ key: c.key, ...client(c) }))
        .filter((r) => r.x < b.right && r.y < b.bottom && r.x + r.w > b.left && r.y + r.h > b.top);
    },
    /** Client box of a drawn leaf or open container, or null. */
    box: (key) => (surface.geo && surface.geo.boxes.has(key) ? client(surface.geo.boxes.get(key)) : null),
    /** Keys of every drawn leaf, in view or not. */
    keys: () => (surface.geo ? surface.geo.leaves.map((l) => l.key) : []),
    /** Pan (zoom kept) so that drawn element `key` is in the middle, as a reader drags it there. */
    centre(key) {
      const b = surface.geo && surface.geo.boxes.get(key);
      if (b) pz.centerOn(b.x + Math.min(b.w, 360) / 2, b.y + Math.min(b.h, 42) / 2);
    },
  };
}
