/**
 * A differentiation inside a jitted step (`origin: "jit"`): the one program, its
 * nodes filled by role (forward teal, backward orange, other grey; unknown left
 * plain, never guessed), a legend with the document's counts, and under it the
 * regions (one per differentiation), each with its residuals as bridge chips. A chip
 * lights up (`jm-res`) its producer, its consumers and the edges between them; a
 * backward node lights up (`jm-linked`) the forward nodes it is linked to (exact or
 * by source line, said in the details), a forward node the backward nodes linked to
 * it. Beside: the details panel and where `grad` was called.
 */
import { h, clear } from "../ui/dom.js";
import { nKey, srcText } from "../graph/model.js";
import { linkMaps, residualTargets, residualById, decorator, roleCounts, ROLE_FILL, customNodes, hasValues, bytesText, plural } from "./model.js";
import { residualChips } from "./bridge.js";
import { gradList } from "./grads.js";
import { gradDetails, residualDetails } from "./details.js";
import { graphPane, valuesToggle, legendLine, markLegend } from "./pane.js";
import { entryPlayback } from "./play.js";
import * as elementIds from "../graph/ids.js";


/** Mount the entry into `slot` (ctx as for splitEntry). Returns the same controller. */
export function jitEntry(slot, entry, ctx) {
  const ref = slot, st = ctx.state;
  const links = linkMaps(entry);
  const recomputed = new Set((entry.regions || []).flatMap((r) => r.recomputed || []));
  const withValues = hasValues(entry);
  const mode = () => (st.values && withValues ? "forward" : "trace");
  const customs = customNodes(entry.program).length;

  const graphs = h("div", { class: "jm-grad-graphs jm-grad-column" }, null, ref);
  const details = h("div", { class: "jm-details jm-grad-details", "aria-label": "details" }, null, ref);
  const sites = h("div", { class: "jm-grad-sites" }, [
    h("h4", null, `grad called (${(entry.grad_sites || []).length})`, ref),
    h("ul", { class: "jm-grad-leaves" }, (entry.grad_sites || []).map((g) => h("li", { class: "jm-grad-site" }, [
      h("span", { class: "jm-grad-path" }, `${g.kind} of ${g.name}`, ref),
      h("span", { class: "jm-muted" }, ` ${g.site ? srcText(g.site) : ""}${g.count > 1 ? ` ×${g.count}` : ""}${g.batch ? ` · ${g.batch}` : ""}`, ref),
      g.site && g.site.code ? h("pre", { class: "jm-d-code" }, String(g.site.code), ref) : null,
    ], ref)), ref),
  ], ref);
  const bar = h("div", { class: "jm-toolbar jm-grad-bar" }, [
    valuesToggle(ref, withValues, st.values, (on) => setValues(on)),
    legendLine(ref, [
      ...roleCounts(entry).map(([role, n]) => ({ key: role, text: `${role} ${n}`, swatch: ROLE_FILL[role] || "transparent" })),
      ...markLegend(recomputed.size, customs),
    ]),
  ], ref);
  const gradsSlot = h("div", null, null, ref);
  const body = h("div", { class: "jm-grad-body" }, [graphs, h("div", { class: "jm-grad-aside" }, [details, gradsSlot, sites], ref)], ref);
  slot.appendChild(h("div", { class: "jm-grad-entry", "data-origin": "jit", "data-entry-id": String(entry.id) }, [bar, body], ref));

  let residual = null;
  let shown = null;
  let ready = false; // the graph viewer reports its first (empty) selection while it is built
  const prog = graphPane(graphs, {
    fn: entry.program, graph: "program", engine: ctx.engine, title: "Jitted program",
    sub: `· ${plural(entry.program.n_eqns ?? 0, "eqn")} · forward, backward and the rest of the step`,
    opts: { onSelect: (key) => ready && onSelect(key), onStory: () => publish() },
  });
  const view = prog.view;
  if (ctx.key) view.setKey(nKey(ctx.key.node), false);
  view.setDecorations(decorator(entry.program, { roles: entry.roles || {}, recomputed }));
  const chips = [];
  for (const reg of entry.regions || []) {
    const where = reg.prefix ? `inside ${reg.prefix}` : "at the top level";
    const c = residualChips(ref, reg.residuals, entry.program, (id) => selectResidual(id),
      `Region ${reg.index} ${where}: ${reg.n_forward} forward, ${reg.n_backward} backward eqns${reg.n_recomputed ? `, ${reg.n_recomputed} recomputed` : ""}`);
    c.el.setAttribute("data-region", String(reg.index));
    graphs.appendChild(c.el);
    chips.push(c);
  }
  // Playback (play.js): the program in order, each step saying its role.
  const publish = entryPlayback(ctx, entry, [{ graph: "program", view }], () => chips.map((c) => c.el), { values: withValues });

  const dctx = () => ({
    entry, graph: "program", ix: view.index(), mode: mode(), links, recomputed,
    fnOf: () => entry.program, go: (g, key) => view.select(key), pickResidual: (id) => selectResidual(id),
  });
  const showNode = (key) => gradDetails(details, dctx(), (shown = key));
  const linkFrom = (key) => {
    const id = key && elementIds.isNode(key) ? elementIds.body(key) : null;
    const role = id ? (entry.roles || {})[id] : null;
    const ids = !id ? [] : role === "backward" ? links.toForward.get(id) || [] : links.toBackward.get(id) || [];
    view.highlight(ids.map(nKey), "jm-linked");
    if (ids.length) view.reveal([key, ...ids.map(nKey)]);
  };
  const onSelect = (key) => {
    clearResidual(false);
    linkFrom(key);
    showNode(key);
  };
  const clearResidual = (panel = true) => {
    if (!residual) return;
    residual = null;
    for (const c of chips) c.setActive(null);
    view.highlight([], "jm-res");
    if (panel) showNode(shown);
  };
  const selectResidual = (id) => {
    if (residual === id) return clearResidual();
    const r = residualById(entry, id);
    if (!r) return;
    residual = null; // a graph selection change must not clear what we set next
    view.select(null);
    residual = id;
    for (const c of chips) c.setActive(id);
    const t = residualTargets(entry, r).program;
    view.highlight(t.keys, "jm-res", t.vars);
    view.reveal(t.keys);
    residualDetails(details, dctx(), r);
  };
  const renderGrads = () => {
    clear(gradsSlot);
    if ((entry.grads_of || []).length) {
      gradsSlot.appendChild(gradList(ref, entry, { values: st.values && withValues, onPick: (row) => row.key && view.select(row.key) }));
    }
  };
  const setValues = (on) => {
    st.values = on;
    ctx.onState();
    view.setMode(mode());
    renderGrads();
    if (!residual) showNode(shown);
  };

  ready = true;
  renderGrads();
  if (st.values && withValues) view.setMode("forward");
  showNode(null);

  return {
    dispose: () => view.dispose(),
    selectResidual: (id) => residual !== id && selectResidual(id),
    selectNode: (graph, nodeId) => view.select(nKey(nodeId)),
    clear() {
      if (residual) return clearResidual();
      view.select(null);
    },
  };
}
