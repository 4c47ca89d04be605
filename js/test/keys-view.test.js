// @vitest-environment jsdom
// The mounted keys view on the fixtures (hand-made, and the Python side's real document)
// and on synthetic documents: state classes against the document, folded runs and
// aggregates and their pages, findings that reveal their node, the filter, hover card
// and details of a reused key, search, keyboard, hostile strings, element counts of
// 5,000-key documents, export, and the empty document.
import { shortWhere } from "../../widgets/ui/source-text.js";
import { describe, it, expect, vi } from "vitest";
import { fixture } from "./helpers.js";
import { useKeys, useViewSize, manyRoots, wideSplit, longRun } from "./keys-helpers.js";
import { AGG_PAGE, RUN_PAGE } from "../../widgets/keys/tree.js";
import { sourceText } from "../../widgets/keys/text.js";

const render = useKeys();
const viewSize = useViewSize();
const FIXTURES = [["handmade", () => fixture("keys-handmade")], ["small", () => fixture("keys-small")]];
const click = (node) => node.dispatchEvent(new MouseEvent("click", { bubbles: true }));
const key = (node, k, opts = {}) => node.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...opts }));
const items = (el) => [...el.querySelectorAll(".jm-k-svg [data-key]")];
const nodeEl = (el, id) => el.querySelector(`.jm-k-svg [data-key="n${id}"]`);
const drawnNodes = (el) => items(el).map((g) => g.getAttribute("data-key")).filter((k) => /^n\d+$/.test(k)).map((k) => Number(k.slice(1)));
const svgCount = (el) => el.querySelectorAll("svg.jm-k-svg *").length;
/** Click closed runs, aggregates and "more" items until none is left (a big view culls nothing). */
function openAll(el) {
  for (let guard = 0; guard < 500; guard++) {
    const closed = el.querySelector('.jm-k-svg .jm-k-t-run[aria-expanded="false"], .jm-k-svg .jm-k-t-agg[aria-expanded="false"], .jm-k-svg .jm-k-t-more');
    if (!closed) return;
    click(closed.querySelector(".jm-k-shape"));
  }
  throw new Error("stand-ins keep appearing");
}
/** The document with two more findings: one on a node inside its first run, one on a row of its widest aggregate. */
function withHiddenFindings(doc) {
  const inRun = doc.nodes.find((n) => n.run != null && n.parent != null && doc.nodes[n.parent].run != null);
  const parents = new Map();
  for (const n of doc.nodes) if (n.how === "row") parents.set(n.parent, [...(parents.get(n.parent) || []), n.id]);
  const rows = [...parents.values()].sort((a, b) => b.length - a.length)[0];
  const inAgg = doc.nodes[rows[rows.length - 3]];
  doc.findings.push(
    { kind: "constant_key", severity: "warning", message: "finding inside the run", node: inRun.id, sources: [] },
    { kind: "constant_key", severity: "info", message: "finding inside the aggregate", node: inAgg.id, sources: [] },
  );
  return { doc, inRun, inAgg };
}

