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
import { entryPlayback } from "./play.js";
import * as elementIds from "../graph/ids.js";


/**
 * Mount the entry into `slot`. ctx: {engine, state: {values, arrangement}, onState(),
 * playback (the shared controls, play.js: forward pass, then backward; may be absent)}.
 * Returns {dispose, selectResidual(id), selectNode(graph, nodeId), clear()}.
 */
export function splitEntry(slot, entry, ctx) {
  const ref = slot, st = ctx.state;
  const links = linkMaps(entry);
  const recomputed = new Set(entry.recomputed || []);
  const withValues = hasValues(entry);
  const mode = () => (st.values && withValues ? "forward" : "trace");
  const custom = { forward: customNodes(entry.forward, entry, "forward"), backward: customNodes(entry.backward, entry, "backward") };
  const customs = custom.forward.length + custom.backward.length;

  const graphs = h("div", { class: "jm-grad-graphs jm-grad-" + st.arrangement }, null, ref);
  const details = h("div", { class: "jm-details jm-grad-details", "aria-label": "details" }, null, ref);
  const gradsSlot = h("div", { class: "jm-grad-grads-slot" }, null, ref);
  const arrButtons = [["stacked", "Stacked", "Forward above backward"], ["side", "Side by side", "Forward beside backward"]].map(([k, label, tip]) => {
    const b = h("button", { type: "button", class: "jm-btn jm-grad-arr", "data-arr": k, title: tip }, label, ref);
    press(b, k === st.arrangement);
    b.addEventListener("click", () => arrange(k));
    return b;
  });
  const bar = h("div", { class: "jm-toolbar jm-grad-bar" }, [
    ...arrButtons,
    valuesToggle(ref, withValues, st.values, (on) => setValues(on)),
    legendLine(ref, [
      { key: "forward", text: "forward", line: "var(--jm-teal)" },
      { key: "backward", text: "backward (cotangents)", line: "var(--jm-grad)" },
      { key: "residual", text: "residual: saved by the forward, read by the backward", swatch: "var(--jm-bg1)" },
      ...markLegend(recomputed.size, customs),
    ]),
  ], ref);
  const body = h("div", { class: "jm-grad-body" }, [graphs, h("div", { class: "jm-grad-aside" }, [details, gradsSlot], ref)], ref);
  slot.appendChild(h("div", { class: "jm-grad-entry", "data-origin": "split", "data-entry-id": String(entry.id) }, [bar, body], ref));

  let quiet = true; // while we change a graph's selection ourselves (and until both graphs exist)
  let residual = null; // selected residual id
  const calm = (f) => {
    quiet = true;
    try {
      f();
    } finally {
      quiet = false;
    }
  };
  const onSelect = (graph) => (key) => {
    if (quiet) return;
    calm(() => other(graph).select(null));
    clearResidual(false);
    linkFrom(graph, key);
    showNode(graph, key);
  };
  const fwd = graphPane(graphs, {
    fn: entry.forward, graph: "forward", engine: ctx.engine, title: "Forward pass",
    sub: `· left to right · ${plural(entry.forward.n_eqns ?? 0, "eqn")}`,
    opts: { onSelect: onSelect("forward"), onStory: () => publish() },
  });
  const bridge = residualChips(ref, entry.residuals, entry.forward, (id) => selectResidual(id), "Residuals");
  graphs.appendChild(bridge.el);
  const bwd = graphPane(graphs, {
    fn: entry.backward, graph: "backward", engine: ctx.engine, title: "Backward pass",
    sub: `· right to left: cotangents flow back, gradients leave on the left · ${plural(entry.backward.n_eqns ?? 0, "eqn")}`,
    opts: { onSelect: onSelect("backward"), mirrored: true, tone: "backward", onStory: () => publish() },
  });
  const view = { forward: fwd.view, backward: bwd.view };
  const publish = entryPlayback(ctx, entry, [{ graph: "forward", view: fwd.view }, { graph: "backward", view: bwd.view }],
    () => [bridge.el], { values: withValues });
  const other = (graph) => view[graph === "forward" ? "backward" : "forward"];
  quiet = false;
  if (ctx.key) view[ctx.key.graph === "forward" ? "forward" : "backward"].setKey(nKey(ctx.key.node), false);
  fwd.view.setDecorations(decorator(entry.forward, { custom: custom.forward }));
  bwd.view.setDecorations(decorator(entry.backward, { recomputed, custom: custom.backward }));

  const dctx = (graph) => ({
    entry, graph, ix: view[graph].index(), mode: mode(), links, recomputed,
    fnOf: (g) => (g === "forward" ? entry.forward : entry.backward),
    go: (g, key) => view[g].select(key),
    pickResidual: (id) => selectResidual(id),
  });
  let shown = ["forward", null]; // what the details panel shows: [graph, key]
  const showNode = (graph, key) => {
    shown = [graph, key];
    gradDetails(details, dctx(graph), key);
  };

  /** Link highlights for a selection in `graph`. */
  const linkFrom = (graph, key) => {
    const id = key && elementIds.isNode(key) ? elementIds.body(key) : null;
    const ids = !id ? [] : graph === "backward" ? links.toForward.get(id) || [] : links.toBackward.get(id) || [];
    const target = other(graph);
    view[graph].highlight([], "jm-linked");
    target.highlight(ids.map(nKey), "jm-linked");
    if (ids.length) target.reveal(ids.map(nKey));
  };

  const clearResidual = (panel = true) => {
    if (!residual) return;
    residual = null;
    bridge.setActive(null);
    fwd.view.highlight([], "jm-res");
    bwd.view.highlight([], "jm-res");
    if (panel) showNode(...shown);
  };
  const selectResidual = (id) => {
    if (residual === id) return clearResidual();
    const r = residualById(entry, id);
    if (!r) return;
    calm(() => {
      fwd.view.select(null);
      bwd.view.select(null);
    });
    linkFrom("forward", null);
    linkFrom("backward", null);
    residual = id;
    bridge.setActive(id);
    const t = residualTargets(entry, r);
    fwd.view.highlight(t.forward.keys, "jm-res", t.forward.vars);
    bwd.view.highlight(t.backward.keys, "jm-res", t.backward.vars);
    fwd.view.reveal(t.forward.keys);
    bwd.view.reveal(t.backward.keys);
    residualDetails(details, dctx("forward"), r);
  };

  const renderGrads = () => {
    clear(gradsSlot);
    gradsSlot.appendChild(gradList(ref, entry, { values: st.values && withValues, onPick: (row) => row.key && bwd.view.select(row.key) }));
  };
  const setValues = (on) => {
    st.values = on;
    ctx.onState();
    for (const v of Object.values(view)) v.setMode(mode());
    renderGrads();
    if (residual) residualDetails(details, dctx("forward"), residualById(entry, residual));
    else showNode(...shown);
  };
  const arrange = (k) => {
    st.arrangement = k;
    ctx.onState();
    graphs.className = "jm-grad-graphs jm-grad-" + k;
    for (const b of arrButtons) press(b, b.getAttribute("data-arr") === k);
    const win = slot.ownerDocument.defaultView;
    win.requestAnimationFrame(() => Object.values(view).forEach((v) => v.fit()));
  };

  if (st.values && withValues) for (const v of Object.values(view)) v.setMode("forward");
  renderGrads();
  showNode("forward", null);

  return {
    dispose() {
      fwd.view.dispose();
      bwd.view.dispose();
    },
    selectResidual: (id) => residual !== id && selectResidual(id),
    selectNode: (graph, nodeId) => view[graph === "forward" ? "forward" : "backward"].select(nKey(nodeId)),
    clear() {
      if (residual) return clearResidual();
      calm(() => Object.values(view).forEach((v) => v.select(null)));
      linkFrom("forward", null);
      linkFrom("backward", null);
      showNode("forward", null);
    },
  };
}
