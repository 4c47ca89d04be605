/**
 * Cost overlay: colours every drawn eqn by its estimated FLOPs or bytes
 * (`node.cost`), and every collapsed container by the sum over what it hides, on a
 * log scale (costs span many orders of magnitude: a reshape and a matmul differ by
 * 1e6). The scale's domain is the whole function (every eqn and container but the
 * root), not what is on screen, so a box keeps its colour while others open and close.
 *
 * The colour is one mid-luminance violet at rising opacity, so the ramp runs from
 * faint to strong on light and dark backgrounds alike and the box text (theme
 * foreground) stays readable; violet is not used by anything else in the theme.
 */
import { h } from "../ui/dom.js";
import { si } from "./format.js";
import * as ids from "./ids.js";

export const METRICS = {
  flops: { label: "FLOPs", unit: "FLOP", field: "flops" },
  bytes: { label: "bytes", unit: "B", field: "bytes" },
};

const HUE = [124, 77, 210];
const A0 = 0.1, A1 = 0.78;

/** A node's own estimate for `metric`, or null when unknown. */
const own = (n, field) => {
  const v = n && n.cost ? n.cost[field] : null;
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
};

/**
 * Cost of every element of a function: `Map<key, number|null>`. Eqns have their own
 * estimate (owner eqns' estimates already include their sub-jaxprs, per the schema);
 * scope boxes and groups sum their items, owners without an estimate sum their
 * sub-groups. null = nothing inside has an estimate.
 */
export function costTable(ix, metric) {
  const field = (METRICS[metric] || {}).field;
  const out = new Map();
  if (!field || !ix.root) return out;
  const visit = (k) => {
    let sum = null;
    for (const c of ix.items.get(k) || []) {
      const cv = visit(c);
      if (cv != null) sum = (sum || 0) + cv;
    }
    const mine = ids.isNode(k) ? own(ix.nodes.get(ids.body(k)), field) : null;
    const v = mine != null ? mine : sum;
    out.set(k, v);
    return v;
  };
  // Recursion depth is the nesting of jaxprs and scopes, never the eqn count.
  visit(ix.root);
  return out;
}

/** [min, max] of the positive costs in the table, leaving out `skip` (the root); null if none. */
export function domainOf(table, skip) {
  let lo = Infinity, hi = 0;
  for (const [k, v] of table) {
    if (k === skip || !(v > 0)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return hi > 0 ? [lo, hi] : null;
}

/** Position of `v` in [0, 1] on a log scale over `domain`; null for 0 / unknown. */
export function logPos(v, domain) {
  if (!(v > 0) || !domain) return null;
  const [lo, hi] = domain;
  if (hi <= lo) return 1;
  const t = (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo));
  return Math.min(1, Math.max(0, t));
}

/** Fill colour at scale position t (a plain rgba(): works in SVG and on a canvas). */
export function heat(t) {
  const a = A0 + (A1 - A0) * Math.min(1, Math.max(0, t));
  return `rgba(${HUE[0]},${HUE[1]},${HUE[2]},${a.toFixed(3)})`;
}

/**
 * Everything the view needs for one function and metric: the decoration function
 * for the renderer (key -> {fill}) and the domain for the legend. null for "none".
 */
export function costOverlay(ix, metric) {
  if (!METRICS[metric]) return null;
  const table = costTable(ix, metric);
  const domain = domainOf(table, ix.root);
  const decorate = (key) => {
    const t = logPos(table.get(key), domain);
    return t == null ? {} : { fill: heat(t) };
  };
  return { metric, table, domain, decorate };
}

/** The legend (`.jm-legend`): metric, min, a colour bar, max, "estimate". */
export function legend(ov, ref) {
  const m = METRICS[ov.metric];
  const el = h("div", { class: "jm-legend", "aria-label": `${m.label} colour scale` }, null, ref);
  if (!ov.domain) {
    el.appendChild(h("span", null, `${m.label}: no estimates in this function`, ref));
    return el;
  }
  const bar = h("span", { class: "jm-legend-bar" }, null, ref);
  bar.style.background = `linear-gradient(to right, ${heat(0)}, ${heat(0.5)}, ${heat(1)})`;
  el.append(
    h("span", { class: "jm-legend-name" }, m.label, ref),
    h("span", { class: "jm-legend-min" }, si(ov.domain[0], m.unit), ref),
    bar,
    h("span", { class: "jm-legend-max" }, si(ov.domain[1], m.unit), ref),
    h("span", { class: "jm-muted" }, "log scale · estimate", ref),
  );
  return el;
}
