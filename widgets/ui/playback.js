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

/** The controls: ⏮ ◀ ▶/❚❚ ▶ ⏭, the slider, the step counter, the speed, and the step line below. */
function playbackControls(ref, on) {
  const btn = (name, title, onClick) => {
    const b = /** @type {HTMLButtonElement} */ (h("button", { type: "button", class: `jm-pb-btn jm-pb-${name}`, title, "aria-label": title }, icon(name, ref), ref));
    b.addEventListener("click", onClick);
    return b;
  };
  const first = btn("first", "back to the start (Home)", on.first);
  const back = btn("back", "step back (←)", on.back);
  const play = btn("play", "play (space)", on.toggle);
  const fwd = btn("fwd", "step forward (→)", on.fwd);
  const last = btn("last", "to the end (End)", on.last);
  const slider = /** @type {HTMLInputElement} */ (h("input", { type: "range", class: "jm-pb-slider", min: "0", max: "0", value: "0", step: "1",
    "aria-label": "playback position" }, null, ref));
  slider.addEventListener("input", () => on.seek(Number(slider.value)));
  const speedSel = /** @type {HTMLSelectElement} */ (h("select", { class: "jm-pb-speed", "aria-label": "playback speed", title: "speed" },
    SPEEDS.map((v) => h("option", { value: String(v), selected: v === 1 }, `${v}×`, ref)), ref));
  speedSel.addEventListener("change", () => on.speed(Number(speedSel.value) || 1));
  const counter = h("span", { class: "jm-pb-count", "aria-live": "off" }, "", ref);
  const line = h("div", { class: "jm-pb-label", role: "status", "aria-live": "polite" }, "", ref);
  const controls = h("div", { class: "jm-pb-controls", role: "group", "aria-label": "playback" },
    [first, back, play, fwd, last, slider, counter, speedSel], ref);
  return { el: h("div", { class: "jm-pb" }, [controls, line], ref), first, back, play, fwd, last, slider, counter, line };
}

/**
 * @typedef {object} PlaybackState  the controller's state
 * @property {HTMLElement} root
 * @property {any} timers           setInterval / clearInterval (tests pass fake ones)
 * @property {{steps: number, show(p: number, from: number): void, label?(p: number): string} | null} spec
 * @property {number} pos           the position shown
 * @property {number} speed
 * @property {any} timer            the running clock, or null
 * @property {boolean} opened       from `set` until the first move: the view shows its whole picture, not "the last step"
 * @property {ReturnType<typeof playbackControls>} ui
 */

function playIcon(P, name, title) {
  const play = P.ui.play;
  clear(play).appendChild(icon(name, P.root));
  play.setAttribute("title", title);
  play.setAttribute("aria-label", title);
}

function stopClock(P) {
  if (P.timer) P.timers.clearInterval(P.timer);
  P.timer = null;
  playIcon(P, "play", "play (space)");
  P.root.classList.remove("jm-playing");
}

function restartClock(P) {
  if (P.timer) P.timers.clearInterval(P.timer);
  P.timer = P.timers.setInterval(() => {
    if (!P.spec || P.pos >= P.spec.steps) return stopClock(P);
    go(P, P.pos + 1, true);
    if (P.pos >= P.spec.steps) stopClock(P);
  }, BASE_INTERVAL_MS / P.speed);
}

function labelOf(P, p) {
  try {
    return P.spec && P.spec.label ? String(P.spec.label(p) ?? "") : "";
  } catch (err) {
    return "";
  }
}

/** The controls and the step line for the position shown. */
function refresh(P) {
  const { ui, pos, spec } = P;
  const n = spec ? spec.steps : 0;
  ui.slider.max = String(n);
  ui.slider.value = String(pos);
  ui.counter.textContent = `${pos} / ${n}`;
  ui.first.disabled = ui.back.disabled = pos <= 0;
  ui.fwd.disabled = ui.last.disabled = pos >= n;
  P.root.classList.toggle("jm-pb-active", !!spec && pos < n);
  const opening = P.opened && !!spec && pos >= n;
  ui.line.textContent = opening ? openingLine(n) : labelOf(P, pos);
  ui.line.classList.toggle("jm-pb-opening", opening);
}

/** Show position `p` (clamped). `fromClock` keeps the clock running; any other move pauses. */
function go(P, p, fromClock = false) {
  if (!P.spec) return;
  P.opened = false;
  if (!fromClock) stopClock(P);
  const next = Math.max(0, Math.min(P.spec.steps, Math.round(p)));
  const from = P.pos;
  P.pos = next;
  try {
    P.spec.show(next, from);
  } finally {
    refresh(P);
  }
}

function toggle(P) {
  if (!P.spec || !P.spec.steps) return;
  if (P.timer) return stopClock(P);
  if (P.pos >= P.spec.steps) go(P, 0);
  playIcon(P, "pause", "pause (space)");
  P.root.classList.add("jm-playing");
  restartClock(P);
}

/** The keyboard: space plays / pauses, ← → step, Home End jump; keys of a control or with a modifier are left alone. */
function keyHandler(P) {
  const KEYS = {
    " ": () => toggle(P),
    ArrowRight: () => go(P, P.pos + 1),
    ArrowLeft: () => go(P, P.pos - 1),
    Home: () => go(P, 0),
    End: () => go(P, P.spec.steps),
  };
  return (e) => {
    if (!P.spec || !P.spec.steps || e.defaultPrevented) return;
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing || ownedByControl(e)) return;
    const act = KEYS[e.key];
    if (!act) return;
    e.preventDefault();
    e.stopPropagation(); // keep Jupyter's command-mode keys out of it
    act();
  };
}

/**
 * Create the controls in `bar` (an element the caller places) and bind the keyboard on `root`.
 * Returns `{set(spec), clear(), position(), playing(), dispose()}`; `set` replaces the story
 * (a view switching tabs gives the new tab's) and leaves the view at its complete state.
 */
export function createPlayback(root, bar, { timers = globalThis } = {}) {
  /** @type {PlaybackState} */
  const P = { root, timers, spec: null, pos: 0, speed: 1, timer: null, opened: false, ui: null };
  P.ui = playbackControls(root, {
    first: () => go(P, 0),
    back: () => go(P, P.pos - 1),
    toggle: () => toggle(P),
    fwd: () => go(P, P.pos + 1),
    last: () => go(P, P.spec ? P.spec.steps : 0),
    seek: (p) => go(P, p),
    speed: (v) => {
      P.speed = v;
      if (P.timer) restartClock(P);
    },
  });
  bar.appendChild(P.ui.el);
  bar.hidden = true;
  const onKey = keyHandler(P);
  root.addEventListener("keydown", onKey);

  return {
    set(next) {
      stopClock(P);
      P.spec = next && next.steps > 0 ? next : null;
      P.pos = P.spec ? P.spec.steps : 0;
      P.opened = true;
      bar.hidden = !P.spec;
      refresh(P);
    },
    clear() {
      this.set(null);
    },
    position: () => P.pos,
    playing: () => !!P.timer,
    /** Programmatic control, for tests and for `--play`. */
    go: (p, fromClock = false) => go(P, p, fromClock),
    toggle: () => toggle(P),
    dispose() {
      stopClock(P);
      P.spec = null;
      root.removeEventListener("keydown", onKey);
    },
  };
}
