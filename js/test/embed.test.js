// @vitest-environment jsdom
// The graph viewer embedded by another view (widgets/graph/view.js options and
// controller): compact frame, marks, reveal, host decorations under the cost overlay,
// selection reports, and opening a port bundle (its ports and their edges are drawn).
import { describe, it, expect, afterEach } from "vitest";
import { graphView } from "../../widgets/graph/view.js";
import { acquireLayout } from "../../widgets/ui/layout-client.js";
import { indexFunction, nKey, pKey } from "../../widgets/graph/model.js";
import { fixture, docOf } from "./helpers.js";
import { useMounting, settled, click } from "./mounting.js";

const render = useMounting();
const views = [];
afterEach(() => {
  while (views.length) views.pop()();
  document.body.textContent = "";
});

/** Mount a bare graph view with `opts`; returns {host, view, engine}. */
function embed(doc, opts = {}) {
  const host = document.createElement("div");
  host.className = "jm-root";
  document.body.appendChild(host);
  const engine = acquireLayout();
  const view = graphView(host, doc, engine, opts);
  views.push(() => (view(), engine.release()));
  return { host, view };
}

/** A function with `n` inputs (port bundles past 24) summed by one eqn. */
function wide(n) {
  const vars = [], invars = [];
  for (let i = 0; i < n; i++) {
    vars.push({ id: "v" + i, name: "a" + i, aval: "f32[]", group: "g0", def: "in" });
    invars.push("v" + i);
  }
  vars.push({ id: "vo", name: "o", aval: "f32[]", group: "g0", def: "n0" });
  return {
    id: "f0", name: "f", signature: "", source: null, calls: 1, cache_hits: 0, n_eqns: 1, text: "", root: "g0", truncated: false, repeats: [],
    groups: [{ id: "g0", node: null, label: "f", invars, constvars: [], outvars: [{ var: "vo" }], n_eqns: 1 }],
    nodes: [{ id: "n0", group: "g0", scope: [], prim: "add", params: {}, ins: invars.map((v) => ({ var: v })), outs: ["vo"], subgroups: [], src: null, line: 1 }],
    vars,
  };
}

