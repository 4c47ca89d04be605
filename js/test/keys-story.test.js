// The keys view's playback story (widgets/keys/story.js) on the real document of the Python side
// (js/dev/keys_fixtures.py: keys-small.json), the hand-made one and synthetic documents (keys-helpers.js):
// events in the capture's order, each key appearing with the use that made it (a split's rows with
// it), reuse at the second consuming use and not before, runs and aggregates as one step each with
// their counts, labels naming the lines, and the last step equal to the ordinary view.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { docBuilder, longRun, manyRoots, wideSplit } from "./keys-helpers.js";
import { readKeys } from "../../widgets/keys/model.js";
import { buildTree, initialUi, toggle } from "../../widgets/keys/tree.js";
import { keyEvents } from "../../widgets/keys/events.js";
import { keyStory, lineText } from "../../widgets/keys/story.js";

const storyOf = (doc, ui = initialUi()) => {
  const m = readKeys(doc);
  const ev = keyEvents(m);
  const t = buildTree(m, ui);
  return { m, ev, t, story: keyStory(m, ev, t) };
};
const small = () => fixture("keys-small");
const handmade = () => fixture("keys-handmade");
const stepOfNode = (story, id) => story.steps.findIndex((s) => s.items.has(`n${id}`)) + 1;

/** Every drawn item ends in the state the ordinary view draws; nothing is left unshown. */
function expectEndIsStatic({ t, story }) {
  const end = story.steps.length;
  for (const it of t.items) {
    expect(story.stateAt(it.key, end), it.key).toBe(it.state);
    expect(story.appearAt.get(it.key), it.key).toBeLessThanOrEqual(end);
  }
  expect(story.stepMarks(end)).toBe(null);
}

describe("lineText", () => {
  it("says `line N` for a notebook cell's file (`cell [N], line L` when its number is known) and `file:line` for a library", () => {
    expect(lineText({ file: "/tmp/ipykernel_4242/526010223.py", line: 5 })).toBe("line 5");
    expect(lineText({ file: "<ipython-input-3-abc>", line: 2 })).toBe("cell [3], line 2"); // IPython 7 names the cell
    expect(lineText({ file: "/site-packages/flax/linen/stochastic.py", line: 105 })).toBe("stochastic.py:105");
    expect(lineText({ file: "/home/me/train_2024.py", line: 9 })).toBe("train_2024.py:9");
  });
});

describe("keys story: events", () => {
  for (const [name, make] of [["small", small], ["handmade", handmade]]) {
    it(`${name}: uses in the capture's order; every key appears before its uses and after its parent`, () => {
      const { m, ev } = storyOf(make());
      const useEvents = ev.events.filter((e) => e.kind === "use");
      expect(useEvents.length).toBe(m.nodes.reduce((a, n) => a + n.uses.length, 0));
      const orders = useEvents.map((e) => m.nodes[e.node].uses[e.use].order);
      expect(orders).toEqual([...orders].sort((a, b) => a - b));
      ev.events.forEach((e, k) => {
        if (e.kind === "use") expect(ev.appear[e.node]).toBeLessThanOrEqual(k);
        else expect(ev.appear[e.node]).toBe(k);
      });
      for (let i = 0; i < m.nodes.length; i++) {
        if (m.parent[i] >= 0) expect(ev.appear[i]).toBeGreaterThanOrEqual(ev.appear[m.parent[i]]);
      }
      // roots appear in the order the cell first touched them (the document's root order)
      const rootEvents = ev.events.filter((e) => e.kind === "root").map((e) => e.node);
      expect(rootEvents).toEqual(m.roots);
    });
  }

  it("a split's array and rows appear with the split use on the parent; a fold_in's child with the fold_in", () => {
    const { m, ev } = storyOf(small());
    for (let i = 0; i < m.nodes.length; i++) {
      const n = m.nodes[i];
      if (n.how === "row" && m.parent[i] >= 0) expect(ev.appear[i]).toBe(ev.appear[m.parent[i]]);
      if (n.how !== "split" && n.how !== "fold_in") continue;
      const e = ev.events[ev.appear[i]];
      expect(e.kind).toBe("use");
      expect(e.node).toBe(m.parent[i]);
      expect(m.nodes[e.node].uses[e.use].kind).toBe(n.how);
    }
  });

  it("roots made before they are used keep their order: each appears before its first use", () => {
    const b = docBuilder("two roots");
    const u2 = b.use("normal", 3); // key(2) is drawn from first (order 1) ...
    const u1 = b.use("uniform", 4); // ... then key(1) (order 2), though key(1) was made first
    b.node(null, "seed", "key(1)", { uses: [u1] });
    b.node(null, "seed", "key(2)", { uses: [u2] });
    const { ev, story } = storyOf(b.doc());
    expect(ev.events.map((e) => [e.kind, e.node])).toEqual([["root", 0], ["root", 1], ["use", 1], ["use", 0]]);
    expect(story.steps.map((s) => s.label)).toEqual([
      "line 1 · k = key(1) makes root key key(1)",
      "line 1 · k = key(2) makes root key key(2)",
      "line 3 · x = jax.random.normal(k) consumes key(2)",
      "line 4 · x = jax.random.uniform(k) consumes key(1)",
    ]);
  });
});

