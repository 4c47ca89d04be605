/**
 * Writes the hand-made graph documents trig, control and scoped in js/test/fixtures/ (declared in
 * jaxmagic/schema/graph.py): version-1 documents shaped like what the Python side produces for small
 * programs, with jaxpr text as JAX prints it; each eqn's `line` is found by searching the text, as
 * the model does. Also writes dev/preview.html, a static page showing them.
 *
 *   node dev/make-fixtures.mjs [OUT_DIR]    (run by ./dev fixtures: tools/make_fixtures.py)
 */
import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const outDir = resolve(process.argv[2] || resolve(dirname(fileURLToPath(import.meta.url)), "../test/fixtures"));

/** Small builder: groups, vars and eqns of one Function, lines located in `text`. */
class Fn {
  constructor(id, name, signature, text, source) {
    Object.assign(this, { id, name, signature, text, source });
    this.groups = [];
    this.nodes = [];
    this.vars = [];
    this.byName = new Map(); // "group/name" -> var id
    this.lines = text.split("\n");
    this.cursor = 0;
  }
  group(label, node = null) {
    const g = { id: `g${this.groups.length}`, node, label, invars: [], constvars: [], outvars: [], n_eqns: 0 };
    this.groups.push(g);
    if (node) this.nodes.find((n) => n.id === node).subgroups.push(g.id);
    return g;
  }
  v(g, name, aval, def) {
    const id = `v${this.vars.length}`;
    this.vars.push({ id, name, aval, group: g.id, def });
    this.byName.set(`${g.id}/${name}`, id);
    return id;
  }
  ins(g, names, avals, kind = "in") {
    names.forEach((n, i) => (kind === "in" ? g.invars : g.constvars).push(this.v(g, n, avals[i], kind)));
  }
  /** Operand: "name" = var in group g, "1.0:f32[]" = literal. */
  op(g, s) {
    const m = /^(.+):([a-z]+\d*\[.*\])$/.exec(s);
    if (m && !this.byName.has(`${g.id}/${s}`)) return { lit: m[1], aval: m[2] };
    const id = this.byName.get(`${g.id}/${s}`);
    if (!id) throw new Error(`unknown var ${s} in ${g.id}`);
    return { var: id };
  }
  eqn(g, prim, ins, outs, { params = {}, scope = [], src = null, find } = {}) {
    const id = `n${this.nodes.length}`;
    const needle = find || `${outs[0][0]}:${outs[0][1]} = ${prim}`;
    let line = null;
    for (let i = this.cursor; i < this.lines.length; i++) {
      if (this.lines[i].includes(needle)) {
        line = i;
        this.cursor = i + 1;
        break;
      }
    }
    if (line === null) throw new Error(`line not found: ${needle}`);
    const node = { id, group: g.id, scope, prim, params, ins: ins.map((s) => this.op(g, s)), outs: [], subgroups: [], src, line };
    this.nodes.push(node);
    node.outs = outs.map(([n, a]) => this.v(g, n, a, id));
    return node;
  }
  out(g, names) {
    g.outvars = names.map((s) => this.op(g, s));
  }
  done(extra = {}) {
    // n_eqns per group, recursive
    const count = (gid) =>
      this.nodes.filter((n) => n.group === gid).reduce((s, n) => s + 1 + n.subgroups.reduce((t, sg) => t + count(sg), 0), 0);
    for (const g of this.groups) g.n_eqns = count(g.id);
    return {
      id: this.id, name: this.name, signature: this.signature, source: this.source,
      calls: 1, cache_hits: 0, n_eqns: count("g0"), text: this.text, root: "g0",
      groups: this.groups, nodes: this.nodes, vars: this.vars, truncated: false, ...extra,
    };
  }
}

const src = (line, code, file = "<cell 3>") => ({ file, line, col: 4, func: "f", code });
const doc = (title, functions, extra = {}) => ({
  schema: "jaxmagic", version: 1, kind: "graph", title, caption: [], notes: [], error: null, functions, ...extra,
});

