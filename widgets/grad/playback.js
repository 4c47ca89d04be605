/**
 * Playback of one grad entry: the entry's graphs (embedded graph viewers) play one
 * story (story.js) on the shared controls (widgets/ui/playback.js). The grad view owns the
 * story; each graph viewer only shows the position it is given (graph/replay.js).
 *
 * Each step: the graph playing marks its eqn (later ones faded); on a single step
 * forward the values run into it along its input edges, teal in a forward pass, orange
 * (the adjoint colour) in the backward pass, which is drawn mirrored so they run right
 * to left; the residual chips a step saves (forward) or reads (backward) light up with
 * the eqn (`.jm-pb-lit`, and the `jm-pb-res` mark on the graph). The end is the entry
 * as it was drawn: no mark, no lit chip.
 */
import { pKey } from "../graph/model.js";
import { nodesUnder } from "../graph/story.js";
import { gradLabels, partPositions, locate, residualsAt, adjointStep } from "./story.js";

/** The graph mark of what a playback step lights up. */
const MARK = "jm-pb-res";

/**
 * `panes`: `[{graph, view}]` in playing order (view: a graph viewer's controller);
 * `chips`: the bridges' elements holding `.jm-grad-chip[data-residual-id]`. Returns
 * `publish()`, to call whenever a graph drew anew (graphPane's onStory): it hands the
 * controls the story once every graph has one.
 */
export function entryPlayback(ctx, entry, panes, chips, { values = false } = {}) {
  const playback = ctx.playback;
  let lit = [];

  const light = (ids) => {
    for (const b of lit) b.classList.remove("jm-pb-lit");
    lit = [];
    for (const el of chips()) {
      for (const b of el.querySelectorAll(".jm-grad-chip[data-residual-id]")) {
        if (!ids.has(b.getAttribute("data-residual-id"))) continue;
        b.classList.add("jm-pb-lit");
        lit.push(b);
      }
    }
  };

  return function publish() {
    if (!playback) return;
    const stories = panes.map((p) => p.view.story());
    if (stories.some((s) => !s)) return; // a graph is still being laid out
    const parts = panes.map((p, j) => ({ graph: p.graph, view: p.view, ix: p.view.index(), keys: stories[j].keys }));
    const N = parts.reduce((s, p) => s + p.keys.length, 0);
    const label = gradLabels(entry, parts, { values });
    playback.set({
      steps: N,
      label,
      show(P, from) {
        const now = partPositions(parts, P), before = partPositions(parts, from);
        const at = P < N ? locate(parts, P) : null;
        parts.forEach((part, j) => {
          const playing = at && at.j === j;
          const tone = playing && adjointStep(entry, part.ix, part.keys[now[j] - 1]) ? "grad" : null;
          // A single step forward is one step of the playing graph, also its first one
          // (from "not started", -1, to 1): the values run into it.
          const step = playing && P === from + 1;
          part.view.play(now[j], step ? now[j] - 1 : before[j], { flow: step, tone });
          part.view.highlight([], MARK);
        });
        if (!at) return light(new Set());
        // Residuals the step saves or reads light up with it, on the graph and the bridge.
        const { part, i } = at;
        const key = part.keys[i - 1];
        const res = residualsAt(entry, part.graph, nodesUnder(part.ix, key));
        const rs = [...res.made, ...res.read];
        light(new Set(rs.map((r) => String(r.id))));
        if (!rs.length) return;
        const vars = part.graph === "backward" ? res.read.flatMap((r) => r.backward_vars || []) : [];
        part.view.highlight([key, ...vars.map(pKey)], MARK, vars);
      },
    });
  };
}
