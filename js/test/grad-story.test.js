// @vitest-environment jsdom
/**
 * Playback of the grad view: the story of an entry (widgets/grad/story.js) against the
 * real grad fixtures, and what a step shows in the mounted view (playback.js): the forward
 * pass, then the backward pass, residual chips lighting up, cotangents flowing.
 */
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, settled, click } from "./mounting.js";
import { indexFunction, nKey } from "../../widgets/graph/model.js";
import { defaultExpansion } from "../../widgets/graph/expansion.js";
import { storySteps } from "../../widgets/graph/story.js";
import { num } from "../../widgets/graph/format.js";
import { gradLabels, partPositions, residualsAt, roleOf, locate } from "../../widgets/grad/story.js";

const partOf = (graph, fn) => {
  const ix = indexFunction(fn);
  return { graph, ix, keys: storySteps(ix, defaultExpansion(ix)).keys };
};

describe("grad story", () => {
  const entry = fixture("grad-mlp").entries[0];
  const parts = [partOf("forward", entry.forward), partOf("backward", entry.backward)];
  const nf = parts[0].keys.length, nb = parts[1].keys.length;

  it("plays the forward eqns in order, then the backward program's", () => {
    expect(parts[0].keys).toEqual(entry.forward.nodes.map((n) => nKey(n.id)));
    expect(parts[1].keys).toEqual(entry.backward.nodes.map((n) => nKey(n.id)));
    expect(locate(parts, nf)).toMatchObject({ j: 0, i: nf });
    expect(locate(parts, nf + 1)).toMatchObject({ j: 1, i: 1 });
    // the backward pass waits, faded, while the forward plays; the end is as drawn
    expect(partPositions(parts, 0)).toEqual([0, -1]);
    expect(partPositions(parts, 3)).toEqual([3, -1]);
    expect(partPositions(parts, nf)).toEqual([nf, -1]);
    expect(partPositions(parts, nf + 2)).toEqual([nf, 2]);
    expect(partPositions(parts, nf + nb)).toEqual([nf, nb]);
  });

  it("a backward step names the forward eqn it differentiates, its line and its cotangent", () => {
    const label = gradLabels(entry, parts, { values: true });
    expect(label(0)).toMatch(/^start · value_and_grad of loss: forward pass \d+ steps, then backward \d+ steps · \d+ residuals saved/);
    entry.backward.nodes.forEach((n, i) => {
      const text = label(nf + i + 1);
      expect(text.startsWith(`backward ${i + 1} of ${nb} · ${n.prim}`)).toBe(true);
      const f = entry.forward.nodes.find((x) => x.id === entry.links.backward[n.id]);
      if (f) expect(text).toContain(`— transpose of ${f.prim}`);
      const v = entry.backward.values[n.outs[0]];
      const aval = entry.backward.vars.find((x) => x.id === n.outs[0]).aval;
      expect(text).toContain(`ct ${aval} norm ${num(v.norm)}`);
    });
    const plain = gradLabels(entry, parts, { values: false });
    expect(plain(nf + 1)).not.toContain("ct ");
    expect(label(1)).toMatch(/^forward 1 of \d+ · /);
  });

  it("residuals light at the forward eqn that saves them and the backward eqns that read them", () => {
    const label = gradLabels(entry, parts, { values: false });
    for (const r of entry.residuals) {
      if (typeof r.producer === "string") {
        expect(residualsAt(entry, "forward", [r.producer]).made).toContain(r);
        expect(label(parts[0].keys.indexOf(nKey(r.producer)) + 1)).toContain("saves ");
      }
      for (const c of r.consumers) expect(residualsAt(entry, "backward", [c]).read).toContain(r);
    }
    expect(residualsAt(entry, "forward", ["nope"])).toEqual({ made: [], read: [] });
  });

  it("a jitted step plays its program in order, each step saying forward, backward or other", () => {
    const jit = fixture("grad-jit").entries[0];
    const p = [partOf("program", jit.program)];
    const label = gradLabels(jit, p, { values: true });
    const n = p[0].keys.length;
    const seen = new Set();
    for (let i = 1; i <= n; i++) {
      const key = p[0].keys[i - 1];
      const role = key.startsWith("N:") ? jit.roles[key.slice(2)] : null;
      const text = label(i);
      expect(text.startsWith(`${i} of ${n} · `)).toBe(true);
      if (role) {
        expect(text.startsWith(`${i} of ${n} · ${role} · `)).toBe(true);
        seen.add(role);
      }
      if (role === "backward") expect(text).toMatch(/ct \S+ norm /);
    }
    expect([...seen].sort()).toEqual(["backward", "forward", "other"]);
    expect(roleOf(jit, [])).toBe("unknown");
  });
});

