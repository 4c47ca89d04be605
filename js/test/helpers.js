/**
 * Test helpers: fixture loading (ours, and real documents from the Python side
 * when they exist) and a generator for big synthetic functions.
 */
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

export const fixture = (name) => JSON.parse(readFileSync(resolve(here, "fixtures", name + ".json"), "utf8"));
export const ownFixtures = () => ["trig", "control", "scoped"].map((n) => [n, fixture(n)]);

/**
 * Real documents produced by the Python side: tests/fixtures/graph_*.json when they
 * exist, plus graph_*.json in $JM_EXTRA_FIXTURES (a directory) when set.
 */
export function pythonFixtures() {
  const dirs = [resolve(here, "../../tests/fixtures"), process.env.JM_EXTRA_FIXTURES].filter(Boolean);
  return dirs.filter((d) => existsSync(d)).flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => /^graph_.*\.json$/.test(f))
      .sort()
      .map((f) => [f, JSON.parse(readFileSync(resolve(dir, f), "utf8"))]));
}

/** Every fixture document we can test against. */
export const allFixtures = () => [...ownFixtures(), ...pythonFixtures()];

/** Number of var uses in a function (node inputs + group outputs that are vars). */
export function varUses(fn) {
  let n = 0;
  for (const nd of fn.nodes) n += nd.ins.filter((o) => o.var != null).length;
  for (const g of fn.groups) n += g.outvars.filter((o) => o.var != null).length;
  return n;
}

/**
 * A synthetic function: `outer` loop eqns at the root, each owning a body jaxpr of
 * `inner` chained eqns (optionally under a scope), plus `flat` plain root eqns.
 */
export function synthFunction({ outer = 0, inner = 0, flat = 0, scope = null } = {}) {
  const groups = [{ id: "g0", node: null, label: "big", invars: ["v0"], constvars: [], outvars: [], n_eqns: 0 }];
  const vars = [{ id: "v0", name: "a", aval: "f32[4]", group: "g0", def: "in" }];
  const nodes = [];
  let nv = 1, line = 1;
  const newVar = (g, def) => {
    const id = `v${nv++}`;
    vars.push({ id, name: `x${nv}`, aval: "f32[4]", group: g, def });
    return id;
  };
  let last = "v0";
  for (let i = 0; i < flat; i++) {
    const id = `n${nodes.length}`;
    const out = newVar("g0", id);
    nodes.push({ id, group: "g0", scope: scope ? [scope, `blk${i % 3}`] : [], prim: i % 2 ? "mul" : "add", params: {},
      ins: [{ var: last }, { lit: "1.0", aval: "f32[]" }], outs: [out], subgroups: [], src: null, line: line++ });
    last = out;
  }
  for (let i = 0; i < outer; i++) {
    const id = `n${nodes.length}`;
    const gid = `g${groups.length}`;
    const out = newVar("g0", id);
    nodes.push({ id, group: "g0", scope: [], prim: "scan", params: { jaxpr: `<jaxpr ${gid}>` },
      ins: [{ var: last }], outs: [out], subgroups: [gid], src: null, line: line++ });
    const bin = newVar(gid, "in");
    const g = { id: gid, node: id, label: "jaxpr", invars: [bin], constvars: [], outvars: [], n_eqns: inner };
    groups.push(g);
    let cur = bin;
    for (let j = 0; j < inner; j++) {
      const nid = `n${nodes.length}`;
      const o = newVar(gid, nid);
      nodes.push({ id: nid, group: gid, scope: [], prim: "sin", params: {}, ins: [{ var: cur }], outs: [o], subgroups: [], src: null, line: line++ });
      cur = o;
    }
    g.outvars = [{ var: cur }];
    last = out;
  }
  groups[0].outvars = [{ var: last }];
  groups[0].n_eqns = nodes.length;
  return {
    id: "f0", name: "big", signature: "f32[4]", source: null, calls: 1, cache_hits: 0, n_eqns: nodes.length,
    text: "{ lambda ; a:f32[4]. let\n" + nodes.map((n) => `    ${n.prim}`).join("\n") + "\n  in (z,) }",
    root: "g0", groups, nodes, vars, truncated: false,
  };
}

export const docOf = (fn, extra = {}) => ({
  schema: "jaxmagic", version: 1, kind: "graph", title: "test", notes: [], error: null, functions: [fn], ...extra,
});
