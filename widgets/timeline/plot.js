/**
 * The interactive timeline canvas: which time window and which lanes are shown, and
 * what the pointer does there.
 *
 * - wheel over the plot zooms around the pointer (horizontal wheel pans); over the
 *   names it scrolls the lanes when there are more than fit;
 * - drag pans; shift-drag brushes a time range (`onBrush([a, b])`);
 * - on the overview strip: drag picks the window, a click centres it;
 * - hover shows a tooltip (.jm-tl-tip), a click selects the call under the pointer
 *   (`onSelect(call | -1, lane)`), nearest within HIT_PX.
 *
 * Redraws are coalesced to one per animation frame; `.jm-tl-plot[data-draws]`
 * counts them and `canvas.jmProbe` tells tests and automation where things are.
 *
 * Colours: nothing is drawn before the canvas is in a document (a widget may be rendered
 * into a detached element; its theme variables read "" there and the canvas would paint
 * black), and the palette is read again when the host's theme changes (theme-watch.js).
 * `.jm-tl-plot` is the drawing pane of the shared contract: `data-jm-pane="timeline"`,
 * `data-jm-framed`, `data-jm-text-px`, `data-jm-drawing` and, when a call recompiled,
 * `data-jm-key-rect` (the first recompile's marker), set on every frame.
 *
 * Playback (`setPlayback`) only changes what one frame draws over the same axis: the window
 * and the rows stay where the user left them (a lane scrolls into the rows when a step
 * happens in it). `sweep` moves the present from one time to the next over a few frames, so
 * a compile's trace, lower and compile spans appear one after the other.
 */
import { h } from "../ui/dom.js";
import { callAt, spanAt, firstRecompile } from "./model.js";
import { drawFrame, frameLayout, readPalette, PRESENT_SCALE, FONT, sizes } from "./draw.js";
import { whenConnected, watchTheme } from "../ui/theme-watch.js";
import { callTip, spanTip } from "./details.js";

/** Lanes shown at once; more scroll. */
export const MAX_ROWS = 12;
/** Lanes shown at once in presentation mode: rows are 1.6 times taller and a projector is 720 px high. */
export const PRESENT_ROWS = 6;
/** A call within this many px of the pointer is "under" it. */
export const HIT_PX = 4;
/** Narrowest window (µs): documents count whole µs. */
const MIN_SPAN = 20;

/**
 * @param ref  widget root (owner document)
 * @param tl   readTimeline(doc)
 * @param on   {onSelect(call | -1, lane), onBrush(range), onWindow(t0, t1), present: presentation mode}
 */
