// @vitest-environment jsdom
// Playback of the keys view (widgets/keys/playback.js): its story given to the playback controller (widgets/ui/playback.js),
// each step drawn on the same layout (keys not made yet faded with their edges, the step's items
// marked, a reuse red and flashing at its step), the last step equal to the drawing before
// playback, the overview of a big tree, the story made again when the drawn tree changes,
// tree items keeping their arrow keys, presentation mode's sizes and clutter, and the time of
// one step on a 5,000-key document (printed, never asserted).
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useView, useMounting, click } from "./mounting.js";
import { useViewSize, manyRoots } from "./keys-helpers.js";
import { keysView } from "../../widgets/keys/view.js";
import { METRICS } from "../../widgets/keys/layout.js";

/** A stand-in for the controller: keeps the last spec and counts the stories given. */
function fakePlayback() {
  const pb = { spec: null, sets: 0, set(spec) {
    pb.spec = spec;
    pb.sets += 1;
  } };
  return pb;
}
const views = [];
const render = useView((root, doc) => {
  const v = views[views.length - 1];
  return keysView(root, doc, null, v.options);
});
function mountKeys(doc, { present = false } = {}) {
  const playback = fakePlayback();
  views.push({ options: { present, playback } });
  const el = render(doc);
  return { el, pb: playback };
}
const mountFull = useMounting();
const viewSize = useViewSize();

const snapshot = (el) => [...el.querySelectorAll(".jm-k-svg *")].map((x) =>
  [x.tagName, x.getAttribute("data-key"), x.getAttribute("class"), x.getAttribute("transform"), x.getAttribute("d")]);
const itemClass = (el, key) => [...el.querySelector(`.jm-k-svg [data-key="${key}"]`).classList];
const reached = (el) => [...el.querySelectorAll(".jm-k-svg [data-key]")].filter((g) => !g.classList.contains("jm-pb-future")).map((g) => g.getAttribute("data-key"));
const keydown = (node, k) => {
  const e = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
  node.dispatchEvent(e);
  return e;
};

