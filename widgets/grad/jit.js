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
import { linkMaps, residualTargets, residualById, decorator, roleCounts, ROLE_FILL, customNodes, hasValues, plural } from "./model.js";
import { residualChips } from "./bridge.js";
import { gradList } from "./grads.js";
import { gradDetails, residualDetails } from "./details.js";
import { graphPane, valuesToggle, legendLine, markLegend } from "./pane.js";
import { entryPlayback } from "./playback.js";
import * as elementIds from "../graph/ids.js";


/** Where `grad` was called: one line per site, with its code. */
function sitesList(ref, entry) {
  return h("div", { class: "jm-grad-sites" }, [
    h("h4", null, `grad called (${(entry.grad_sites || []).length})`, ref),
    h("ul", { class: "jm-grad-leaves" }, (entry.grad_sites || []).map((g) => h("li", { class: "jm-grad-site" }, [
      h("span", { class: "jm-grad-path" }, `${g.kind} of ${g.name}`, ref),
      h("span", { class: "jm-muted" }, ` ${g.site ? srcText(g.site) : ""}${g.count > 1 ? ` ×${g.count}` : ""}${g.batch ? ` · ${g.batch}` : ""}`, ref),
      g.site && g.site.code ? h("pre", { class: "jm-d-code" }, String(g.site.code), ref) : null,
    ], ref)), ref),
  ], ref);
}

/** One bridge of residual chips per region, under the program. */
function regionChips(E) {
  const { ref, entry } = E;
  return (entry.regions || []).map((reg) => {
    const where = reg.prefix ? `inside ${reg.prefix}` : "at the top level";
    const c = residualChips(ref, reg.residuals, entry.program, (id) => selectResidual(E, id),
      `Region ${reg.index} ${where}: ${reg.n_forward} forward, ${reg.n_backward} backward eqns${reg.n_recomputed ? `, ${reg.n_recomputed} recomputed` : ""}`);
    c.el.setAttribute("data-region", String(reg.index));
    E.graphs.appendChild(c.el);
    return c;
  });
}

/** The context the details panel reads (details.js). */
const detailsContext = (E) => ({
  entry: E.entry, graph: "program", ix: E.view.index(), mode: E.mode(), links: E.links, recomputed: E.recomputed,
  fnOf: () => E.entry.program, go: (g, key) => E.view.select(key), pickResidual: (id) => selectResidual(E, id),
});

const showNode = (E, key) => gradDetails(E.details, detailsContext(E), (E.shown = key));

/** Light the nodes linked to the selection: a backward node's forward nodes, a forward node's backward ones. */
function linkFrom(E, key) {
  const id = key && elementIds.isNode(key) ? elementIds.body(key) : null;
  const role = id ? (E.entry.roles || {})[id] : null;
  const ids = !id ? [] : role === "backward" ? E.links.toForward.get(id) || [] : E.links.toBackward.get(id) || [];
  E.view.highlight(ids.map(nKey), "jm-linked");
  if (ids.length) E.view.reveal([key, ...ids.map(nKey)]);
}

function onSelect(E, key) {
  clearResidual(E, false);
  linkFrom(E, key);
  showNode(E, key);
}

function clearResidual(E, panel = true) {
  if (!E.residual) return;
  E.residual = null;
  for (const c of E.chips) c.setActive(null);
  E.view.highlight([], "jm-res");
  if (panel) showNode(E, E.shown);
}

/** Light residual `id` (its producer, consumers and the edges between), or clear it when it is lit. */
function selectResidual(E, id) {
  if (E.residual === id) return clearResidual(E);
  const r = residualById(E.entry, id);
  if (!r) return;
  E.residual = null; // a graph selection change must not clear what we set next
  E.view.select(null);
  E.residual = id;
  for (const c of E.chips) c.setActive(id);
  const t = residualTargets(E.entry, r).program;
  E.view.highlight(t.keys, "jm-res", t.vars);
  E.view.reveal(t.keys);
  residualDetails(E.details, detailsContext(E), r);
}

function renderGrads(E) {
  clear(E.gradsSlot);
  if ((E.entry.grads_of || []).length) {
    const values = E.st.values && E.withValues;
    E.gradsSlot.appendChild(gradList(E.ref, E.entry, { values, onPick: (row) => row.key && E.view.select(row.key) }));
  }
}

function setValues(E, on) {
  E.st.values = on;
  E.ctx.onState();
  E.view.setMode(E.mode());
  renderGrads(E);
  if (!E.residual) showNode(E, E.shown);
}

/** The entry's parts (toolbar, graphs column, aside) mounted into `slot`; their elements go into `E`. */
function jitLayout(slot, E) {
  const { ref, entry } = E;
  E.graphs = h("div", { class: "jm-grad-graphs jm-grad-column" }, null, ref);
  E.details = h("div", { class: "jm-details jm-grad-details", "aria-label": "details" }, null, ref);
  const sites = sitesList(ref, entry);
  const bar = h("div", { class: "jm-toolbar jm-grad-bar" }, [
    valuesToggle(ref, E.withValues, E.st.values, (on) => setValues(E, on)),
    legendLine(ref, [
      ...roleCounts(entry).map(([role, n]) => ({ key: role, text: `${role} ${n}`, swatch: ROLE_FILL[role] || "transparent" })),
      ...markLegend(E.recomputed.size, customNodes(entry.program).length),
    ]),
  ], ref);
  E.gradsSlot = h("div", null, null, ref);
  const body = h("div", { class: "jm-grad-body" }, [E.graphs, h("div", { class: "jm-grad-aside" }, [E.details, E.gradsSlot, sites], ref)], ref);
  slot.appendChild(h("div", { class: "jm-grad-entry", "data-origin": "jit", "data-entry-id": String(entry.id) }, [bar, body], ref));
}

/** Mount the entry into `slot` (ctx as for splitEntry). Returns the same controller. */
export function jitEntry(slot, entry, ctx) {
  const st = ctx.state, withValues = hasValues(entry);
  /** @type {any} */
  const E = {
    ref: slot, entry, ctx, st, withValues, links: linkMaps(entry),
    recomputed: new Set((entry.regions || []).flatMap((r) => r.recomputed || [])),
    mode: () => (st.values && withValues ? "forward" : "trace"),
    residual: null, shown: null, chips: [],
  };
  jitLayout(slot, E);
  let ready = false; // the graph viewer reports its first (empty) selection while it is built
  const prog = graphPane(E.graphs, {
    fn: entry.program, graph: "program", engine: ctx.engine, title: "Jitted program",
    sub: `· ${plural(entry.program.n_eqns ?? 0, "eqn")} · forward, backward and the rest of the step`,
    opts: { onSelect: (key) => ready && onSelect(E, key), onStory: () => publish() },
  });
  const view = (E.view = prog.view);
  if (ctx.key) view.setKey(nKey(ctx.key.node), false);
  view.setDecorations(decorator(entry.program, { roles: entry.roles || {}, recomputed: E.recomputed }));
  E.chips = regionChips(E);
  // Playback (playback.js): the program in order, each step saying its role.
  const publish = entryPlayback(ctx, entry, [{ graph: "program", view }], () => E.chips.map((c) => c.el), { values: withValues });
  ready = true;
  renderGrads(E);
  if (st.values && withValues) view.setMode("forward");
  showNode(E, null);
  return {
    dispose: () => view.dispose(),
    selectResidual: (id) => E.residual !== id && selectResidual(E, id),
    selectNode: (graph, nodeId) => view.select(nKey(nodeId)),
    clear() {
      if (E.residual) return clearResidual(E);
      view.select(null);
    },
  };
}
