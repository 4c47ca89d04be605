/**
 * What the pointer does on the timeline plot (plot.js):
 *
 * - wheel over the plot zooms around the pointer (horizontal wheel pans); over the
 *   names it scrolls the lanes when there are more than fit;
 * - drag pans; shift-drag brushes a time range (`onBrush([a, b])`);
 * - on the overview strip: drag picks the window, a click centres it;
 * - hover shows a tooltip (.jm-tl-tip), a click selects the call under the pointer
 *   (`onSelect(call | -1, lane)`), nearest within HIT_PX.
 */
import { callAt, spanAt } from "./model.js";
import { callTip, spanTip } from "./details.js";
import { layoutOf, rowsOf, scrollRows, setWindow, zoomAt } from "./window.js";

/** A call within this many px of the pointer is "under" it. */
export const HIT_PX = 4;

/** Client point -> {x, y, where: plot | labels | overview | none, t, lane, L}. */
function locate(P, e) {
  const b = P.canvas.getBoundingClientRect(), L = layoutOf(P);
  const x = e.clientX - b.left, y = e.clientY - b.top, fx = (x - L.plotX) / L.plotW;
  if (y >= L.ovY && y <= L.ovY + L.ovH && fx >= 0) return { x, y, where: "overview", t: fx * P.D, L };
  const lane = rowsOf(P)[Math.floor((y - L.rowsY) / L.rowH)];
  return { x, y, where: lane == null || y < L.rowsY ? "none" : fx < 0 ? "labels" : "plot", t: P.t0 + fx * (P.t1 - P.t0), lane, L };
}

/** The call (or, where there is none, the span) under a located point: {call} | {span} | {}. */
function under(P, p) {
  if (p.where !== "plot") return {};
  const tol = (HIT_PX * (P.t1 - P.t0)) / p.L.plotW;
  const c = callAt(P.tl, p.lane, p.t, tol, P.st);
  const s = c < 0 ? spanAt(P.tl, p.lane, p.t, tol) : -1;
  return c >= 0 ? { call: c } : s >= 0 ? { span: s } : {};
}

/** The tooltip of what is under a located point (hidden over nothing). */
function hover(P, p) {
  const u = under(P, p), tip = P.tip;
  tip.textContent = u.call != null ? callTip(P.tl, u.call) : u.span != null ? spanTip(P.tl, u.span) : "";
  tip.hidden = !tip.textContent;
  tip.style.left = `${Math.min(p.x + 14, Math.max(0, p.L.w - 320))}px`;
  tip.style.top = `${p.y + 16}px`;
}

function onWheel(P, e) {
  const p = locate(P, e);
  if (p.where === "plot" || p.where === "overview") {
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 0.05 : e.deltaMode === 2 ? 1 : 0.0025;
    const { t0, t1 } = P;
    if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) setWindow(P, t0 + e.deltaX * unit * 0.4 * (t1 - t0), t1 + e.deltaX * unit * 0.4 * (t1 - t0));
    else zoomAt(P, p.t, Math.exp(-e.deltaY * unit));
  } else if (scrollRows(P, Math.sign(e.deltaY))) e.preventDefault();
}

/** A drag moved: pan, or stretch the brush / the window being picked on the overview. */
function dragTo(P, drag, e) {
  const p = locate(P, e);
  if (!drag) return hover(P, p);
  const dx = e.clientX - drag.sx;
  if (!drag.moved && Math.abs(dx) < 4) return;
  drag.moved = true;
  P.tip.hidden = true;
  if (drag.mode === "pan") {
    const dt = (dx / p.L.plotW) * (drag.t1 - drag.t0);
    return setWindow(P, drag.t0 - dt, drag.t1 - dt);
  }
  const t = drag.mode === "window" ? Math.max(0, Math.min(P.D, ((p.x - p.L.plotX) / p.L.plotW) * P.D)) : p.t;
  P.st[drag.mode === "window" ? "pick" : "brush"] = [Math.min(drag.t, t), Math.max(drag.t, t)];
  P.schedule();
}

/** Listen on the plot's canvas; `on`: `{onSelect(call | -1, lane), onBrush(range)}`. */
export function listenPointer(P, { onSelect, onBrush }) {
  let drag = null, noClick = false;
  const on = (ev, fn, opts = undefined) => P.canvas.addEventListener(ev, fn, opts);
  on("wheel", (e) => onWheel(P, e), { passive: false });
  on("pointerdown", (e) => {
    const p = locate(P, e);
    if (e.button !== 0 || (p.where !== "plot" && p.where !== "overview")) return;
    drag = { mode: p.where === "overview" ? "window" : e.shiftKey ? "brush" : "pan", sx: e.clientX, t: p.t, t0: P.t0, t1: P.t1, moved: false };
    try {
      P.canvas.setPointerCapture(e.pointerId);
    } catch (err) {
      /* a synthetic or finished pointer: the drag still follows it over the canvas */
    }
  });
  on("pointermove", (e) => dragTo(P, drag, e));
  const up = () => {
    const d = drag;
    drag = null;
    if (!d) return;
    noClick = d.moved || d.mode === "window";
    if (d.mode === "brush" && d.moved) onBrush(P.st.brush);
    if (d.mode !== "window") return;
    const half = (P.t1 - P.t0) / 2;
    const [a, b] = d.moved && P.st.pick ? P.st.pick : [d.t - half, d.t + half];
    P.st.pick = null;
    setWindow(P, a, b);
  };
  on("pointerup", up);
  on("pointercancel", up);
  on("pointerleave", () => (P.tip.hidden = true));
  on("click", (e) => {
    const p = locate(P, e);
    if (noClick || p.where !== "plot") return (noClick = false);
    const u = under(P, p);
    onSelect(u.call != null ? u.call : -1, p.lane);
  });
}
