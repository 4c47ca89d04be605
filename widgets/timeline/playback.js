/**
 * Playback of the timeline view: the story of story.js handed to the shared controller
 * (widgets/ui/playback.js) as `{steps, show, label}`.
 *
 * `show(p)` is random access and cheap: it computes one step's state (binary searches and
 * the step's own items), the per-function counters so far (running sums, sofar.js) and
 * hands both to the plot, which redraws one frame
 * over the same axis. Only a single step forward is animated (the present sweeps over the
 * step's calls, so a compile's trace, lower and compile spans appear in turn), and not at
 * all under prefers-reduced-motion. Position `steps` is the ordinary view: no veil, no
 * marks, the document's own totals.
 */
import { timelineStory, stepLabel, stepState } from "./story.js";
import { rowsSoFar } from "./sofar.js";

/** How long the present takes to sweep over one step (ms): under the 900 ms of a step at 1×. */
export const SWEEP_MS = 420;

/**
 * @param tl   readTimeline(doc)
 * @param o    `{plot, onStep, animate}`: `plot` from createPlot(...), `onStep(state | null)` the
 *             view follows (details, table), `animate()` false to show steps at once (reduced motion)
 * @returns {{story, spec}} the story (story.js) and the spec for `playback.set`
 */
export function timelinePlayback(tl, { plot, onStep, animate = () => true }) {
  const story = timelineStory(tl);
  const steps = story.n;
  const stateAt = (p) => {
    const s = stepState(tl, story, p);
    return { ...s, counts: rowsSoFar(tl, s.until) };
  };
  return {
    story,
    spec: {
      steps,
      show(p, from) {
        if (p >= steps) {
          plot.setPlayback(null);
          onStep(null);
          return;
        }
        const state = stateAt(p);
        if (p > 0 && p === from + 1 && animate()) plot.sweep(state, stepState(tl, story, from).now, SWEEP_MS);
        else plot.setPlayback(state);
        onStep(state);
      },
      label: (p) => stepLabel(tl, story, p),
    },
  };
}

/** True unless the user asked the system for less motion. */
export function motionAllowed(win) {
  return !(win && win.matchMedia && win.matchMedia("(prefers-reduced-motion: reduce)").matches);
}
