// @vitest-environment jsdom
// The key tree opens framed: whole when its labels read at 11 px (14 px presenting), else the
// part around the reused key at that legible scale, the pane as tall as the drawing; the pane
// publishes the contract attributes, the reused key's element is marked, the legend is marked.
// A key deep in a folded loop gets a short breadcrumb that still navigates and opens in full.
import { describe, it, expect } from "vitest";
import { useKeys, useViewSize, manyRoots, longRun } from "./keys-helpers.js";
import { crumbPlan, CRUMBS_HEAD, CRUMBS_TAIL } from "../../widgets/keys/details.js";
import { frameTree, labelPx, legibleZoom, PANE_H } from "../../widgets/keys/frame.js";
import { layoutForest, METRICS } from "../../widgets/keys/layout.js";
import { buildTree, initialUi } from "../../widgets/keys/tree.js";
import { readKeys, storyNode } from "../../widgets/keys/model.js";

const render = useKeys();
const viewSize = useViewSize();
const click = (node) => node.dispatchEvent(new MouseEvent("click", { bubbles: true }));
const pane = (el) => el.querySelector('[data-jm-pane="keys"]');
const attrs = (el) => {
  const p = pane(el);
  return { framed: p.getAttribute("data-jm-framed"), px: Number(p.getAttribute("data-jm-text-px")), box: p.getAttribute("data-jm-drawing").split(",").map(Number) };
};

describe("key tree framing", () => {
  it("shows a small tree whole at 100% with a pane no taller than it needs", () => {
    viewSize(900, 540);
    const el = render(manyRoots(1, 3));
    const a = attrs(el);
    expect(a.framed).toBe("whole");
    expect(a.px).toBe(11);
    const h = Number.parseFloat(el.querySelector(".jm-k-main").style.getPropertyValue("--jm-k-pane-h"));
    expect(h).toBe(PANE_H.normal.min); // 5 keys: the pane shrinks to its least height
    expect(el.querySelector("[data-jm-legend]")).not.toBeNull();
  });

  it("opens a 1,000-key tree at a legible scale on its first root, not shrunk to fit", () => {
    viewSize(900, 540);
    const doc = manyRoots(20, 48); // 1,000 keys
    expect(doc.nodes.length).toBe(1000);
    const el = render(doc);
    const a = attrs(el);
    expect(a.framed).toBe("part");
    expect(a.px).toBeGreaterThanOrEqual(11);
    expect(a.box[0]).toBeGreaterThan(0); // the roots' column starts inside the pane
    expect(el.querySelector(".jm-k-svg").classList.contains("jm-k-overview")).toBe(false);
    expect(el.querySelector('.jm-k-svg [data-key="n0"]')).not.toBeNull(); // the first root is drawn
  });

  it("frames the part around the reused key, which carries data-jm-key-element", () => {
    viewSize(900, 540);
    const doc = longRun(1000);
    const m = readKeys(doc);
    const id = storyNode(m);
    expect(m.nodes[id].state).toBe("reused");
    const el = render(doc);
    const g = el.querySelector("[data-jm-key-element]");
    expect(g).not.toBeNull();
    expect(g.getAttribute("data-key")).toBe(`n${id}`);
    expect(el.querySelectorAll("[data-jm-key-element]").length).toBe(1);
  });

  it("presenting: text at least 14 px, the reused key in the middle third of the pane", () => {
    const doc = longRun(40);
    const m = readKeys(doc);
    const lay = layoutForest(buildTree(m, initialUi()), METRICS.present);
    const key = lay.items.find((it) => it.type === "node" && it.id === storyNode(m));
    const f = frameTree(lay, { paneW: 840, present: true, anchors: [key] });
    expect(f.textPx).toBeGreaterThanOrEqual(14);
    const x = f.tx + (key.x + key.w / 2) * f.scale;
    expect(x).toBeGreaterThan(0);
    expect(x).toBeLessThan(840);
    expect(labelPx(true, true)).toBe(14);
    expect(legibleZoom(true, false)).toBeCloseTo(14 / 16);
    expect(legibleZoom(false, true)).toBe(1);
  });
});

describe("breadcrumbs", () => {
  it("keeps short paths whole and cuts long ones to their first and last levels", () => {
    expect(crumbPlan(3)).toEqual([0, 1, 2]);
    expect(crumbPlan(CRUMBS_HEAD + CRUMBS_TAIL + 1)).toHaveLength(CRUMBS_HEAD + CRUMBS_TAIL + 1);
    expect(crumbPlan(101)).toEqual([0, 1, { gap: 95 }, 97, 98, 99, 100]);
  });

  it("a key deep in a folded loop: a short breadcrumb whose levels select, and whose gap opens the whole path", () => {
    viewSize(4000, 20000);
    const doc = longRun(120);
    const el = render(doc);
    click(el.querySelector(".jm-k-finding")); // its node: the reused key after the folded run, 241 levels down
    const crumbs = el.querySelector(".jm-k-crumbs");
    const parts = [...crumbs.querySelectorAll(".jm-k-crumb, .jm-k-crumb-here")];
    expect(parts.length).toBe(CRUMBS_HEAD + 1 + CRUMBS_TAIL);
    const gap = crumbs.querySelector(".jm-k-crumb-gap");
    expect(gap.textContent).toMatch(/^… \d+ levels …$/);
    expect(crumbs.textContent.length).toBeLessThan(200);
    // a shown ancestor selects it
    const second = parts[1];
    const label = second.textContent;
    click(second);
    expect(el.querySelector(".jm-k-details .jm-d-prim").textContent).toBe(label);
    // back to the deep key: the gap opens every level
    click(el.querySelector(".jm-k-finding"));
    const n = Number(el.querySelector(".jm-k-crumb-gap").textContent.match(/\d+/)[0]);
    click(el.querySelector(".jm-k-crumb-gap"));
    expect(el.querySelectorAll(".jm-k-crumbs .jm-k-crumb, .jm-k-crumbs .jm-k-crumb-here").length).toBe(CRUMBS_HEAD + n + CRUMBS_TAIL);
  });
});
