// Bounded containers (repeats, units, chunks, port bundles), crossing values
// (boundary.js) and the neighbourhood index, on real fixtures with hand-made repeats
// and on synthetic functions shaped like the 10k / 50k scale documents.
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  indexFunction, isCollapsible, visibleRep, nodeAtLine, lineIndexOf, ancestors, deriveEdges, nKey, CAP, PORT_CAP,
} from "../../widgets/graph/model.js";
import { defaultExpansion, allCollapsibles, visibleEqnCount, visibleItemCount, reveal, DEFAULT_BUDGET } from "../../widgets/graph/expansion.js";
import { boundaryOf } from "../../widgets/graph/boundary.js";
import { neighbourhood, neighbourhoodIndex, HOOD_CAP } from "../../widgets/graph/neighbourhood.js";
import { searchRecords } from "../../widgets/graph/find.js";
import { search } from "../../widgets/ui/search.js";
import { buildScene } from "../../widgets/graph/scene.js";
import { layoutTree, createCache } from "../../widgets/ui/layout.js";
import { allFixtures, fixture, synthFunction } from "./helpers.js";
import { scopedLayers, flatBlocks } from "./big.js";

const here = dirname(fileURLToPath(import.meta.url));
const smallTransformer = () =>
  JSON.parse(readFileSync(resolve(here, "../../tests/fixtures/graph_small_transformer.json"), "utf8")).functions[0];

/** The small transformer (a real document) with hand-made repeats. */
function withRepeats() {
  const fn = smallTransformer();
  fn.repeats = [
    // the 5 mul/sub pairs of the SGD update at the root: units of 2 eqn items
    { id: "a", group: "g0", scope: [], units: [[94, 96], [96, 98], [98, 100], [100, 102], [102, 104]], label: "5 identical blocks" },
    // attention and mlp inside the forward pass's jvp(…) box: each unit exactly one scope box
    { id: "b", group: "g0", scope: ["jvp(…)"], units: [[0, 31], [31, 45]], label: "2 blocks" },
    // does not match the tree (the range is inside a scope box): ignored
    { id: "c", group: "g0", scope: [], units: [[5, 7], [7, 9]], label: "bad" },
    // unknown container: ignored
    { id: "d", group: "nope", scope: [], units: [[0, 1], [1, 2]], label: "bad" },
  ];
  return fn;
}

/** Every element key under `k` (inclusive). */
const subtree = (ix, k) => [k, ...(ix.items.get(k) || []).flatMap((c) => subtree(ix, c))];

