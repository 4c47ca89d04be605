// The pure side of the keys view: reading the document (children, runs, findings), the
// visible forest (runs folded, rows aggregated and paged, collapsed nodes), reveal, the
// "only paths to reused keys" set and the layout. Expectations are computed from each
// document, so the tests hold on the real fixtures as they change.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { manyRoots, wideSplit, longRun, docBuilder } from "./keys-helpers.js";
import { readKeys, reuseSet, searchRecords, pathTo, sortFindings } from "../../widgets/keys/model.js";
import { buildTree, initialUi, toggle, reveal, standIn, AGG_OVER, AGG_PAGE, RUN_PAGE } from "../../widgets/keys/tree.js";
import { layoutForest, H } from "../../widgets/keys/layout.js";
import { search } from "../../widgets/ui/search.js";

const DOCS = [["handmade", () => fixture("keys-handmade")], ["small", () => fixture("keys-small")],
  ["many roots", () => manyRoots(12, 20, 7)], ["wide split", () => wideSplit(130)], ["long run", () => longRun(60)],
  ["split twice", splitTwice]];
/** A key split twice (reused), each split's rows consumed: the filter keeps the splits, not their rows. */
function splitTwice() {
  const b = docBuilder("split twice");
  const k = b.node(null, "seed", "key(0)", { uses: [b.use("split", 2, { kind: "split" }), b.use("split", 3, { kind: "split" })] });
  for (const line of [2, 3]) {
    const sp = b.node(k, "split", "split 12", { shape: [12] });
    for (let i = 0; i < 12; i++) b.node(sp, "row", `[${i}]`, { index: i, uses: [b.use("normal", line + 10)] });
  }
  b.node(null, "seed", "key(1)", { uses: [b.use("normal", 20)] });
  return b.doc();
}
const nodeIds = (t) => t.items.filter((it) => it.type === "node").map((it) => it.id);
/** Node ids descending from (or equal to) `id`, from the document's parents alone. */
function subtree(doc, id) {
  const out = new Set([id]);
  for (const n of doc.nodes) if (n.parent != null && out.has(n.parent)) out.add(n.id);
  return out;
}
/** Open every stand-in (runs, aggregates, pages) until none is left: the whole (filtered) forest. */
function openAll(m, ui) {
  for (let t = buildTree(m, ui); ; t = buildTree(m, ui)) {
    const closed = t.items.find((it) => (it.type !== "node" && it.collapsible && !it.expanded) || it.type === "more");
    if (!closed) return t;
    toggle(ui, closed);
  }
}

