import { describe, it, expect } from "vitest";
import { allFixtures, varUses, synthFunction } from "./helpers.js";
import { deriveEdges, indexFunction, nodeAtLine, visibleRep, nKey } from "../../widgets/graph/model.js";

describe("edge derivation", () => {
  for (const [name, doc] of allFixtures()) {
    for (const fn of doc.functions) {
      it(`${name}/${fn.name}: one edge per var use`, () => {
        const edges = deriveEdges(fn);
        expect(edges.length).toBe(varUses(fn));
        // per group, too (the schema's "edge count of a group equals its var uses")
        for (const g of fn.groups) {
          const uses = fn.nodes.filter((n) => n.group === g.id).reduce((s, n) => s + n.ins.filter((o) => o.var != null).length, 0)
            + g.outvars.filter((o) => o.var != null).length;
          expect(edges.filter((e) => e.group === g.id).length).toBe(uses);
        }
      });
      it(`${name}/${fn.name}: edges start at the var's definition`, () => {
        const vars = new Map(fn.vars.map((v) => [v.id, v]));
        for (const e of deriveEdges(fn)) {
          const v = vars.get(e.var);
          expect(e.from).toBe(v.def === "in" || v.def === "const" ? "P:" + v.id : "N:" + v.def);
        }
      });
    }
  }

  it("skips uses of unknown vars instead of failing", () => {
    const fn = synthFunction({ flat: 2 });
    fn.nodes[1].ins.push({ var: "nope" });
    expect(deriveEdges(fn).length).toBe(varUses(fn) - 1);
  });
});

describe("function index", () => {
  it("counts eqns recursively and finds nodes by text line", () => {
    const [, doc] = allFixtures().find(([n]) => n === "control");
    const fn = doc.functions[0];
    const ix = indexFunction(fn);
    expect(ix.count.get(ix.root)).toBe(fn.n_eqns);
    expect(nodeAtLine(ix, 0)).toBe(null); // header line: nothing at or above
    const cond = fn.nodes.find((n) => n.prim === "cond");
    expect(nodeAtLine(ix, cond.line)).toBe(cond.id);
    expect(nodeAtLine(ix, cond.line + 1)).toBe(cond.id); // "branches=(" belongs to cond
  });

  it("builds nested scope boxes from scope paths", () => {
    const [, doc] = allFixtures().find(([n]) => n === "scoped");
    const ix = indexFunction(doc.functions[0]);
    const paths = [...ix.scopes.values()].map((s) => s.path.join("/")).sort();
    expect(paths).toEqual(["MLP", "MLP/Dense_0", "MLP/Dense_1", "MLP/relu", "MLP/softmax"]);
    const first = doc.functions[0].nodes[0];
    expect(visibleRep(ix, nKey(first.id), new Set())).toBe([...ix.scopes.values()].find((s) => s.path.join() === "MLP").key);
  });
});