// 1. sin(x)**2 + cos(x)**2 -------------------------------------------------------
function trig() {
  const text = `{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = integer_pow[y=2] b
    d:f32[3] = cos a
    e:f32[3] = integer_pow[y=2] d
    f:f32[3] = add c e
  in (f,) }`;
  const f = new Fn("f0", "f", "f32[3]", text, { file: "<cell 1>", line: 4, col: 0, func: "f", code: "def f(x):" });
  const g = f.group("f");
  f.ins(g, ["a"], ["f32[3]"]);
  const code = "return jnp.sin(x) ** 2 + jnp.cos(x) ** 2";
  f.eqn(g, "sin", ["a"], [["b", "f32[3]"]], { src: src(5, code, "<cell 1>") });
  f.eqn(g, "integer_pow", ["b"], [["c", "f32[3]"]], { params: { y: "2" }, src: src(5, code, "<cell 1>") });
  f.eqn(g, "cos", ["a"], [["d", "f32[3]"]], { src: src(5, code, "<cell 1>") });
  f.eqn(g, "integer_pow", ["d"], [["e", "f32[3]"]], { params: { y: "2" }, src: src(5, code, "<cell 1>") });
  f.eqn(g, "add", ["c", "e"], [["f", "f32[3]"]], { src: src(5, code, "<cell 1>") });
  f.out(g, ["f"]);
  return doc("%%jaxpr — 1 function, 5 eqns", [f.done({ calls: 2, cache_hits: 1 })]);
}

// 2. cond with two branches + scan body + nested jit ------------------------------
function control() {
  const text = `{ lambda ; a:f32[8]. let
    b:f32[] = reduce_sum[axes=(0,) out_sharding=None] a
    c:bool[] = gt b 0.0:f32[]
    d:i32[] = convert_element_type[new_dtype=int32 sharding=None weak_type=False] c
    e:f32[8] = cond[
      branches=(
        { lambda ; f:f32[8]. let g:f32[8] = sin f in (g,) }
        { lambda ; h:f32[8]. let i:f32[8] = mul h 2.0:f32[] in (i,) }
      )
    ] d a
    j:f32[] k:f32[8] = scan[
      _split_transpose=False
      jaxpr={ lambda ; l:f32[] m:f32[]. let
          n:f32[] = mul m 0.5:f32[]
          o:f32[] = add l n
          p:f32[] = integer_pow[y=2] o
        in (o, p) }
      length=8
      linear=(False, False)
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] e
    q:f32[8] = jit[
      name=inner
      jaxpr={ lambda ; r:f32[8]. let
          s:f32[8] = tanh r
          t:f32[8] = add s 1.0:f32[]
        in (t,) }
    ] k
    u:f32[8] = add q j
  in (u,) }`;
  const f = new Fn("f0", "g", "f32[8]", text, { file: "<cell 2>", line: 9, col: 0, func: "g", code: "def g(x):" });
  const g = f.group("g");
  f.ins(g, ["a"], ["f32[8]"]);
  const s = (l, c) => ({ file: "<cell 2>", line: l, col: 4, func: "g", code: c });
  const condCode = "y = jax.lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: jnp.sin(v), x)";
  f.eqn(g, "reduce_sum", ["a"], [["b", "f32[]"]], { params: { axes: "(0,)", out_sharding: "None" }, src: s(10, condCode) });
  f.eqn(g, "gt", ["b", "0.0:f32[]"], [["c", "bool[]"]], { src: s(10, condCode) });
  f.eqn(g, "convert_element_type", ["c"], [["d", "i32[]"]], { params: { new_dtype: "int32", sharding: "None", weak_type: "False" }, src: s(10, condCode) });
  const cond = f.eqn(g, "cond", ["d", "a"], [["e", "f32[8]"]], { params: { branches: "(<jaxpr g1>, <jaxpr g2>)" }, src: s(10, condCode) });
  const b0 = f.group("branches[0]", cond.id);
  f.ins(b0, ["f"], ["f32[8]"]);
  f.eqn(b0, "sin", ["f"], [["g", "f32[8]"]], { src: s(10, condCode) });
  f.out(b0, ["g"]);
  const b1 = f.group("branches[1]", cond.id);
  f.ins(b1, ["h"], ["f32[8]"]);
  f.eqn(b1, "mul", ["h", "2.0:f32[]"], [["i", "f32[8]"]], { src: s(10, condCode) });
  f.out(b1, ["i"]);
  const scanCode = "c, ys = jax.lax.scan(body, 0.0, y)";
  const scan = f.eqn(g, "scan", ["0.0:f32[]", "e"], [["j", "f32[]"], ["k", "f32[8]"]], {
    params: { _split_transpose: "False", jaxpr: "<jaxpr g3>", length: "8", linear: "(False, False)", num_carry: "1", num_consts: "0", reverse: "False", unroll: "1" },
    src: s(14, scanCode), find: "j:f32[] k:f32[8] = scan",
  });
  const body = f.group("jaxpr", scan.id);
  f.ins(body, ["l", "m"], ["f32[]", "f32[]"]);
  f.eqn(body, "mul", ["m", "0.5:f32[]"], [["n", "f32[]"]], { src: s(12, "c = c + xi * 0.5") });
  f.eqn(body, "add", ["l", "n"], [["o", "f32[]"]], { src: s(12, "c = c + xi * 0.5") });
  f.eqn(body, "integer_pow", ["o"], [["p", "f32[]"]], { params: { y: "2" }, src: s(13, "return c, c ** 2") });
  f.out(body, ["o", "p"]);
  const jit = f.eqn(g, "jit", ["k"], [["q", "f32[8]"]], { params: { name: "inner", jaxpr: "<jaxpr g4>" }, src: s(15, "z = inner(ys)") });
  const inner = f.group("jaxpr", jit.id);
  f.ins(inner, ["r"], ["f32[8]"]);
  f.eqn(inner, "tanh", ["r"], [["s", "f32[8]"]], { src: s(7, "return jnp.tanh(t) + 1.0") });
  f.eqn(inner, "add", ["s", "1.0:f32[]"], [["t", "f32[8]"]], { src: s(7, "return jnp.tanh(t) + 1.0") });
  f.out(inner, ["t"]);
  f.eqn(g, "add", ["q", "j"], [["u", "f32[8]"]], { src: s(16, "return z + c") });
  f.out(g, ["u"]);
  return doc("%%jaxpr — 1 function, 14 eqns", [f.done()], {
    notes: ["jax.debug.print calls are not shown"],
  });
}

