/**
 * What the key tree's scene (draw.js) puts in its layers for the items in view: each item in
 * detail (a focusable <g>: shape, label, badge, toggle), or the overview (one <path> of boxes
 * per state, the marks as outlines). Both read the scene's state object, so a step of playback
 * or a change of marks redraws through the same code as a pan.
 */
import { s, clear } from "../ui/dom.js";
import { STATES } from "./model.js";
import { shownLabel } from "./layout.js";

/**
 * @typedef {{state(item: any): (string | null), current: Set<string>, flash: Set<string>}} StepMarks
 *   a playback step as drawn: each item's state after it (null: not reached yet), the item keys
 *   the step touched and those that flash (story.js `stepMarks`)
 * @typedef {{selected: (string | null), hits: Set<string>, inside: Set<string>, key: (string | null)}} Marks
 * @typedef {{g: Element, sig: (string | null), item?: any, d?: any}} DrawnItem
 * @typedef {object} SceneState  the scene's mutable state, shared by draw.js and this module
 * @property {Document | Element} ref       owner for new elements
 * @property {Element} over                 the overview layer
 * @property {Element} layer                the detailed items' layer
 * @property {{items: any[], box: object, g: any}} lay  the laid-out forest (layout.js)
 * @property {any} g                        the sizes the layout was made with (layout.js METRICS)
 * @property {Map<string, any>} byKey       item key -> item
 * @property {Map<string, DrawnItem>} drawn item key -> its detailed element
 * @property {Marks} marks                  selection, search hits, the story's key element
 * @property {StepMarks | null} step        the playback step drawn; null: the ordinary drawing
 * @property {boolean} overview             whether the last frame was the overview
 * @property {(item: any) => {aria: string, badge: (string | null), flags: string[]}} describe
 */

/** The state an item is drawn in: the playback step's (null: not reached yet), else the document's. */
export const stateOf = (sc, it) => (sc.step ? sc.step.state(it) : it.state);

/** The class list of an item's <g>. */
function classOf(sc, it, flags) {
  const st = stateOf(sc, it), marks = sc.marks;
  const c = ["jm-k-item", `jm-k-t-${it.type}`, `jm-k-s-${st ?? "unused"}`, ...flags]; // a key not made yet shows no state
  if (sc.step) {
    if (st == null) c.push("jm-pb-future");
    if (sc.step.current.has(it.key)) c.push("jm-pb-current");
    if (sc.step.flash.has(it.key)) c.push("jm-pb-flash");
  }
  if (marks.selected === it.key) c.push("jm-k-sel");
  if (marks.hits.has(it.key)) c.push("jm-k-hit");
  if (marks.inside.has(it.key)) c.push("jm-k-hit-in");
  return c.join(" ");
}

/** The inner elements of an item's <g>: (back shape) shape, label, (badge), (toggle). */
function fillItem(sc, el, it, d) {
  const ref = sc.ref;
  clear(el);
  const { H, TOG_R, TOG_DX, LABEL_DY } = sc.g;
  const w = it.w;
  const pill = it.type === "node" && !d.flags.includes("jm-k-array");
  if (d.flags.includes("jm-k-stack")) {
    el.appendChild(s("rect", { class: "jm-k-back", x: 3, y: -H / 2 - 3, width: w, height: H, rx: pill ? H / 2 : 3 }, null, ref));
  }
  el.appendChild(s("rect", { class: "jm-k-shape", x: 0, y: -H / 2, width: w, height: H, rx: pill ? H / 2 : 3 }, null, ref));
  el.appendChild(s("text", { class: "jm-k-label", x: w / 2, y: LABEL_DY, "text-anchor": "middle" }, shownLabel(it), ref));
  if (d.badge) el.appendChild(s("text", { class: "jm-k-badge", x: 4, y: -H / 2 - 3 }, d.badge, ref));
  if (it.collapsible) {
    const cx = w + TOG_DX, r = TOG_R;
    const sign = it.expanded ? `M${cx - 3} 0h6` : `M${cx - 3} 0h6M${cx} -3v6`;
    el.appendChild(s("path", { class: "jm-k-tog", d: `M${cx - r} 0a${r} ${r} 0 1 0 ${2 * r} 0a${r} ${r} 0 1 0 ${-2 * r} 0${sign}` }, null, ref));
  }
}

