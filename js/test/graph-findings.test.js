// @vitest-environment jsdom
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, settled, click } from "./mounting.js";
const render = useMounting();

/** The control fixture with the cell's findings, as model/findings.py `graph_findings` writes them. */
function withFindings() {
  const doc = fixture("control");
  const fn = doc.functions[0];
  const cond = fn.nodes.find((n) => n.prim === "cond");
  doc.findings = [
    { kind: "nan", severity: "bug", message: "f returned NaN <img src=x onerror=alert(1)>: the first NaN comes from `log`",
      source: { file: "<cell 3>", line: 4 }, function: "f", call: 0, fn: fn.id, node: cond.id },
    { kind: "dtype_truncated", severity: "warning", message: "float64 requested, float32 given", source: null,
      function: null, call: null, fn: null, node: null },
    { kind: "baked_constant", severity: "info", message: "a global frozen in", source: null, fn: null, node: null },
  ];
  return { doc, cond };
}

describe("graph view findings", () => {
  it("lists the cell's findings above the drawing, bugs marked, text escaped, infos as desk detail", async () => {
    const { doc } = withFindings();
    const el = render(doc);
    await settled(el);
    const list = el.querySelector(".jm-g-findings.jm-findings");
    expect(list).not.toBeNull();
    const buttons = [...list.querySelectorAll("button.jm-finding")];
    expect(buttons.map((b) => b.getAttribute("data-severity"))).toEqual(["bug", "warning", "info"]);
    expect(buttons[0].textContent).toContain("<img src=x onerror=alert(1)>");
    expect(list.querySelector("img")).toBeNull();
    expect(buttons[2].closest("li").classList.contains("jm-clutter")).toBe(true);
    // the list comes before the drawing, so a finding is read before the graph
    const main = el.querySelector(".jm-main");
    expect(list.compareDocumentPosition(main) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it("frames the finding's node first, and a click selects it", async () => {
    const { doc, cond } = withFindings();
    const el = render(doc);
    await settled(el);
    const key = el.querySelector("[data-jm-key-element]");
    expect(key && key.getAttribute("data-node-id")).toBe(cond.id);
    const nan = el.querySelector(".jm-g-finding[data-kind='nan']");
    expect(nan.getAttribute("aria-expanded")).toBe("false"); // one line until opened
    click(nan);
    await settled(el);
    expect(el.querySelector(".jm-eqn.jm-selected").getAttribute("data-node-id")).toBe(cond.id);
    expect(nan.getAttribute("aria-expanded")).toBe("true");
    expect(nan.classList.contains("jm-finding-open")).toBe(true);
    // a finding about no function changes nothing
    click(el.querySelector(".jm-g-finding[data-kind='dtype_truncated']"));
    await settled(el);
    expect(el.querySelector(".jm-eqn.jm-selected").getAttribute("data-node-id")).toBe(cond.id);
  });

  it("draws no list when the cell has no findings", async () => {
    const el = render(fixture("control"));
    await settled(el);
    expect(el.querySelector(".jm-g-findings")).toBeNull();
  });
});
