import { describe, it, expect } from "vitest";
import { search, matcher, step, countText } from "../../widgets/ui/search.js";
import { indexFunction } from "../../widgets/graph/model.js";
import { searchRecords } from "../../widgets/graph/find.js";
import { fixture } from "./helpers.js";

describe("search", () => {
  const recs = [
    { id: "1", text: ["dot_general", "MLP", "Dense_0"], exact: ["f"], locs: [{ file: "/home/u/model.py", line: 24 }] },
    { id: "2", text: ["add"], exact: ["h"], locs: [{ file: "/home/u/model.py", line: 124 }] },
    { id: "3", text: ["exp"], exact: ["p"], locs: [] },
  ];
  it("matches primitive and scope names as substrings, case-insensitively", () => {
    expect(search(recs, "DOT")).toEqual(["1"]);
    expect(search(recs, "dense")).toEqual(["1"]);
  });
  it("matches var names exactly", () => {
    expect(search(recs, "h")).toEqual(["2"]);
    expect(search(recs, "p")).toEqual(["3"]); // not every name containing p
  });
  it("matches file:line with the exact line", () => {
    expect(search(recs, "model.py:24")).toEqual(["1"]);
    expect(search(recs, ":124")).toEqual(["2"]);
    expect(search(recs, "model.py")).toEqual(["1", "2"]);
  });
  it("empty query matches nothing", () => {
    expect(search(recs, "  ")).toEqual([]);
    expect(matcher("")).toBe(null);
    expect(countText(0, "")).toBe("");
    expect(countText(1, "x")).toBe("1 match");
    expect(countText(3, "x")).toBe("3 matches");
  });
  it("steps through matches with wrap-around", () => {
    expect(step(-1, 3, 1)).toBe(0);
    expect(step(-1, 3, -1)).toBe(2);
    expect(step(2, 3, 1)).toBe(0);
    expect(step(0, 3, -1)).toBe(2);
    expect(step(0, 0, 1)).toBe(-1);
  });
  it("searches a real function: prim, var, scope, file:line, ports", () => {
    const ix = indexFunction(fixture("scoped").functions[0]);
    const recs2 = searchRecords(ix);
    expect(search(recs2, "broadcast_in_dim").length).toBe(4);
    expect(search(recs2, "softmax").length).toBe(7);
    expect(search(recs2, "model.py:27").length).toBe(3);
    expect(search(recs2, "s")).toEqual(["N:n13"]); // var s is defined by div
    expect(search(recs2, "b")).toEqual(["P:v1"]); // input port b
  });
});
