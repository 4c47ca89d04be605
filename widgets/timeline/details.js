/**
 * What the timeline says about one call, one lane or the whole capture: the details
 * panel (.jm-details) and the hover tooltip's text. Every document string goes in
 * as text (dom.js `h`), JAX's own explanation verbatim in a <pre>.
 */
import { h, clear } from "../ui/dom.js";
import { srcPath, srcText } from "../graph/model.js";
import { fmtUs } from "./time.js";
import { PHASES, phasesOf, dispatchOf, deviceOf, callNumber, whatChanged, signatureOf, errorOf, persistentIn } from "./model.js";

import { plural } from "../ui/words.js";
const counts = (o) => `${o.calls} (${plural(o.hits, "hit")}, ${plural(o.misses, "miss", "misses")})`;
const kindText = (k) => String(k).replace(/_/g, " ");

/** Where the `from` of a miss says its reason came from. */
const FROM = { jax: "from JAX's explanation", diff: "from comparing signatures", both: "JAX's explanation and the signature comparison agree" };
const MAX_ARGS = 200;

/** "f · call 3 of 40" */
const callTitle = (tl, c) => {
  const lane = tl.lanes[tl.calls.lane[c]] || {};
  return [lane.name, `call ${callNumber(tl, c)} of ${lane.calls}`];
};

/** Timing rows of call `c`: start, return, each phase, dispatch and device time. */
function timing(tl, c) {
  const { calls } = tl, ph = phasesOf(tl, c), dev = deviceOf(tl, c);
  const disk = persistentIn(tl, calls.lane[c], calls.start[c], calls.end[c]);
  return [
    ["start", fmtUs(calls.start[c])],
    ["returned", `after ${fmtUs(calls.end[c] - calls.start[c])}`],
    ...PHASES.filter((p) => ph[p] > 0).map((p) => [p, fmtUs(ph[p])]),
    ...(disk ? [["persistent cache", disk]] : []),
    ["dispatch", fmtUs(dispatchOf(tl, c))],
    ["device", dev == null ? "not measured" : fmtUs(dev) + (tl.options.sync ? "" : " (polled: an upper bound)")],
  ];
}

/** Tooltip text of call `c`: function, call number, start, dispatch vs device, signature, hit or why it missed. */
export function callTip(tl, c) {
  const why = whatChanged(tl, c), sig = signatureOf(tl, c), err = errorOf(tl, c);
  return [
    callTitle(tl, c).join(" · "),
    ...timing(tl, c).map(([k, v]) => `${k} ${v}`),
    sig ? `(${sig.text})` : "",
    why.hit ? why.words : `cache miss (${kindText(why.kind)}): ${why.words}`,
    why.hint || "",
    err ? `raised ${err}` : "",
  ].filter(Boolean).join("\n");
}

/** Tooltip text of span `i` (lanes seen only through compile events have no calls). */
export function spanTip(tl, i) {
  const { spans } = tl, lane = tl.lanes[spans.lane[i]] || {};
  const disk = PHASES[spans.phase[i]] === "compile" ? persistentIn(tl, spans.lane[i], spans.start[i], spans.end[i]) : "";
  return `${lane.name} · ${PHASES[spans.phase[i]]} ${fmtUs(spans.end[i] - spans.start[i])}\nstart ${fmtUs(spans.start[i])}` +
    (disk ? `\npersistent cache ${disk}` : "") +
    (spans.call[i] < 0 ? "\nnot inside a recorded call (a library's jit or an eager op)" : "");
}

// ---- panel building blocks -----------------------------------------------------------

/** Append a titled section to `panel` (also its first line when `title` has no body). */
const section = (panel, title, body) =>
  panel.appendChild(h("section", { class: "jm-d-sec" }, [h("h4", null, title, panel), body], panel));

/** Key/value rows, or a grid with a header row when `heads` is given. */
const table = (panel, rows, heads) => h("table", { class: heads ? "jm-params jm-tl-grid" : "jm-params" }, [
  heads ? h("tr", null, heads.map((x) => h("th", null, x, panel)), panel) : null,
  ...rows.map((r) => h("tr", null, r.map((x, i) => h(i || heads ? "td" : "th", null, x, panel)), panel)),
], panel);

const title = (panel, main, sub) => panel.appendChild(h("div", { class: "jm-d-title" }, [
  h("span", { class: "jm-d-prim" }, main, panel), h("span", { class: "jm-muted" }, " " + sub, panel),
], panel));

/** Section with "file:line in func" and the source line, when known. */
function source(panel, heading, src) {
  if (src && src.file) {
    section(panel, heading, [
      h("div", { class: "jm-d-src", title: srcPath(src) }, srcText(src) + (src.func ? ` in ${src.func}` : ""), panel),
      src.code ? h("pre", { class: "jm-d-code" }, src.code, panel) : null,
    ]);
  }
}