describe("repeats", () => {
  it("fold a run of multi-eqn units into R > U boxes, and single scope boxes into R directly", () => {
    const fn = withRepeats();
    const ix = indexFunction(fn);
    const top = ix.items.get(ix.root);
    expect(top.filter((k) => k.startsWith("R:"))).toEqual(["R:0"]);
    const forward = top.find((k) => ix.scopes.get(k)?.name === "jvp(…)");
    expect(ix.items.get(forward)[0]).toBe("R:1"); // folded inside the jvp(…) box
    // R:0: 5 units of 2 eqns
    const units = ix.items.get("R:0");
    expect(units).toEqual(["U:0:0", "U:0:1", "U:0:2", "U:0:3", "U:0:4"]);
    expect(ix.items.get("U:0:2")).toEqual(["N:n98", "N:n99"]);
    expect(ix.labels.get("R:0")).toBe("×5 blocks mul … sub (identical, 2 eqns each)");
    expect(ix.labels.get("U:0:2")).toBe("block 3 of 5");
    expect(ix.count.get("R:0")).toBe(10);
    // R:1 holds the two scope boxes themselves
    const scopes = ix.items.get("R:1");
    expect(scopes.map((k) => ix.scopes.get(k).name)).toEqual(["attention", "mlp"]);
    expect(ix.labels.get("R:1")).toBe("×2 attention … mlp (identical, 31 eqns each)");
    // the bad runs changed nothing; counts still add up
    expect(ix.count.get(ix.root)).toBe(fn.n_eqns);
    expect([...ix.virt.keys()].filter((k) => k.startsWith("R:")).sort()).toEqual(["R:0", "R:1"]);
  });

  it("work through visibleRep, reveal, default expansion, search and nodeAtLine", () => {
    const fn = withRepeats();
    const ix = indexFunction(fn);
    expect(visibleRep(ix, "N:n99", new Set())).toBe("R:0");
    expect(visibleRep(ix, "N:n99", new Set(["R:0"]))).toBe("U:0:2");
    const exp = new Set();
    expect(reveal(ix, exp, "N:n99")).toBe(true);
    expect([...exp].sort()).toEqual(["R:0", "U:0:2"]);
    expect(visibleRep(ix, "N:n99", exp)).toBe("N:n99");
    // 104 eqns fit the default budget: everything opens but the repeats, which stay folded
    // as the caption says (captions/graph.py): one box each, nothing inside them open
    const def = defaultExpansion(ix);
    expect([...def].filter((k) => /^[RU]:/.test(k) || ancestors(ix, k).some((a) => a.startsWith("R:")))).toEqual([]);
    const inRepeats = [...ix.parent.keys()].filter((k) => k.startsWith("N:") && ancestors(ix, k).some((a) => a.startsWith("R:")));
    expect(inRepeats.length).toBe(10 + 45); // R:0: 5 units of 2 eqns; R:1: two scope boxes of 31 and 14 eqns
    expect(visibleEqnCount(ix, def)).toBe(fn.n_eqns - inRepeats.length);
    expect(visibleEqnCount(ix, allCollapsibles(ix))).toBe(fn.n_eqns); // Expand all still opens them
    expect(visibleEqnCount(ix, new Set())).toBe(0);
    // search finds eqns inside repeats; their visible stand-in is the R box
    const hits = search(searchRecords(ix), "sub");
    expect(hits).toContain("N:n99");
    expect(new Set(hits.filter((k) => +k.slice(3) >= 94).map((k) => visibleRep(ix, k, new Set())))).toEqual(new Set(["R:0"]));
    const n = fn.nodes[99];
    expect(nodeAtLine(ix, n.line)).toBe(n.id);
  });

  it("a scope name entered again after other items is a new box, and a repeat finds its own box", () => {
    // two blocks, each [dot_general, vmap(…) > einsum, add]: the two vmap(…) boxes share a path
    const block = (b) => [
      { id: `n${3 * b}`, group: "g0", prim: "dot_general", scope: ["jvp(…)"], ins: [], outs: [], subgroups: [], params: {} },
      { id: `n${3 * b + 1}`, group: "g0", prim: "dot_general", scope: ["jvp(…)", "vmap(…)"], ins: [], outs: [], subgroups: [], params: {} },
      { id: `n${3 * b + 2}`, group: "g0", prim: "add", scope: ["jvp(…)"], ins: [], outs: [], subgroups: [], params: {} },
    ];
    const fn = {
      name: "f", root: "g0", n_eqns: 6, vars: [],
      groups: [{ id: "g0", owner: null, label: "f", invars: [], constvars: [], outvars: [], n_eqns: 6 }],
      nodes: [...block(0), ...block(1)],
      repeats: [{ id: "r0", group: "g0", scope: ["jvp(…)"], units: [[0, 3], [3, 6]], label: "2 identical blocks" }],
    };
    const ix = indexFunction({ ...fn, repeats: [] });
    const [forward] = ix.items.get(ix.root);
    const inside = ix.items.get(forward);
    expect(inside.filter((k) => k.startsWith("S:")).length).toBe(2); // one vmap(…) box per block
    expect(ix.parent.get("N:n1")).not.toBe(ix.parent.get("N:n4"));
    const folded = indexFunction(fn);
    const [fwd] = folded.items.get(folded.root);
    expect(folded.items.get(fwd)).toEqual(["R:0"]);
    expect(folded.items.get("R:0").map((u) => folded.items.get(u).length)).toEqual([3, 3]);
  });

  it("without repeats nothing changes", () => {
    for (const [name, doc] of allFixtures()) {
      for (const f of doc.functions) {
        const ix = indexFunction({ ...f, repeats: undefined });
        expect([...ix.virt.keys()].filter((k) => /^[RU]:/.test(k)), name).toEqual([]);
        const ix2 = indexFunction({ ...f, repeats: [] });
        expect([...ix2.items.keys()]).toEqual([...ix.items.keys()]);
      }
    }
  });

  it("keys never collide with document ids that look like made-up keys", () => {
    const fn = withRepeats();
    const ren = (id) => "K:" + id; // node ids "K:n0"…, group ids "K:g0"…, var ids "K:v0"…
    const vmap = (o) => (o && o.var != null ? { ...o, var: ren(o.var) } : o);
    const adv = {
      ...fn, root: ren(fn.root),
      groups: fn.groups.map((g) => ({ ...g, id: ren(g.id), invars: g.invars.map(ren), constvars: g.constvars.map(ren), outvars: g.outvars.map(vmap) })),
      nodes: fn.nodes.map((n) => ({ ...n, id: ren(n.id), group: ren(n.group), ins: n.ins.map(vmap), outs: n.outs.map(ren), scope: n.scope.map(() => "S:0") })),
      vars: fn.vars.map((v) => ({ ...v, id: ren(v.id), group: ren(v.group), def: v.def === "in" || v.def === "const" ? v.def : ren(v.def) })),
      repeats: fn.repeats.map((r) => ({ ...r, group: ren(r.group), scope: r.scope.length ? ["S:0"] : [] })),
    };
    const ix = indexFunction(adv);
    const made = [...ix.parent.keys()].filter((k) => /^[SRUKQ]:/.test(k));
    const docKeys = new Set([...ix.parent.keys()].filter((k) => /^[GNPO]:/.test(k)));
    for (const k of made) expect(docKeys.has(k)).toBe(false);
    expect(ix.count.get(ix.root)).toBe(fn.n_eqns);
    expect(ix.items.get(ix.root).filter((k) => k.startsWith("R:")).length).toBe(1); // the 2-eqn run
  });
});

