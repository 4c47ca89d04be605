/**
 * The keys view (`kind: "keys"`, %%prng): the lineage of every PRNG key the cell touched,
 * as a tidy tree per root (teal unused, orange consumed, red reused). Findings on top,
 * then a toolbar (filter "only paths to reused keys", search, fit, export), the legend
 * and summary, the tree and the details panel. Owns the state: what is folded (tree.js),
 * the selection (a node, or a stand-in), the search matches. A finding, a search match
 * or a breadcrumb selects a node and opens whatever hides it.
 *
 * Playback (story.js): the key events in program order, on the tree as laid out (future keys
 * faded, the step's items marked, a reuse flashing red at its step); the story is made again
 * when the drawn tree changes (a fold, the filter). Presentation mode lays the tree out at its
 * larger sizes (layout.js METRICS) and hides the secondary controls.
 */
import { h, clear, download } from "../ui/dom.js";
import { search, step } from "../ui/search.js";
import { svgExport, fileName } from "../graph/export.js";
import { docHeader } from "../ui/header.js";
import { readKeys, reuseSet, searchRecords, storyNode } from "./model.js";
import { buildTree, initialUi, reveal, standIn, toggle } from "./tree.js";
import { layoutForest, METRICS } from "./layout.js";
import { createScene } from "./draw.js";
import { frameTree, legibleZoom, paneState, labelPx, PANE_H } from "./frame.js";
import { ariaText, nodeLines, standInLines } from "./text.js";
import { detailsOf } from "./details.js";
import { findingsList } from "./findings.js";
import { legend } from "./legend.js";
import { keyEvents, keyStory } from "./story.js";
import { captionOf } from "../ui/stagebar.js";
import { plural } from "../ui/words.js";

/** Most items the SVG export draws in detail (beyond, what the view shows). */
const EXPORT_MAX = 5000;
const EMPTY = "No PRNG key was used in this cell.";
const EMPTY_HINT = "%%prng records the keys made or used by jax.random calls in the cell and in the jitted functions it calls: " +
  "make a key (jax.random.key(0)) and draw from it, or pass one to a jitted function.";

/** Extra classes and the badge of an item (how the scene draws it). */
function describer(m) {
  return (it) => {
    const flags = [];
    let badge = null;
    if (it.type === "node") {
      const n = m.nodes[it.id];
      if ((Array.isArray(n.shape) && n.shape.length) || n.how === "split") flags.push("jm-k-array");
      if (n.how === "loop") flags.push("jm-k-loop", "jm-k-stack");
      if (n.call != null) {
        flags.push("jm-k-jit");
        const f = String(n.function ?? "jit");
        badge = f.length > 24 ? f.slice(0, 23) + "…" : f;
      }
      if (m.findingsOf.has(it.id)) flags.push("jm-k-flagged");
    } else if (it.type === "agg") flags.push("jm-k-stack");
    return { flags, badge, aria: ariaText(m, it) };
  };
}

/**
 * Mount a keys view for `doc` into `root`. `options` (widgets/mount.js): `present` lays it out
 * for a projector; `playback` receives the story. Both absent when a test mounts the view alone.
 * @returns {() => void} cleanup
 */
