/**
 * Turns the compact wire form of a graph document (jaxmagic/views/wire.py,
 * docs/schema.md "Wire form") back into the logical document the view and the JSON
 * export use: ids are rebuilt from positions, strings from the string table, node
 * outputs / group inputs / sub-group lists from the var and group tables.
 * Functions that travel gzip+base64 are inflated with the browser's own
 * DecompressionStream, or, where a host's webview lacks it or it throws, by the bundled
 * decoder (widgets/ui/gunzip.js): no library download, no network.
 */
import { gunzipText } from "../ui/gunzip.js";

const DEF = { "-1": "in", "-2": "const", "-3": "free" };

/** Logical document from a wire or logical one (logical documents pass through). */
export async function decodeDocument(doc) {
  if (doc && doc.encoding === "packed") return unpackFields(doc);
  if (!doc || doc.encoding !== "columnar" || !Array.isArray(doc.functions)) return doc;
  const functions = [];
  for (const f of doc.functions) functions.push(decodeFunction(f && f.packed ? await inflate(f.data) : f));
  const out = { ...doc, functions };
  delete out.encoding;
  return out;
}

/**
 * A document whose large top-level blocks travel packed (timelines' call and span columns, grad
 * entries); a grad document's step programs travel in the graph's columnar form.
 */
async function unpackFields(doc) {
  const out = { ...doc };
  delete out.encoding;
  for (const [key, value] of Object.entries(doc)) {
    if (value && typeof value === "object" && value.packed === "gzip+base64") out[key] = await inflate(value.data);
  }
  if (out.kind === "grad" && Array.isArray(out.entries)) out.entries = out.entries.map(withLogicalProgram);
  return out;
}

/** A grad entry with its `program` decoded (a logical program, as older saved views carry, passes). */
function withLogicalProgram(entry) {
  const program = entry && entry.program;
  if (!program || typeof program !== "object" || Array.isArray(program.groups)) return entry;
  return { ...entry, program: decodeFunction(program) };
}

/** gzip+base64 text -> parsed JSON. */
export async function inflate(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return JSON.parse(await gunzipText(bytes));
}

/**
 * `[flops, bytes, transcendentals, note]` -> the node's `cost` (zeros and nulls left out as Python does).
 * @param {Exclude<import("../types/documents").WireCost, 0>} cost a node's estimate (0, none, never reaches here)
 * @param {(i: number) => string | null} str
 */
function decodeCost([flops, bytes, transcendentals, note], str) {
  const cost = { flops, bytes, estimate: true };
  if (transcendentals) cost.transcendentals = transcendentals;
  if (str(note) != null) cost.note = str(note);
  return cost;
}

/**
 * One wire Function -> logical Function (docs/schema.md).
 * @param {import("../types/documents").WireFunction} w
 */
export function decodeFunction(w) {
  const S = w.strings || [];
  const str = (i) => (i == null || i < 0 ? null : S[i]);
  const operand = (op) => (Array.isArray(op) ? { lit: str(op[0]), aval: str(op[1]) } : { var: "v" + op });
  const scopes = (w.scopes || []).map((path) => path.map(str));
  const sources = (w.sources || []).map(([file, line, col, func, code, lib]) => {
    const src = { file: str(file), line, col, func: str(func), code: str(code) };
    if (str(lib) != null) src.lib = str(lib); // the library frame under the user's line, when there is one
    return src;
  });

  const G = w.groups, N = w.nodes, V = w.vars;
  const groups = G.node.map((owner, i) => ({
    id: "g" + i,
    node: owner < 0 ? null : "n" + owner,
    label: str(G.label[i]),
    invars: [],
    constvars: [],
    outvars: G.outvars[i].map(operand),
    n_eqns: G.n_eqns[i],
  }));
  const nodes = N.prim.map((prim, i) => {
    const params = {};
    const p = N.params[i];
    for (let k = 0; k + 1 < p.length; k += 2) params[S[p[k]]] = S[p[k + 1]];
    const node = {
      id: "n" + i,
      group: "g" + N.group[i],
      scope: scopes[N.scope[i]] || [],
      prim: str(prim),
      params,
      ins: N.ins[i].map(operand),
      outs: [],
      subgroups: [],
      src: N.src[i] < 0 ? null : sources[N.src[i]],
      line: N.line[i] < 0 ? null : N.line[i],
    };
    if (N.cost) node.cost = N.cost[i] ? decodeCost(N.cost[i], str) : null;
    if (N.shlo) {
      node.shlo = N.shlo[i];
      node.hlo = N.hlo[i];
      node.hlo_comp = str(N.hlo_comp[i]);
    }
    return node;
  });
  G.node.forEach((owner, i) => {
    if (owner >= 0 && nodes[owner]) nodes[owner].subgroups.push("g" + i);
  });
  const vars = V.name.map((name, i) => {
    const d = V.def[i];
    const v = { id: "v" + i, name: str(name), aval: str(V.aval[i]), group: "g" + V.group[i], def: d >= 0 ? "n" + d : DEF[d] };
    if (d >= 0 && nodes[d]) nodes[d].outs.push(v.id);
    else if (d === -1) groups[V.group[i]].invars.push(v.id);
    else if (d === -2) groups[V.group[i]].constvars.push(v.id);
    return v;
  });
  for (const [i, sidx] of Object.entries(w.paths || {})) {
    if (vars[Number(i)]) vars[Number(i)].path = str(sidx);
  }

  const fn = {};
  for (const [k, v] of Object.entries(w)) {
    if (!["strings", "scopes", "sources", "groups", "nodes", "vars", "root", "values", "batch", "paths"].includes(k)) fn[k] = v;
  }
  fn.root = "g" + w.root;
  fn.groups = groups;
  fn.nodes = nodes;
  fn.vars = vars;
  if (w.values) {
    fn.values = {};
    for (const [i, summary] of Object.entries(w.values)) fn.values["v" + i] = summary;
  }
  if (Array.isArray(w.batch)) {
    fn.batch = {};
    w.batch.forEach((d, i) => { fn.batch["v" + i] = d < 0 ? null : d; });
  }
  return fn;
}
