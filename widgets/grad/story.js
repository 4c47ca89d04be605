/**
 * The story of a differentiation played back (widgets/ui/playback.js): pure reading of a
 * grad document entry (docs/schema.md, "Grad documents") and of what its graphs drew
 * (graph/story.js steps), no DOM.
 *
 * - An eager split plays the forward pass in trace order, then the backward program in
 *   its own order: the adjoints, drawn right to left. A forward step that saves a
 *   residual says so, a backward step names the forward eqn it differentiates (the
 *   document's exact links), its line, and with recorded values its cotangent.
 * - A jitted step (one program holding forward, backward and the rest) and a forward-
 *   mode program play in program order, each step saying its role.
 *
 * A story is made of parts, one per graph in playing order: `{graph, ix, keys}` (`graph`
 * "forward" | "backward" | "program", `ix` the graph's index, `keys` its drawn steps).
 */
import { nodesUnder, stepText, lineText } from "../graph/story.js";
import { containerName } from "../graph/metrics.js";
import { num } from "../graph/format.js";
import { linkMaps, shortName, plural, jitResiduals } from "./model.js";
import * as elementIds from "../graph/ids.js";

/** Where global step `P` (1-based) falls: `{part, j, i}` (part index, 1-based step in it), or null. */
export function locate(parts, P) {
  let off = 0;
  for (let j = 0; j < parts.length; j++) {
    const n = parts[j].keys.length;
    if (P > off && P <= off + n) return { part: parts[j], j, i: P - off };
    off += n;
  }
  return null;
}

/**
 * The position each part shows at global position `P` of a story of `N` steps: parts
 * before the playing one are complete, the playing one at its step, later ones not
 * started (-1: everything faded) except the first, which opens on its inputs (0).
 * At the end every part is complete, as drawn.
 */
export function partPositions(parts, P) {
  const N = parts.reduce((s, p) => s + p.keys.length, 0);
  let off = 0;
  return parts.map((p, j) => {
    const n = p.keys.length;
    const at = P >= N ? n : P <= off ? (j === 0 ? 0 : -1) : Math.min(n, P - off);
    off += n;
    return at;
  });
}

/** Residuals of an entry as `{r, producer: node id | null, consumers: node ids}` (split and jit alike). */
function residualsOf(entry) {
  const list = entry.origin === "jit" ? jitResiduals(entry).map((x) => x.residual) : entry.residuals || [];
  return list.map((r) => ({ r, producer: typeof r.producer === "string" ? r.producer : null, consumers: r.consumers || [] }));
}

/**
 * Residuals a step of `graph` touches: those its eqns save (`made`: forward or program
 * producer) and those they read (`read`: backward or program consumers). Ids in lists.
 */
export function residualsAt(entry, graph, nodeIds) {
  const ids = new Set(nodeIds);
  const made = [], read = [];
  for (const { r, producer, consumers } of residualsOf(entry)) {
    if (graph !== "backward" && producer && ids.has(producer)) made.push(r);
    if (graph !== "forward" && consumers.some((c) => ids.has(c))) read.push(r);
  }
  return { made, read };
}

/** Role of a step in a one-program entry: its eqns' role when they share one, else "mixed". */
export function roleOf(entry, nodeIds) {
  const roles = new Set(nodeIds.map((id) => (entry.roles || {})[id] || "unknown"));
  return roles.size === 1 ? [...roles][0] : roles.size ? "mixed" : "unknown";
}

/** `ct f32[4,8] norm 0.12`: the cotangent a backward eqn makes (its first output), with values. */
function cotangentText(ix, values, node) {
  const out = (node.outs || [])[0];
  const v = ix.vars.get(out);
  if (!v) return "";
  const s = values && values[out];
  const norm = s && s.norm != null ? ` norm ${num(s.norm)}` : "";
  const bad = s ? [s.nan > 0 ? `NaN ${s.nan}` : "", s.inf > 0 ? `Inf ${s.inf}` : ""].filter(Boolean).join(" ") : "";
  return values ? `ct ${v.aval}${norm}${bad ? ` ⚠ ${bad}` : ""}` : "";
}

const avals = (rs) => rs.slice(0, 2).map((r) => String(r.aval ?? "?")).join(", ") + (rs.length > 2 ? ` +${rs.length - 2}` : "");