describe("keys story: steps on the drawn tree", () => {
  for (const [name, make] of [["small", small], ["handmade", handmade]]) {
    it(`${name}: the last step is the ordinary view; before the first step nothing is shown`, () => {
      const s = storyOf(make());
      expectEndIsStatic(s);
      const marks0 = s.story.stepMarks(0);
      for (const it of s.t.items) expect(marks0.state(it)).toBe(null);
      expect(s.story.label(0)).toMatch(/^Before the first key: \d+ steps/);
      expect(s.story.steps.every((st) => st.label && st.items.size > 0)).toBe(true);
    });
  }

  it("small: the reused key is consumed at its first use, red and flashing at its second, not before", () => {
    const { m, story } = storyOf(small());
    const reused = m.nodes.find((n) => n.label === "key(1)");
    expect(reused.state).toBe("reused");
    const [first, second] = reused.uses;
    const at = story.steps.findIndex((s) => s.flash.has(`n${reused.id}`)) + 1;
    expect(at).toBeGreaterThan(0);
    expect(story.steps[at - 1].label).toBe(
      `${lineText(second.source)} · ${second.source.code.trim()} consumes key(1) — second use: reuse (first at ${lineText(first.source)})`);
    expect(story.steps[at - 2].label).toBe(`${lineText(first.source)} · ${first.source.code.trim()} consumes key(1)`);
    expect(story.stateAt(`n${reused.id}`, at - 1)).toBe("consumed");
    expect(story.stateAt(`n${reused.id}`, at - 2)).toBe("unused"); // made, not used yet
    expect(story.stateAt(`n${reused.id}`, at - 3)).toBe(null); // not made yet
    expect(story.stateAt(`n${reused.id}`, at)).toBe("reused");
    // only that step flashes it, and no other step flashes anything but a reused key
    expect(story.steps.filter((s) => s.flash.has(`n${reused.id}`)).length).toBe(1);
    for (const [k, s] of story.steps.entries()) for (const key of s.flash) expect(story.stateAt(key, k + 1)).toBe("reused");
  });

  it("small: a key drawn from on every iteration of a scan is reused at its one use", () => {
    const { m, story } = storyOf(small());
    const n = m.nodes.find((x) => x.label === "key(6)");
    const [u] = n.uses;
    const at = stepOfNode(story, n.id) + 1; // made, then used
    expect(story.steps[at - 1].flash.has(`n${n.id}`)).toBe(true);
    expect(story.steps[at - 1].label).toContain(`consumes key(6) ${u.times} times per call — reuse inside ${u.loop}`);
    expect(story.steps[at - 1].label).toContain(`(in jitted ${u.function})`);
  });

  it("small: each folded run is one step, with its length, and its events all in it", () => {
    const { m, ev, t, story } = storyOf(small());
    const runSteps = story.steps.filter((s) => s.group && s.group.type === "run");
    expect(runSteps.map((s) => s.group.run.id).sort()).toEqual([...m.runs.keys()].sort());
    for (const s of runSteps) {
      const run = s.group.run;
      expect(s.label).toContain(`×${run.length} identical steps, folded into one run (${run.label})`);
      // every use of every member is in this step
      const members = new Set(run.members);
      const inRun = ev.events.map((e, k) => [e, k]).filter(([e]) => e.kind === "use" && members.has(e.node)).map(([, k]) => k);
      for (const k of inRun) expect(s.events).toContain(k);
      expect(story.stateAt(`run${run.id}`, story.steps.indexOf(s))).toBe(null); // appears at its step
      expect(story.stateAt(`run${run.id}`, story.steps.indexOf(s) + 1)).toBe(t.items.find((it) => it.key === `run${run.id}`).state);
    }
  });

  it("small: the 20 rows of a split are one aggregate step after the split's own", () => {
    const { m, story } = storyOf(small());
    const arr = m.nodes.find((n) => n.label === "split 20");
    const split = story.steps.findIndex((s) => s.items.has(`n${arr.id}`));
    expect(story.steps[split].label).toMatch(/splits key\(5\) into split 20 \(\[0\], \[1\], \[2\], \[3\], … 20 keys\)$/);
    const agg = story.steps[split + 1];
    expect(agg.group.key).toBe(`agg${arr.id}`);
    expect(agg.events.length).toBe(20);
    const u = m.nodes[m.children[arr.id][0]].uses[0];
    expect(agg.label).toBe(`${lineText(u.source)} · ${u.source.code.trim()} consumes 20 keys of split 20 (20 uses)`);
  });

  it("labels of single events start with the line and name the key and what was done to it", () => {
    const { m, ev, story } = storyOf(small());
    for (const s of story.steps) {
      if (s.events.length !== 1) continue;
      const e = ev.events[s.events[0]];
      const n = m.nodes[e.node];
      const src = e.kind === "use" ? n.uses[e.use].source : n.made[0];
      expect(s.label.startsWith(`${lineText(src)} · `), s.label).toBe(true);
      if (e.kind === "use") expect(s.label).toContain(n.how === "row" ? `${n.label} of ${m.nodes[m.parent[e.node]].label}` : n.label);
    }
    const fold = story.steps.find((s) => s.label.includes("derives"));
    expect(fold.label).toContain("derives fold_in 3 from key(7) (fold_in does not consume it)");
    expect(story.steps.some((s) => /reads the data of fold_in 3 \(does not consume it\)$/.test(s.label))).toBe(true);
  });

  it("the filter and an unfolded run give their own story, still ending on the drawn view", () => {
    const ui = initialUi();
    ui.filter = true;
    const filtered = storyOf(small(), ui);
    expectEndIsStatic(filtered);
    const keep = filtered.t.keep;
    for (const s of filtered.story.steps) for (const key of s.items) expect(keep.has(Number(key.slice(1))) || !key.startsWith("n")).toBe(true);
    expect(filtered.story.steps.length).toBeLessThan(storyOf(small()).story.steps.length);

    const open = initialUi();
    const base = storyOf(small(), open);
    toggle(open, base.t.items.find((it) => it.type === "run"));
    const unfolded = storyOf(small(), open);
    expectEndIsStatic(unfolded);
    expect(unfolded.story.steps.length).toBeGreaterThan(base.story.steps.length);
  });

  it("synthetic: a 1,000-step run is one step; a 5,000-row split is two; reused rows in an aggregate flash it", () => {
    const run = storyOf(longRun(1000));
    expectEndIsStatic(run);
    expect(run.story.steps.filter((s) => s.group && s.group.type === "run").length).toBe(1);
    expect(run.story.steps.length).toBeLessThan(10);

    const wide = storyOf(wideSplit(5000));
    expectEndIsStatic(wide);
    expect(wide.story.steps.map((s) => s.label)).toEqual([
      "line 1 · k = key(0) makes root key key(0)",
      "line 2 · x = jax.random.split(k) splits key(0) into split 5000 ([0], [1], [2], [3], … 5,000 keys)",
      "line 3 · x = jax.random.normal(k) consumes 5,000 keys of split 5000 (5,000 uses)",
    ]);

    const many = storyOf(manyRoots(20, 12, 4));
    expectEndIsStatic(many);
    const aggSteps = many.story.steps.filter((s) => s.group && s.group.type === "agg");
    expect(aggSteps.length).toBe(20);
    for (const s of aggSteps) {
      expect(s.label).toMatch(/ — 3 reused$/);
      expect(s.flash.has(s.group.key)).toBe(true);
    }
  });

  it("an empty document has no steps", () => {
    const { story } = storyOf(docBuilder("empty").doc());
    expect(story.steps.length).toBe(0);
  });
});