describe("bounded containers on big functions", () => {
  const cases = [
    ["46 scoped layers, repeats", () => scopedLayers(46).fn],
    ["700 flat blocks of 14, repeats", () => flatBlocks(700, 14).fn],
    ["700 flat blocks of 14, no repeats", () => flatBlocks(700, 14, false).fn],
    ["3,500 flat blocks of 14 (49k eqns), no repeats", () => flatBlocks(3500, 14, false).fn],
  ];
  for (const [name, make] of cases) {
    it(`${name}: every container within CAP items, counts, budgets`, () => {
      const fn = make();
      const t0 = performance.now();
      const ix = indexFunction(fn);
      const ms = performance.now() - t0;
      expect(ms).toBeLessThan(3000);
      for (const [k, list] of ix.items) expect(list.length, k).toBeLessThanOrEqual(CAP);
      for (const [, p] of ix.ports) {
        const b = p.bundles || {};
        expect((b.in || [...p.ins, ...p.consts]).length).toBeLessThanOrEqual(PORT_CAP > CAP ? PORT_CAP : CAP);
      }
      expect(ix.count.get(ix.root)).toBe(fn.n_eqns);
      const exp = defaultExpansion(ix);
      expect(visibleEqnCount(ix, exp)).toBeLessThanOrEqual(DEFAULT_BUDGET);
      expect(visibleItemCount(ix, exp)).toBeLessThanOrEqual(400);
      expect(visibleEqnCount(ix, allCollapsibles(ix))).toBe(fn.n_eqns);
      // every eqn is reachable from the root through open containers after reveal
      const last = nKey(fn.nodes[fn.nodes.length - 2].id);
      const e2 = new Set();
      reveal(ix, e2, last);
      expect(visibleRep(ix, last, e2)).toBe(last);
    });
  }

  it("a 49k flat group becomes two levels of chunks with eqn ranges", () => {
    const fn = flatBlocks(3500, 14, false).fn;
    const ix = indexFunction(fn);
    const top = ix.items.get(ix.root);
    expect(top.every((k) => k.startsWith("K:"))).toBe(true);
    expect(top.length).toBe(Math.ceil(Math.ceil(49000 / CAP) / CAP)); // 409 chunks -> 4
    const second = ix.items.get(top[0]);
    expect(second.every((k) => k.startsWith("K:"))).toBe(true);
    expect(ix.labels.get(top[0])).toMatch(/^eqns 1–12,\d{3}: dot_general … /);
    expect(ix.labels.get(second[1])).toMatch(/^eqns 1\d\d–2\d\d: /);
    expect(ancestors(ix, nKey(fn.nodes[30000].id)).length).toBe(3); // K, K, root
    // 3,501 params: bundled ports of at most CAP each
    const b = ix.ports.get(ix.root).bundles.in;
    expect(b.length).toBe(Math.ceil(3501 / CAP));
    expect(ix.labels.get(b[0])).toMatch(/^inputs 1–\d+ of 3501$/);
    expect(visibleRep(ix, "P:" + fn.groups[0].invars[5], new Set())).toBe(b[0]);
    expect(isCollapsible(ix, b[0])).toBe(true);
  });

  it("layout of default and open views stays small: no container over CAP items plus bounded border points", () => {
    for (const fn of [scopedLayers(46).fn, flatBlocks(700, 14).fn]) {
      const ix = indexFunction(fn);
      for (const exp of [defaultExpansion(ix), allCollapsibles(ix)]) {
        const scene = buildScene(ix, exp, "t:");
        for (const [k, c] of scene.containers) {
          const real = c.items.filter((it) => !it.virtual).length;
          expect(real, k).toBeLessThanOrEqual(CAP + 2 * CAP); // items plus bundle pills at most
          expect(c.items.length - real, k).toBeLessThanOrEqual(2 * Math.max(real, 24));
        }
      }
    }
  });

  it("identical layers are laid out once (shape cache)", () => {
    const ix = indexFunction(scopedLayers(46).fn);
    const scene = buildScene(ix, allCollapsibles(ix), "t:");
    const { stats } = layoutTree(scene.root, createCache(), { budgetMs: 1e9 });
    expect(stats.shaped).toBeGreaterThan(100);
    expect(stats.dagre + stats.layered).toBeLessThan(12);
  });
});