/**
 * A backward eqn in words: `mul — transpose of sin (line 3)`, from the forward eqn(s)
 * the document links it to (`fwdIx`: the graph holding them), and its user line.
 */
function backwardText(ix, fwdIx, node, forwardIds, unlisted = 0) {
  const f = forwardIds.length ? fwdIx.nodes.get(forwardIds[0]) : null;
  const src = node.src || (f && f.src);
  const line = src ? lineText(ix, src) || lineText(fwdIx, src) : "";
  const of = f ? ` — transpose of ${f.prim}${forwardIds.length > 1 ? ` (+${forwardIds.length - 1})` : ""}`
    : unlisted ? ` — transpose of one of ${unlisted.toLocaleString("en-US")} forward ops on its line` : "";
  return `${node.prim}${of}${line ? ` (${line})` : ""}`;
}

/**
 * The label function of an entry's story: `label(P)` for every position P. `values`:
 * whether the document recorded values (`--values`): backward steps then say their
 * cotangent, forward steps their output.
 */
export function gradLabels(entry, parts, { values = false } = {}) {
  const N = parts.reduce((s, p) => s + p.keys.length, 0);
  const links = linkMaps(entry);
  const fnOf = (graph) => (graph === "program" ? entry.program : entry[graph]);
  const valuesOf = (graph) => (values && fnOf(graph) && fnOf(graph).values) || null;
  const byGraph = Object.fromEntries(parts.map((p) => [p.graph, p]));

  const start = () => {
    const name = shortName(entry.name);
    if (entry.origin === "split") {
      const [f, b] = [byGraph.forward, byGraph.backward].map((p) => (p ? p.keys.length : 0));
      return `start · ${entry.kind || "grad"} of ${name}: forward pass ${plural(f, "step")}, then backward ${plural(b, "step")}` +
        ` · ${plural((entry.residuals || []).length, "residual")} saved between them`;
    }
    if (entry.origin === "jit") return `start · ${name} (jit): ${plural(N, "step")} in program order: forward, backward and the rest`;
    return `start · ${entry.kind || "jvp"} of ${name}: ${plural(N, "step")}, primal and tangent in one pass`;
  };

  return (P) => {
    if (P <= 0) return start();
    const at = locate(parts, Math.min(P, N));
    if (!at) return "";
    const { part, i } = at;
    const { ix, graph } = part;
    const key = part.keys[i - 1];
    const ids = nodesUnder(ix, key);
    const node = elementIds.isNode(key) ? ix.nodes.get(elementIds.body(key)) : null;
    const res = residualsAt(entry, graph, ids);
    const tail = [];
    if (res.made.length) tail.push(`saves ${plural(res.made.length, "residual")} ${avals(res.made)}`);
    if (res.read.length) tail.push(`reads ${plural(res.read.length, "residual")} ${avals(res.read)}`);

    let head, what;
    if (entry.origin === "split") {
      head = `${graph} ${i} of ${part.keys.length}`;
      if (graph === "backward" && node) {
        const fwd = byGraph.forward ? byGraph.forward.ix : ix;
        what = [backwardText(ix, fwd, node, links.toForward.get(node.id) || []), cotangentText(ix, valuesOf(graph), node)];
      } else what = [stepText(ix, key, { values: valuesOf(graph) })];
    } else {
      const role = roleOf(entry, ids);
      head = `${P} of ${N} · ${role}`;
      if (role === "backward" && node) {
        what = [backwardText(ix, ix, node, links.toForward.get(node.id) || [], links.unlisted.get(node.id)), cotangentText(ix, valuesOf(graph), node)];
      } else what = [stepText(ix, key, { values: valuesOf(graph) })];
    }
    if (!node && !what[0]) what = [`${containerName(ix, key)}`];
    return [head, ...what, ...tail].filter(Boolean).join(" · ");
  };
}

/** Whether the flows of a one-program step run in the adjoint colour (backward / tangent eqns). */
export function adjointStep(entry, ix, key) {
  if (entry.origin === "split") return false;
  const role = roleOf(entry, nodesUnder(ix, key));
  return role === "backward" || role === "tangent";
}
