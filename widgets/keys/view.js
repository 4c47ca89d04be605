/**
 * The keys view (`kind: "keys"`, %%prng): the lineage of every PRNG key the cell touched,
 * as a tidy tree per root (teal unused, orange consumed, red reused). Findings on top,
 * then a toolbar (filter "only paths to reused keys", search, fit, export), the legend
 * and summary, the tree and the details panel. Owns the state: what is folded (tree.js),
 * the selection (a node, or a stand-in), the search matches. A finding, a search match
 * or a breadcrumb selects a node and opens whatever hides it.
 *
 * Playback (playback.js, story.js): the key events in program order, on the tree as laid out
 * (future keys faded, the step's items marked, a reuse flashing red at its step); the story is
 * made again when the drawn tree changes (a fold, the filter). Presentation mode lays the tree
 * out at its larger sizes (layout.js METRICS) and hides the secondary controls.
 *
 * This module builds the parts and wires them; what the view does to its state is control.js's,
 * the toolbar toolbar.js's, the keyboard keyboard.js's.
 */
import { h, download } from "../ui/dom.js";
import { svgExport, fileName } from "../graph/export.js";
import { docHeader } from "../ui/header.js";
import { readKeys, reuseSet, searchRecords, storyNode } from "./model.js";
import { initialUi } from "./tree.js";
import { METRICS } from "./layout.js";
import { createScene } from "./draw.js";
import { legibleZoom } from "./frame.js";
import { ariaText } from "./text.js";
import { findingsList } from "./findings.js";
import { legend } from "./legend.js";
import { captionOf } from "../ui/stagebar.js";
import { keysToolbar } from "./toolbar.js";
import { keysPlayback } from "./playback.js";
import { onItemKey, listenSearch, listenEscape } from "./keyboard.js";
import { frame, publish, relayout, selectItem, selectNode, setFilter, showCard, showDetails, toggleItem } from "./control.js";

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

/** The findings section (null without findings); a finding selects its node. */
function findingsSection(root, v) {
  const m = v.m;
  const pick = (f) => Number.isInteger(f.node) && f.node >= 0 && f.node < m.nodes.length && selectNode(v, f.node, { focus: true });
  const findings = findingsList(root, m.findings, pick);
  return findings && h("section", { class: "jm-k-sec" }, [h("h4", null, `Findings (${m.findings.length})`, root), findings], root);
}

/** The tree's scene, its events sent to the view's state `v`. */
function keysScene(root, v) {
  return createScene(root, {
    describe: describer(v.m),
    onActivate: (it, { toggle: t }) => (t ? toggleItem(v, it, true) : selectItem(v, it)),
    onHover: (it) => showCard(v, it),
    onKey: (it, e) => onItemKey(v, it, e),
    onDraw: (t) => publish(v, t),
    onSized: () => frame(v),
    legibleK: () => legibleZoom(v.present, v.badges),
  });
}

/** Download the tree as SVG: every item in detail when there are at most EXPORT_MAX, else what the view shows. */
function exportSvg(v) {
  const { scene, st } = v;
  const all = st.lay.items.length <= EXPORT_MAX;
  if (all) scene.draw({ all: true });
  const bg = v.root.ownerDocument.defaultView.getComputedStyle(v.canvas).backgroundColor;
  const out = svgExport(scene.svg, st.lay.box, bg);
  scene.draw();
  download(fileName("jaxmagic-keys", ".svg"), out.text, "image/svg+xml");
}

/** The view's state with its toolbar (control.js KeysView); the panes are added by keysView. */
function keysState(root, doc, m, present) {
  /** @type {import("./control.js").KeysView} */
  const v = /** @type {any} */ ({
    root, m, present,
    ui: initialUi(),
    badges: m.nodes.some((n) => n.call != null), // jitted keys carry their program's name
    metrics: present ? METRICS.present : METRICS.normal,
    keyNode: storyNode(m), // the reused key: what the view is about
    records: searchRecords(m),
    st: { tree: null, lay: null, sel: null, matches: [], at: -1, query: "" },
    pb: null,
  });
  v.tb = keysToolbar(root, {
    reusable: reuseSet(m).size > 0,
    onFilter: () => setFilter(v, !v.ui.filter),
    onFit: () => frame(v),
    onSvg: () => exportSvg(v),
    onJson: () => download(fileName("jaxmagic-keys", ".json"), JSON.stringify(doc, null, 2), "application/json"),
  });
  return v;
}

/**
 * Mount a keys view for `doc` into `root`. `options` (widgets/mount.js): `present` lays it out
 * for a projector; `playback` receives the story. Both absent when a test mounts the view alone.
 * @param {import("../types/documents").KeysDocument} doc a keys document (its packed blocks already inflated)
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
  const v = keysState(root, doc, m, present);
  v.card = h("div", { class: "jm-k-card", role: "tooltip", hidden: true }, null, root);
  v.details = h("div", { class: "jm-details jm-k-details", "aria-label": "details" }, null, root);
  v.scene = keysScene(root, v);
  v.canvas = h("div", { class: "jm-canvas jm-k-canvas", "data-jm-pane": "keys" }, [v.scene.svg, v.card], root);
  v.findingsSec = findingsSection(root, v);
  // Presentation mode puts the findings beside the tree, above the details: on a 720 px projector
  // the reused key and what is wrong with it are on screen together, under the caption.
  v.side = h("div", { class: "jm-k-side" }, [present ? v.findingsSec : null, v.details], root);
  v.main = h("div", { class: "jm-main jm-k-main" }, [v.canvas, v.side], root);
  view.append(...[present ? null : v.findingsSec, v.tb.el, legend(root, m, captionOf(doc).length > 0), v.main].filter(Boolean));
  if (playback) v.pb = keysPlayback(v, playback);
  listenSearch(v);
  const unlisten = listenEscape(v);
  relayout(v, null, { framing: "start" });
  showDetails(v);
  return () => {
    v.scene.dispose();
    unlisten();
  };
}