const render = useMounting();
const pane = (el, g) => el.querySelector(`.jm-grad-pane[data-graph="${g}"]`);
const drawn = (el) => [...el.querySelectorAll(".jm-grad-pane .jm-canvas")].every((c) => c.hasAttribute("data-layout"));
async function ready(el) {
  for (let i = 0; i < 400 && !(drawn(el) && !el.querySelector(".jm-status.jm-busy") && !el.querySelector(".jm-pb-slot").hidden); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  await settled(el);
}
const snapshot = (el) => [...el.querySelectorAll(".jm-svg [data-node-id], .jm-svg [data-port-id], .jm-svg .jm-edge, .jm-grad-chip")]
  .map((e) => `${e.getAttribute("data-node-id") || e.getAttribute("data-port-id") || e.getAttribute("data-residual-id") || e.getAttribute("data-from") + ">" + e.getAttribute("data-to")} ${e.getAttribute("class")}`);

describe("grad view playback", () => {
  it("forward then backward, residual chips lit on the way, cotangents flowing; the end as drawn", async () => {
    const doc = fixture("grad-mlp");
    const entry = doc.entries[0];
    const el = render(doc);
    await ready(el);
    const nf = entry.forward.nodes.length, nb = entry.backward.nodes.length;
    expect(el.querySelector(".jm-pb-count").textContent).toBe(`${nf + nb} / ${nf + nb}`);
    const before = snapshot(el);
    click(el.querySelector(".jm-pb-first"));
    // start: the forward eqns wait, the backward pass is faded whole (its inputs too)
    expect(pane(el, "forward").querySelectorAll("g.jm-eqn:not(.jm-pb-future)").length).toBe(0);
    expect(pane(el, "backward").querySelectorAll("g.jm-port:not(.jm-pb-future)").length).toBe(0);
    // to the forward eqn that makes a residual: its chip lights up
    const r = entry.residuals.find((x) => typeof x.producer === "string");
    const at = entry.forward.nodes.findIndex((n) => n.id === r.producer) + 1;
    for (let i = 0; i < at; i++) click(el.querySelector(".jm-pb-fwd"));
    expect(el.querySelector(`.jm-grad-chip[data-residual-id="${r.id}"]`).classList.contains("jm-pb-lit")).toBe(true);
    expect(pane(el, "forward").querySelector(`g.jm-eqn[data-node-id="${r.producer}"]`).classList.contains("jm-pb-current")).toBe(true);
    expect(el.querySelector(".jm-pb-label").textContent).toMatch(/^forward \d+ of \d+ · .* saves /);
    // into the backward pass: the forward is complete, the first backward eqn current, values flow in
    while (!el.querySelector(".jm-pb-label").textContent.startsWith("backward 1 ")) click(el.querySelector(".jm-pb-fwd"));
    expect(pane(el, "forward").querySelectorAll(".jm-pb-future, .jm-pb-current").length).toBe(0);
    const b0 = entry.backward.nodes[0];
    expect(pane(el, "backward").querySelector(`g.jm-eqn[data-node-id="${b0.id}"]`).classList.contains("jm-pb-current")).toBe(true);
    const into = pane(el, "backward").querySelectorAll(`.jm-edge[data-to="N:${b0.id}"]`).length;
    expect(into).toBeGreaterThan(0);
    expect(pane(el, "backward").querySelectorAll(".jm-pb-flow").length).toBe(into);
    expect(pane(el, "forward").querySelectorAll(".jm-pb-flow").length).toBe(0);
    // a consumer of a residual lights it again, and marks the residual's input port
    const c = entry.residuals.find((x) => x.consumers.length);
    const ci = entry.backward.nodes.findIndex((n) => n.id === c.consumers[0]);
    click(el.querySelector(".jm-pb-last"));
    click(el.querySelector(".jm-pb-first"));
    for (let i = 0; i < nf + ci + 1; i++) click(el.querySelector(".jm-pb-fwd"));
    expect(el.querySelector(`.jm-grad-chip[data-residual-id="${c.id}"]`).classList.contains("jm-pb-lit")).toBe(true);
    for (const v of c.backward_vars) {
      expect(pane(el, "backward").querySelector(`g.jm-port[data-port-id="P:${v}"]`).classList.contains("jm-pb-res")).toBe(true);
    }
    click(el.querySelector(".jm-pb-last"));
    expect(snapshot(el)).toEqual(before);
    expect(el.querySelectorAll(".jm-pb-lit, .jm-pb-res, .jm-pb-flow, .jm-pb-future, .jm-pb-current").length).toBe(0);
  });

  it("switching entries sets the new entry's story", async () => {
    const doc = fixture("grad-multi");
    const el = render(doc);
    await ready(el);
    const e0 = doc.entries[0];
    expect(el.querySelector(".jm-pb-count").textContent).toBe(`${e0.forward.nodes.length + e0.backward.nodes.length} / ${e0.forward.nodes.length + e0.backward.nodes.length}`);
    const t = doc.entries.findIndex((e) => e.origin === "tangent");
    click(el.querySelectorAll(".jm-grad-tab")[t]);
    await ready(el);
    const n = doc.entries[t].program.nodes.filter((x) => !x.subgroups.length).length;
    expect(el.querySelector(".jm-pb-count").textContent).toBe(`${n} / ${n}`);
    click(el.querySelector(".jm-pb-first"));
    click(el.querySelector(".jm-pb-fwd"));
    expect(el.querySelector(".jm-pb-label").textContent).toMatch(/^1 of \d+ · (primal|tangent) · /);
  });
});
