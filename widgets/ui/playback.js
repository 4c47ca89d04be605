/**
 * Step-through playback shared by every view: the controls (⏮ ◀ ▶/❚❚ ▶ ⏭, a slider, the speed),
 * the clock and the keyboard. A view only says how many steps its story has and how to show
 * the state after `p` of them; where a step is and what it looks like stay the view's own.
 *
 * Why one controller for all views: a speaker learns one set of controls (space, ←/→, Home/End),
 * the browser tests drive every view the same way, and "the last step equals the static view"
 * holds by construction: position `steps` is the view's ordinary, complete state, and a view
 * opens there, so playback never hides anything from a user who did not ask for it.
 *
 * A spec is `{steps, show(p, from), label(p)}`:
 * - `steps`: the number of steps (0 disables the controls);
 * - `show(p, from)`: draw the state after the first `p` steps (0 ≤ p ≤ steps); `from` is the
 *   position shown before, so a view can animate only a forward single step (`p === from + 1`)
 *   and redraw otherwise. `show(steps)` must restore the ordinary view.
 * - `label(p)`: one line saying what step `p` (1-based: the step just taken) did; `label(0)` says
 *   what playback starts from.
 */
import { h, s as svg, clear } from "./dom.js";
import { plural } from "./words.js";

/** Milliseconds per step at 1×; a speaker reads one step's line at this pace. */
export const BASE_INTERVAL_MS = 900;
export const SPEEDS = [0.5, 1, 2, 4, 8];

/**
 * Button icons as SVG paths (16x16): drawn, not typed, because the media-control characters
 * (⏮ ⏭) are missing from common fonts and show as empty boxes.
 */
const ICONS = {
  first: "M3 2h2v12H3zM14 2v12L6 8z",
  back: "M12 2v12L4 8z",
  play: "M4 2v12l10-6z",
  pause: "M4 2h3v12H4zM9 2h3v12H9z",
  fwd: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2zM2 2v12l8-6z",
};

function icon(name, ref) {
  return svg("svg", { viewBox: "0 0 16 16", class: "jm-pb-icon", "aria-hidden": "true", focusable: "false" },
    svg("path", { d: ICONS[name] }, null, ref), ref);
}

