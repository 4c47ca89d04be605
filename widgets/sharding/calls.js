/**
 * A jitted call's card: its input leaves and output leaves side by side with the
 * collectives the compiler put between them (kind, operand → result shapes, bytes per
 * device, the jaxpr op that caused it, the replica groups as rows of device chips), the
 * shard_map bodies (specs, per-shard avals, the collectives written in them with their
 * source lines) and the shardings of the lowered program as text.
 */
import { h } from "../ui/dom.js";
import { colorOf, meshRef, meshShort } from "./model.js";
import { bytesText, leafText, plural, whereText } from "./format.js";

/** Replica groups drawn per collective, and device chips per group. */
export const MAX_GROUPS = 16;
export const MAX_CHIPS = 32;

const list = (x) => (Array.isArray(x) ? x : []);
const cut = (s, n = 90) => (String(s).length > n ? String(s).slice(0, n - 1) + "…" : String(s));

/** Operand shapes, repeats folded: `8 × f32[8,1,64], ?`. */
export function operandsText(ops) {
  const counts = new Map();
  for (const o of list(ops)) counts.set(String(o), (counts.get(String(o)) || 0) + 1);
  return cut([...counts].map(([o, n]) => (n > 1 ? `${n} × ${o}` : o)).join(", "));
}

const chip = (m, d, ref) => h("span", { class: "jm-sh-chip", style: `background:${colorOf(m, d)}` }, String(d), ref);

/** Leaves as a table: path, aval, placement; a mismatched input says what it arrived as. */
function leafTable(ref, m, leaves, title) {
  const rows = list(leaves).map((l) => h("tr", { class: l.mismatch ? "jm-sh-mismatch" : null }, [
    h("td", { class: "jm-sh-path" }, String(l.path ?? ""), ref),
    h("td", null, String(l.aval ?? ""), ref),
    h("td", null, [
      h("span", { class: "jm-sh-spec", title: l.text == null ? null : String(l.text) }, leafText(l), ref),
      l.mesh != null ? h("span", { class: "jm-muted", title: meshRef(m, l.mesh) }, ` ${meshShort(m, l.mesh)}`, ref) : null,
      l.mismatch ? h("div", { class: "jm-sh-warn" }, `⚠ arrives as ${l.given ?? "one device"}: moved on every call`, ref) : null,
    ], ref),
  ], ref));
  return h("div", { class: "jm-sh-col" }, [
    h("h5", null, title, ref),
    rows.length ? h("table", { class: "jm-sh-leaves" }, rows, ref) : h("div", { class: "jm-muted" }, "none", ref),
  ], ref);
}

/**
 * One collective as a button: kind, shapes, bytes, cause, and its device groups (or
 * permute pairs). Each group row is returned with its devices, so selecting a device
 * can light the rows it is in.
 */
function collective(ref, m, col, rows) {
  const groups = list(col.groups), pairs = list(col.pairs);
  const body = [];
  groups.slice(0, MAX_GROUPS).forEach((g, gi) => {
    const el = h("div", { class: "jm-sh-grp" }, [
      h("span", { class: "jm-sh-gi jm-muted" }, `${gi}`, ref),
      list(g).slice(0, MAX_CHIPS).map((d) => chip(m, d, ref)),
      g.length > MAX_CHIPS ? h("span", { class: "jm-muted" }, ` +${g.length - MAX_CHIPS}`, ref) : null,
    ], ref);
    rows.push({ el, devices: new Set(g) });
    body.push(el);
  });
  if (groups.length > MAX_GROUPS) body.push(h("div", { class: "jm-muted" }, `+${plural(groups.length - MAX_GROUPS, "more group", "more groups")}`, ref));
  if (pairs.length) {
    const wrap = h("div", { class: "jm-sh-pairs" }, null, ref);
    for (const [s, t] of pairs.slice(0, MAX_CHIPS)) {
      const el = h("span", { class: "jm-sh-grp jm-sh-pair" }, [chip(m, s, ref), "→", chip(m, t, ref)], ref);
      rows.push({ el, devices: new Set([s, t]) });
      wrap.appendChild(el);
    }
    if (pairs.length > MAX_CHIPS) wrap.appendChild(h("span", { class: "jm-muted" }, ` +${plural(pairs.length - MAX_CHIPS, "pair")}`, ref));
    body.push(wrap);
  }
  const what = groups.length ? `${plural(groups.length, "group")} of ${list(groups[0]).length}` : pairs.length ? plural(pairs.length, "pair") : "";
  return h("button", { type: "button", class: "jm-sh-coll", "aria-pressed": "false" }, [
    h("div", null, [
      h("span", { class: "jm-sh-kind" }, String(col.kind ?? "?"), ref), " ",
      h("span", { class: "jm-sh-shapes" }, `${operandsText(col.operands)} → ${cut(col.result ?? "?")}`, ref), " ",
      h("span", { class: "jm-muted" }, `${bytesText(col.result_bytes)} per device${what ? " · " + what : ""}`, ref),
    ], ref),
    col.op_name ? h("div", { class: "jm-sh-cause" }, `from ${col.op_name}`, ref) : null,
    body,
  ], ref);
}

