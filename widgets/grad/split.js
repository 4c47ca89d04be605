/**
 * One eager differentiation (`origin: "split"`): JAX's forward graph flowing left to
 * right above its backward graph mirrored (right to left, in the adjoint orange), so
 * each gradient comes out on the left under the input it belongs to; between them
 * the residual bridge; beside them the details panel and the gradients list.
 *
 * Interaction (all of it through the graph viewers' controllers):
 * - a residual chip lights up (`jm-res`) its producer (or the input port it is) and
 *   the edges of its forward var in the forward graph, its input ports, edges and
 *   consumers in the backward graph, and brings both into view; again or Esc clears;
 * - a backward node lights up (`jm-linked`) the forward node it differentiates, a
 *   forward node every backward node differentiating it;
 * - a gradient row selects the backward output port carrying it;
 * - values mode switches both graphs to the recorded-values labels (cotangents in
 *   orange in the backward) and adds value summaries to the gradients list.
 */
import { h, clear } from "../ui/dom.js";
import { nKey } from "../graph/model.js";
import { linkMaps, residualTargets, residualById, decorator, customNodes, hasValues, plural } from "./model.js";
import { residualChips } from "./bridge.js";
import { gradList } from "./grads.js";
import { gradDetails, residualDetails } from "./details.js";
import { graphPane, valuesToggle, legendLine, markLegend, press } from "./pane.js";
import { entryPlayback } from "./playback.js";
import * as elementIds from "../graph/ids.js";


/** The entry's toolbar: the arrangement buttons, the values toggle and the legend. */
function splitToolbar(E) {
  const { ref, st } = E;
  E.arrButtons = [["stacked", "Stacked", "Forward above backward"], ["side", "Side by side", "Forward beside backward"]].map(([k, label, tip]) => {
    const b = h("button", { type: "button", class: "jm-btn jm-grad-arr", "data-arr": k, title: tip }, label, ref);
    press(b, k === st.arrangement);
    b.addEventListener("click", () => arrange(E, k));
    return b;
  });
  const customs = E.custom.forward.length + E.custom.backward.length;
  return h("div", { class: "jm-toolbar jm-grad-bar" }, [
    ...E.arrButtons,
    valuesToggle(ref, E.withValues, st.values, (on) => setValues(E, on)),
    legendLine(ref, [
      { key: "forward", text: "forward", line: "var(--jm-teal)" },
      { key: "backward", text: "backward (cotangents)", line: "var(--jm-grad)" },
      { key: "residual", text: "residual: saved by the forward, read by the backward", swatch: "var(--jm-bg1)" },
      ...markLegend(E.recomputed.size, customs),
    ]),
  ], ref);
}

/** Run `f` while the graphs' selection changes are our own (they must not clear what we set). */
function calm(E, f) {
  E.quiet = true;
  try {
    f();
  } finally {
    E.quiet = false;
  }
}

const other = (E, graph) => E.view[graph === "forward" ? "backward" : "forward"];

/** A user's selection in `graph`: the other graph's selection and the residual clear; its links light up. */
function onSelect(E, graph, key) {
  if (E.quiet) return;
  calm(E, () => other(E, graph).select(null));
  clearResidual(E, false);
  linkFrom(E, graph, key);
  showNode(E, graph, key);
}

/** The context the details panel reads (details.js). */
const detailsContext = (E, graph) => ({
  entry: E.entry, graph, ix: E.view[graph].index(), mode: E.mode(), links: E.links, recomputed: E.recomputed,
  fnOf: (g) => (g === "forward" ? E.entry.forward : E.entry.backward),
  go: (g, key) => E.view[g].select(key),
  pickResidual: (id) => selectResidual(E, id),
});

function showNode(E, graph, key) {
  E.shown = [graph, key];
  gradDetails(E.details, detailsContext(E, graph), key);
}

/** Link highlights for a selection in `graph`. */
function linkFrom(E, graph, key) {
  const id = key && elementIds.isNode(key) ? elementIds.body(key) : null;
  const ids = !id ? [] : graph === "backward" ? E.links.toForward.get(id) || [] : E.links.toBackward.get(id) || [];
  const target = other(E, graph);
  E.view[graph].highlight([], "jm-linked");
  target.highlight(ids.map(nKey), "jm-linked");
  if (ids.length) target.reveal(ids.map(nKey));
}

function clearResidual(E, panel = true) {
  if (!E.residual) return;
  E.residual = null;
  E.bridge.setActive(null);
  E.view.forward.highlight([], "jm-res");
  E.view.backward.highlight([], "jm-res");
  if (panel) showNode(E, ...E.shown);
}

/** Light residual `id` in both graphs and bring it into view, or clear it when it is lit. */
function selectResidual(E, id) {
  if (E.residual === id) return clearResidual(E);
  const r = residualById(E.entry, id);
  if (!r) return;
  const { forward: fwd, backward: bwd } = E.view;
  calm(E, () => {
    fwd.select(null);
    bwd.select(null);
  });
  linkFrom(E, "forward", null);
  linkFrom(E, "backward", null);
  E.residual = id;
  E.bridge.setActive(id);
  const t = residualTargets(E.entry, r);
  fwd.highlight(t.forward.keys, "jm-res", t.forward.vars);
  bwd.highlight(t.backward.keys, "jm-res", t.backward.vars);
  fwd.reveal(t.forward.keys);
  bwd.reveal(t.backward.keys);
  residualDetails(E.details, detailsContext(E, "forward"), r);
}

