/**
 * The controller a graph view hands its host (view.js doc comment): select, highlight,
 * reveal, the key element, modes, decorations, framing, the index, the story and its
 * playback, and disposal. Reads and drives the view state `v`.
 */
import { reveal } from "./expansion.js";

/**
 * Open what hides `keys`, then bring them into view: all of them when they fit at a
 * readable zoom, else the first (callers put the most telling key first).
 */
function revealKeys(v, keys) {
  const { hood } = v.ui;
  if (hood.active() && (keys || []).some((k) => !v.st().ix.parent.has(k))) hood.exit(); // not in the neighbourhood
  const st = v.st();
  const known = (keys || []).filter((k) => st.ix.parent.has(k));
  if (!known.length) return;
  let changed = false;
  for (const k of known) changed = reveal(st.ix, st.expanded, k) || changed;
  // All of them when they fit at a legible zoom, else the first (framing.js).
  const go = () => {
    if (!v.drawn) return;
    const boxes = known.map(v.anchorBox).filter(Boolean);
    if (boxes.length && !boxes.every(v.inView)) v.reframe(boxes);
  };
  if (changed) v.relayout(go);
  else go();
}

/** The cleanup function returned by graphView, carrying the controller's methods. */
export function viewController(v) {
  const { ui } = v;
  const dispose = () => {
    v.disposed = true;
    if (v.ro) v.ro.disconnect();
    ui.stage.dispose();
    ui.panes.dispose();
    v.unbindKeys();
  };
  return Object.assign(dispose, {
    dispose,
    select: (key) => (key ? v.onceDrawn(() => v.focus(key)) : v.select(null)),
    selected: () => v.st().selected,
    highlight(keys, cls, vars) {
      const st = v.st();
      if ((keys && keys.length) || (vars && vars.length)) st.marks.set(cls, { keys: keys || [], vars: new Set(vars || []) });
      else st.marks.delete(cls);
      v.paintSelection();
    },
    reveal: (keys) => v.onceDrawn(() => revealKeys(v, keys)),
    /**
     * The element the host's story is about (a finding's node): framed first, and marked
     * `data-jm-key-element` unless `mark` is false (the host marks its own element).
     */
    setKey(key, mark = true) {
      const st = v.st();
      st.key = key || null;
      st.markKey = mark;
      if (v.drawn) v.markKey(st);
    },
    setMode: v.setMode,
    setDecorations(fn) {
      v.hostDecorate = fn || null;
      v.applyOverlay();
    },
    fit: v.firstView,
    index: () => v.st().ix,
    story: () => (v.drawn ? ui.replay.story() : null),
    play: (p, from, o) => ui.replay.show(p, from, o),
  });
}
