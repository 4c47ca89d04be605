/**
 * What the keys view does to its state: lay the visible forest out again, frame it, paint the
 * marks (selection, search hits, the reused key), fill the details panel, select, fold, filter,
 * search and show the hover card. Each function takes the view's state object (`KeysView`,
 * built by view.js), so the view itself only builds its parts and wires events to these.
 */
import { clear } from "../ui/dom.js";
import { search, step } from "../ui/search.js";
import { plural } from "../ui/words.js";
import { buildTree, reveal, standIn, toggle } from "./tree.js";
import { layoutForest } from "./layout.js";
import { frameTree, paneState, labelPx, PANE_H } from "./frame.js";
import { nodeLines, standInLines } from "./text.js";
import { detailsOf } from "./details.js";

/**
 * @typedef {object} KeysView  the keys view's state and parts
 * @property {HTMLElement} root
 * @property {any} m                 readKeys(doc)
 * @property {any} ui                what is folded and filtered (tree.js initialUi)
 * @property {boolean} present       presentation mode
 * @property {boolean} badges        whether jitted keys carry their program's name (framing sizes)
 * @property {any} metrics           layout sizes (layout.js METRICS)
 * @property {number} keyNode        the reused key (model.js storyNode), -1 for none
 * @property {any[]} records         search records (model.js searchRecords)
 * @property {{tree: any, lay: any, sel: any, matches: number[], at: number, query: string}} st
 * @property {any} scene             createScene(...) (draw.js)
 * @property {ReturnType<typeof import("./toolbar.js").keysToolbar>} tb
 * @property {HTMLElement} card      the hover card
 * @property {HTMLElement} details
 * @property {HTMLElement} canvas    the tree pane (`[data-jm-pane="keys"]`)
 * @property {HTMLElement} side      findings (presentation mode) and details
 * @property {HTMLElement} main      the tree pane and the side
 * @property {HTMLElement | null} findingsSec
 * @property {{refresh(): void} | null} pb  playback (playback.js), null without the controller
 */

/** Build and lay out the visible forest again; `anchor` (an item) keeps its place on screen; `framing: "start"` frames it anew. */
export function relayout(v, tree, { framing = "keep", anchor = null } = {}) {
  const { st, scene } = v;
  const before = anchor ? scene.screenBox(anchor) : null;
  st.tree = tree || buildTree(v.m, v.ui);
  st.lay = layoutForest(st.tree, v.metrics);
  scene.setLayout(st.lay);
  if (framing === "start") frame(v);
  if (v.pb) v.pb.refresh();
  const after = before ? scene.itemOf(anchor.key) : null;
  if (after) {
    const now = scene.screenBox(after), t = scene.transform;
    scene.setTransform(t.x + before.x - now.x, t.y + before.y - now.y, t.k);
  }
  v.tb.hiddenText.textContent = v.ui.filter ? `${st.tree.hidden} of ${plural(v.m.nodes.length, "key")} hidden` : "";
  paint(v);
}

/** The drawn item that shows the reused key: its own, or the stand-in (run, aggregate) folding it. */
const keyItem = (v) => (v.keyNode < 0 ? null : v.st.tree.byNode.get(v.keyNode) || standIn(v.m, v.st.tree, v.keyNode) || null);

/** The drawn item of the selection (a node's own item, or a stand-in by key). */
function selectedItem(v) {
  const sel = v.st.sel;
  if (!sel) return null;
  return sel.node != null ? v.st.tree.byNode.get(sel.node) || null : v.scene.itemOf(sel.key);
}

/**
 * Frame the tree (frame.js): whole when legible, else the part around the reused key (then
 * the selection, then the first root) at a legible scale; the pane's height follows it.
 * A pane without a size yet (hidden, detached) is framed once it has one (scene `onSized`).
 */
export function frame(v) {
  const { w, h } = v.scene.size();
  // A height the reader dragged the pane to stays, and so does a pane its host made taller than ours.
  const fixedH = v.main.style.height || h > (v.present ? PANE_H.present : PANE_H.normal).max ? h : 0;
  const anchors = [keyItem(v), selectedItem(v)].filter(Boolean);
  const f = frameTree(v.st.lay, { paneW: w, fixedH, present: v.present, badges: v.badges, anchors });
  v.main.style.setProperty("--jm-k-pane-h", `${f.paneHeight}px`);
  v.scene.frameTo(f.tx, f.ty, f.scale);
}