export function createPlot(ref, tl, { onSelect, onBrush, onWindow, present = false }) {
  const canvas = h("canvas", { class: "jm-tl-canvas", role: "img", "aria-label": "JIT timeline" }, null, ref);
  const tip = h("div", { class: "jm-tl-tip", hidden: true, role: "tooltip" }, "", ref);
  const el = h("div", { class: "jm-tl-plot", "data-jm-pane": "timeline" }, [canvas, tip], ref);
  const win = ref.ownerDocument.defaultView;
  const D = Math.max(1, tl.duration);
  // pick: a window being dragged out on the overview
  const st = { selected: -1, brush: null, pick: null, missesOnly: false, playback: null };
  const k = present ? PRESENT_SCALE : 1, maxRows = present ? PRESENT_ROWS : MAX_ROWS;
  let sweepId = 0, sweeps = 0; // the running sweep (0: none; ids never repeat); a new state or sweep cancels it
  let t0 = 0, t1 = D, offset = 0, focus = null, draws = 0, pending = 0, pal = null, ctx = null, drag = null, noClick = false;
  const cache = {};
  const recompile = firstRecompile(tl); // the call the story points at: its marker is the key rect
  let waiting = null; // stops waiting for the canvas to be attached
  const unwatch = watchTheme(canvas, () => {
    pal = null; // the host changed theme: read the colours again
    schedule();
  });

  /** Lanes that can be shown: all, or with "misses only" those that missed or compiled. */
  const shown = () => tl.lanes.filter((l) => !st.missesOnly || l.misses > 0 || l.compiles > 0).map((l) => l.pos);
  const rows = () => shown().slice(offset, offset + maxRows);
  // No width yet (hidden, or jsdom): draw 800 px wide.
  const layout = () => frameLayout(canvas.clientWidth || 800, Math.max(1, Math.min(maxRows, shown().length)), k);

  const render = () => {
    pending = 0;
    if (!canvas.isConnected) {
      // Not in a document yet: its colours cannot be read. Draw once it is.
      waiting = waiting || whenConnected(canvas, () => {
        waiting = null;
        schedule();
      });
      return;
    }
    const L = layout(), dpr = win.devicePixelRatio || 1;
    const bw = Math.round(L.w * dpr), bh = Math.round(L.h * dpr);
    if (canvas.width !== bw || canvas.height !== bh) [canvas.width, canvas.height] = [bw, bh]; // resizing clears: only on change
    canvas.style.height = `${L.h}px`;
    ctx = ctx || canvas.getContext("2d");
    if (!ctx) return;
    pal = pal || readPalette(canvas);
    drawFrame(ctx, tl, { w: L.w, h: L.h, dpr, t0, t1, rows: rows(), focus, k }, st, pal, cache);
    el.setAttribute("data-draws", String(++draws));
    publish(L);
  };
  /** The pane's contract attributes for the frame just drawn (see the module comment). */
  const publish = (L) => {
    const f = framing(L);
    el.setAttribute("data-jm-framed", f.framed);
    el.setAttribute("data-jm-text-px", f.textPx.toFixed(1));
    el.setAttribute("data-jm-drawing", f.drawing.map((v) => Math.round(v)).join(","));
    const r = recompile >= 0 ? markerRect(L, recompile) : null;
    if (r) el.setAttribute("data-jm-key-rect", r.map((v) => Math.round(v * 10) / 10).join(","));
    else el.removeAttribute("data-jm-key-rect");
  };
  /**
   * "whole" when the window holds the whole capture and every lane is a row, else "part";
   * the smallest text as drawn; the box of the whole drawing (every lane, the whole capture)
   * relative to the pane at the current zoom.
   */
  const framing = (L) => {
    const span = Math.max(1e-9, t1 - t0), all = shown().length;
    const x0 = L.plotX + ((0 - t0) / span) * L.plotW, x1 = L.plotX + ((D - t0) / span) * L.plotW;
    const left = Math.min(0, x0 - L.plotX), full = frameLayout(L.w, Math.max(1, all), k);
    const whole = t0 <= 0 && t1 >= D && all <= maxRows;
    return {
      framed: whole ? "whole" : "part",
      textPx: Math.min(...Object.values(FONT)) * k,
      drawing: [left, -offset * L.rowH, Math.max(L.w, x1 + sizes(k).geo.padR) - left, full.h],
    };
  };
  /** [x, y, w, h] of call c's miss marker in the pane, or null when its lane or time is not shown. */
  const markerRect = (L, c) => {
    const r = rows().indexOf(tl.calls.lane[c]), t = tl.calls.start[c];
    if (r < 0 || t < t0 || t > t1) return null;
    const { band, k: s } = sizes(k);
    const x = L.plotX + ((t - t0) / (t1 - t0)) * L.plotW;
    return [x - 3.5 * s, L.rowsY + r * L.rowH + band.markY, 7 * s, 7 * s];
  };
  const schedule = () => {
    pending = pending || (win.requestAnimationFrame ? win.requestAnimationFrame(render) : win.setTimeout(render, 16));
  };

  // ---- the window and the rows ---------------------------------------------------

  const setWindow = (a, b) => {
    const pad = 0.02 * D, span = Math.min(D + 2 * pad, Math.max(MIN_SPAN, b - a));
    t0 = Math.max(-pad, Math.min(a, D + pad - span));
    t1 = t0 + span;
    schedule();
    onWindow(t0, t1);
  };
  const zoomAt = (t, f) => setWindow(t - (t - t0) / f, t + (t1 - t) / f);
  /** Make lane `l` one of the shown rows, scrolling as little as possible. */
  const revealLane = (l) => {
    const i = shown().indexOf(l);
    if (i >= 0) offset = Math.min(i, Math.max(offset, i - maxRows + 1));
  };
  const scrollRows = (d) => {
    const o = Math.max(0, Math.min(shown().length - maxRows, offset + d));
    if (o === offset) return false;
    offset = o;
    schedule();
    return true;
  };

  // ---- pointer ----------------------------------------------------------------------

  /** Client point -> {x, y, where: plot | labels | overview | none, t, lane, L}. */
  const locate = (e) => {
    const b = canvas.getBoundingClientRect(), L = layout();
    const x = e.clientX - b.left, y = e.clientY - b.top, fx = (x - L.plotX) / L.plotW;
    if (y >= L.ovY && y <= L.ovY + L.ovH && fx >= 0) return { x, y, where: "overview", t: fx * D, L };
    const lane = rows()[Math.floor((y - L.rowsY) / L.rowH)];
    return { x, y, where: lane == null || y < L.rowsY ? "none" : fx < 0 ? "labels" : "plot", t: t0 + fx * (t1 - t0), lane, L };
  };
  /** The call (or, where there is none, the span) under a located point: {call} | {span} | {}. */
  const under = (p) => {
    if (p.where !== "plot") return {};
    const tol = (HIT_PX * (t1 - t0)) / p.L.plotW;
    const c = callAt(tl, p.lane, p.t, tol, st);
    const s = c < 0 ? spanAt(tl, p.lane, p.t, tol) : -1;
    return c >= 0 ? { call: c } : s >= 0 ? { span: s } : {};
  };

  const on = (ev, fn, opts) => canvas.addEventListener(ev, fn, opts);
  on("wheel", (e) => {
    const p = locate(e);
    if (p.where === "plot" || p.where === "overview") {
      e.preventDefault();
      const unit = e.deltaMode === 1 ? 0.05 : e.deltaMode === 2 ? 1 : 0.0025;
      if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) setWindow(t0 + e.deltaX * unit * 0.4 * (t1 - t0), t1 + e.deltaX * unit * 0.4 * (t1 - t0));
      else zoomAt(p.t, Math.exp(-e.deltaY * unit));
    } else if (scrollRows(Math.sign(e.deltaY))) e.preventDefault();
  }, { passive: false });
  on("pointerdown", (e) => {
    const p = locate(e);
    if (e.button !== 0 || (p.where !== "plot" && p.where !== "overview")) return;
    drag = { mode: p.where === "overview" ? "window" : e.shiftKey ? "brush" : "pan", sx: e.clientX, t: p.t, t0, t1, moved: false };
    try {
      canvas.setPointerCapture(e.pointerId);
    } catch (err) {
      /* a synthetic or finished pointer: the drag still follows it over the canvas */
    }
  });
  on("pointermove", (e) => {
    const p = locate(e);
    if (!drag) return hover(p);
    const dx = e.clientX - drag.sx;
    if (!drag.moved && Math.abs(dx) < 4) return;
    drag.moved = true;
    tip.hidden = true;
    if (drag.mode === "pan") {
      const dt = (dx / p.L.plotW) * (drag.t1 - drag.t0);
      return setWindow(drag.t0 - dt, drag.t1 - dt);
    }
    const t = drag.mode === "window" ? Math.max(0, Math.min(D, ((p.x - p.L.plotX) / p.L.plotW) * D)) : p.t;
    st[drag.mode === "window" ? "pick" : "brush"] = [Math.min(drag.t, t), Math.max(drag.t, t)];
    schedule();
  });
  const up = () => {
    const d = drag;
    drag = null;
    if (!d) return;
    noClick = d.moved || d.mode === "window";
    if (d.mode === "brush" && d.moved) onBrush(st.brush);
    if (d.mode !== "window") return;
    const [a, b] = d.moved && st.pick ? st.pick : [d.t - (t1 - t0) / 2, d.t + (t1 - t0) / 2];
    st.pick = null;
    setWindow(a, b);
  };
  on("pointerup", up);
  on("pointercancel", up);
  on("pointerleave", () => (tip.hidden = true));
  on("click", (e) => {
    const p = locate(e);
    if (noClick || p.where !== "plot") return (noClick = false);
    const u = under(p);
    onSelect(u.call != null ? u.call : -1, p.lane);
  });

  const hover = (p) => {
    const u = under(p);
    tip.textContent = u.call != null ? callTip(tl, u.call) : u.span != null ? spanTip(tl, u.span) : "";
    tip.hidden = !tip.textContent;
    tip.style.left = `${Math.min(p.x + 14, Math.max(0, p.L.w - 320))}px`;
    tip.style.top = `${p.y + 16}px`;
  };

  const ro = win.ResizeObserver ? new win.ResizeObserver(schedule) : null;
  if (ro) ro.observe(el);

  /** Client point of time t in lane l (the marker band), or null when not shown. */
  const at = (t, l) => {
    const L = layout(), r = rows().indexOf(l), b = canvas.getBoundingClientRect();
    return r < 0 || t < t0 || t > t1 ? null : { x: b.left + L.plotX + ((t - t0) / (t1 - t0)) * L.plotW, y: b.top + L.rowsY + r * L.rowH + L.markY };
  };
  canvas.jmProbe = {
    /** Client point of the middle of call c. */
    pointOf: (c) => at((tl.calls.start[c] + tl.calls.end[c]) / 2, tl.calls.lane[c]),
    window: () => ({ t0, t1 }),
    rows,
    /** Presentation-mode scale of the drawing (1 otherwise). */
    scale: k,
    /** Client box of lane l's row, or null when the lane is not among the rows shown. */
    rowBox(l) {
      const L = layout(), r = rows().indexOf(l), b = canvas.getBoundingClientRect();
      return r < 0 ? null : { left: b.left + L.plotX, right: b.left + L.plotX + L.plotW, top: b.top + L.rowsY + r * L.rowH, height: L.rowH };
    },
    /** Draw the pending frame now (timing a step in tests). */
    flush: () => render(),
    /** The playback state drawn (null: the ordinary view): {now, marks, sweeping}. */
    playback: () => (st.playback ? { now: st.playback.now, marks: st.playback.marks, sweeping: sweepId > 0 } : null),
    /** Client point of time t on the overview strip. */
    overviewPoint(t) {
      const L = layout(), b = canvas.getBoundingClientRect();
      return { x: b.left + L.plotX + (t / D) * L.plotW, y: b.top + L.ovY + L.ovH / 2 };
    },
  };

  const fit = () => setWindow(-0.01 * D, 1.01 * D);
  if (recompile >= 0) revealLane(tl.calls.lane[recompile]); // the story's recompile is on screen from the first frame
  fit();
  return {
    el,
    canvas,
    fit,
    setWindow,
    zoom: (f) => zoomAt((t0 + t1) / 2, f),
    pan: (f) => setWindow(t0 + f * (t1 - t0), t1 + f * (t1 - t0)),
    scrollRows,
    /** Bring call `c` into view: its lane shown, the window moved (or widened) to hold it. */
    revealCall(c) {
      revealLane(tl.calls.lane[c]);
      const a = tl.calls.start[c], b = tl.effEnd[c], span = t1 - t0;
      if (b - a > 0.8 * span) setWindow(a - (b - a) / 4, b + (b - a) / 4);
      else if (a < t0 || b > t1) setWindow((a + b - span) / 2, (a + b + span) / 2);
      schedule();
    },
    /** Selection, brush, filter and focused lane ({selected, brush, missesOnly, focus}); redraws. */
    set(o) {
      if (o.missesOnly !== undefined && o.missesOnly !== st.missesOnly) offset = 0;
      Object.assign(st, o);
      if (o.focus !== undefined) focus = o.focus;
      if (focus != null) revealLane(focus);
      schedule();
    },
    /**
     * Playback state `{now, marks, counts}` (story.js stepState plus the counts so far), or
     * null for the ordinary view. Cancels a running sweep; the lanes the step touched are
     * scrolled into the rows.
     */
    setPlayback(state) {
      sweepId = 0;
      el.removeAttribute("data-sweeping");
      st.playback = state;
      if (state) for (const m of state.marks || []) revealLane(m.lane);
      schedule();
    },
    /**
     * Show `state` with its present moving from `from` to `state.now` over `ms` (eased), one
     * frame at a time; `.jm-tl-plot[data-sweeping]` while it runs.
     */
    sweep(state, from, ms) {
      this.setPlayback({ ...state, now: from });
      if (!(state.now > from) || !(ms > 0)) return this.setPlayback(state);
      const clock = () => (win.performance ? win.performance.now() : Date.now());
      const next = (f) => (win.requestAnimationFrame ? win.requestAnimationFrame(f) : win.setTimeout(f, 16));
      const id = (sweepId = ++sweeps), begin = clock();
      el.setAttribute("data-sweeping", "");
      const frame = () => {
        if (sweepId !== id) return;
        const u = Math.min(1, (clock() - begin) / ms), e = u < 0.5 ? 2 * u * u : 1 - 2 * (1 - u) * (1 - u);
        st.playback = { ...state, now: from + (state.now - from) * e };
        render();
        if (u < 1) next(frame);
        else this.setPlayback(state);
      };
      next(frame);
    },
    /** Draw now (tests, before an export). */
    flush: render,
    dispose() {
      sweepId = 0;
      unwatch();
      if (waiting) waiting();
      if (ro) ro.disconnect();
      if (pending && win.cancelAnimationFrame) win.cancelAnimationFrame(pending);
    },
  };
}
