/**
 * Big synthetic functions shaped like the real scale documents (bench/programs.py):
 * a transformer grad with one name scope per layer (scope boxes layer_0..layer_N,
 * each holding attention/mlp scopes), and a deep MLP with no scopes at all (one flat
 * group). Their `repeats` are made here by hand, as the contract describes them.
 */
import { docOf } from "./helpers.js";

/** A function builder: vars, nodes, one root group, chained eqns. */
function builder(name) {
  const vars = [], nodes = [];
  const root = { id: "g0", node: null, label: name, invars: [], constvars: [], outvars: [], n_eqns: 0 };
  const groups = [root];
  const v = (group, def, aval = "f32[8,32]") => {
    const id = `v${vars.length}`;
    vars.push({ id, name: `x${vars.length}`, aval, group, def });
    return id;
  };
  const eqn = (prim, ins, scope = [], group = "g0") => {
    const id = `n${nodes.length}`;
    const out = v(group, id);
    nodes.push({ id, group, scope, prim, params: {}, ins: ins.map((x) => ({ var: x })), outs: [out], subgroups: [], src: null, line: nodes.length + 1 });
    return out;
  };
  const param = () => {
    const id = v("g0", "in", "f32[32,32]");
    root.invars.push(id);
    return id;
  };
  const done = (outs) => {
    root.outvars = outs.map((x) => ({ var: x }));
    root.n_eqns = nodes.length;
    return {
      id: "f0", name, signature: "", source: null, calls: 1, cache_hits: 0, n_eqns: nodes.length,
      text: "{ lambda ; . let\n" + nodes.map((n) => `    ${n.outs[0]} = ${n.prim}`).join("\n") + "\n  in () }",
      root: "g0", groups, nodes, vars, truncated: false, repeats: [],
    };
  };
  return { eqn, param, done, nodes };
}

/**
 * `layers` identical layers, each a scope box `layer_i` holding an attention scope
 * (`att` eqns) and an mlp scope (`mlp` eqns), reading one weight each; then a loss.
 * repeats: one run whose units are the layer scope boxes.
 */
export function scopedLayers(layers = 46, att = 12, mlp = 8) {
  const b = builder("transformer");
  let h = b.param();
  const start = b.nodes.length;
  const units = [];
  for (let i = 0; i < layers; i++) {
    const u0 = b.nodes.length;
    const w = b.param();
    let a = b.eqn("dot_general", [h, w], [`layer_${i}`, "attention"]);
    for (let j = 1; j < att; j++) a = b.eqn(j % 3 ? "mul" : "exp", [a], [`layer_${i}`, "attention"]);
    let m = b.eqn("add", [a, h], [`layer_${i}`, "mlp"]);
    for (let j = 1; j < mlp; j++) m = b.eqn(j % 2 ? "tanh" : "mul", [m], [`layer_${i}`, "mlp"]);
    h = m;
    units.push([u0, b.nodes.length]);
  }
  const loss = b.eqn("reduce_sum", [h]);
  const fn = b.done([loss]);
  fn.repeats = [{ id: "r0", group: "g0", scope: [], units, label: `${layers} identical blocks` }];
  return { fn, start, units };
}

/**
 * A deep MLP with no scopes: `blocks` runs of `k` chained eqns in one flat group
 * (dot_general, add, tanh, …). repeats (when `withRepeats`): one run of k-eqn units.
 */
export function flatBlocks(blocks = 700, k = 14, withRepeats = true) {
  const b = builder("mlp");
  let h = b.param();
  const units = [];
  const prims = ["dot_general", "add", "tanh", "mul", "sub", "broadcast_in_dim", "reduce_sum"];
  for (let i = 0; i < blocks; i++) {
    const u0 = b.nodes.length;
    const w = b.param();
    h = b.eqn("dot_general", [h, w]);
    for (let j = 1; j < k; j++) h = b.eqn(prims[j % prims.length], [h]);
    units.push([u0, b.nodes.length]);
  }
  const fn = b.done([h]);
  if (withRepeats) fn.repeats = [{ id: "r0", group: "g0", scope: [], units, label: `${blocks} identical blocks` }];
  return { fn, units };
}

export const bigDoc = (fn) => docOf(fn);