/** The pane's contract attributes for the frame just drawn. */
export function publish(v, t) {
  if (!v.st.lay) return;
  const { w, h } = v.scene.size();
  const p = paneState(v.st.lay, t, w, h, labelPx(v.present, v.badges));
  v.canvas.setAttribute("data-jm-framed", p.framed);
  v.canvas.setAttribute("data-jm-text-px", p.textPx);
  v.canvas.setAttribute("data-jm-drawing", p.drawing);
}

/** Hand the scene the marks: the selection, the search hits (own items, or the stand-ins hiding them), the reused key. */
export function paint(v) {
  const hits = new Set(), inside = new Set();
  for (const id of v.st.matches) {
    const own = v.st.tree.byNode.get(id);
    if (own) hits.add(own.key);
    else {
      const it = standIn(v.m, v.st.tree, id);
      if (it) inside.add(it.key);
    }
  }
  const sel = selectedItem(v), key = keyItem(v);
  v.scene.setMarks({ selected: sel ? sel.key : null, hits, inside, key: key ? key.key : null });
}

/** Fill the details panel for the selection. */
export function showDetails(v) {
  const { st, scene, details, present, findingsSec } = v;
  clear(details);
  const it = st.sel ? (st.sel.node != null ? { type: "node", id: st.sel.node } : scene.itemOf(st.sel.key)) : null;
  details.hidden = present && findingsSec && !it; // presentation: the findings, until a key is picked
  const onPick = (id) => selectNode(v, id, { focus: true });
  const onToggle = (x) => toggleItem(v, scene.itemOf(x.key) || x);
  details.appendChild(detailsOf(v.root, v.m, it, { onPick, onToggle }));
  if (present && findingsSec && it) v.side.scrollTop = details.offsetTop - v.side.offsetTop;
}

/** Select node `id`, opening whatever hides it, and bring it into view. */
export function selectNode(v, id, { focus = false } = {}) {
  const wasFilter = v.ui.filter;
  const tree = reveal(v.m, v.ui, id);
  if (wasFilter !== v.ui.filter) syncFilter(v);
  v.st.sel = { node: id };
  relayout(v, tree);
  showDetails(v);
  const it = v.st.tree.byNode.get(id);
  if (it) v.scene.show(it, { focus });
}

/** Select a drawn item (a node, or a stand-in by key). */
export function selectItem(v, it) {
  v.st.sel = it.type === "node" ? { node: it.id } : { key: it.key };
  paint(v);
  showDetails(v);
}

export function clearSelection(v) {
  v.st.sel = null;
  v.card.hidden = true;
  paint(v);
  showDetails(v);
}

/** Fold or unfold an item (stand-ins: unfold, or show the next page), keeping it where it is on screen. */
export function toggleItem(v, it, select = false) {
  if (!it) return;
  toggle(v.ui, it);
  if (select && it.type !== "more") v.st.sel = it.type === "node" ? { node: it.id } : { key: it.key };
  relayout(v, null, { anchor: it });
  showDetails(v);
}

/** The filter button shows the filter's state. */
function syncFilter(v) {
  v.tb.filterBtn.setAttribute("aria-pressed", String(v.ui.filter));
  v.tb.filterBtn.classList.toggle("jm-k-on", v.ui.filter);
}

export function setFilter(v, on) {
  v.ui.filter = on;
  syncFilter(v);
  relayout(v, null, { framing: "start" });
}

/** The hover card of an item (null hides it), under the item, inside the pane. */
export function showCard(v, it) {
  const { card } = v;
  if (!it) {
    card.hidden = true;
    return;
  }
  const lines = it.type === "node" ? nodeLines(v.m.nodes[it.id]) : standInLines(v.m, it);
  card.textContent = lines.join("\n");
  card.hidden = false;
  const b = v.scene.screenBox(it);
  const w = v.canvas.clientWidth || 900;
  card.style.left = `${Math.max(4, Math.min(b.x, w - 380))}px`;
  card.style.top = `${Math.max(4, b.y + b.h + 6)}px`;
}

/** Search the keys for the box's text: mark the matches, count them. */
export function runSearch(v) {
  const { st, tb } = v;
  st.query = tb.input.value;
  st.matches = search(v.records, st.query);
  st.at = -1;
  tb.countText.textContent = st.query.trim() ? plural(st.matches.length, "match", "matches") : "";
  paint(v);
}

/** Select the next (dir 1) or previous (-1) match. */
export function nextMatch(v, dir) {
  const { st } = v;
  if (!st.matches.length) return;
  st.at = step(st.at, st.matches.length, dir);
  selectNode(v, st.matches[st.at]);
  v.tb.countText.textContent = `${st.at + 1} of ${st.matches.length}`;
}