describe("keys view", () => {
  for (const [name, make] of FIXTURES) {
    it(`${name}: header, findings bugs first, summary; every drawn key is filled by its document state`, () => {
      viewSize(4000, 20000);
      const doc = make();
      const el = render(doc);
      expect(el.querySelector(".jm-title").textContent).toBe(doc.title);
      const sev = [...el.querySelectorAll(".jm-k-finding .jm-k-sev")].map((s) => s.textContent);
      expect(sev.length).toBe(doc.findings.length);
      const rank = (s) => ({ bug: 0, warning: 1 })[s] ?? 2;
      expect(sev).toEqual([...sev].sort((a, b) => rank(a) - rank(b)));
      const sm = doc.summary;
      expect(el.querySelector(".jm-k-summary").textContent).toContain(`${sm.keys} keys · ${sm.roots} roots`);
      expect(el.querySelector(".jm-k-summary").textContent).toContain(`${sm.reused} reused · ${sm.unused} unused`);
      openAll(el);
      const drawn = drawnNodes(el);
      expect(drawn.sort((a, b) => a - b)).toEqual(doc.nodes.map((n) => n.id));
      for (const id of drawn) {
        const cls = [...nodeEl(el, id).classList].filter((c) => /^jm-k-s-/.test(c));
        expect(cls, `node ${id}`).toEqual([`jm-k-s-${doc.nodes[id].state}`]);
        expect(nodeEl(el, id).classList.contains("jm-k-jit")).toBe(doc.nodes[id].call != null);
        if (doc.nodes[id].call != null) expect(nodeEl(el, id).querySelector(".jm-k-badge").textContent).toBe(doc.nodes[id].function);
      }
    });

    it(`${name}: runs are folded by default: one run item, no run node drawn, last drawn as its child; unfolding draws them`, () => {
      viewSize(4000, 20000);
      const doc = make();
      const el = render(doc);
      const drawn = new Set(drawnNodes(el));
      for (const n of doc.nodes) if (n.run != null) expect(drawn.has(n.id)).toBe(false);
      for (const r of doc.runs) {
        const run = el.querySelector(`[data-key="run${r.id}"]`);
        expect(run.textContent).toContain(`×${r.length}`);
        expect(run.getAttribute("aria-expanded")).toBe("false");
        const last = nodeEl(el, r.last);
        expect(Number(last.getAttribute("aria-level"))).toBe(Number(run.getAttribute("aria-level")) + 1);
        click(run.querySelector(".jm-k-shape"));
        const members = doc.nodes.filter((n) => n.run === r.id).map((n) => n.id);
        const now = new Set(drawnNodes(el));
        expect(members.filter((i) => now.has(i))).toEqual(members.slice(0, RUN_PAGE));
        expect(el.querySelector(`[data-key="run${r.id}"]`).getAttribute("aria-expanded")).toBe("true");
      }
    });
  }

  it("a run of 1,000 steps unfolds RUN_PAGE nodes at a time behind a +N more item", () => {
    viewSize(4000, 20000);
    const doc = longRun(1000);
    const el = render(doc);
    click(el.querySelector('[data-key="run0"] .jm-k-shape'));
    const members = doc.nodes.filter((n) => n.run === 0).map((n) => n.id);
    const runNodes = () => drawnNodes(el).filter((i) => doc.nodes[i].run === 0);
    expect(runNodes().sort((a, b) => a - b)).toEqual(members.slice(0, RUN_PAGE));
    const more = el.querySelector(".jm-k-t-more");
    expect(more.textContent).toBe(`+${members.length - RUN_PAGE} more`);
    expect(nodeEl(el, doc.runs[0].last)).not.toBeNull(); // the chain goes on after the more item
    click(more.querySelector(".jm-k-shape"));
    expect(runNodes().length).toBe(2 * RUN_PAGE);
  });

  it("aggregates the rows of a split: one item, then at most AGG_PAGE rows and a +N more item", () => {
    viewSize(4000, 20000);
    const doc = fixture("keys-handmade");
    const el = render(doc);
    const split = doc.nodes.filter((n) => doc.nodes.filter((c) => c.parent === n.id && c.how === "row").length > 8)[0];
    const rows = doc.nodes.filter((c) => c.parent === split.id && c.how === "row");
    const agg = el.querySelector(`[data-key="agg${split.id}"]`);
    const counts = ["reused", "consumed", "unused"].map((s) => [s, rows.filter((r) => r.state === s).length]).filter(([, n]) => n);
    expect(agg.textContent).toBe(`${rows.length} keys: ${counts.map(([s, n]) => `${n} ${s}`).join(", ")}`);
    expect(agg.classList.contains(`jm-k-s-${counts[0][0]}`)).toBe(true);
    for (const r of rows) expect(nodeEl(el, r.id)).toBeNull();
    key(agg, "Enter");
    expect(el.querySelector(`[data-key="agg${split.id}"]`).getAttribute("aria-expanded")).toBe("true");
    expect(rows.filter((r) => nodeEl(el, r.id)).length).toBe(Math.min(rows.length, AGG_PAGE));

    const wide = wideSplit(5000);
    const el2 = render(wide);
    click(el2.querySelector('[data-key="agg1"] .jm-k-shape'));
    expect(drawnNodes(el2).filter((i) => wide.nodes[i].how === "row").length).toBe(AGG_PAGE);
    expect(el2.querySelector(".jm-k-t-more").textContent).toBe(`+${5000 - AGG_PAGE} more`);
    click(el2.querySelector(".jm-k-t-more .jm-k-shape"));
    expect(drawnNodes(el2).filter((i) => wide.nodes[i].how === "row").length).toBe(2 * AGG_PAGE);
  });

  it("a finding selects its node, unfolding the run or opening the aggregate that hides it, and brings it into view", () => {
    const { doc, inRun, inAgg } = withHiddenFindings(fixture("keys-handmade"));
    const el = render(doc); // the default 900x520 view: the node must be panned to
    expect(nodeEl(el, inRun.id)).toBeNull();
    expect(nodeEl(el, inAgg.id)).toBeNull();
    for (const [msg, n] of [["finding inside the run", inRun], ["finding inside the aggregate", inAgg]]) {
      const btn = [...el.querySelectorAll(".jm-k-finding")].find((b) => b.textContent.includes(msg));
      click(btn);
      const g = nodeEl(el, n.id);
      expect(g, msg).not.toBeNull();
      expect(g.classList.contains("jm-k-sel")).toBe(true);
      expect(g.getAttribute("aria-selected")).toBe("true");
      expect(el.querySelectorAll(".jm-k-sel").length).toBe(1);
      expect(el.querySelector(".jm-k-details .jm-d-prim").textContent).toBe(n.label);
      const crumbs = el.querySelector(".jm-k-crumbs").textContent;
      expect(crumbs.endsWith(n.label)).toBe(true);
    }
    // every finding of the real document reveals its node too
    const small = fixture("keys-small");
    const el2 = render(small);
    el2.querySelectorAll(".jm-k-finding").forEach((b, i) => {
      click(b);
      const f = [...small.findings].sort((a, c) => (a.severity === "bug" ? 0 : 1) - (c.severity === "bug" ? 0 : 1))[i];
      expect(nodeEl(el2, f.node).classList.contains("jm-k-sel")).toBe(true);
    });
  });

  it("the filter shows exactly the paths to reused keys and counts what it hides", () => {
    viewSize(4000, 20000);
    for (const doc of [fixture("keys-handmade"), fixture("keys-small"), manyRoots(6, 20, 9)]) {
      const el = render(doc);
      const targets = new Set([...doc.nodes.filter((n) => n.state === "reused").map((n) => n.id),
        ...doc.findings.filter((f) => f.kind === "key_reuse" || f.kind === "loop_reuse").map((f) => f.node)]);
      const expected = new Set();
      for (const t of targets) {
        for (let i = t; i != null; i = doc.nodes[i].parent) expected.add(i);
        for (const c of doc.nodes) if (c.parent === t) expected.add(c.id);
      }
      const btn = [...el.querySelectorAll(".jm-toolbar .jm-btn")].find((b) => b.textContent === "Only paths to reused keys");
      click(btn);
      expect(btn.getAttribute("aria-pressed")).toBe("true");
      openAll(el);
      expect(new Set(drawnNodes(el))).toEqual(expected);
      expect(el.querySelector(".jm-k-hidden").textContent).toBe(`${doc.nodes.length - expected.size} of ${doc.nodes.length} keys hidden`);
      click(btn);
      expect(el.querySelector(".jm-k-hidden").textContent).toBe("");
      openAll(el);
      expect(drawnNodes(el).length).toBe(doc.nodes.length);
    }
  });

  it("the hover card and the details of a reused key name both lines, the first use marked", () => {
    for (const doc of [fixture("keys-handmade"), fixture("keys-small")]) {
      const el = render(doc);
      const n = doc.nodes.find((x) => x.state === "reused" && x.uses.filter((u) => u.consuming).length > 1);
      const g = nodeEl(el, n.id);
      g.querySelector(".jm-k-shape").dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
      const card = el.querySelector(".jm-k-card");
      expect(card.hidden).toBe(false);
      for (const u of n.uses) expect(card.textContent).toContain(sourceText(u.source));
      expect(card.textContent).toContain("(first use)");
      click(g.querySelector(".jm-k-shape"));
      const uses = [...el.querySelectorAll(".jm-k-details .jm-k-use")];
      expect(uses.length).toBe(n.uses.length);
      n.uses.forEach((u, i) => {
        expect(uses[i].textContent).toContain(shortWhere(u.source.file, u.source.line)); // `line 7` in a cell
        expect(uses[i].textContent).toContain(u.source.code);
      });
      const firstC = n.uses.findIndex((u) => u.consuming);
      expect(uses[firstC].textContent).toContain("first use");
      expect(uses.filter((u) => u.textContent.includes("reuse")).length).toBe(n.uses.filter((u) => u.consuming).length - 1);
      // Esc clears the selection
      key(g, "Escape");
      expect(el.querySelector(".jm-k-sel")).toBeNull();
      expect(el.querySelector(".jm-k-details .jm-d-empty")).not.toBeNull();
    }
  });

  it("keys are focusable tree items labelled with label, state and first use; arrows and Enter work", () => {
    viewSize(4000, 20000);
    const doc = fixture("keys-handmade");
    const el = render(doc);
    expect(el.querySelector("svg.jm-k-svg").getAttribute("role")).toBe("tree");
    for (const id of drawnNodes(el)) {
      const g = nodeEl(el, id), n = doc.nodes[id];
      expect(g.getAttribute("role")).toBe("treeitem");
      expect(g.getAttribute("tabindex")).toBe("0");
      expect(g.getAttribute("aria-label")).toContain(`${n.label}, ${n.state}, first use: `);
      if (n.uses.length) expect(g.getAttribute("aria-label")).toContain(String(n.uses[0].name));
      const kids = doc.nodes.some((c) => c.parent === id);
      expect(g.hasAttribute("aria-expanded")).toBe(kids);
    }
    const root = doc.nodes.find((n) => n.parent == null && doc.nodes.some((c) => c.parent === n.id && c.run == null));
    const g = nodeEl(el, root.id);
    g.focus();
    key(g, " ");
    expect(nodeEl(el, root.id).getAttribute("aria-expanded")).toBe("false");
    for (const c of doc.nodes.filter((c) => c.parent === root.id)) expect(nodeEl(el, c.id)).toBeNull();
    key(nodeEl(el, root.id), "ArrowRight");
    expect(nodeEl(el, root.id).getAttribute("aria-expanded")).toBe("true");
    key(nodeEl(el, root.id), "ArrowDown");
    expect(document.activeElement.getAttribute("aria-level")).toBe("2");
    const child = document.activeElement;
    if (child.getAttribute("aria-expanded") === "true") {
      key(child, "ArrowLeft"); // an open item folds first
      expect(document.activeElement.getAttribute("aria-expanded")).toBe("false");
    }
    key(document.activeElement, "ArrowLeft");
    expect(document.activeElement).toBe(nodeEl(el, root.id));
  });

  it("search highlights matches (inside folded items too), counts them and Enter goes to the next", () => {
    viewSize(4000, 20000);
    const doc = fixture("keys-handmade");
    const el = render(doc);
    const input = el.querySelector(".jm-search");
    const name = "bernoulli";
    const want = doc.nodes.filter((n) => n.uses.some((u) => u.name === name)).map((n) => n.id);
    input.value = name;
    input.dispatchEvent(new Event("input"));
    expect(el.querySelector(".jm-match-count").textContent).toBe(`${want.length} matches`);
    const hidden = want.filter((id) => !nodeEl(el, id));
    if (hidden.length) expect(el.querySelectorAll(".jm-k-hit-in").length).toBeGreaterThan(0);
    key(input, "Enter");
    expect(el.querySelector(".jm-match-count").textContent).toBe(`1 of ${want.length}`);
    expect(nodeEl(el, want[0]).classList.contains("jm-k-sel")).toBe(true);
    expect(nodeEl(el, want[0]).classList.contains("jm-k-hit")).toBe(true);
    key(input, "Enter");
    expect(el.querySelector(".jm-match-count").textContent).toBe(`2 of ${want.length}`);
    // a file:line query finds the uses on that line
    const reused = doc.nodes.find((n) => n.state === "reused" && n.uses.length > 1);
    input.value = `${reused.uses[1].source.file}:${reused.uses[1].source.line}`;
    input.dispatchEvent(new Event("input"));
    key(input, "Enter");
    expect(nodeEl(el, reused.id).classList.contains("jm-k-sel")).toBe(true);
  });

  it("document strings stay text: no element is made from a label, detail, note or code", () => {
    viewSize(4000, 20000);
    const doc = fixture("keys-handmade");
    const evil = doc.nodes.find((n) => /<img/.test(n.label));
    const el = render(doc);
    const g = nodeEl(el, evil.id);
    g.querySelector(".jm-k-shape").dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    click(g.querySelector(".jm-k-shape"));
    expect(el.querySelectorAll("img, script, i").length).toBe(0);
    expect(g.querySelector(".jm-k-label").textContent).toBe(evil.label.length > 30 ? evil.label.slice(0, 29) + "…" : evil.label);
    expect(el.querySelector(".jm-k-card").textContent).toContain(evil.detail);
    expect(el.querySelector(".jm-k-details").textContent).toContain(evil.made[0].code);
    expect(el.querySelector(".jm-notes").textContent).toContain("<i>");
    expect(el.querySelectorAll("b").length).toBe(el.querySelectorAll(".jm-k-use b").length);
  });

  it("5,000-key documents draw with fewer than 1,500 SVG elements, at any zoom and unfolded", () => {
    for (const [name, make, open] of [
      ["100 roots × 48 rows", () => manyRoots(100, 48, 0), '[data-key="agg1"]'],
      ["a split of 4,998 rows", () => wideSplit(4998), '[data-key="agg1"]'],
      ["a run of 1,666 steps", () => longRun(1666), '[data-key="run0"]'],
    ]) {
      const doc = make();
      expect(doc.nodes.length).toBeGreaterThanOrEqual(4999);
      const t0 = performance.now();
      const el = render(doc);
      const ms = performance.now() - t0;
      console.log(`jsdom first render, ${name} (${doc.nodes.length} keys): ${ms.toFixed(0)} ms, ${svgCount(el)} SVG elements`);
      expect(svgCount(el), name).toBeLessThan(1500);
      expect(items(el).length).toBeGreaterThan(0);
      [...el.querySelectorAll(".jm-toolbar .jm-btn")].find((b) => b.textContent === "Fit").click();
      expect(svgCount(el), `${name}, fit`).toBeLessThan(1500);
      const target = el.querySelector(open) || el.querySelector(".jm-k-svg [aria-expanded='false']");
      if (target) click(target.querySelector(".jm-k-shape"));
      expect(svgCount(el), `${name}, unfolded`).toBeLessThan(1500);
    }
    // a big view: everything in view at once is drawn as an overview, still bounded
    viewSize(20000, 200000);
    const el = render(manyRoots(100, 48, 0));
    expect(el.querySelector("svg.jm-k-svg").classList.contains("jm-k-overview")).toBe(true);
    expect(svgCount(el)).toBeLessThan(1500);
  });

  it("exports the whole tree as SVG (not just what is in view, text only) and the document as JSON", async () => {
    viewSize(300, 120); // a small view: most of the tree is culled from the page
    const doc = fixture("keys-handmade");
    const el = render(doc);
    const inView = items(el).length;
    const blobs = [];
    const names = [];
    URL.createObjectURL = vi.fn((b) => (blobs.push(b), "blob:x"));
    URL.revokeObjectURL = vi.fn();
    const spy = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function () {
      names.push(this.getAttribute("download"));
    });
    try {
      const btn = (t) => [...el.querySelectorAll(".jm-toolbar .jm-btn")].find((b) => b.textContent === t);
      click(btn("SVG"));
      click(btn("JSON"));
      expect(names).toEqual(["jaxmagic-keys.svg", "jaxmagic-keys.json"]);
      // jsdom's XMLSerializer writes the root's xmlns twice (the export sets it for browsers): keep one
      const text = (await blobs[0].text()).replace(/ xmlns="[^"]*"/, "");
      const svg = new DOMParser().parseFromString(text, "image/svg+xml");
      expect(svg.querySelector("parsererror")).toBeNull();
      const exported = new Set([...svg.querySelectorAll("[data-key]")].map((g) => g.getAttribute("data-key")));
      expect(svg.querySelectorAll("img, script").length).toBe(0);
      expect(JSON.parse(await blobs[1].text())).toEqual(doc);
      expect(items(el).length).toBe(inView); // the page is culled again
      viewSize(4000, 20000);
      const all = new Set(items(render(doc)).map((g) => g.getAttribute("data-key")));
      expect(all.size).toBeGreaterThan(inView);
      expect(exported).toEqual(all);
    } finally {
      spy.mockRestore();
    }
  });

  it("an empty document says no key was used", () => {
    const el = render({ schema: "jaxmagic", version: 1, kind: "keys", title: "%%prng", notes: [], error: null, summary: null, nodes: [], runs: [], findings: [] });
    expect(el.querySelector(".jm-empty").textContent).toContain("No PRNG key was used in this cell");
    expect(el.querySelector("svg")).toBeNull();
  });
});
