/**
 * Test helpers of the keys view: mounting it straight from widgets/keys/view.js (the
 * bundle entries register it elsewhere), a view size for jsdom (which lays nothing out,
 * so the view culls to an assumed 900x520 unless a test gives the svg a size), and
 * synthetic documents of any size that follow docs/schema.md ("Keys documents"), never
 * committed: wide splits, many roots, long runs.
 */
import { afterEach } from "vitest";
import { useView } from "./mounting.js";
import { keysView } from "../../widgets/keys/view.js";

/** `render(doc)` mounts the keys view into a fresh `.jm-root`; unmounted after each test. */
export const useKeys = () => useView(keysView);

/** Give every element a client size of w x h (0 x 0 in jsdom) until the test ends: a big view culls nothing. */
export function useViewSize() {
  const saved = [];
  afterEach(() => {
    while (saved.length) {
      const [k, d] = saved.pop();
      if (d) Object.defineProperty(Element.prototype, k, d);
      else delete Element.prototype[k];
    }
  });
  return (w, h) => {
    for (const [k, v] of [["clientWidth", w], ["clientHeight", h]]) {
      saved.push([k, Object.getOwnPropertyDescriptor(Element.prototype, k)]);
      Object.defineProperty(Element.prototype, k, { configurable: true, get: () => v });
    }
  };
}

const src = (line, code) => ({ file: "<cell 1>", line, col: null, func: "<module>", code });

/** Builds a keys document node by node (ids in preorder, as the schema requires). */
export function docBuilder(title = "synthetic") {
  const nodes = [], runs = [], findings = [];
  let order = 0;
  const use = (name, line, { kind = "sampler", consuming = true, times = 1 } = {}) => ({
    kind, name, consuming, shape: kind === "sampler" ? [2] : null, dtype: kind === "sampler" ? "f32" : null, times,
    source: src(line, `x = jax.random.${name}(k)`), via: null, call: null, function: null, loop: null, branch: null, order: ++order,
  });
  function node(parent, how, label, { uses = [], shape = [], index = null, run = null, call = null, fn = null } = {}) {
    const consumed = uses.filter((u) => u.consuming).reduce((a, u) => a + (u.times ?? 2), 0);
    const n = {
      id: nodes.length, parent, how, label, detail: `${how} ${label}`, shape, count: 1, index, typed: true, impl: "threefry2x32",
      data: null, made: how === "row" ? [] : [src(1, `k = ${label}`)], call, function: fn, loop: null, uses,
      state: consumed === 0 ? "unused" : consumed === 1 ? "consumed" : "reused", run,
    };
    nodes.push(n);
    return n.id;
  }
  function doc() {
    const count = (s) => nodes.filter((n) => n.state === s).length;
    return {
      schema: "jaxmagic", version: 1, kind: "keys", title, notes: [], error: null,
      summary: { keys: nodes.length, roots: nodes.filter((n) => n.parent == null).length, consumed: count("consumed"),
        reused: count("reused"), unused: count("unused"), uses: nodes.reduce((a, n) => a + n.uses.length, 0), programs: 0 },
      nodes, runs, findings,
    };
  }
  return { nodes, runs, findings, use, node, doc };
}

/** `roots` seeds, each split into `rows` rows consumed by `normal` (one in `reusedEvery` rows reused). */
export function manyRoots(roots = 100, rows = 48, reusedEvery = 0) {
  const b = docBuilder(`${roots} roots × ${rows} rows`);
  for (let r = 0; r < roots; r++) {
    const root = b.node(null, "seed", `key(${r})`, { uses: [b.use("split", 2, { kind: "split" })] });
    const sp = b.node(root, "split", `split ${rows}`, { shape: [rows] });
    for (let i = 0; i < rows; i++) {
      const again = reusedEvery && i % reusedEvery === 0;
      b.node(sp, "row", `[${i}]`, { index: i, uses: again ? [b.use("normal", 3), b.use("uniform", 4)] : [b.use("normal", 3)] });
    }
  }
  return b.doc();
}

/** One key split into `rows` rows, each consumed once. */
export function wideSplit(rows = 5000) {
  const b = docBuilder(`split of ${rows}`);
  const root = b.node(null, "seed", "key(0)", { uses: [b.use("split", 2, { kind: "split" })] });
  const sp = b.node(root, "split", `split ${rows}`, { shape: [rows] });
  for (let i = 0; i < rows; i++) b.node(sp, "row", `[${i}]`, { index: i, uses: [b.use("normal", 3)] });
  return b.doc();
}

/**
 * The `key, sub = split(key); normal(sub)` loop for `steps` steps: steps 0..steps-2 folded
 * into run 0, the last step's split is the run's `last`; its kept key is reused.
 */
export function longRun(steps = 1000) {
  const b = docBuilder(`run of ${steps}`);
  let key = b.node(null, "seed", "key(0)", { uses: [b.use("split", 2, { kind: "split" })] });
  let first = null, last = null;
  for (let i = 0; i < steps; i++) {
    const inRun = i < steps - 1 ? 0 : null;
    const sp = b.node(key, "split", "split 2", { shape: [2], run: inRun });
    if (first == null) first = sp;
    if (inRun == null) last = sp;
    b.node(sp, "row", "[1]", { index: 1, run: inRun, uses: [b.use("normal", 3)] }); // before [0]: ids stay a preorder
    key = b.node(sp, "row", "[0]", { index: 0, run: inRun,
      uses: inRun != null ? [b.use("split", 2, { kind: "split" })] : [b.use("normal", 5), b.use("normal", 6)] });
  }
  b.runs.push({ id: 0, first, last, length: steps - 1, label: "split (line 2) → normal (line 3)" });
  b.findings.push({ kind: "key_reuse", severity: "bug", message: "the last key is consumed twice", node: key, sources: [src(5, "a"), src(6, "b")] });
  return b.doc();
}