export function keysView(root, doc, engine, options = {}) {
  const present = !!(options && options.present);
  const playback = options && options.playback ? options.playback : null;
  const m = readKeys(doc);
  const view = h("div", { class: "jm-keys" }, docHeader(doc, root), root);
  root.appendChild(view);
  if (m.empty) {
    view.appendChild(h("div", { class: "jm-empty" }, [h("b", null, EMPTY, root), " ", h("span", { class: "jm-muted" }, EMPTY_HINT, root)], root));
    return () => {};
  }
  const ui = initialUi();
  const reusable = reuseSet(m).size > 0;
  const records = searchRecords(m);
  const st = { tree: null, lay: null, sel: null, matches: [], at: -1, query: "" };
  const metrics = present ? METRICS.present : METRICS.normal;
  const captioned = captionOf(doc).length > 0;
  const badges = m.nodes.some((n) => n.call != null); // jitted keys carry their program's name
  const keyNode = storyNode(m); // the reused key: what the view is about

  // ---- parts ---------------------------------------------------------------------------
  const btn = (label, title, fn, cls = "") => {
    const b = h("button", { type: "button", class: "jm-btn " + cls, title }, label, root);
    b.addEventListener("click", fn);
    return b;
  };
  const filterBtn = btn("Only paths to reused keys", reusable ? "Show only reused keys, their ancestors and the keys made from them"
    : "No key is reused in this cell", () => setFilter(!ui.filter));
  filterBtn.setAttribute("aria-pressed", "false");
  if (!reusable) filterBtn.disabled = true;
  const hiddenText = h("span", { class: "jm-muted jm-k-hidden", "aria-live": "polite" }, "", root);
  const input = h("input", { type: "search", class: "jm-search", placeholder: "Search keys, uses, file:line", "aria-label": "search keys" }, null, root);
  const countText = h("span", { class: "jm-match-count", "aria-live": "polite" }, "", root);
  const toolbar = h("div", { class: "jm-toolbar" }, [
    filterBtn, hiddenText,
    h("span", { class: "jm-search-wrap jm-clutter" }, [input, countText], root),
    h("span", { class: "jm-spacer" }, null, root),
    btn("Fit", "Show the whole tree, or the part that matters at a legible size", () => frame()),
    h("span", { class: "jm-muted jm-export-label jm-clutter" }, "Export", root),
    btn("SVG", "Download the tree as SVG", () => exportSvg(), "jm-btn-quiet jm-clutter"),
    btn("JSON", "Download the document as JSON", () => download(fileName("jaxmagic-keys", ".json"), JSON.stringify(doc, null, 2), "application/json"), "jm-btn-quiet jm-clutter"),
  ], root);
  const card = h("div", { class: "jm-k-card", role: "tooltip", hidden: true }, null, root);
  const details = h("div", { class: "jm-details jm-k-details", "aria-label": "details" }, null, root);
  const scene = createScene(root, {
    describe: describer(m),
    onActivate: (it, { toggle: t }) => (t ? toggleItem(it, true) : selectItem(it)),
    onHover: (it) => showCard(it),
    onKey: (it, e) => onItemKey(it, e),
    onDraw: (t) => publish(t),
    onSized: () => frame(),
    legibleK: () => legibleZoom(present, badges),
  });
  const canvas = h("div", { class: "jm-canvas jm-k-canvas", "data-jm-pane": "keys" }, [scene.svg, card], root);
  const findings = findingsList(root, m.findings, (f) => Number.isInteger(f.node) && f.node >= 0 && f.node < m.nodes.length && selectNode(f.node, { focus: true }));
  const findingsSec = findings && h("section", { class: "jm-k-sec" }, [h("h4", null, `Findings (${m.findings.length})`, root), findings], root);
  // Presentation mode puts the findings beside the tree, above the details: on a 720 px projector
  // the reused key and what is wrong with it are on screen together, under the caption.
  const side = h("div", { class: "jm-k-side" }, [present ? findingsSec : null, details], root);
  const main = h("div", { class: "jm-main jm-k-main" }, [canvas, side], root);
  view.append(...[
    present ? null : findingsSec,
    toolbar,
    legend(root, m, captioned),
    main,
  ].filter(Boolean));

  // ---- tree and marks ------------------------------------------------------------------
  /** Build and lay out the visible forest again; `anchor` (an item) keeps its place on screen; `framing: "start"` frames it anew. */
  function relayout(tree, { framing = "keep", anchor = null } = {}) {
    const before = anchor ? scene.screenBox(anchor) : null;
    st.tree = tree || buildTree(m, ui);
    st.lay = layoutForest(st.tree, metrics);
    scene.setLayout(st.lay);
    if (framing === "start") frame();
    restage();
    const after = before ? scene.itemOf(anchor.key) : null;
    if (after) {
      const now = scene.screenBox(after), t = scene.transform;
      scene.setTransform(t.x + before.x - now.x, t.y + before.y - now.y, t.k);
    }
    hiddenText.textContent = ui.filter ? `${st.tree.hidden} of ${plural(m.nodes.length, "key")} hidden` : "";
    paint();
  }

  /** The drawn item that shows the reused key: its own, or the stand-in (run, aggregate) folding it. */
  const keyItem = () => (keyNode < 0 ? null : st.tree.byNode.get(keyNode) || standIn(m, st.tree, keyNode) || null);

  /**
   * Frame the tree (frame.js): whole when legible, else the part around the reused key (then
   * the selection, then the first root) at a legible scale; the pane's height follows it.
   * A pane without a size yet (hidden, detached) is framed once it has one (scene `onSized`).
   */
  function frame() {
    const { w, h } = scene.size();
    // A height the reader dragged the pane to stays, and so does a pane its host made taller than ours.
    const fixedH = main.style.height || h > (present ? PANE_H.present : PANE_H.normal).max ? h : 0;
    const f = frameTree(st.lay, { paneW: w, fixedH, present, badges, anchors: [keyItem(), selectedItem()].filter(Boolean) });
    main.style.setProperty("--jm-k-pane-h", `${f.paneHeight}px`);
    scene.frameTo(f.tx, f.ty, f.scale);
  }
  /** The pane's contract attributes for the frame just drawn. */
  function publish(t) {
    if (!st.lay) return;
    const { w, h } = scene.size();
    const p = paneState(st.lay, t, w, h, labelPx(present, badges));
    canvas.setAttribute("data-jm-framed", p.framed);
    canvas.setAttribute("data-jm-text-px", p.textPx);
    canvas.setAttribute("data-jm-drawing", p.drawing);
  }

  /** The drawn item of the selection (a node's own item, or a stand-in by key). */
  const selectedItem = () => {
    if (!st.sel) return null;
    return st.sel.node != null ? st.tree.byNode.get(st.sel.node) || null : scene.itemOf(st.sel.key);
  };
  function paint() {
    const hits = new Set(), inside = new Set();
    for (const id of st.matches) {
      const own = st.tree.byNode.get(id);
      if (own) hits.add(own.key);
      else {
        const it = standIn(m, st.tree, id);
        if (it) inside.add(it.key);
      }
    }
    const sel = selectedItem(), key = keyItem();
    scene.setMarks({ selected: sel ? sel.key : null, hits, inside, key: key ? key.key : null });
  }

  function showDetails() {
    clear(details);
    const it = st.sel ? (st.sel.node != null ? { type: "node", id: st.sel.node } : scene.itemOf(st.sel.key)) : null;
    details.hidden = present && findingsSec && !it; // presentation: the findings, until a key is picked
    details.appendChild(detailsOf(root, m, it, { onPick: (id) => selectNode(id, { focus: true }), onToggle: (x) => toggleItem(scene.itemOf(x.key) || x) }));
    if (present && findingsSec && it) side.scrollTop = details.offsetTop - side.offsetTop;
  }

  // ---- selection -----------------------------------------------------------------------
  /** Select node `id`, opening whatever hides it, and bring it into view. */
  function selectNode(id, { focus = false } = {}) {
    const wasFilter = ui.filter;
    const tree = reveal(m, ui, id);
    if (wasFilter !== ui.filter) syncFilter();
    st.sel = { node: id };
    relayout(tree);
    showDetails();
    const it = st.tree.byNode.get(id);
    if (it) scene.show(it, { focus });
  }
  function selectItem(it) {
    st.sel = it.type === "node" ? { node: it.id } : { key: it.key };
    paint();
    showDetails();
  }
  function clearSelection() {
    st.sel = null;
    card.hidden = true;
    paint();
    showDetails();
  }
  /** Fold or unfold an item (stand-ins: unfold, or show the next page), keeping it where it is on screen. */
  function toggleItem(it, select = false) {
    if (!it) return;
    toggle(ui, it);
    if (select && it.type !== "more") st.sel = it.type === "node" ? { node: it.id } : { key: it.key };
    relayout(null, { anchor: it });
    showDetails();
  }
  function syncFilter() {
    filterBtn.setAttribute("aria-pressed", String(ui.filter));
    filterBtn.classList.toggle("jm-k-on", ui.filter);
  }
  function setFilter(on) {
    ui.filter = on;
    syncFilter();
    relayout(null, { framing: "start" });
  }

  // ---- playback ------------------------------------------------------------------------
  const pb = { events: null, story: null, sig: null, saved: null };
  /**
   * Give the controller the story of the tree just built, unless the drawn items are the same
   * ones (a selection or a search re-lays out without changing them: playback goes on).
   */
  function restage() {
    if (!playback) return;
    const sig = st.tree.items.map((it) => it.key).join(" ");
    if (sig === pb.sig) return;
    pb.sig = sig;
    pb.events = pb.events || keyEvents(m);
    pb.story = keyStory(m, pb.events, st.tree);
    pb.saved = null;
    scene.setStage(null);
    playback.set({ steps: pb.story.steps.length, show: showStep, label: (p) => pb.story.label(p) });
  }
  /**
   * Draw the tree after p steps. The layout stays; only classes change. The view pans (never
   * zooms) to the step's first item when it is out of view, and the last step puts back the
   * framing the story started from, so it ends on the ordinary view.
   */
  function showStep(p, from) {
    const story = pb.story;
    const end = story.steps.length;
    if (p >= end) {
      const t = pb.saved;
      pb.saved = null;
      scene.setStage(null);
      if (t) scene.setTransform(t.x, t.y, t.k);
      return;
    }
    if (from >= end || !pb.saved) pb.saved = { ...scene.transform };
    scene.setStage(story.stage(p));
    const step = p > 0 ? story.steps[p - 1] : null;
    const focus = step ? scene.itemOf(step.focus) : null;
    if (focus && !scene.visible(focus)) scene.centerOn(focus);
  }

  // ---- hover card ----------------------------------------------------------------------
  function showCard(it) {
    if (!it) {
      card.hidden = true;
      return;
    }
    const lines = it.type === "node" ? nodeLines(m.nodes[it.id]) : standInLines(m, it);
    card.textContent = lines.join("\n");
    card.hidden = false;
    const b = scene.screenBox(it);
    const w = canvas.clientWidth || 900;
    card.style.left = `${Math.max(4, Math.min(b.x, w - 380))}px`;
    card.style.top = `${Math.max(4, b.y + b.h + 6)}px`;
  }

  // ---- search --------------------------------------------------------------------------
  function runSearch() {
    st.query = input.value;
    st.matches = search(records, st.query);
    st.at = -1;
    countText.textContent = st.query.trim() ? plural(st.matches.length, "match", "matches") : "";
    paint();
  }
  function nextMatch(dir) {
    if (!st.matches.length) return;
    st.at = step(st.at, st.matches.length, dir);
    selectNode(st.matches[st.at]);
    countText.textContent = `${st.at + 1} of ${st.matches.length}`;
  }
  input.addEventListener("input", runSearch);
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      nextMatch(e.shiftKey ? -1 : 1);
    } else if (e.key === "Escape" && input.value) {
      e.preventDefault();
      e.stopPropagation();
      input.value = "";
      runSearch();
    }
  });

  // ---- keyboard ------------------------------------------------------------------------
  const focusItem = (it) => it && scene.show(it, { focus: true });
  function onItemKey(it, e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const items = st.tree.items;
    const handled = {
      Enter: () => activateKey(it),
      " ": () => activateKey(it),
      ArrowDown: () => focusItem(items[it.index + 1]),
      ArrowUp: () => focusItem(items[it.index - 1]),
      ArrowRight: () => (it.collapsible && !it.expanded ? toggleAndFocus(it) : focusItem(it.children[0])),
      ArrowLeft: () => (it.collapsible && it.expanded ? toggleAndFocus(it) : focusItem(it.parent)),
      Home: () => focusItem(items[0]),
      End: () => focusItem(items[items.length - 1]),
    }[e.key];
    if (!handled) return;
    e.preventDefault();
    e.stopPropagation(); // keep Jupyter's command mode out of it
    handled();
  }
  function toggleAndFocus(it) {
    toggleItem(it);
    const again = scene.itemOf(it.key);
    if (again) focusItem(again);
  }
  function activateKey(it) {
    if (it.type === "node") selectItem(it);
    if (it.collapsible || it.type === "more") toggleAndFocus(it);
    else if (it.type !== "node") selectItem(it);
  }
  const onKey = (e) => {
    if (e.key !== "Escape" || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    e.stopPropagation();
    clearSelection();
  };
  root.setAttribute("tabindex", "0");
  root.addEventListener("keydown", onKey);

  // ---- export --------------------------------------------------------------------------
  function exportSvg() {
    const all = st.lay.items.length <= EXPORT_MAX;
    if (all) scene.draw({ all: true });
    const bg = root.ownerDocument.defaultView.getComputedStyle(canvas).backgroundColor;
    const out = svgExport(scene.svg, st.lay.box, bg);
    scene.draw();
    download(fileName("jaxmagic-keys", ".svg"), out.text, "image/svg+xml");
  }

  relayout(null, { framing: "start" });
  showDetails();
  return () => {
    scene.dispose();
    root.removeEventListener("keydown", onKey);
  };
}