describe("embedded graph viewer", () => {
  it("compact: no header, tabs, mode switch or side panel; a plain view keeps them", async () => {
    const { host } = embed(fixture("scoped"), { compact: true, tone: "backward", label: "Backward pass" });
    await settled(host);
    expect(host.querySelectorAll(".jm-title, .jm-tabs, .jm-side, .jm-mode").length).toBe(0);
    expect(host.querySelector(".jm-graph.jm-compact.jm-tone-backward")).toBeTruthy();
    expect(host.querySelector(".jm-svg").getAttribute("aria-label")).toBe("Backward pass");
    const plain = render(fixture("scoped"));
    await settled(plain);
    expect(plain.querySelectorAll(".jm-title").length + plain.querySelectorAll(".jm-side").length + plain.querySelectorAll(".jm-mode").length).toBe(5);
  });

  it("reports user selections, not re-applied ones; select/highlight/reveal from the host", async () => {
    const doc = fixture("control");
    const heard = [];
    const { host, view } = embed(doc, { compact: true, onSelect: (k) => heard.push(k) });
    await settled(host);
    expect(heard).toEqual([]); // building the view selects nothing
    const n = doc.functions[0].nodes.find((x) => x.prim === "add");
    click(host.querySelector(`g.jm-eqn[data-node-id="${n.id}"]`));
    expect(heard).toEqual([nKey(n.id)]);
    expect(view.selected()).toBe(nKey(n.id));
    view.setMode("trace");
    expect(heard.length).toBe(1);
    // marks: a class on the elements and on the edges carrying the vars
    const m = doc.functions[0].nodes.find((x) => x.prim === "mul" || x.prim === "sin") || doc.functions[0].nodes[0];
    view.highlight([nKey(m.id)], "jm-test", m.outs);
    expect(host.querySelector(`g.jm-eqn[data-node-id="${m.id}"]`).classList.contains("jm-test")).toBe(true);
    expect(host.querySelector(`g.jm-eqn[data-node-id="${m.id}"]`).classList.contains("jm-mark")).toBe(true);
    expect(host.querySelectorAll(".jm-edge.jm-test").length).toBeGreaterThan(0);
    view.highlight([], "jm-test");
    expect(host.querySelectorAll(".jm-test, .jm-mark, .jm-edge-mark").length).toBe(0);
    // reveal opens what hides a node; a mark on a hidden node marks the box hiding it
    click([...host.querySelectorAll(".jm-btn")].find((b) => b.textContent === "Collapse all"));
    await settled(host);
    const hidden = doc.functions[0].nodes.find((x) => x.group !== doc.functions[0].root);
    expect(host.querySelector(`g.jm-eqn[data-node-id="${hidden.id}"]`)).toBeNull();
    view.highlight([nKey(hidden.id)], "jm-test");
    expect(host.querySelectorAll(".jm-test").length).toBe(1);
    view.reveal([nKey(hidden.id)]);
    await new Promise((r) => setTimeout(r, 20));
    await settled(host);
    expect(host.querySelector(`g.jm-eqn[data-node-id="${hidden.id}"]`).classList.contains("jm-test")).toBe(true);
    view.select(null);
    expect(view.selected()).toBeNull();
  });

  it("host decorations: fill, stroke, dash and a badge; the cost overlay replaces them while on", async () => {
    const doc = fixture("control");
    const { host, view } = embed(doc, { compact: true });
    await settled(host);
    const id = doc.functions[0].nodes[0].id;
    view.setDecorations((k) => (k === nKey(id) ? { fill: "rgb(1, 2, 3)", stroke: "rgb(4, 5, 6)", dash: "4,2", badge: "custom rule" } : null));
    const g = host.querySelector(`g.jm-eqn[data-node-id="${id}"]`);
    const box = g.querySelector(":scope > .jm-box");
    expect([box.style.fill, box.style.stroke, box.style.strokeDasharray]).toEqual(["rgb(1, 2, 3)", "rgb(4, 5, 6)", "4 2"]);
    expect(g.querySelector(".jm-badge").textContent).toBe("custom rule");
    const sel = host.querySelector(".jm-overlay");
    sel.value = "flops";
    sel.dispatchEvent(new Event("change"));
    expect(g.querySelector(".jm-badge")).toBeNull();
    sel.value = "none";
    sel.dispatchEvent(new Event("change"));
    expect(g.querySelector(".jm-badge").textContent).toBe("custom rule");
    expect(box.style.fill).toBe("rgb(1, 2, 3)");
  });

  it("a host's select before the first drawing waits for it", async () => {
    const doc = fixture("control");
    const { host, view } = embed(doc, { compact: true });
    const n = doc.functions[0].nodes.at(-1);
    view.select(nKey(n.id));
    await settled(host);
    await new Promise((r) => setTimeout(r, 20));
    await settled(host);
    expect(host.querySelector(`g.jm-eqn[data-node-id="${n.id}"]`).classList.contains("jm-selected")).toBe(true);
  });
});

describe("port bundles", () => {
  it("opening a bundle draws its ports and their edges; closing folds them again", async () => {
    const fn = wide(30);
    const el = render(docOf(fn));
    await settled(el);
    const counts = () => [el.querySelectorAll("g.jm-port").length, el.querySelectorAll(".jm-edge").length];
    expect(counts()).toEqual([1, 2]); // the output port; bundle -> add -> out
    click(el.querySelector("[data-box-kind=Q] .jm-cbox-head"));
    await new Promise((r) => setTimeout(r, 20));
    await settled(el);
    expect(counts()).toEqual([31, 31]);
    const ix = indexFunction(fn);
    for (const v of fn.groups[0].invars) expect(el.querySelector(`.jm-edge[data-from="${pKey(v)}"]`), v).toBeTruthy();
    expect(ix.parent.get(pKey("v0")).startsWith("Q:")).toBe(true);
    click(el.querySelector("[data-box-kind=Q] .jm-cbox-head"));
    await new Promise((r) => setTimeout(r, 20));
    await settled(el);
    expect(counts()).toEqual([1, 2]);
  });
});
