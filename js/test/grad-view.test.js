// @vitest-environment jsdom
// The mounted grad view on real grad documents: two embedded graph viewers (forward,
// backward mirrored in the backward tone), the residual bridge and what a chip lights
// up, links between the passes, recomputed and custom-rule marks, gradients and values
// mode, jit entries (roles, regions), findings, tabs, hostile strings.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, click } from "./mounting.js";
import { indexFunction, nKey } from "../../widgets/graph/model.js";
import { defaultExpansion, visibleEqnCount } from "../../widgets/graph/expansion.js";
import { forwardLabel } from "../../widgets/graph/modes.js";
import { residualOrder, sortFindings, bytesText, rootGroup } from "../../widgets/grad/model.js";

const render = useMounting();
const EVIL = "<img src=x onerror=alert(1)>";

const pane = (el, graph) => el.querySelector(`.jm-grad-pane[data-graph="${graph}"]`);
const busy = (el) => !!el.querySelector(".jm-status.jm-busy");
/** Resolve once every graph pane has drawn and no layout is pending. */
async function ready(el, tries = 400) {
  for (let i = 0; i < tries; i++) {
    await new Promise((r) => setTimeout(r, 5));
    const c = [...el.querySelectorAll(".jm-grad-pane .jm-canvas")];
    if (c.length && c.every((x) => x.hasAttribute("data-draws")) && !busy(el)) return;
  }
  throw new Error("grad view did not draw");
}
/** Wait for relayouts started by a click (reveal) to finish. */
async function settle(el) {
  await new Promise((r) => setTimeout(r, 20));
  await ready(el);
}
const ids = (root, cls) => [...root.querySelectorAll(`.${cls}`)].map((e) => e.getAttribute("data-node-id") || e.getAttribute("data-port-id")).filter(Boolean);
const nodeEl = (el, graph, id) => pane(el, graph).querySelector(`g.jm-eqn[data-node-id="${id}"]`);
const xOf = (g) => Number(/translate\(([-\d.]+)/.exec(g.getAttribute("transform"))[1]);

describe("grad view: split entries", () => {
  it("marks info findings as desk detail that presentation mode hides; warnings stay", async () => {
    const doc = fixture("grad-mlp");
    const el = render(doc);
    const items = [...el.querySelectorAll(".jm-grad-findings li")];
    const infos = doc.findings.filter((f) => f.severity === "info").length;
    expect(items.filter((li) => li.classList.contains("jm-clutter")).length).toBe(infos);
    expect(items.filter((li) => li.querySelector(".jm-grad-sev-warning") && li.classList.contains("jm-clutter")).length).toBe(0);
  });

  it("draws the header, warnings-first findings, one tab, both graphs in full and one chip per residual", async () => {
    const d = fixture("grad-mlp"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    expect(el.querySelector(".jm-title").textContent).toBe(d.title);
    const shown = [...el.querySelectorAll(".jm-grad-finding")].map((b) => b.getAttribute("data-kind"));
    expect(shown).toEqual(sortFindings(d.findings).map((f) => f.kind));
    expect(shown[0]).toBe("vanishing_gradient");
    expect(el.querySelectorAll(".jm-grad-tab").length).toBe(1);
    expect(el.querySelector(".jm-grad-tab").textContent).toContain("value_and_grad of loss");
    for (const [graph, fn] of [["forward", e.forward], ["backward", e.backward]]) {
      const ix = indexFunction(fn);
      expect(pane(el, graph).querySelectorAll("g.jm-eqn").length, graph).toBe(visibleEqnCount(ix, defaultExpansion(ix)));
      expect(pane(el, graph).querySelectorAll(".jm-title, .jm-tabs, .jm-side").length).toBe(0); // compact
    }
    expect(pane(el, "backward").querySelector(".jm-graph.jm-tone-backward")).toBeTruthy();
    expect(pane(el, "forward").querySelector(".jm-tone-backward")).toBeNull();
    const chips = [...el.querySelectorAll(".jm-grad-chip")];
    expect(chips.map((c) => c.getAttribute("data-residual-id"))).toEqual(residualOrder(e.residuals).map((r) => r.id));
    expect(el.querySelector(".jm-grad-bridge-head").textContent).toContain(bytesText(e.residual_bytes));
  });

  it("mirrors the backward: gradients (outputs) leave on the left, inputs enter on the right", async () => {
    const el = render(fixture("grad-mlp"));
    await ready(el);
    const xs = (graph, cls) => [...pane(el, graph).querySelectorAll(`g.jm-port.${cls}`)].map(xOf);
    expect(Math.max(...xs("backward", "jm-port-out"))).toBeLessThan(Math.min(...xs("backward", "jm-port-in")));
    expect(Math.max(...xs("forward", "jm-port-in"))).toBeLessThan(Math.min(...xs("forward", "jm-port-out")));
  });

  it("a residual chip lights up its producer, forward var and every consumer; again clears; Esc clears", async () => {
    const d = fixture("grad-mlp"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    for (const r of e.residuals) {
      const chip = el.querySelector(`.jm-grad-chip[data-residual-id="${r.id}"]`);
      click(chip);
      await settle(el);
      expect(chip.classList.contains("jm-active")).toBe(true);
      const fwd = ids(pane(el, "forward"), "jm-res"), bwd = ids(pane(el, "backward"), "jm-res");
      if (typeof r.producer === "string") expect(fwd).toEqual([r.producer]);
      else expect(fwd).toEqual(["P:" + rootGroup(e.forward).invars[r.producer.input]]);
      expect(new Set(bwd)).toEqual(new Set([...r.consumers, ...r.backward_vars.map((v) => "P:" + v)]));
      // the forward var's edges, and the edges leaving the backward inputs, are marked
      expect(pane(el, "forward").querySelectorAll(".jm-edge.jm-res").length).toBeGreaterThan(0);
      expect(pane(el, "backward").querySelectorAll(".jm-edge.jm-res").length).toBeGreaterThan(0);
      expect(el.querySelector(".jm-grad-details").textContent).toContain(`residual ${r.id}`);
    }
    const last = e.residuals.at(-1);
    click(el.querySelector(`.jm-grad-chip[data-residual-id="${last.id}"]`)); // again: clears
    expect(el.querySelectorAll(".jm-res").length).toBe(0);
    expect(el.querySelector(".jm-grad-chip.jm-active")).toBeNull();
    click(el.querySelector(".jm-grad-chip"));
    expect(el.querySelectorAll(".jm-res").length).toBeGreaterThan(0);
    el.querySelector(".jm-grad-chip").dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(el.querySelectorAll(".jm-res").length).toBe(0);
  });

  it("arrow keys move along the chips and pick", async () => {
    const d = fixture("grad-mlp");
    const el = render(d);
    await ready(el);
    const chips = [...el.querySelectorAll(".jm-grad-chip")];
    click(chips[0]);
    chips[0].dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
    expect(chips[1].classList.contains("jm-active")).toBe(true);
    expect(chips[0].classList.contains("jm-active")).toBe(false);
  });

  it("a backward node lights up the forward node it differentiates, with the shared source line", async () => {
    const d = fixture("grad-mlp"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    const [b, f] = Object.entries(e.links.backward).find(([, f]) => e.forward.nodes.find((n) => n.id === f).prim === "tanh");
    click(nodeEl(el, "backward", b));
    await settle(el);
    expect(ids(pane(el, "forward"), "jm-linked")).toEqual([f]);
    expect(nodeEl(el, "backward", b).classList.contains("jm-selected")).toBe(true);
    const det = el.querySelector(".jm-grad-details").textContent;
    expect(det).toContain("Differentiates");
    const op = e.user_ops.find((u) => u.id === e.links.backward_user[b]);
    expect(det).toContain(op.src.code);
    // a forward node: every backward node linked to it
    click(nodeEl(el, "forward", f));
    await settle(el);
    const want = Object.entries(e.links.backward).filter(([, x]) => x === f).map(([bb]) => bb);
    expect(new Set(ids(pane(el, "backward"), "jm-linked"))).toEqual(new Set(want));
    expect(ids(pane(el, "forward"), "jm-linked")).toEqual([]);
    expect(nodeEl(el, "backward", b).classList.contains("jm-selected")).toBe(false); // one selection at a time
    // the details' link buttons select in the other graph
    const go = el.querySelector(`.jm-grad-go[data-graph="backward"][data-node-id="${want[0]}"]`);
    click(go);
    await settle(el);
    expect(nodeEl(el, "backward", want[0]).classList.contains("jm-selected")).toBe(true);
    expect(ids(pane(el, "forward"), "jm-linked")).toEqual([f]);
  });

  it("a gradient row selects the backward output port carrying it", async () => {
    const d = fixture("grad-mlp"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    const rows = [...el.querySelectorAll(".jm-grad-leaf")];
    expect(rows.map((r) => r.getAttribute("data-path"))).toEqual(e.grads_of.map((g) => g.path));
    click(rows[1]);
    await settle(el);
    const port = pane(el, "backward").querySelector("g.jm-port.jm-selected");
    expect(port.getAttribute("data-var-id")).toBe(e.grads_of[1].var);
  });

  it("recomputed nodes carry the checkpoint badge and the legend counts them", async () => {
    const d = fixture("grad-remat"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    const badged = [...pane(el, "backward").querySelectorAll("g.jm-eqn")].filter((g) => g.querySelector(".jm-badge")).map((g) => g.getAttribute("data-node-id"));
    const drawn = [...pane(el, "backward").querySelectorAll("g.jm-eqn")].map((g) => g.getAttribute("data-node-id"));
    expect(badged.length).toBeGreaterThan(0);
    expect(new Set(badged)).toEqual(new Set(e.recomputed.filter((id) => drawn.includes(id))));
    expect(el.querySelector('[data-legend="recomputed"]').textContent).toContain(`${e.recomputed.length} eqns recomputed under checkpoint`);
    click(nodeEl(el, "backward", e.recomputed[0]));
    expect(el.querySelector(".jm-grad-details").textContent).toContain("recomputed under checkpoint");
  });

  it("custom rules are badged, and their residuals show as usual", async () => {
    const d = fixture("grad-custom"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    const owner = e.forward.nodes.find((n) => n.prim === "custom_jvp_call");
    expect(nodeEl(el, "forward", owner.id).querySelector(".jm-badge").textContent).toBe("custom rule");
    expect(el.querySelectorAll(".jm-grad-chip").length).toBe(e.residuals.length);
    expect(el.querySelector('[data-legend="custom"]')).toBeTruthy();
  });

  it("the legend leaves the recomputed entry out when nothing is recomputed", async () => {
    const d = fixture("grad-mlp"), e = d.entries[0];
    expect(e.recomputed || []).toEqual([]);
    const el = render(d);
    await ready(el);
    expect(el.querySelector("[data-jm-legend]")).toBeTruthy();
    expect(el.querySelector('[data-legend="recomputed"]')).toBeNull();
    expect(el.querySelector("[data-jm-legend]").textContent).not.toContain("recomputed");
  });

  it("side by side puts the graphs in two columns, and back", async () => {
    const el = render(fixture("grad-mlp"));
    await ready(el);
    const graphs = el.querySelector(".jm-grad-graphs");
    expect(graphs.classList.contains("jm-grad-stacked")).toBe(true);
    click(el.querySelector('.jm-grad-arr[data-arr="side"]'));
    expect(graphs.classList.contains("jm-grad-side")).toBe(true);
    expect(el.querySelector('.jm-grad-arr[data-arr="side"]').classList.contains("jm-active")).toBe(true);
    click(el.querySelector('.jm-grad-arr[data-arr="stacked"]'));
    expect(graphs.classList.contains("jm-grad-stacked")).toBe(true);
  });
});

describe("grad view: values", () => {
  it("without values the toggle is disabled and says how to get them", async () => {
    const el = render(fixture("grad-custom"));
    await ready(el);
    const b = el.querySelector(".jm-grad-values");
    expect(b.disabled).toBe(true);
    expect(b.title).toContain("%%grad_graph --values");
  });

  it("values mode: cotangent labels on the backward edges, value labels forward, gradient summaries", async () => {
    const d = fixture("grad-mlp"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    expect(el.querySelector(".jm-grad-leaf-stats")).toBeNull();
    const b = el.querySelector(".jm-grad-values");
    expect(b.disabled).toBe(false);
    click(b);
    await settle(el);
    expect(b.getAttribute("aria-pressed")).toBe("true");
    for (const [graph, fn] of [["backward", e.backward], ["forward", e.forward]]) {
      const label = forwardLabel(indexFunction(fn), fn.values);
      const texts = [...pane(el, graph).querySelectorAll(".jm-edge-label")].map((t) => t.textContent);
      expect(texts.length).toBeGreaterThan(0);
      const want = new Set(fn.vars.map((v) => label([v.id])));
      for (const t of texts) if (!/ ×\d+$|^\d+ values$/.test(t)) expect(want.has(t), `${graph}: ${t}`).toBe(true);
    }
    const stats = [...el.querySelectorAll(".jm-grad-leaf-stats")].map((s) => s.textContent);
    expect(stats.length).toBe(e.grads_of.length);
    e.grads_of.forEach((g, i) => expect(stats[i]).toContain(`norm ${g.value.norm === 0 ? "0" : ""}`));
    expect(el.querySelector(".jm-grad-seed").textContent).toContain(e.cotangent);
    click(b);
    await settle(el);
    expect(el.querySelector(".jm-grad-leaf-stats")).toBeNull();
  });

  it("NaN / Inf gradients in the warning colour; the Inf finding selects its node", async () => {
    const d = fixture("grad-multi");
    const el = render(d);
    await ready(el);
    const f = d.findings.find((x) => x.kind === "inf_gradient");
    const btn = el.querySelector('.jm-grad-finding[data-kind="inf_gradient"]');
    expect(btn.getAttribute("data-severity")).toBe("warning");
    expect(el.querySelector(".jm-grad-finding").getAttribute("data-severity")).toBe("warning");
    click(btn);
    await settle(el);
    expect(el.querySelector(".jm-grad-tab.jm-tab-active").getAttribute("data-entry-id")).toBe(f.entry);
    expect(nodeEl(el, f.graph, f.node).classList.contains("jm-selected")).toBe(true);
    click(el.querySelector(".jm-grad-values"));
    const bad = [...el.querySelectorAll(".jm-grad-leaf .jm-bad")].map((s) => s.textContent);
    expect(bad.some((t) => /Inf \d+/.test(t))).toBe(true);
  });
});

describe("grad view: jit entries, tabs, findings", () => {
  it("colours the program by role, counts them in the legend, one bridge per region", async () => {
    const d = fixture("grad-jit"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    expect(el.querySelectorAll(".jm-grad-pane").length).toBe(1);
    for (const role of ["forward", "backward", "other", "unknown"]) {
      expect(el.querySelector(`[data-legend="${role}"]`).textContent).toBe(`${role} ${e.totals["n_" + role]}`);
    }
    const fills = new Map();
    for (const g of pane(el, "program").querySelectorAll("g.jm-eqn:not(.jm-expanded)")) {
      const role = e.roles[g.getAttribute("data-node-id")];
      const fill = g.querySelector(":scope > .jm-box").style.fill;
      if (!fills.has(role)) fills.set(role, new Set());
      fills.get(role).add(fill);
    }
    expect(fills.size).toBeGreaterThan(1);
    for (const [, set] of fills) expect(set.size).toBe(1);
    expect(new Set([...fills.values()].map((s) => [...s][0])).size).toBe(fills.size);
    expect(el.querySelectorAll(".jm-grad-bridge").length).toBe(e.regions.length);
    expect(el.querySelectorAll(".jm-grad-chip").length).toBe(e.totals.n_residuals);
    expect(el.querySelector(".jm-grad-sites").textContent).toContain(e.grad_sites[0].site.code);
  });

  it("a region's chip lights up producer and consumers in the one program; links exact or by source", async () => {
    const d = fixture("grad-jit"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    const r = e.regions[0].residuals.find((x) => typeof x.producer === "string");
    click(el.querySelector(`.jm-grad-chip[data-residual-id="${r.id}"]`));
    await settle(el);
    expect(new Set(ids(pane(el, "program"), "jm-res"))).toEqual(new Set([r.producer, ...r.consumers]));
    const [b, link] = Object.entries(e.regions[0].links).find(([, l]) => l.kind === "by_source");
    click(nodeEl(el, "program", b)); // drawn: a 188-eqn program opens fully
    await settle(el);
    expect(el.querySelectorAll(".jm-res").length).toBe(0);
    expect(new Set(ids(pane(el, "program"), "jm-linked"))).toEqual(new Set(link.forward));
    expect(el.querySelector(".jm-grad-details").textContent).toContain("by source line");
  });

  it("a by-source link the document counts instead of listing says how many, and lights up nothing", async () => {
    const d = structuredClone(fixture("grad-jit")), e = d.entries[0];
    const [b] = Object.entries(e.regions[0].links).find(([, l]) => l.kind === "by_source");
    e.regions[0].links[b] = { ...e.regions[0].links[b], forward: [], n_forward: 3600 }; // a 3,600-layer loop's line
    const el = render(d);
    await ready(el);
    click(nodeEl(el, "program", b));
    await settle(el);
    expect(ids(pane(el, "program"), "jm-linked")).toEqual([]);
    const det = el.querySelector(".jm-grad-details").textContent;
    expect(det).toContain("Differentiates (by source line)");
    expect(det).toContain("one of 3,600 forward ops with this source span");
  });

  it("lists the step's gradients by pytree path; a row selects the program node that makes it", async () => {
    const d = fixture("grad-jit"), e = d.entries[0];
    const el = render(d);
    await ready(el);
    const rows = [...el.querySelectorAll(".jm-grad-leaf")];
    expect(rows.map((b) => b.getAttribute("data-path"))).toEqual(e.grads_of.map((g) => g.path));
    const g = e.grads_of[0];
    const maker = e.program.nodes.find((n) => n.outs.includes(g.var));
    expect(e.roles[maker.id]).toBe("backward");
    click(rows[0]);
    await settle(el);
    expect(ids(pane(el, "program"), "jm-selected")).toEqual([maker.id]);
  });

  it("tabs switch entries and keep the values choice; the vmap badge shows", async () => {
    const d = fixture("grad-multi");
    const el = render(d);
    await ready(el);
    const tabs = [...el.querySelectorAll(".jm-grad-tab")];
    expect(tabs.length).toBe(d.entries.length);
    const batched = d.entries.findIndex((x) => x.batch);
    expect(tabs[batched].querySelector(".jm-grad-batch").textContent).toBe("vmap over 5");
    click(el.querySelector(".jm-grad-values"));
    click(tabs[d.entries.length - 1]);
    await ready(el);
    expect(el.querySelector(".jm-grad-entry").getAttribute("data-entry-id")).toBe(d.entries.at(-1).id);
    expect(el.querySelector(".jm-grad-values").getAttribute("aria-pressed")).toBe("true");
    expect(el.querySelector(".jm-grad-tab.jm-tab-active")).toBe(el.querySelectorAll(".jm-grad-tab")[d.entries.length - 1]);
  });

  it("forward mode (jvp) is one program, each node filled as primal or tangent, with the mode's note", async () => {
    const d = fixture("grad-multi");
    const k = d.entries.findIndex((x) => x.origin === "tangent");
    const e = d.entries[k];
    const el = render(d);
    await ready(el);
    click(el.querySelectorAll(".jm-grad-tab")[k]);
    await ready(el);
    expect(el.querySelector(".jm-grad-entry").getAttribute("data-origin")).toBe("tangent");
    expect(el.querySelectorAll(".jm-grad-pane").length).toBe(1);
    expect(el.querySelector('[data-legend="tangent"]').textContent).toBe(`tangent ${e.totals.n_tangent}`);
    expect(el.querySelector(".jm-grad-mode-note").textContent).toBe(e.note);
    const fillOf = (id) => nodeEl(el, "program", id).querySelector(":scope > .jm-box").style.fill;
    const byRole = { primal: new Set(), tangent: new Set() };
    for (const n of e.program.nodes) if (nodeEl(el, "program", n.id)) byRole[e.roles[n.id]].add(fillOf(n.id));
    expect(byRole.primal.size).toBe(1);
    expect(byRole.tangent.size).toBe(1);
    expect([...byRole.primal][0]).not.toBe([...byRole.tangent][0]);
    const row = el.querySelector(".jm-grad-leaf");
    expect(row.textContent).toBe(`tangent of ${e.tangents_of[0].path}`);
    click(row);
    await settle(el);
    expect(pane(el, "program").querySelector("g.jm-port.jm-selected").getAttribute("data-port-id")).toBe(`P:${e.tangents_of[0].var}`);
  });

  it("a residual finding selects its entry's chip", async () => {
    const d = fixture("grad-mlp");
    const el = render(d);
    await ready(el);
    const f = d.findings.find((x) => x.kind === "large_residual");
    click(el.querySelector('.jm-grad-finding[data-kind="large_residual"]'));
    await settle(el);
    expect(el.querySelector(".jm-grad-chip.jm-active").getAttribute("data-residual-id")).toBe(f.residual);
  });

  it("hostile strings stay text; documents without entries say so", async () => {
    const d = fixture("grad-mlp");
    const e = d.entries[0];
    e.name = EVIL;
    e.grads_of[0].path = EVIL;
    e.residuals[0].source = { file: EVIL, line: 1, col: 0, func: EVIL, code: EVIL };
    d.findings[0].message = EVIL;
    d.title = EVIL;
    const el = render(d);
    await ready(el);
    click(el.querySelector(`.jm-grad-chip[data-residual-id="${e.residuals[0].id}"]`));
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toContain(EVIL);
    const empty = render({ ...fixture("grad-mlp"), entries: [] });
    expect(empty.querySelector(".jm-empty").textContent).toContain("No differentiation");
    const newer = render({ ...fixture("grad-mlp"), version: 99 });
    expect(newer.querySelector(".jm-unsupported").textContent).toContain("grad documents of version 99");
  });
});
