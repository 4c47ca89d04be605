/**
 * Forward mode (`origin: "tangent"`: jax.jvp, linearize, jacfwd): there is no backward pass
 * and nothing is saved, so one program is the whole story. Its nodes are filled by what
 * they compute: the primal (teal, as in a forward pass) or the tangent pushed alongside it
 * (orange, the derivative's colour); the legend counts them, the note says how JAX uses the
 * program (linearize keeps the tangent part, jacfwd runs it once per input element), and
 * the tangent inputs are listed by the pytree path of the leaf they perturb.
 */
import { h, clear } from "../ui/dom.js";
import { showDetails } from "../graph/details.js";
import { nKey, pKey } from "../graph/model.js";
import { decorator, plural } from "./model.js";
import { graphPane, legendLine } from "./pane.js";
import { entryPlayback } from "./playback.js";
import * as elementIds from "../graph/ids.js";

/** Fill of each role: the forward and backward fills of the reverse-mode views. */
export const TANGENT_FILL = { primal: "rgba(15,157,138,0.18)", tangent: "rgba(232,113,10,0.22)" };

/** Mount the entry into `slot` (ctx as for splitEntry). Returns the entry controller. */
export function tangentEntry(slot, entry, ctx) {
  const ref = slot;
  const roles = entry.roles || {};
  const t = entry.totals || {};
  const details = h("div", { class: "jm-details jm-grad-details", "aria-label": "details" }, null, ref);
  const inputs = h("div", { class: "jm-grad-grads" }, [
    h("h4", null, `Tangent inputs (${(entry.tangents_of || []).length})`, ref),
    h("ul", { class: "jm-grad-leaves" }, (entry.tangents_of || []).map((x) => {
      const b = h("button", { type: "button", class: "jm-grad-leaf", "data-path": String(x.path) },
        h("span", { class: "jm-grad-path" }, `tangent of ${String(x.path)}`, ref), ref);
      b.addEventListener("click", () => view.select(pKey(x.var)));
      return h("li", null, b, ref);
    }), ref),
  ], ref);
  const graphs = h("div", { class: "jm-grad-graphs jm-grad-column" }, null, ref);
  const bar = h("div", { class: "jm-toolbar jm-grad-bar" }, [
    legendLine(ref, [
      { key: "primal", text: `primal ${t.n_primal ?? 0}`, swatch: TANGENT_FILL.primal },
      { key: "tangent", text: `tangent ${t.n_tangent ?? 0}`, swatch: TANGENT_FILL.tangent },
    ]),
  ], ref);
  const note = entry.note ? h("div", { class: "jm-grad-note jm-grad-mode-note" }, String(entry.note), ref) : null;
  const body = h("div", { class: "jm-grad-body" }, [graphs, h("div", { class: "jm-grad-aside" }, [details, inputs], ref)], ref);
  slot.appendChild(h("div", { class: "jm-grad-entry", "data-origin": "tangent", "data-entry-id": String(entry.id) },
    [bar, note, body], ref));

  let ready = false;
  const show = (key) => {
    clear(details);
    if (!key) {
      details.appendChild(h("div", { class: "jm-muted" },
        `${entry.kind} of ${entry.name}: ${plural(t.n_primal ?? 0, "primal eqn")}, ${plural(t.n_tangent ?? 0, "tangent eqn")}. Select a node for its details.`, ref));
      return;
    }
    showDetails(details, view.index(), key, { mode: "trace" });
    if (elementIds.isNode(key) && roles[elementIds.body(key)]) {
      details.prepend(h("div", { class: "jm-grad-role" }, `computes the ${roles[elementIds.body(key)]}`, ref));
    }
  };
  const { view } = graphPane(graphs, {
    fn: entry.program, graph: "program", engine: ctx.engine, title: "Forward-mode program",
    sub: `· ${plural(entry.program.n_eqns ?? 0, "eqn")} · outputs and their tangents in one pass`,
    opts: { onSelect: (key) => ready && show(key), onStory: () => publish() },
  });
  // Playback (playback.js): the program in order, each step primal or tangent; nothing is saved.
  const publish = entryPlayback(ctx, entry, [{ graph: "program", view }], () => [],
    { values: !!(entry.program && entry.program.values) });
  view.setDecorations(decorator(entry.program, { roles, fills: TANGENT_FILL }));
  ready = true;
  show(null);
  return {
    dispose: () => view.dispose(),
    selectResidual: () => {},
    selectNode: (graph, nodeId) => view.select(nKey(nodeId)),
    clear: () => view.select(null),
  };
}
