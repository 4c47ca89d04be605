// @vitest-environment jsdom
/**
 * Playback of the graph view: the story (widgets/graph/story.js) against the real
 * fixtures, the marks a step leaves on the drawing (replay.js), the code strip, and
 * presentation-mode metrics (a scene measured at the larger text).
 */
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, settled, click } from "./mounting.js";
import { indexFunction, nKey, isCollapsible } from "../../widgets/graph/model.js";
import { defaultExpansion, allCollapsibles } from "../../widgets/graph/expansion.js";
import { storySteps, storyLabel, eqnText, spokenParams, codeLines, stepLines, nodesUnder, stepText } from "../../widgets/graph/story.js";
import { buildScene } from "../../widgets/graph/scene.js";
import { BASE, PRESENT, eqnFace, PRESENT_SCALE } from "../../widgets/graph/metrics.js";

/** The text line JAX printed for an eqn, when it fits on one line (no sub-jaxpr, no wrapped params). */
const printedLine = (fn, n) => {
  const line = fn.text.split("\n")[n.line];
  return line && !/[[{]\s*$/.test(line) ? line.trim() : null;
};

describe("graph story", () => {
  it("labels read params aloud: None left out, long ones as …, short ones kept", () => {
    const line = "g:f32[4,1] = dot_general[dimension_numbers=(((1,), (0,)), ((), ())) out_sharding=None precision=None preferred_element_type=float32] f c";
    expect(spokenParams(line, 13)).toBe("g:f32[4,1] = dot_general[…] f c");
    expect(spokenParams("e:f32[3] = reduce_sum[axes=(1,) out_sharding=None] d", 11)).toBe("e:f32[3] = reduce_sum[axes=(1,)] d");
    expect(spokenParams("d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c", 10))
      .toBe("d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c");
    expect(spokenParams("b:f32[3] = sin a", 11)).toBe("b:f32[3] = sin a");
    expect(spokenParams("c:f32[] = reduce_max[out_sharding=None] b", 10)).toBe("c:f32[] = reduce_max b");
    // an eqn JAX printed over several lines is made up from the node by the same rule
    const ix = indexFunction(fixture("trig").functions[0]);
    const node = { prim: "dot_general", outs: [], ins: [],
      params: { dimension_numbers: "(((1,), (0,)), ((), ()))", precision: "None", preferred_element_type: "float32" } };
    expect(eqnText(ix, node)).toBe("dot_general[…]");
    expect(eqnText(ix, { prim: "reduce_sum", outs: [], ins: [], params: { axes: "(1,)", out_sharding: "None" } }))
      .toBe("reduce_sum[axes=(1,)]");
  });

  it("a function without sub-jaxprs plays its eqns in the order JAX printed them", () => {
    const fn = fixture("trig").functions[0];
    const ix = indexFunction(fn);
    const { keys } = storySteps(ix, defaultExpansion(ix));
    expect(keys).toEqual(fn.nodes.map((n) => nKey(n.id)));
    // each step reads as JAX prints the eqn, with its source line
    for (const n of fn.nodes) expect(eqnText(ix, n)).toBe(printedLine(fn, n)); // short params read as printed
    expect(storyLabel(ix, keys, 2)).toBe(`2 of 5 · c:f32[3] = integer_pow[y=2] b · line ${fn.nodes[1].src.line}`);
    expect(storyLabel(ix, keys, 0)).toMatch(/^0 of 5 · f\(a:f32\[3\]\) · 5 steps to play$/);
  });

  it("expanded owners play their inner eqns in order; a collapsed owner is one step", () => {
    for (const name of ["control", "scoped"]) {
      for (const fn of fixture(name).functions) {
        const ix = indexFunction(fn);
        // everything open: every eqn that owns nothing is a step, in document (print) order
        const all = storySteps(ix, allCollapsibles(ix)).keys;
        const leaves = fn.nodes.filter((n) => !isCollapsible(ix, nKey(n.id))).map((n) => nKey(n.id));
        expect(all).toEqual(leaves);
        // everything closed: the root's items, each covering what it holds
        const closed = storySteps(ix, new Set());
        expect(closed.keys).toEqual(ix.items.get(ix.root));
        const covered = closed.keys.flatMap((k) => nodesUnder(ix, k));
        expect(covered.sort()).toEqual(fn.nodes.map((n) => n.id).sort());
        for (const k of closed.keys.filter((k) => isCollapsible(ix, k))) {
          expect(stepText(ix, k)).toMatch(/\((\d+) eqns?( inside)?\)/);
        }
      }
    }
  });

  it("first and last steps of containers frame what plays inside them", () => {
    const fn = fixture("control").functions[0];
    const ix = indexFunction(fn);
    const st = storySteps(ix, allCollapsibles(ix));
    for (const [k, first] of st.first) {
      const inside = st.keys.slice(first - 1, st.last.get(k));
      for (const key of inside) {
        let a = ix.parent.get(key);
        while (a && a !== k) a = ix.parent.get(a);
        expect(a).toBe(k);
      }
    }
    expect(st.first.get(ix.root)).toBe(1);
    expect(st.last.get(ix.root)).toBe(st.keys.length);
  });

  it("the code strip lists each source line once, in file order; a step marks its own", () => {
    const fn = fixture("grad-mlp").entries[0].forward;
    const ix = indexFunction(fn);
    const lines = codeLines(ix);
    const want = new Set(fn.nodes.filter((n) => n.src).map((n) => `${n.src.file}:${n.src.line}`));
    expect(lines.map((l) => l.key).sort()).toEqual([...want].sort());
    const nums = lines.map((l) => l.line);
    expect(nums).toEqual([...nums].sort((a, b) => a - b));
    const n = fn.nodes.find((x) => x.src);
    expect([...stepLines(ix, nKey(n.id))]).toEqual([`${n.src.file}:${n.src.line}`]);
    expect(lines.find((l) => l.line === n.src.line).code).toBe(n.src.code);
  });

  it("forward mode adds the output's recorded value to the step", () => {
    const fn = fixture("grad-mlp").entries[0].forward;
    const ix = indexFunction(fn);
    const { keys } = storySteps(ix, defaultExpansion(ix));
    const i = fn.nodes.findIndex((n) => n.prim === "tanh");
    const out = fn.nodes[i].outs[0];
    const label = storyLabel(ix, keys, keys.indexOf(nKey(fn.nodes[i].id)) + 1, { values: fn.values });
    expect(label).toContain(`${ix.vars.get(out).name} = [`);
    expect(storyLabel(ix, keys, 1)).not.toContain(" = [");
  });
});

describe("presentation metrics", () => {
  it("boxes and edge labels are measured at the larger text", () => {
    const fn = fixture("trig").functions[0];
    const ix = indexFunction(fn);
    const n = fn.nodes[1];
    const a = eqnFace(ix, n, { m: BASE }), b = eqnFace(ix, n, { m: PRESENT });
    expect(b.h / a.h).toBeCloseTo(PRESENT_SCALE, 1);
    expect(b.w / a.w).toBeGreaterThan(PRESENT_SCALE - 0.05); // text widths grow with the scale
    expect(PRESENT.F_TINY).toBeGreaterThanOrEqual(14);
    expect(PRESENT.F_BADGE).toBeGreaterThanOrEqual(14);
    const small = buildScene(ix, defaultExpansion(ix), "s:", { m: BASE, update: false });
    const big = buildScene(ix, defaultExpansion(ix), "b:", { m: PRESENT, update: false });
    expect(big.m).toBe(PRESENT);
    const lw = (sc) => sc.root.edges.filter((e) => e.lw).map((e) => e.lw);
    expect(lw(big).length).toBeGreaterThan(0);
    lw(big).forEach((w, i) => expect(w).toBeGreaterThan(lw(small)[i]));
  });
});

const render = useMounting();

/** Classes of every drawn element (what a user sees), by its identity in the drawing. */
const snapshot = (el) => [...el.querySelectorAll(".jm-svg [data-node-id], .jm-svg [data-port-id], .jm-svg .jm-edge, .jm-svg .jm-edge-label, .jm-svg [data-group-id]")]
  .map((e) => [e.getAttribute("data-node-id") || e.getAttribute("data-port-id") || e.getAttribute("data-group-id") ||
    `${e.getAttribute("data-from")}>${e.getAttribute("data-to")}` || e.textContent, e.getAttribute("class")].join(" "));
const btn = (el, cls) => el.querySelector(`.jm-pb-${cls}`);
const label = (el) => el.querySelector(".jm-pb-label").textContent;

describe("graph view playback", () => {
  it("steps through the eqns as drawn, fading later ones, and ends as drawn", async () => {
    const doc = fixture("trig");
    const fn = doc.functions[0];
    const el = render(doc);
    await settled(el);
    const root = el.querySelector(".jm-root");
    expect(el.querySelector(".jm-pb-slot").hidden).toBe(false);
    expect(el.querySelector(".jm-pb-count").textContent).toBe("5 / 5");
    const before = snapshot(el);
    click(btn(el, "first"));
    expect(root.classList.contains("jm-pb-active")).toBe(true);
    // at the start: every eqn and every edge into one is faded, the inputs are not
    for (const n of fn.nodes) expect(el.querySelector(`g.jm-eqn[data-node-id="${n.id}"]`).classList.contains("jm-pb-future")).toBe(true);
    expect(el.querySelector('g.jm-port[data-port-id="P:v0"]').classList.contains("jm-pb-future")).toBe(false);
    expect(el.querySelector('g.jm-port[data-port-id^="O:"]').classList.contains("jm-pb-future")).toBe(true);
    click(btn(el, "fwd"));
    click(btn(el, "fwd"));
    // step 2: integer_pow is current, sin done, the rest faded; its input edge is shown
    const cls = (id) => el.querySelector(`g.jm-eqn[data-node-id="${id}"]`).classList;
    expect(cls("n1").contains("jm-pb-current")).toBe(true);
    expect(cls("n1").contains("jm-pb-future")).toBe(false);
    expect(cls("n0").contains("jm-pb-future")).toBe(false);
    expect(cls("n0").contains("jm-pb-current")).toBe(false);
    for (const id of ["n2", "n3", "n4"]) expect(cls(id).contains("jm-pb-future")).toBe(true);
    const edge = (from, to) => el.querySelector(`.jm-edge[data-from="${from}"][data-to="${to}"]`).classList;
    expect(edge("N:n0", "N:n1").contains("jm-pb-future")).toBe(false);
    expect(edge("N:n1", "N:n4").contains("jm-pb-future")).toBe(true);
    expect(edge("P:v0", "N:n2").contains("jm-pb-future")).toBe(true);
    expect(label(el)).toContain("2 of 5 · c:f32[3] = integer_pow[y=2] b");
    // the code strip marks the eqn's line
    const rows = [...el.querySelectorAll(".jm-cs-row.jm-cs-current")].map((r) => r.getAttribute("data-line-key"));
    expect(rows).toEqual([`${fn.nodes[1].src.file}:${fn.nodes[1].src.line}`]);
    // trace mode: no values flow
    expect(el.querySelectorAll(".jm-pb-flow").length).toBe(0);
    // back a step: random access
    click(btn(el, "back"));
    expect(cls("n0").contains("jm-pb-current")).toBe(true);
    expect(cls("n1").contains("jm-pb-future")).toBe(true);
    // the end is the drawing as it was
    click(btn(el, "last"));
    expect(snapshot(el)).toEqual(before);
    expect(root.classList.contains("jm-pb-active")).toBe(false);
    expect(el.querySelectorAll(".jm-pb-future, .jm-pb-current, .jm-pb-flow, .jm-cs-current").length).toBe(0);
  });

  it("in forward mode the values flow into each eqn along its input edges", async () => {
    const entry = fixture("grad-mlp").entries[0];
    const fn = entry.forward;
    const doc = { schema: "jaxmagic", version: 2, kind: "graph", title: "t", notes: [], error: null, functions: [fn] };
    const el = render(doc);
    await settled(el);
    click(el.querySelector('.jm-mode[data-mode="forward"]'));
    await settled(el);
    click(btn(el, "first"));
    const add = fn.nodes.findIndex((n) => n.prim === "add");
    for (let i = 0; i <= add; i++) click(btn(el, "fwd"));
    const into = [...el.querySelectorAll(`.jm-edge[data-to="N:${fn.nodes[add].id}"]`)];
    expect(into.length).toBe(2);
    const flows = [...el.querySelectorAll(".jm-layer-flows .jm-pb-flow")];
    expect(flows.map((f) => f.getAttribute("d")).sort()).toEqual(into.map((e) => e.querySelector("path").getAttribute("d")).sort());
    expect(label(el)).toMatch(/ = \[/);
    // a jump back draws no flow
    click(btn(el, "back"));
    expect(el.querySelectorAll(".jm-pb-flow").length).toBe(0);
    click(btn(el, "last"));
    expect(el.querySelectorAll(".jm-pb-flow, .jm-pb-future").length).toBe(0);
  });

  it("a toggle changes the story: a collapsed box is one step", async () => {
    const doc = fixture("scoped");
    const el = render(doc);
    await settled(el);
    const total = Number(el.querySelector(".jm-pb-count").textContent.split("/")[1]);
    el.querySelector(".jm-btn[title^='Close every']").click();
    await settled(el);
    const ix = indexFunction(doc.functions[0]);
    expect(el.querySelector(".jm-pb-count").textContent).toBe(`${ix.items.get(ix.root).length} / ${ix.items.get(ix.root).length}`);
    expect(ix.items.get(ix.root).length).toBeLessThan(total);
  });
});