describe("keys view playback", () => {
  it("gives a story; step 0 fades every key and edge; the last step restores the drawing exactly", () => {
    viewSize(4000, 20000);
    const doc = fixture("keys-small");
    const { el, pb } = mountKeys(doc);
    expect(pb.sets).toBe(1);
    const { steps } = pb.spec;
    expect(steps).toBeGreaterThan(10);
    const before = snapshot(el);
    pb.spec.show(0, steps);
    expect(reached(el)).toEqual([]);
    expect(el.querySelector(".jm-k-edges:not(.jm-pb-future)").getAttribute("d")).toBe("");
    expect(el.querySelector(".jm-k-edges.jm-pb-future").getAttribute("d")).not.toBe("");
    for (let p = 1; p <= steps; p++) pb.spec.show(p, p - 1);
    expect(snapshot(el)).toEqual(before);
    pb.spec.show(3, steps); // a jump back and to the end again
    pb.spec.show(steps, 3);
    expect(snapshot(el)).toEqual(before);
  });

  it("an intermediate step draws exactly the keys made so far; the reuse step turns its key red and flashes it", () => {
    viewSize(4000, 20000);
    const doc = fixture("keys-small");
    const { el, pb } = mountKeys(doc);
    pb.spec.show(3, 2); // PRNGKey(0) made, split, its row [1] consumed
    const root = doc.nodes.find((n) => n.label === "PRNGKey(0)");
    const kids = doc.nodes.filter((n) => n.parent === root.id);
    const rows = doc.nodes.filter((n) => n.parent === kids[0].id);
    expect(reached(el).sort()).toEqual([root, ...kids, ...rows].map((n) => `n${n.id}`).sort());
    expect(pb.spec.label(3)).toMatch(/consumes \[1\] of split 2$/);
    const consumed = rows.find((r) => r.label === "[1]");
    expect(itemClass(el, `n${consumed.id}`)).toContain("jm-k-s-consumed");
    expect(itemClass(el, `n${consumed.id}`)).toContain("jm-pb-current");

    const reused = doc.nodes.find((n) => n.label === "key(1)");
    let at = 0;
    for (let p = 1; p <= pb.spec.steps && !at; p++) if (pb.spec.label(p).includes("second use: reuse")) at = p;
    pb.spec.show(at - 1, at - 2);
    expect(itemClass(el, `n${reused.id}`)).toContain("jm-k-s-consumed");
    expect(itemClass(el, `n${reused.id}`)).not.toContain("jm-pb-flash");
    pb.spec.show(at, at - 1);
    expect(itemClass(el, `n${reused.id}`)).toEqual(expect.arrayContaining(["jm-k-s-reused", "jm-pb-flash", "jm-pb-current"]));
    pb.spec.show(at + 1, at);
    expect(itemClass(el, `n${reused.id}`)).toContain("jm-k-s-reused");
    expect(itemClass(el, `n${reused.id}`)).not.toContain("jm-pb-flash");
  });

  it("a big tree in overview: keys not made yet are one faded path, the step's are outlined", async () => {
    viewSize(1200, 600);
    const doc = manyRoots(100, 6); // 800 keys, 800 items: too many to draw in detail at the fit
    const { el, pb } = mountKeys(doc);
    // it opens at a legible scale on its first root; zoomed far out, it is an overview
    expect(el.querySelector(".jm-k-svg").classList.contains("jm-k-overview")).toBe(false);
    el.querySelector(".jm-k-svg").dispatchEvent(new WheelEvent("wheel", { deltaY: 800, bubbles: true, cancelable: true }));
    await new Promise((r) => setTimeout(r, 50)); // the zoom redraws on the next frame
    expect(el.querySelector(".jm-k-svg").classList.contains("jm-k-overview")).toBe(true);
    const before = snapshot(el);
    pb.spec.show(2, pb.spec.steps);
    expect(el.querySelector(".jm-k-over .jm-pb-future")).not.toBeNull();
    expect(el.querySelector(".jm-k-over .jm-k-ov-cur")).not.toBeNull();
    pb.spec.show(pb.spec.steps, 2);
    expect(snapshot(el)).toEqual(before);
  });

  it("a fold changes the drawn tree: a new story at its end; a selection keeps the story", () => {
    viewSize(4000, 20000);
    const doc = fixture("keys-small");
    const { el, pb } = mountKeys(doc);
    const steps = pb.spec.steps;
    click(el.querySelector('.jm-k-svg [data-key="n0"]'));
    expect(pb.sets).toBe(1);
    click(el.querySelector('.jm-k-svg [data-key="run0"] .jm-k-shape'));
    expect(pb.sets).toBe(2);
    expect(pb.spec.steps).toBeGreaterThan(steps);
  });

  it("presentation mode lays the tree out at its sizes, keeps the findings and marks the secondary controls as clutter", () => {
    viewSize(4000, 20000);
    const doc = { ...fixture("keys-small"), caption: ["key(1) was used twice."] };
    const { el } = mountKeys(doc, { present: true });
    const shape = el.querySelector(".jm-k-svg .jm-k-shape");
    expect(Number(shape.getAttribute("height"))).toBe(METRICS.present.H);
    expect(el.querySelector(".jm-search").closest(".jm-clutter")).not.toBeNull();
    // the findings stay on a projector: the reused key and what is wrong with it are the point
    expect(el.querySelector(".jm-k-findings").closest(".jm-clutter")).toBeNull();
    expect(el.querySelector(".jm-k-summary").classList.contains("jm-clutter")).toBe(true);
    const { el: plain } = mountKeys(fixture("keys-small"), { present: true });
    expect(plain.querySelector(".jm-k-findings").closest(".jm-clutter")).toBeNull();
    const { el: normal } = mountKeys(fixture("keys-small"));
    expect(Number(normal.querySelector(".jm-k-svg .jm-k-shape").getAttribute("height"))).toBe(METRICS.normal.H);
  });

  it("mounted with the controller: arrows on the root step playback, arrows on a tree item move in the tree", () => {
    viewSize(4000, 20000);
    const host = mountFull(fixture("keys-small"));
    const root = host.querySelector(".jm-root");
    const count = () => host.querySelector(".jm-pb-count").textContent;
    const total = count().split(" / ")[1];
    expect(count()).toBe(`${total} / ${total}`);
    keydown(root, "Home");
    keydown(root, "ArrowRight");
    expect(count()).toBe(`1 / ${total}`);
    const item = host.querySelector('.jm-k-svg [data-key="n0"]');
    const e = keydown(item, "ArrowRight"); // to its first child
    expect(e.defaultPrevented).toBe(true);
    keydown(item, "ArrowDown");
    const leaf = host.querySelector('.jm-k-svg [data-key="n2"]'); // a leaf: ← goes to its parent, folding nothing
    expect(keydown(leaf, "ArrowLeft").defaultPrevented).toBe(true);
    expect(count()).toBe(`1 / ${total}`);
    keydown(root, "End");
    expect(count()).toBe(`${total} / ${total}`);
  });

  it("one step of a 5,000-key document (timed, printed)", () => {
    viewSize(1400, 700);
    const doc = manyRoots(100, 48, 7); // 5,000 keys: 100 roots, each split into 48 rows
    const t0 = performance.now();
    const { el, pb } = mountKeys(doc);
    const mounted = performance.now() - t0;
    const n = pb.spec.steps;
    const t1 = performance.now();
    for (let p = 0; p <= n; p++) pb.spec.show(p, p - 1);
    const per = (performance.now() - t1) / (n + 1);
    console.log(`[keys playback] 5,000 keys: mount with story ${mounted.toFixed(0)} ms; ${n} steps, ${per.toFixed(2)} ms per step (jsdom)`);
    expect(el.querySelectorAll(".jm-k-svg [data-key].jm-pb-future").length).toBe(0);
    expect(el.querySelector(".jm-k-edges.jm-pb-future").getAttribute("d")).toBe("");
  });
});
