/**
 * Playback of the keys view: the key events in program order (story.js) handed to the shared
 * controller (widgets/ui/playback.js), drawn on the tree as laid out (future keys faded, the
 * step's items marked, a reuse flashing red at its step). The story is made again when the
 * drawn tree changes (a fold, the filter); a selection or a search that re-lays out the same
 * items leaves playback where it is.
 */
import { keyEvents } from "./events.js";
import { keyStory } from "./story.js";

/**
 * @param v         the view's state (control.js KeysView): its model `m`, tree `st.tree` and `scene`
 * @param playback  the shared controller (`set(spec)`)
 * @returns {{refresh(): void}} `refresh()`: call after each relayout
 */
export function keysPlayback(v, playback) {
  const pb = { events: null, story: null, sig: null, saved: null };
  const { scene } = v;

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
      scene.setStepMarks(null);
      if (t) scene.setTransform(t.x, t.y, t.k);
      return;
    }
    if (from >= end || !pb.saved) pb.saved = { ...scene.transform };
    scene.setStepMarks(story.stepMarks(p));
    const step = p > 0 ? story.steps[p - 1] : null;
    const focus = step ? scene.itemOf(step.focus) : null;
    if (focus && !scene.visible(focus)) scene.centerOn(focus);
  }

  return {
    /** Give the controller the story of the tree just built, unless the drawn items are the same ones. */
    refresh() {
      const sig = v.st.tree.items.map((it) => it.key).join(" ");
      if (sig === pb.sig) return;
      pb.sig = sig;
      pb.events = pb.events || keyEvents(v.m);
      pb.story = keyStory(v.m, pb.events, v.st.tree);
      pb.saved = null;
      scene.setStepMarks(null);
      playback.set({ steps: pb.story.steps.length, show: showStep, label: (p) => pb.story.label(p) });
    },
  };
}