/** True when a keydown belongs to a text field, a select or a button's own activation. */
function ownedByControl(e) {
  const t = e.target;
  if (!t || !t.closest) return false;
  if (t.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']")) return true;
  return e.key === " " && !!t.closest("button, a[href], [role='button'], [role='treeitem'], summary");
}

/**
 * The step line while a view is as it opened (its complete state, nothing played yet): one
 * line saying there is a story to play, rather than the last step's sentence, which reads as
 * if the view were about that step alone and takes up to three lines above the first screen.
 */
export function openingLine(steps) {
  return `${plural(steps, "step")} · ▶ or space plays them from the start`;
}

/**
 * Create the controls in `bar` (an element the caller places) and bind the keyboard on `root`.
 * Returns `{set(spec), clear(), position(), playing(), dispose()}`; `set` replaces the story
 * (a view switching tabs gives the new tab's) and leaves the view at its complete state.
 */
export function createPlayback(root, bar, { timers = globalThis } = {}) {
  let spec = null;
  let pos = 0;
  let speed = 1;
  let timer = null;
  // True from `set` until the first move: the view shows its whole picture, not "the last step".
  let opened = false;
  const ref = root;

  const btn = (name, title, onClick) => {
    const b = h("button", { type: "button", class: `jm-pb-btn jm-pb-${name}`, title, "aria-label": title }, icon(name, ref), ref);
    b.addEventListener("click", onClick);
    return b;
  };
  const first = btn("first", "back to the start (Home)", () => go(0));
  const back = btn("back", "step back (←)", () => go(pos - 1));
  const play = btn("play", "play (space)", () => toggle());
  const fwd = btn("fwd", "step forward (→)", () => go(pos + 1));
  const last = btn("last", "to the end (End)", () => go(spec ? spec.steps : 0));
  const playIcon = (name, title) => {
    clear(play).appendChild(icon(name, ref));
    play.setAttribute("title", title);
    play.setAttribute("aria-label", title);
  };
  const slider = h("input", { type: "range", class: "jm-pb-slider", min: "0", max: "0", value: "0", step: "1",
    "aria-label": "playback position" }, null, ref);
  slider.addEventListener("input", () => go(Number(slider.value)));
  const speedSel = h("select", { class: "jm-pb-speed", "aria-label": "playback speed", title: "speed" },
    SPEEDS.map((v) => h("option", { value: String(v), selected: v === 1 }, `${v}×`, ref)), ref);
  speedSel.addEventListener("change", () => {
    speed = Number(speedSel.value) || 1;
    if (timer) restartClock();
  });
  const counter = h("span", { class: "jm-pb-count", "aria-live": "off" }, "", ref);
  const line = h("div", { class: "jm-pb-label", role: "status", "aria-live": "polite" }, "", ref);
  const controls = h("div", { class: "jm-pb-controls", role: "group", "aria-label": "playback" },
    [first, back, play, fwd, last, slider, counter, speedSel], ref);
  bar.appendChild(h("div", { class: "jm-pb" }, [controls, line], ref));
  bar.hidden = true;

  function stopClock() {
    if (timer) timers.clearInterval(timer);
    timer = null;
    playIcon("play", "play (space)");
    root.classList.remove("jm-playing");
  }

  function restartClock() {
    if (timer) timers.clearInterval(timer);
    timer = timers.setInterval(() => {
      if (!spec || pos >= spec.steps) return stopClock();
      go(pos + 1, true);
      if (pos >= spec.steps) stopClock();
    }, BASE_INTERVAL_MS / speed);
  }

  function refresh() {
    const n = spec ? spec.steps : 0;
    slider.max = String(n);
    slider.value = String(pos);
    counter.textContent = `${pos} / ${n}`;
    first.disabled = back.disabled = pos <= 0;
    fwd.disabled = last.disabled = pos >= n;
    root.classList.toggle("jm-pb-active", !!spec && pos < n);
    const opening = opened && !!spec && pos >= n;
    line.textContent = opening ? openingLine(n) : labelOf(pos);
    line.classList.toggle("jm-pb-opening", opening);
  }

  function labelOf(p) {
    try {
      return spec && spec.label ? String(spec.label(p) ?? "") : "";
    } catch (err) {
      return "";
    }
  }

  /** Show position `p` (clamped). `fromClock` keeps the clock running; any other move pauses. */
  function go(p, fromClock = false) {
    if (!spec) return;
    opened = false;
    if (!fromClock) stopClock();
    const next = Math.max(0, Math.min(spec.steps, Math.round(p)));
    const from = pos;
    pos = next;
    try {
      spec.show(next, from);
    } finally {
      refresh();
    }
  }

  function toggle() {
    if (!spec || !spec.steps) return;
    if (timer) return stopClock();
    if (pos >= spec.steps) go(0);
    playIcon("pause", "pause (space)");
    root.classList.add("jm-playing");
    restartClock();
  }

  const KEYS = {
    " ": () => toggle(),
    ArrowRight: () => go(pos + 1),
    ArrowLeft: () => go(pos - 1),
    Home: () => go(0),
    End: () => go(spec.steps),
  };
  const onKey = (e) => {
    if (!spec || !spec.steps || e.defaultPrevented) return;
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing || ownedByControl(e)) return;
    const act = KEYS[e.key];
    if (!act) return;
    e.preventDefault();
    e.stopPropagation(); // keep Jupyter's command-mode keys out of it
    act();
  };
  root.addEventListener("keydown", onKey);

  return {
    set(next) {
      stopClock();
      spec = next && next.steps > 0 ? next : null;
      pos = spec ? spec.steps : 0;
      opened = true;
      bar.hidden = !spec;
      refresh();
    },
    clear() {
      this.set(null);
    },
    position: () => pos,
    playing: () => !!timer,
    /** Programmatic control, for tests and for `--play`. */
    go,
    toggle,
    dispose() {
      stopClock();
      spec = null;
      root.removeEventListener("keydown", onKey);
    },
  };
}