/** The shard_map bodies: mesh, specs with global and per-shard avals, explicit collectives. */
function shardMaps(ref, m, maps) {
  return list(maps).map((s) => {
    const ins = list(s.in_specs).map((spec, i) => h("tr", null, [
      h("td", { class: "jm-muted" }, `in ${i}`, ref), h("td", { class: "jm-sh-spec" }, String(spec), ref),
      h("td", null, `${list(s.in_avals)[i] ?? "?"} → per shard ${list(s.shard_avals)[i] ?? "?"}`, ref),
    ], ref));
    const outs = list(s.out_specs).map((spec, i) => h("tr", null, [
      h("td", { class: "jm-muted" }, `out ${i}`, ref), h("td", { class: "jm-sh-spec" }, String(spec), ref),
      h("td", null, String(list(s.out_avals)[i] ?? "?"), ref),
    ], ref));
    const cols = list(s.collectives).map((c) => h("li", null, [
      h("span", { class: "jm-sh-kind" }, String(c.primitive ?? "?"), ref),
      ` over ${list(c.axes).join(", ") || "—"} · ${list(c.avals).join(", ")}`,
      c.source ? h("span", { class: "jm-muted" }, ` · ${whereText(c.source)}${c.source.func ? " (" + c.source.func + ")" : ""}`, ref) : null,
    ], ref));
    return h("div", { class: "jm-sh-smap" }, [
      h("h5", null, `shard_map${s.mesh != null ? " on " + meshRef(m, s.mesh) : ""}`, ref),
      h("table", { class: "jm-sh-leaves" }, [...ins, ...outs], ref),
      cols.length ? h("ul", { class: "jm-sh-smap-cols" }, cols, ref) : h("div", { class: "jm-muted" }, "no collectives in the body", ref),
    ], ref);
  });
}

/**
 * Values inside the program whose sharding JAX knew while tracing: constraints and reshards the
 * user asked for first-class, then values whose type carries a sharding (explicit mode), each
 * with its source line. Collapsed: a program can have hundreds.
 */
function intermediates(ref, items) {
  const rows = list(items).map((x) => h("tr", { class: x.requested ? "jm-sh-asked" : "" }, [
    h("td", { class: "jm-sh-kind" }, String(x.primitive ?? "?"), ref),
    h("td", { class: "jm-sh-aval" }, String(x.aval ?? ""), ref),
    h("td", { class: "jm-sh-spec" }, String(x.spec ?? ""), ref),
    h("td", { class: "jm-muted" }, x.source ? whereText(x.source) : "", ref),
  ], ref));
  if (!rows.length) return null;
  const asked = list(items).filter((x) => x.requested).length;
  return h("details", { class: "jm-sh-inner jm-clutter" }, [
    h("summary", null, `Intermediate shardings (${rows.length}${asked ? `, ${asked} requested` : ""})`, ref),
    h("table", { class: "jm-sh-leaves" }, rows, ref),
  ], ref);
}

/** The lowered program's sharding attributes, one line per parameter and result. */
function loweredText(lowered) {
  const lines = [];
  list(lowered && lowered.args).forEach((a, i) => lines.push(`arg ${i}: ${a ?? "(none)"}`));
  list(lowered && lowered.results).forEach((r, i) => lines.push(`result ${i}: ${r ?? "(none)"}`));
  return lines.join("\n");
}

/**
 * `callCard(ref, m, call, on)`: on = `{pickCollective(k)}`. Returns `{el, colls, rows}`:
 * `colls[k]` the button of collective k, `rows` every group row with its devices.
 */
export function callCard(ref, m, call, on) {
  const rows = [];
  const colls = list(call.collectives).map((col, k) => {
    const b = collective(ref, m, col, rows);
    b.addEventListener("click", () => on.pickCollective(k));
    return b;
  });
  const where = whereText(call.source);
  const low = loweredText(call.lowered);
  const el = h("section", { class: "jm-sh-card jm-sh-call", tabindex: -1 }, [
    h("div", { class: "jm-sh-card-head" }, [
      h("span", { class: "jm-sh-name" }, String(call.name ?? "?"), ref), " ",
      h("span", { class: "jm-sh-aval" }, `(${call.signature ?? ""})`, ref),
      h("span", { class: "jm-muted" }, ` · ${plural(call.calls ?? 1, "call")}${where ? " · " + where : ""}`, ref),
    ], ref),
    h("div", { class: "jm-sh-io" }, [
      leafTable(ref, m, call.inputs, "Inputs"),
      h("div", { class: "jm-sh-col jm-sh-colls" }, [
        h("h5", null, `Collectives (${colls.length})`, ref),
        colls.length ? colls : h("div", { class: "jm-muted" }, "none: no communication between devices", ref),
      ], ref),
      leafTable(ref, m, call.outputs, "Outputs"),
    ], ref),
    shardMaps(ref, m, call.shard_maps),
    intermediates(ref, call.intermediates),
    low ? h("details", { class: "jm-sh-lowered jm-clutter" }, [h("summary", null, "Lowered shardings", ref), h("pre", null, low, ref)], ref) : null,
  ], ref);
  return { el, colls, rows };
}
