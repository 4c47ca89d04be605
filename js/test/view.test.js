// @vitest-environment jsdom
import { describe, it, expect, afterEach } from "vitest";
import widget, { mount, mountAll } from "../../widgets/index.js";
import { fixture, allFixtures, synthFunction, docOf } from "./helpers.js";
import { indexFunction } from "../../widgets/graph/model.js";
import { defaultExpansion, visibleEqnCount } from "../../widgets/graph/expansion.js";
import { useMounting, settled as settledOn, click } from "./mounting.js";
const render = useMounting();
const settled = (el) => settledOn(el);

const type = (input, value, key) => {
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
  if (key) input.dispatchEvent(new KeyboardEvent("keydown", { key: key.replace("Shift+", ""), shiftKey: key.startsWith("Shift+"), bubbles: true }));
};
const button = (el, label) => [...el.querySelectorAll(".jm-btn")].find((b) => b.textContent === label);

describe("graph view", () => {
  it("draws one .jm-eqn per visible eqn, and all of them after Expand all", async () => {
    for (const [name, doc] of allFixtures()) {
      const el = render(doc);
      await settled(el);
      const fn = doc.functions[0];
      const ix = indexFunction(fn);
      expect(el.querySelectorAll(".jm-eqn").length, name).toBe(visibleEqnCount(ix, defaultExpansion(ix)));
      click(button(el, "Expand all"));
      await settled(el);
      expect(el.querySelectorAll(".jm-eqn").length, name).toBe(fn.n_eqns);
      expect(new Set([...el.querySelectorAll(".jm-eqn")].map((e) => e.getAttribute("data-node-id"))).size).toBe(fn.n_eqns);
    }
  });

  it("collapses, shows groups, scopes and ports with their classes", async () => {
    const el = render(fixture("control"));
    await settled(el);
    expect(el.querySelectorAll(".jm-group[data-group-id]").length).toBe(5); // root + 2 branches + scan body + jit body
    expect(el.querySelectorAll(".jm-tab").length).toBe(1);
    click(button(el, "Collapse all"));
    await settled(el);
    expect(el.querySelectorAll(".jm-eqn").length).toBe(7);
    expect(el.querySelectorAll(".jm-eqn.jm-collapsed").length).toBe(3);
    expect(el.querySelectorAll(".jm-port").length).toBe(2);
    // click the ▸ marker of the cond: it opens again
    click(el.querySelector('.jm-eqn[data-node-id="n3"] .jm-toggle'));
    await settled(el);
    expect(el.querySelectorAll(".jm-eqn").length).toBe(9);
    expect(el.querySelectorAll(".jm-chip").length).toBeGreaterThan(0);

    const scoped = render(fixture("scoped"));
    await settled(scoped);
    expect(scoped.querySelectorAll(".jm-scope[data-scope-id]").length).toBe(5);
    expect(scoped.querySelectorAll(".jm-port-const").length).toBe(1);
    click(button(scoped, "Collapse all"));
    await settled(scoped);
    expect(scoped.querySelectorAll(".jm-scope.jm-collapsed").length).toBe(1);
    expect(scoped.querySelectorAll(".jm-eqn").length).toBe(0);
  });

  it("search counts matches, Enter selects and reveals, text and graph select each other", async () => {
    const doc = fixture("control");
    const el = render(doc);
    await settled(el);
    click(button(el, "Collapse all"));
    await settled(el);
    const input = el.querySelector(".jm-search");
    type(input, "add");
    expect(el.querySelector(".jm-match-count").textContent).toBe("3 matches");
    type(input, "add", "Enter");
    await settled(el);
    // first match (add in the scan body) was hidden: its loop opened and it is selected
    const sel = el.querySelector(".jm-eqn.jm-selected");
    expect(sel.getAttribute("data-node-id")).toBe("n8");
    expect(el.querySelector(".jm-details").textContent).toContain("add");
    expect(el.querySelector(".jm-line-selected").getAttribute("data-line")).toBe("14");
    type(input, "add", "Shift+Enter");
    await settled(el);
    expect(el.querySelector(".jm-eqn.jm-selected").getAttribute("data-node-id")).toBe("n13");

    // clicking a text line inside the cond's params ("branches=(") selects the cond
    const cond = doc.functions[0].nodes.find((n) => n.prim === "cond");
    click(el.querySelector(`.jm-line[data-line="${cond.line + 1}"]`));
    await settled(el);
    expect(el.querySelector(".jm-eqn.jm-selected").getAttribute("data-node-id")).toBe(cond.id);
    expect(el.querySelector(".jm-line-selected").getAttribute("data-line")).toBe(String(cond.line));

    // clicking a node shows its details and highlights its line
    click(el.querySelector('.jm-eqn[data-node-id="n0"] .jm-prim'));
    const details = el.querySelector(".jm-details");
    expect(details.textContent).toContain("reduce_sum");
    expect(details.querySelector(".jm-params").textContent).toContain("axes");
    expect(el.querySelector(".jm-line-selected").getAttribute("data-line")).toBe("1");
    // ports show var name and aval
    click(el.querySelector(".jm-port"));
    expect(details.textContent).toContain("f32[8]");
  });

  it("switches functions with tabs", async () => {
    const a = fixture("trig").functions[0], b = { ...fixture("control").functions[0], id: "f1" };
    const el = render({ ...fixture("trig"), functions: [a, b] });
    await settled(el);
    const tabs = el.querySelectorAll(".jm-tab");
    expect(tabs.length).toBe(2);
    expect(tabs[0].textContent).toContain("2 calls");
    expect(tabs[0].textContent).toContain("1 cache hit");
    click(tabs[1]);
    await settled(el);
    expect(el.querySelectorAll(".jm-eqn").length).toBe(14);
    expect(el.querySelector(".jm-text").textContent).toContain("scan[");
  });

  it("shows header, notes and the error banner", async () => {
    const el = render(fixture("scoped"));
    expect(el.querySelector(".jm-title").textContent).toBe("%%jaxpr — 1 function, 14 eqns");
    expect(el.querySelector(".jm-error").textContent).toContain("Cell raised ValueError: shapes (2,3) and (4,) are not aligned");
    expect(el.querySelector(".jm-error").textContent).toContain("loss = (y - labels).sum()");
    expect(el.querySelector(".jm-notes").textContent).toContain("B1 was captured");
    expect(el.querySelectorAll(".jm-root > style").length).toBe(1);
  });

  it("draws a big flat function as chunk boxes within the budget; a chunk opens on click", async () => {
    const fn = synthFunction({ flat: 320, outer: 3, inner: 5 });
    const el = render(docOf(fn));
    await settled(el);
    const ix = indexFunction(fn);
    expect(el.querySelectorAll('.jm-cbox[data-box-kind="K"]').length).toBe(3);
    expect(el.querySelectorAll(".jm-eqn").length).toBe(visibleEqnCount(ix, defaultExpansion(ix)));
    expect(el.querySelectorAll(".jm-eqn").length).toBeLessThanOrEqual(250);
    const closed = el.querySelector(".jm-cbox.jm-collapsed");
    expect(closed.textContent).toMatch(/eqns \d+–\d+: /);
    click(closed);
    await settled(el);
    expect(el.querySelectorAll(".jm-eqn").length).toBe(323);
    expect(el.querySelector(".jm-canvas").getAttribute("data-renderer")).toBe("svg");
  });
});

