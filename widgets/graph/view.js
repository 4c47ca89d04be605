/**
 * The graph view: header, one tab per Function, toolbar, SVG canvas, details panel
 * and linked text panes (jaxpr / StableHLO / HLO). Owns the interaction state (per
 * function: what is expanded, what is selected, search matches) and asks the layout
 * engine for a new layout whenever the expansion changes.
 *
 * Playback (widgets/ui/playback.js, `options.playback`): the current tab's eqns in trace
 * order as drawn (story.js), marked on the drawing (replay.js), the source lines in the
 * code strip (codestrip.js); in forward mode values flow into each eqn as it runs.
 * Presentation mode (`options.present`, or a `.jm-present` root) measures and draws the
 * graph with larger text (metrics.js PRESENT) and never zooms below legible.
 */
import { h } from "../ui/dom.js";
import { createViewState } from "./view-state.js";
import { buildViewDom } from "./view-dom.js";
import { installDrawing } from "./view-draw.js";
import { installFraming } from "./view-framing.js";
import { installSelection } from "./view-select.js";
import { installTabs } from "./view-tabs.js";
import { installModes, wireToolbar, bindShortcuts } from "./view-wiring.js";
import { viewController } from "./view-controller.js";

export { startOfComputation } from "./view-framing.js";

/**
 * Mount a graph view for `doc` into `root`.
 *
 * Other views embed it (the grad view draws a forward and a backward pass with it):
 * `opts.compact` leaves out the document header, the function tabs, the label-mode
 * switch and the side panel (the host shows its own details); `opts.mirrored` draws
 * right to left (mirror.js); `opts.tone` ("backward") recolours values for that pass
 * (a class, `.jm-tone-backward`, that both renderers read through CSS variables);
 * `opts.onSelect(key, ix)` hears every selection; `opts.label` names the drawing;
 * `opts.onStory()` hears that a new drawing changed the story (a host playing it back
 * sets its playback again). `opts.present` / `opts.playback` are what widgets/mount.js
 * passes a view: presentation mode, and the shared playback controls (a standalone view
 * plays its own story; an embedded one leaves the story to its host).
 *
 * @param {import("../types/documents").GraphDocument} doc a graph document in the logical form (decode.js decodes the wire form first)
 * @param {{run: Function, threaded?: boolean}} engine layout engine (see widgets/ui/layout-client.js)
 * @returns {() => void} cleanup, carrying the controller of the view for hosts:
 *   `dispose()`, `select(key)` (reveal, select, centre; null clears), `selected()`,
 *   `highlight(keys, cls, vars)` (mark elements, and edges carrying `vars`, with class
 *   `cls`; empty keys and vars remove it), `reveal(keys)` (open what hides them and
 *   bring them into view), `setMode(m)`, `setDecorations(fn)` (shown while the cost
 *   overlay is off), `fit()` (frame it as the first view does: whole, or readable),
 *   `index()` (the current function's index, model.js), `story()` (the drawn story,
 *   story.js storySteps, or null before the first drawing), `play(p, from, {flow, tone})`
 *   (show step p of it, replay.js; a host's playback drives it).
 */
export function graphView(root, doc, engine, opts = {}) {
  const v = createViewState(root, doc, engine, opts);
  v.ui = buildViewDom(v);
  if (!v.fns.length) {
    v.ui.toolbar.remove();
    v.ui.main.remove();
    v.ui.view.appendChild(h("div", { class: "jm-empty" }, "No jitted functions were recorded in this cell.", root));
    return () => { v.disposed = true; };
  }
  installDrawing(v);
  installFraming(v);
  installSelection(v);
  installTabs(v);
  wireToolbar(v);
  installModes(v);
  v.unbindKeys = bindShortcuts(v);
  /** Run `f` now when drawn, else once the first drawing is there (centring needs boxes). */
  v.onceDrawn = (f) => (v.drawn ? f() : v.whenDrawn.push(f));
  v.show(0);
  return viewController(v);
}