// 3. scopes (an MLP with named scopes and a constvar), plus an error ---------------
function scoped() {
  const text = `{ lambda a:f32[8]; b:f32[2,4] c:f32[4,8] d:f32[8,3] e:f32[3]. let
    f:f32[2,8] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      out_sharding=None
      precision=None
      preferred_element_type=float32
    ] b c
    g:f32[1,8] = broadcast_in_dim[
      broadcast_dimensions=(1,)
      shape=(1, 8)
      sharding=None
    ] a
    h:f32[2,8] = add f g
    i:f32[2,8] = max h 0.0:f32[]
    j:f32[2,3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      out_sharding=None
      precision=None
      preferred_element_type=float32
    ] i d
    k:f32[1,3] = broadcast_in_dim[
      broadcast_dimensions=(1,)
      shape=(1, 3)
      sharding=None
    ] e
    l:f32[2,3] = add j k
    m:f32[2] = reduce_max[axes=(1,) out_sharding=None] l
    n:f32[2,1] = broadcast_in_dim[
      broadcast_dimensions=(0,)
      shape=(2, 1)
      sharding=None
    ] m
    o:f32[2,3] = sub l n
    p:f32[2,3] = exp o
    q:f32[2] = reduce_sum[axes=(1,) out_sharding=None] p
    r:f32[2,1] = broadcast_in_dim[
      broadcast_dimensions=(0,)
      shape=(2, 1)
      sharding=None
    ] q
    s:f32[2,3] = div p r
  in (s,) }`;
  const f = new Fn("f0", "MLP.__call__", "f32[2,4], f32[4,8], f32[8,3], f32[3]", text,
    { file: "/home/user/model.py", line: 21, col: 4, func: "MLP.__call__", code: "def __call__(self, x, w1, w2, b2):" });
  const g = f.group("MLP.__call__");
  f.ins(g, ["a"], ["f32[8]"], "const");
  f.ins(g, ["b", "c", "d", "e"], ["f32[2,4]", "f32[4,8]", "f32[8,3]", "f32[3]"]);
  const s = (l, c) => ({ file: "/home/user/model.py", line: l, col: 8, func: "MLP.__call__", code: c });
  const dn = { dimension_numbers: "(([1], [0]), ([], []))", out_sharding: "None", precision: "None", preferred_element_type: "float32" };
  const D0 = ["MLP", "Dense_0"], D1 = ["MLP", "Dense_1"];
  f.eqn(g, "dot_general", ["b", "c"], [["f", "f32[2,8]"]], { params: dn, scope: D0, src: s(24, "y = x @ w1 + B1") });
  f.eqn(g, "broadcast_in_dim", ["a"], [["g", "f32[1,8]"]], { params: { broadcast_dimensions: "(1,)", shape: "(1, 8)", sharding: "None" }, scope: D0, src: s(24, "y = x @ w1 + B1") });
  f.eqn(g, "add", ["f", "g"], [["h", "f32[2,8]"]], { scope: D0, src: s(24, "y = x @ w1 + B1") });
  f.eqn(g, "max", ["h", "0.0:f32[]"], [["i", "f32[2,8]"]], { scope: ["MLP", "relu"], src: s(25, "y = jax.nn.relu(y)") });
  f.eqn(g, "dot_general", ["i", "d"], [["j", "f32[2,3]"]], { params: dn, scope: D1, src: s(27, "y = y @ w2 + b2") });
  f.eqn(g, "broadcast_in_dim", ["e"], [["k", "f32[1,3]"]], { params: { broadcast_dimensions: "(1,)", shape: "(1, 3)", sharding: "None" }, scope: D1, src: s(27, "y = y @ w2 + b2") });
  f.eqn(g, "add", ["j", "k"], [["l", "f32[2,3]"]], { scope: D1, src: s(27, "y = y @ w2 + b2") });
  const SM = ["MLP", "softmax"];
  const sm = "return jax.nn.softmax(y)";
  f.eqn(g, "reduce_max", ["l"], [["m", "f32[2]"]], { params: { axes: "(1,)", out_sharding: "None" }, scope: SM, src: s(28, sm) });
  f.eqn(g, "broadcast_in_dim", ["m"], [["n", "f32[2,1]"]], { params: { broadcast_dimensions: "(0,)", shape: "(2, 1)", sharding: "None" }, scope: SM, src: s(28, sm) });
  f.eqn(g, "sub", ["l", "n"], [["o", "f32[2,3]"]], { scope: SM, src: s(28, sm) });
  f.eqn(g, "exp", ["o"], [["p", "f32[2,3]"]], { scope: SM, src: s(28, sm) });
  f.eqn(g, "reduce_sum", ["p"], [["q", "f32[2]"]], { params: { axes: "(1,)", out_sharding: "None" }, scope: SM, src: s(28, sm) });
  f.eqn(g, "broadcast_in_dim", ["q"], [["r", "f32[2,1]"]], { params: { broadcast_dimensions: "(0,)", shape: "(2, 1)", sharding: "None" }, scope: SM, src: s(28, sm) });
  f.eqn(g, "div", ["p", "r"], [["s", "f32[2,3]"]], { scope: SM, src: s(28, sm) });
  f.out(g, ["s"]);
  return doc("%%jaxpr — 1 function, 14 eqns", [f.done({ calls: 3, cache_hits: 2 })], {
    notes: ["B1 was captured as a constant (global array)"],
    error: { type: "ValueError", message: "shapes (2,3) and (4,) are not aligned", file: "<cell 5>", line: 31, code: "loss = (y - labels).sum()" },
  });
}