// ---- the panel ---------------------------------------------------------------------------

/** Details of call `c`: why it hit or missed, its timing, signature and call site. */
export function showCall(panel, tl, c) {
  clear(panel);
  const [name, sub] = callTitle(tl, c);
  title(panel, name, `${sub} · #${c} in the cell`);
  const why = whatChanged(tl, c);
  section(panel, why.hit ? "Cache" : "Why it missed", [
    h("div", { class: "jm-tl-verdict " + (why.hit ? "jm-tl-hit" : "jm-tl-miss") }, [
      h("span", { class: "jm-tl-badge" }, why.hit ? "hit" : `miss · ${kindText(why.kind)}`, panel), " ", why.words,
    ], panel),
    why.changes.length ? table(panel, why.changes.slice(0, MAX_ARGS).map((x) => [x.path, x.kind, x.before, x.after].map((v) => String(v ?? "—"))),
      ["argument", "what", "before", "after"]) : null,
    why.hint ? h("div", { class: "jm-muted jm-tl-hint" }, why.hint, panel) : null,
    why.fix ? h("div", { class: "jm-tl-fix" }, "Fix: " + why.fix, panel) : null,
    why.jax ? [h("div", { class: "jm-muted" }, "JAX says:", panel), h("pre", { class: "jm-d-code jm-tl-jax" }, why.jax, panel)] : null,
    why.from ? h("div", { class: "jm-muted" }, FROM[why.from] || `from ${why.from}`, panel) : null,
  ]);
  const err = errorOf(tl, c);
  if (err) section(panel, "Raised", h("pre", { class: "jm-d-code jm-tl-err" }, err, panel));
  section(panel, "Timing", table(panel, timing(tl, c)));
  const sig = signatureOf(tl, c);
  const args = sig && Array.isArray(sig.args) ? sig.args.filter((a) => a && typeof a === "object") : [];
  section(panel, "Signature", sig ? [
    h("pre", { class: "jm-d-code" }, sig.text, panel),
    args.length ? table(panel, args.slice(0, MAX_ARGS).map((a) =>
      [a.path, a.aval, a.weak ? "weak" : "", a.static ? "static" : "", a.sharding].map((v) => String(v ?? ""))), ["argument", "aval", "weak", "static", "sharding"]) : null,
  ] : h("div", { class: "jm-muted" }, "not recorded: after a function's first calls, cache hits are recorded without their signature to keep recording cheap", panel));
  source(panel, "Called from", tl.sites[tl.calls.site[c]]);
  source(panel, "Defined at", (tl.lanes[tl.calls.lane[c]] || {}).source);
}

/** Details of lane `l`: its totals over the capture, where it is defined, its findings. */
export function showLane(panel, tl, l) {
  clear(panel);
  const lane = tl.lanes[l];
  title(panel, lane.name, lane.origin === "events" ? "seen only through JAX's compile events" : "jitted function");
  section(panel, "Totals", table(panel, [
    ["calls", counts(lane)], ["traces", lane.traces], ["compiles", lane.compiles],
    ...["trace", "lower", "compile", "dispatch"].map((k) => [k, fmtUs(lane[k + "_us"])]),
    ["device", lane.device_us == null ? "not measured" : `${fmtUs(lane.device_us)} over ${plural(lane.device_calls, "call")}`],
  ]));
  source(panel, "Defined at", lane.source);
  const fs = tl.findings.filter((f) => f.lane === l);
  if (fs.length) section(panel, "Findings", fs.map((f) => h("div", { class: "jm-tl-fix" }, f.message, panel)));
}

/** Details with nothing selected: the cell as a whole and the persistent cache. */
export function showCapture(panel, tl) {
  clear(panel);
  title(panel, "Capture", fmtUs(tl.duration));
  const pc = tl.cache;
  section(panel, "Cell", table(panel, [
    ["calls", counts(tl.totals)], ["functions", tl.lanes.length], ["compiles", tl.totals.compiles],
    ["ready times", tl.options.sync ? "exact (--sync)" : "polled: upper bounds"],
    ["persistent cache", !pc || !pc.enabled ? "off" : `${plural(pc.hits, "hit")}, ${plural(pc.misses, "miss", "misses")}` +
      (pc.saved_us != null ? `, saved ${fmtUs(pc.saved_us)}` : "")],
  ]));
  panel.appendChild(h("div", { class: "jm-muted jm-d-empty" }, "Click a call for why it hit or missed; shift-drag to select a time range.", panel));
}