describe("entry points", () => {
  it("says clearly when it cannot show a kind", () => {
    const el = render({ schema: "jaxmagic", version: 1, kind: "nonesuch", title: "t", notes: [], error: null });
    expect(el.querySelector(".jm-unsupported").textContent).toContain('cannot show kind "nonesuch"');
    const el2 = render({ hello: 1 });
    expect(el2.querySelector(".jm-unsupported")).toBeTruthy();
  });

  it("mountAll mounts each embedded document after its script tag", async () => {
    const script = document.createElement("script");
    script.type = "application/json";
    script.setAttribute("data-jaxmagic-doc", "");
    script.textContent = JSON.stringify(fixture("trig"));
    document.body.appendChild(script);
    mountAll();
    mountAll(); // idempotent
    const view = script.nextElementSibling;
    expect(view.querySelector(".jm-root")).toBeTruthy();
    expect(document.querySelectorAll(".jm-root").length).toBe(1);
    await settled(view);
    expect(view.querySelectorAll(".jm-eqn").length).toBe(5);
  });

  it("anywidget render follows change:doc and cleans up", async () => {
    const handlers = {};
    let doc = fixture("trig");
    const model = {
      get: () => doc,
      on: (ev, fn) => (handlers[ev] = fn),
      off: (ev, fn) => handlers[ev] === fn && delete handlers[ev],
    };
    const el = document.createElement("div");
    document.body.appendChild(el);
    const stop = widget.render({ model, el });
    await settled(el);
    expect(el.querySelectorAll(".jm-eqn").length).toBe(5);
    doc = fixture("control");
    handlers["change:doc"]();
    await settled(el);
    expect(el.querySelectorAll(".jm-eqn").length).toBe(14);
    stop();
    expect(handlers["change:doc"]).toBeUndefined();
    expect(el.childNodes.length).toBe(0);
  });
});