/** Remove the detailed elements of items no longer drawn (the focused one stays: a pan keeps focus). */
function dropUnseen(sc, items) {
  const keep = new Set(items.map((it) => it.key));
  for (const [key, e] of sc.drawn) {
    const focused = e.g === sc.ref.ownerDocument.activeElement && sc.byKey.has(key);
    if (!keep.has(key) && !focused) {
      e.g.remove();
      sc.drawn.delete(key);
    }
  }
}

/** The kept element of an item, (re)described when the item object is new (a rebuilt tree). */
function elementFor(sc, it) {
  let e = sc.drawn.get(it.key);
  if (e && e.item === it) return e;
  const d = sc.describe(it);
  if (!e) e = { g: s("g", { tabindex: 0, role: "treeitem", "data-key": it.key }, null, sc.ref), sig: null };
  e.item = it;
  e.d = d;
  e.g.setAttribute("aria-label", d.aria);
  e.g.setAttribute("aria-level", String(it.depth + 1));
  if (it.collapsible) e.g.setAttribute("aria-expanded", String(it.expanded));
  else e.g.removeAttribute("aria-expanded");
  sc.drawn.set(it.key, e);
  return e;
}

/** Draw `items` in detail, in preorder (Tab walks the tree), reusing the elements already drawn. */
export function drawDetailed(sc, items) {
  clear(sc.over);
  dropUnseen(sc, items);
  let prev = null;
  for (const it of items) {
    const e = elementFor(sc, it);
    const sig = `${it.type}|${it.label}|${it.w}|${it.state}|${it.collapsible}|${it.expanded}`;
    if (e.sig !== sig) {
      fillItem(sc, e.g, it, e.d);
      e.sig = sig;
    }
    e.g.setAttribute("transform", `translate(${it.x},${it.y})`);
    e.g.setAttribute("class", classOf(sc, it, e.d.flags));
    e.g.setAttribute("aria-selected", String(sc.marks.selected === it.key));
    if (sc.marks.key === it.key) e.g.setAttribute("data-jm-key-element", "");
    else e.g.removeAttribute("data-jm-key-element");
    const want = prev ? prev.nextSibling : sc.layer.firstChild;
    if (want !== e.g) sc.layer.insertBefore(e.g, want);
    prev = e.g;
  }
}

/** One path of boxes per state, and the marks as outlines (playback: keys not reached yet faded, the step's outlined). */
export function drawOverview(sc, items) {
  const { over, ref, marks, step } = sc;
  for (const e of sc.drawn.values()) e.g.remove();
  sc.drawn.clear();
  clear(over);
  const { H } = sc.g;
  const box = (it) => `M${it.x} ${it.y - H / 2}h${it.w}v${H}h${-it.w}z`;
  const states = step ? items.map((it) => stateOf(sc, it)) : null;
  const ahead = step ? items.filter((it, i) => states[i] == null).map(box).join("") : "";
  if (ahead) over.appendChild(s("path", { class: "jm-k-ov jm-k-s-unused jm-pb-future", d: ahead }, null, ref));
  for (const st of STATES) {
    const d = items.filter((it, i) => (step ? states[i] : it.state) === st).map(box).join("");
    if (d) over.appendChild(s("path", { class: `jm-k-ov jm-k-s-${st}`, d }, null, ref));
  }
  const marked = (cls, pick) => {
    const d = items.filter(pick).map(box).join("");
    if (d) over.appendChild(s("path", { class: `jm-k-ov ${cls}`, d }, null, ref));
  };
  marked("jm-k-ov-hit", (it) => marks.hits.has(it.key) || marks.inside.has(it.key));
  marked("jm-k-ov-sel", (it) => marks.selected === it.key);
  if (step) {
    marked("jm-k-ov-cur jm-pb-current", (it) => step.current.has(it.key));
    marked(`jm-k-ov-cur jm-k-s-reused jm-pb-flash`, (it) => step.flash.has(it.key));
  }
}