function renderGrads(E) {
  clear(E.gradsSlot);
  const values = E.st.values && E.withValues;
  E.gradsSlot.appendChild(gradList(E.ref, E.entry, { values, onPick: (row) => row.key && E.view.backward.select(row.key) }));
}

function setValues(E, on) {
  E.st.values = on;
  E.ctx.onState();
  for (const v of Object.values(E.view)) v.setMode(E.mode());
  renderGrads(E);
  if (E.residual) residualDetails(E.details, detailsContext(E, "forward"), residualById(E.entry, E.residual));
  else showNode(E, ...E.shown);
}

function arrange(E, k) {
  E.st.arrangement = k;
  E.ctx.onState();
  E.graphs.className = "jm-grad-graphs jm-grad-" + k;
  for (const b of E.arrButtons) press(b, b.getAttribute("data-arr") === k);
  const win = E.ref.ownerDocument.defaultView;
  win.requestAnimationFrame(() => Object.values(E.view).forEach((v) => v.fit()));
}

/** The forward pane, the residual bridge and the mirrored backward pane, in `E.graphs`. */
function splitGraphs(E, publish) {
  const { entry, ctx } = E;
  const fwd = graphPane(E.graphs, {
    fn: entry.forward, graph: "forward", engine: ctx.engine, title: "Forward pass",
    sub: `· left to right · ${plural(entry.forward.n_eqns ?? 0, "eqn")}`,
    opts: { onSelect: (key) => onSelect(E, "forward", key), onStory: () => publish() },
  });
  E.bridge = residualChips(E.ref, entry.residuals, entry.forward, (id) => selectResidual(E, id), "Residuals");
  E.graphs.appendChild(E.bridge.el);
  const bwd = graphPane(E.graphs, {
    fn: entry.backward, graph: "backward", engine: ctx.engine, title: "Backward pass",
    sub: `· right to left: cotangents flow back, gradients leave on the left · ${plural(entry.backward.n_eqns ?? 0, "eqn")}`,
    opts: { onSelect: (key) => onSelect(E, "backward", key), mirrored: true, tone: "backward", onStory: () => publish() },
  });
  E.view = { forward: fwd.view, backward: bwd.view };
}

/** The entry's state (`E`): the document's links, marks and modes, what is shown and lit. */
function splitState(slot, entry, ctx) {
  const st = ctx.state, withValues = hasValues(entry);
  return {
    ref: slot, entry, ctx, st, withValues, links: linkMaps(entry),
    recomputed: new Set(entry.recomputed || []),
    mode: () => (st.values && withValues ? "forward" : "trace"),
    custom: { forward: customNodes(entry.forward, entry, "forward"), backward: customNodes(entry.backward, entry, "backward") },
    quiet: true, // while we change a graph's selection ourselves (and until both graphs exist)
    residual: null, // selected residual id
    shown: ["forward", null], // what the details panel shows: [graph, key]
    view: null, bridge: null, graphs: null, details: null, gradsSlot: null, arrButtons: [],
  };
}

/**
 * Mount the entry into `slot`. ctx: {engine, state: {values, arrangement}, onState(),
 * playback (the shared controls, playback.js: forward pass, then backward; may be absent)}.
 * Returns {dispose, selectResidual(id), selectNode(graph, nodeId), clear()}.
 */
export function splitEntry(slot, entry, ctx) {
  const ref = slot;
  /** @type {any} */
  const E = splitState(slot, entry, ctx);
  E.graphs = h("div", { class: "jm-grad-graphs jm-grad-" + E.st.arrangement }, null, ref);
  E.details = h("div", { class: "jm-details jm-grad-details", "aria-label": "details" }, null, ref);
  E.gradsSlot = h("div", { class: "jm-grad-grads-slot" }, null, ref);
  const bar = splitToolbar(E);
  const body = h("div", { class: "jm-grad-body" }, [E.graphs, h("div", { class: "jm-grad-aside" }, [E.details, E.gradsSlot], ref)], ref);
  slot.appendChild(h("div", { class: "jm-grad-entry", "data-origin": "split", "data-entry-id": String(entry.id) }, [bar, body], ref));
  splitGraphs(E, () => publish());
  const { forward: fwd, backward: bwd } = E.view;
  const publish = entryPlayback(ctx, entry, [{ graph: "forward", view: fwd }, { graph: "backward", view: bwd }],
    () => [E.bridge.el], { values: E.withValues });
  E.quiet = false;
  if (ctx.key) E.view[ctx.key.graph === "forward" ? "forward" : "backward"].setKey(nKey(ctx.key.node), false);
  fwd.setDecorations(decorator(entry.forward, { custom: E.custom.forward }));
  bwd.setDecorations(decorator(entry.backward, { recomputed: E.recomputed, custom: E.custom.backward }));
  if (E.st.values && E.withValues) for (const v of Object.values(E.view)) v.setMode("forward");
  renderGrads(E);
  showNode(E, "forward", null);
  return {
    dispose() {
      fwd.dispose();
      bwd.dispose();
    },
    selectResidual: (id) => E.residual !== id && selectResidual(E, id),
    selectNode: (graph, nodeId) => E.view[graph === "forward" ? "forward" : "backward"].select(nKey(nodeId)),
    clear() {
      if (E.residual) return clearResidual(E);
      calm(E, () => Object.values(E.view).forEach((v) => v.select(null)));
      linkFrom(E, "forward", null);
      linkFrom(E, "backward", null);
      showNode(E, "forward", null);
    },
  };
}