describe("keys model", () => {
  for (const [name, make] of DOCS) {
    it(`${name}: children and roots follow the document's parents; run members carry the run id`, () => {
      const doc = make();
      const m = readKeys(doc);
      expect(m.roots).toEqual(doc.nodes.filter((n) => n.parent == null).map((n) => n.id));
      doc.nodes.forEach((n) => {
        expect(m.children[n.id]).toEqual(doc.nodes.filter((c) => c.parent === n.id).map((c) => c.id));
        expect(pathTo(m, n.id).at(-1)).toBe(n.id);
      });
      for (const r of doc.runs) {
        const run = m.runs.get(r.id);
        expect(run.members).toEqual(doc.nodes.filter((n) => n.run === r.id).map((n) => n.id));
        expect(run.first).toBe(r.first);
        expect(run.exits[0]).toBe(r.last);
        for (const e of run.exits) expect(doc.nodes[doc.nodes[e].parent].run).toBe(r.id);
      }
    });

    it(`${name}: by default runs are folded (one stand-in each, its last drawn as its child), nothing else hidden`, () => {
      const doc = make();
      const m = readKeys(doc);
      const t = buildTree(m, initialUi());
      const drawn = new Set(nodeIds(t));
      for (const n of doc.nodes) if (n.run != null) expect(drawn.has(n.id), `run node ${n.id}`).toBe(false);
      for (const r of doc.runs) {
        const items = t.items.filter((it) => it.type === "run" && it.run.id === r.id);
        expect(items.length).toBe(1);
        expect(items[0].children.map((c) => c.id)).toContain(r.last);
        expect(t.byNode.get(r.last).parent).toBe(items[0]);
        const p = doc.nodes[r.first].parent;
        expect(items[0].parent ? items[0].parent.id : null).toBe(p);
      }
      // every node is drawn, or stands behind a run or an aggregate of more than AGG_OVER rows
      for (const n of doc.nodes) {
        if (drawn.has(n.id)) continue;
        const it = standIn(m, t, n.id);
        expect(["run", "agg"]).toContain(it.type);
        if (it.type === "agg") expect(doc.nodes.filter((c) => c.parent === it.of && c.how === "row").length).toBeGreaterThan(AGG_OVER);
      }
    });

    it(`${name}: reveal makes every node visible`, () => {
      const doc = make();
      const m = readKeys(doc);
      for (const n of doc.nodes) {
        const ui = initialUi();
        const t = reveal(m, ui, n.id);
        expect(t.byNode.has(n.id), `node ${n.id}`).toBe(true);
      }
    });

    it(`${name}: the filter keeps exactly the reused keys, finding keys, their ancestors and children`, () => {
      const doc = make();
      const m = readKeys(doc);
      const targets = new Set([...doc.nodes.filter((n) => n.state === "reused").map((n) => n.id),
        ...doc.findings.filter((f) => f.kind === "key_reuse" || f.kind === "loop_reuse").map((f) => f.node)]);
      const expected = new Set(doc.nodes.filter((n) =>
        [...subtree(doc, n.id)].some((d) => targets.has(d)) || (n.parent != null && targets.has(n.parent))).map((n) => n.id));
      expect(reuseSet(m)).toEqual(expected);
      const ui = { ...initialUi(), filter: true };
      const t = openAll(m, ui);
      expect(new Set(nodeIds(t))).toEqual(expected);
      expect(t.hidden).toBe(doc.nodes.length - expected.size);
    });

    it(`${name}: the layout puts children right of their parent and never two items on one spot`, () => {
      const m = readKeys(make());
      const ui = initialUi();
      const t = openAll(m, ui);
      const { items, box } = layoutForest(t);
      for (const it of items) {
        if (it.parent) expect(it.x).toBeGreaterThan(it.parent.x + it.parent.w);
        expect(it.y).toBeGreaterThanOrEqual(box.y);
        expect(it.y).toBeLessThanOrEqual(box.y + box.h);
      }
      const byCol = new Map();
      for (const it of items) byCol.set(it.x, [...(byCol.get(it.x) || []), it.y]);
      for (const ys of byCol.values()) {
        ys.sort((a, b) => a - b);
        for (let i = 1; i < ys.length; i++) expect(ys[i] - ys[i - 1]).toBeGreaterThanOrEqual(H);
      }
    });
  }

  it("aggregates more than AGG_OVER rows into one item, opens AGG_PAGE at a time with a +N more item", () => {
    const doc = wideSplit(130);
    const m = readKeys(doc);
    const ui = initialUi();
    let t = buildTree(m, ui);
    const agg = t.items.find((it) => it.type === "agg");
    expect(agg.label).toBe("130 keys: 130 consumed");
    expect(agg.expanded).toBe(false);
    expect(nodeIds(t).filter((i) => doc.nodes[i].how === "row")).toEqual([]);
    toggle(ui, agg);
    t = buildTree(m, ui);
    const rows = () => nodeIds(t).filter((i) => doc.nodes[i].how === "row");
    expect(rows().length).toBe(AGG_PAGE);
    let more = t.items.find((it) => it.type === "more");
    expect(more.label).toBe(`+${130 - AGG_PAGE} more`);
    toggle(ui, more);
    t = buildTree(m, ui);
    expect(rows().length).toBe(2 * AGG_PAGE);
    more = t.items.find((it) => it.type === "more");
    toggle(ui, more);
    t = buildTree(m, ui);
    expect(rows().length).toBe(130);
    expect(t.items.find((it) => it.type === "more")).toBeUndefined();
  });

  it("an aggregate takes the worst state of its rows; eight rows stay rows", () => {
    const doc = manyRoots(2, 12, 5);
    const t = buildTree(readKeys(doc), initialUi());
    const aggs = t.items.filter((it) => it.type === "agg");
    expect(aggs.length).toBe(2);
    for (const a of aggs) {
      expect(a.state).toBe("reused");
      expect(a.label).toBe("12 keys: 3 reused, 9 consumed");
    }
    const eight = manyRoots(1, 8);
    expect(buildTree(readKeys(eight), initialUi()).items.filter((it) => it.type === "agg")).toEqual([]);
  });

  it("an unfolded run shows RUN_PAGE of its nodes in preorder, then a more item that carries the run's exits", () => {
    const doc = longRun(40);
    const m = readKeys(doc);
    const ui = initialUi();
    let t = buildTree(m, ui);
    const run = t.items.find((it) => it.type === "run");
    expect(run.label).toBe(`×39 ${doc.runs[0].label}`);
    toggle(ui, run);
    t = buildTree(m, ui);
    const members = doc.nodes.filter((n) => n.run === 0).map((n) => n.id);
    expect(nodeIds(t).filter((i) => doc.nodes[i].run === 0)).toEqual(members.slice(0, RUN_PAGE));
    const more = t.items.find((it) => it.type === "more");
    expect(more.label).toBe(`+${members.length - RUN_PAGE} more`);
    expect(more.children.map((c) => c.id)).toEqual([doc.runs[0].last]);
    toggle(ui, more);
    t = buildTree(m, ui);
    expect(nodeIds(t).filter((i) => doc.nodes[i].run === 0).length).toBe(Math.min(members.length, 2 * RUN_PAGE));
    // folding it again hides every member
    toggle(ui, t.items.find((it) => it.type === "run"));
    expect(nodeIds(buildTree(m, ui)).filter((i) => doc.nodes[i].run === 0)).toEqual([]);
  });

  it("a collapsed node hides its subtree and stands in for it", () => {
    const doc = fixture("keys-handmade");
    const m = readKeys(doc);
    const ui = initialUi();
    const root = doc.nodes.find((n) => n.parent == null && doc.nodes.some((c) => c.parent === n.id && c.run == null)).id;
    toggle(ui, buildTree(m, ui).byNode.get(root));
    const t = buildTree(m, ui);
    expect(t.byNode.get(root).expanded).toBe(false);
    for (const d of subtree(doc, root)) {
      if (d === root) continue;
      expect(t.byNode.has(d)).toBe(false);
      expect(standIn(m, t, d)).toBe(t.byNode.get(root));
    }
  });

  it("reads malformed links as a forest: a forward parent makes a root, a member outside its run leaves it", () => {
    const b = docBuilder();
    const a = b.node(null, "seed", "a");
    b.node(a, "split", "s", { run: 0 });
    const stray = b.node(a, "split", "stray", { run: 0 }); // parent outside the run
    const doc = b.doc();
    doc.nodes.push({ ...doc.nodes[0], id: 3, parent: 7, label: "forward" });
    doc.runs.push({ id: 0, first: 1, last: null, length: 1, label: "r" }, { id: 5, first: 99, last: 98, length: 2, label: "empty" });
    const m = readKeys(doc);
    expect(m.roots).toEqual([0, 3]);
    expect(m.runs.get(0).members).toEqual([1]);
    expect(m.runOf[stray]).toBe(-1);
    expect(m.runs.has(5)).toBe(false);
    const t = buildTree(m, initialUi());
    expect(t.byNode.has(stray)).toBe(true);
    expect(readKeys({}).empty).toBe(true);
  });

  it("sorts findings bugs, warnings, then the rest, keeping document order", () => {
    const fs = [{ severity: "info", i: 0 }, { severity: "warning", i: 1 }, { severity: "bug", i: 2 }, { severity: "bug", i: 3 }, null];
    expect(sortFindings(fs).map((f) => f.i)).toEqual([2, 3, 1, 0]);
  });

  it("search records match labels, use names, functions and file:line of uses and of where a key was made", () => {
    const doc = fixture("keys-handmade");
    const recs = searchRecords(readKeys(doc));
    const uses = (pred) => doc.nodes.filter((n) => n.uses.some(pred)).map((n) => n.id);
    expect(search(recs, "bernoulli")).toEqual(uses((u) => u.name === "bernoulli"));
    const reused = doc.nodes.find((n) => n.state === "reused" && n.uses.length > 1);
    const s = reused.uses[1].source;
    expect(search(recs, `${s.file}:${s.line}`)).toContain(reused.id);
    const fn = doc.nodes.find((n) => n.function != null).function;
    expect(search(recs, fn)).toEqual(expect.arrayContaining(doc.nodes.filter((n) => n.function === fn).map((n) => n.id)));
  });
});

describe("namespace names", () => {
  it("are written in the hover card and matched by search", async () => {
    const { namesText, nodeLines } = await import("../../widgets/keys/text.js");
    const node = { id: 0, parent: null, label: "[0]", state: "unused", names: ["key", "<b>rng</b>"], uses: [], made: [] };
    expect(namesText(node)).toBe("key, <b>rng</b>");
    expect(nodeLines(node)).toContain("bound to key, <b>rng</b> when the cell ended");
    expect(namesText({ names: [] })).toBe(null);
    const doc = { schema: "jaxmagic", version: 1, kind: "keys", title: "t", notes: [], error: null, summary: {},
      nodes: [node], runs: [], findings: [] };
    const m = readKeys(doc);
    const [rec] = searchRecords(m);
    expect(rec.text).toContain("key");
  });
});