/** Boundary by brute force: a var crosses `key`'s border if defined on one side and used on the other. */
function bruteBoundary(ix, key) {
  const inside = new Set(subtree(ix, key));
  for (const g of [...inside].filter((k) => k.startsWith("G:"))) {
    const p = ix.ports.get(g);
    for (const pk of [...p.ins, ...p.consts, ...p.outs]) inside.add(pk);
  }
  const ins = [], outs = [];
  for (const e of ix.edges) {
    const a = inside.has(e.from), b = inside.has(e.to);
    if (!a && b && !ins.includes(e.var)) ins.push(e.var);
    if (a && !b && !outs.includes(e.var)) outs.push(e.var);
  }
  return { ins: new Set(ins), outs: new Set(outs) };
}

describe("layout of big containers", () => {
  const row = (n, virt, ports) => {
    const items = [], edges = [];
    for (let i = 0; i < ports; i++) items.push({ id: `p${i}`, role: "in", w: 80, h: 22 });
    for (let i = 0; i < n; i++) items.push({ id: `m${i}`, role: "node", w: 120, h: 42 });
    for (let i = 1; i < n; i++) edges.push({ id: `e${i}`, v: `m${i - 1}`, w: `m${i}` });
    for (let i = 0; i < ports; i++) edges.push({ id: `pe${i}`, v: `p${i}`, w: `m${i % n}` });
    for (let i = 0; i < virt; i++) {
      items.push({ id: `<in>${i}`, role: "in", w: 2, h: 8, virtual: true }, { id: `<out>${i}`, role: "out", w: 2, h: 8, virtual: true });
      edges.push({ id: `vi${i}`, v: `<in>${i}`, w: `m${i % n}` }, { id: `vo${i}`, v: `m${i % n}`, w: `<out>${i}` });
    }
    return { key: `row${n}-${virt}-${ports}`, head: 24, pad: 12, items, edges };
  };

  it("routes many border crossings on buses instead of through dagre", () => {
    const c = row(46, 46, 0);
    const t0 = performance.now();
    const r = layoutTree(c, createCache()).results[c.key];
    expect(performance.now() - t0).toBeLessThan(400); // dagre with them: ~0.8 s
    expect(r.method).toBe("dagre");
    const ys = c.items.filter((it) => !it.virtual).map((it) => r.pos[it.id][1]);
    for (const it of c.items.filter((x) => x.virtual)) {
      const [x, y] = r.pos[it.id];
      expect(x === 0 || x + it.w === r.w).toBe(true); // on the box border
      if (it.role === "in") expect(y).toBeLessThan(Math.min(...ys)); // the bus above the items
      else expect(y).toBeGreaterThan(Math.max(...ys));
    }
    expect(Object.keys(r.edges).length).toBe(c.edges.length);
  });

  it("stacks long port columns beside the laid-out items, in order", () => {
    const c = row(10, 0, 40);
    const r = layoutTree(c, createCache()).results[c.key];
    const px = c.items.filter((it) => it.role === "in").map((it) => r.pos[it.id]);
    const mid = c.items.filter((it) => it.role === "node").map((it) => r.pos[it.id]);
    expect(Math.max(...px.map((p) => p[0] + p[2]))).toBeLessThan(Math.min(...mid.map((p) => p[0])));
    expect(px.map((p) => p[1])).toEqual([...px.map((p) => p[1])].sort((a, b) => a - b));
  });
});

