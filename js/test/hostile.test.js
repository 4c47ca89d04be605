// @vitest-environment jsdom
import { describe, it, expect } from "vitest";
import { mount } from "../../widgets/index.js";
import { fixture } from "./helpers.js";

const EVIL = "<img src=x onerror=alert(1)>";

/** The control fixture with attacker-controlled text everywhere strings appear. */
function hostileDoc() {
  const doc = fixture("control");
  doc.title = EVIL;
  doc.notes = [EVIL];
  doc.error = { type: EVIL, message: EVIL, file: EVIL, line: 3, code: EVIL };
  const fn = doc.functions[0];
  fn.name = EVIL;
  fn.signature = EVIL;
  fn.text = EVIL + "\n" + fn.text;
  fn.source = { file: EVIL, line: 1, col: 0, func: EVIL, code: EVIL };
  for (const g of fn.groups) g.label = EVIL;
  for (const v of fn.vars) {
    v.name = EVIL;
    v.aval = EVIL;
  }
  for (const n of fn.nodes) {
    n.prim = EVIL;
    n.params = { [EVIL]: EVIL };
    n.scope = [EVIL];
    n.src = { file: EVIL, line: 2, col: 0, func: EVIL, code: EVIL };
    for (const op of n.ins) if (op.lit != null) op.lit = EVIL;
  }
  return doc;
}

async function settled(el) {
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 5));
    if (el.querySelector(".jm-canvas[data-layout]") && !el.querySelector(".jm-busy")) return;
  }
  throw new Error("layout did not finish");
}

describe("hostile strings", () => {
  it("end up as text, never as elements or attributes that run code", async () => {
    const el = document.createElement("div");
    document.body.appendChild(el);
    const stop = mount(el, hostileDoc());
    await settled(el);
    // open everything, select a node and a port so every panel renders
    [...el.querySelectorAll(".jm-btn")].find((b) => b.textContent === "Expand all").click();
    await settled(el);
    el.querySelector(".jm-eqn").dispatchEvent(new MouseEvent("click", { bubbles: true }));
    const details = el.querySelector(".jm-details").textContent;
    el.querySelector(".jm-search").value = EVIL;
    el.querySelector(".jm-search").dispatchEvent(new Event("input"));

    expect(el.querySelectorAll("img").length).toBe(0);
    for (const node of el.querySelectorAll("*")) {
      for (const attr of node.attributes) expect(attr.name.startsWith("on"), attr.name).toBe(false);
    }
    const text = el.textContent;
    expect(text).toContain(EVIL); // title, notes, error, text pane …
    expect(el.querySelector(".jm-title").textContent).toBe(EVIL);
    expect(el.querySelector(".jm-tab-name").textContent).toBe(EVIL);
    expect(el.querySelector(".jm-error-msg").textContent).toBe(`Cell raised ${EVIL}: ${EVIL}`);
    expect(el.querySelector(".jm-error-code").textContent).toBe(EVIL);
    expect(el.querySelector(".jm-line").textContent).toBe(EVIL);
    expect(details).toContain(EVIL); // prim, param key/value, code line
    expect(el.querySelector(".jm-details .jm-params th").textContent).toBe(EVIL);
    expect(el.querySelector(".jm-details .jm-d-code").textContent).toBe(EVIL);
    expect(el.querySelector(".jm-eqn .jm-prim").textContent).toBe(EVIL);
    stop();
    document.body.textContent = "";
  });
});