const docs = { trig: trig(), control: control(), scoped: scoped() };
for (const [name, d] of Object.entries(docs)) writeFileSync(resolve(outDir, `${name}.json`), JSON.stringify(d, null, 1) + "\n");

// Dev preview page: a static page as the exporter writes it (flag, then the bundle).
const two = { ...docs.control, title: "%%jaxpr — 2 functions, 19 eqns", functions: [docs.control.functions[0], { ...docs.trig.functions[0], id: "f1" }] };
const embed = (d) => `<script type="application/json" data-jaxmagic-doc>${JSON.stringify(d).replace(/</g, "\\u003c")}</script>`;
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>jaxmagic dev preview</title>
<style>
  body { margin: 24px; font-family: system-ui, sans-serif; }
  @media (prefers-color-scheme: dark) { body { background: #161616; color: #ddd; } }
  .jaxmagic-view { margin: 12px 0 32px; }
</style>
</head>
<body>
<h1>jaxmagic dev preview</h1>
<p>Built bundle: <code>jaxmagic/static/jaxmagic.js</code> (run <code>npm run build</code> in js/).</p>
${embed(two)}
${embed(docs.scoped)}
<script>window.__jaxmagic_static = true;</script>
<script type="module" src="../../jaxmagic/static/jaxmagic.js"></script>
</body>
</html>
`;
if (!process.argv[2]) writeFileSync(resolve(outDir, "../../dev/preview.html"), html);
console.log(`wrote fixtures${process.argv[2] ? "" : " and dev/preview.html"}`);