describe("boundaryOf", () => {
  it("agrees with brute force on every container and eqn of every fixture (and repeats)", () => {
    const fns = [...allFixtures().flatMap(([, d]) => d.functions), withRepeats()];
    for (const fn of fns) {
      const ix = indexFunction(fn);
      for (const k of ix.parent.keys()) {
        if (!/^[SRUKN]:/.test(k)) continue;
        const b = boundaryOf(ix, k), bb = bruteBoundary(ix, k);
        expect(new Set(b.ins), `${fn.name} ${k} ins`).toEqual(bb.ins);
        expect(new Set(b.outs), `${fn.name} ${k} outs`).toEqual(bb.outs);
      }
    }
  });

  it("groups: their ports; a collapsed owner: its operands and results", () => {
    const fn = fixture("control").functions[0];
    const ix = indexFunction(fn);
    const g = fn.groups[1];
    expect(boundaryOf(ix, "G:" + g.id)).toEqual({ ins: [...g.constvars, ...g.invars], outs: g.outvars.filter((o) => o.var).map((o) => o.var) });
    const owner = fn.nodes.find((n) => n.subgroups.length);
    const b = boundaryOf(ix, nKey(owner.id));
    expect(b.ins).toEqual([...new Set(owner.ins.filter((o) => o.var).map((o) => o.var))]);
    expect(b.outs.every((v) => owner.outs.includes(v))).toBe(true);
    expect(boundaryOf(ix, "nope")).toEqual({ ins: [], outs: [] });
  });

  it("is fast on 50k eqns: every R/U/K box in well under a second", () => {
    const ix = indexFunction(flatBlocks(3500, 14).fn);
    const t0 = performance.now();
    let n = 0;
    for (const k of ix.virt.keys()) n += boundaryOf(ix, k).ins.length;
    expect(n).toBeGreaterThan(0);
    expect(performance.now() - t0).toBeLessThan(1500);
    const u = boundaryOf(ix, "U:0:10"); // one block: its weight and the previous block's output in
    expect(u.ins.length).toBe(2);
    expect(u.outs.length).toBe(1);
  });
});

describe("neighbourhood", () => {
  it("depth 1 is the eqn, its producers and consumers; hops cross into sub-jaxprs via ports", () => {
    const fn = fixture("control").functions[0];
    const ix = indexFunction(fn);
    const edges = deriveEdges(fn);
    const n = fn.nodes.find((x) => !x.subgroups.length && x.group === fn.root && x.ins.some((o) => o.var));
    const { keys } = neighbourhood(ix, nKey(n.id), 1);
    const direct = new Set([nKey(n.id)]);
    for (const e of edges) {
      if (e.to === nKey(n.id) && e.from.startsWith("N:")) direct.add(e.from);
      if (e.from === nKey(n.id) && e.to.startsWith("N:")) direct.add(e.to);
    }
    for (const k of direct) expect(keys).toContain(k);
    // an eqn reading a sub-jaxpr's input is one hop from the owner
    const inner = fn.nodes.find((x) => x.group !== fn.root && x.ins.some((o) => o.var && fn.vars.find((v) => v.id === o.var).def === "in"));
    const owner = fn.groups.find((g) => g.id === inner.group).node;
    expect(neighbourhood(ix, nKey(inner.id), 1).keys).toContain(nKey(owner));
    expect(neighbourhood(ix, nKey(owner), 1).keys).toContain(nKey(inner.id));
  });

  it("is capped, flat, and goes through scene and layout", () => {
    const fn = flatBlocks(200, 14).fn;
    const ix = indexFunction(fn);
    const mid = nKey(fn.nodes[1400].id);
    const small = neighbourhoodIndex(ix, mid, 2);
    expect(small.hood.size).toBe(5); // a chain: two on each side
    expect(small.items.get(small.root)).toHaveLength(5);
    const big = neighbourhoodIndex(ix, mid, 5, 7);
    expect(big.hood).toMatchObject({ size: 7, capped: true });
    expect(small.edges.length).toBe(4);
    const scene = buildScene(small, new Set(), "h:");
    const { results } = layoutTree(scene.root, createCache());
    expect(results[scene.root.key].method).toBe("dagre");
    expect(HOOD_CAP).toBe(400);
    // search and text lookups on the neighbourhood index
    expect(search(searchRecords(small), "dot_general").every((k) => small.parent.has(k))).toBe(true);
    expect(lineIndexOf(small).length).toBe(5);
  });

  it("works on a synthetic loop function", () => {
    const fn = synthFunction({ outer: 3, inner: 6 });
    const ix = indexFunction(fn);
    const hood = neighbourhoodIndex(ix, "N:n0", 3);
    expect(hood.hood.size).toBeGreaterThan(3);
    expect(hood.count.get(hood.root)).toBe(hood.hood.size);
  });
});
