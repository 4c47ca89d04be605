import { describe, it, expect } from "vitest";
import { indexFunction } from "../../widgets/graph/model.js";
import { defaultExpansion, allCollapsibles, visibleEqnCount, reveal, DEFAULT_BUDGET } from "../../widgets/graph/expansion.js";
import { allFixtures, synthFunction } from "./helpers.js";

describe("default expansion", () => {
  it("opens everything in small functions", () => {
    for (const [, doc] of allFixtures()) {
      for (const fn of doc.functions) {
        const ix = indexFunction(fn);
        if (ix.count.get(ix.root) > DEFAULT_BUDGET) continue;
        expect(visibleEqnCount(ix, defaultExpansion(ix))).toBe(fn.n_eqns);
      }
    }
  });

  it("stays within the 250-eqn budget, breadth-first", () => {
    // 12 loops of 40 eqns: 12 + 40k <= 250 -> 5 loops open (212), the 6th would make 252.
    const ix = indexFunction(synthFunction({ outer: 12, inner: 40 }));
    const exp = defaultExpansion(ix);
    const shown = visibleEqnCount(ix, exp);
    expect(shown).toBeLessThanOrEqual(250);
    expect(exp.size).toBe(5);
    expect(shown).toBe(12 + 5 * 40);
    // the open ones are the first in BFS order
    expect([...exp]).toEqual(["N:n0", "N:n41", "N:n82", "N:n123", "N:n164"]);
  });

  it("cuts a too-big root into chunks and opens them breadth-first within the budget", () => {
    const ix = indexFunction(synthFunction({ flat: 300, outer: 2, inner: 3 }));
    expect(ix.items.get(ix.root).length).toBe(3); // 302 items -> 3 chunks of <= 101
    const exp = defaultExpansion(ix);
    expect([...exp]).toEqual(["K:0", "K:1"]); // the third would pass 250 eqns
    expect(visibleEqnCount(ix, exp)).toBe(202);
  });

  it("respects a custom budget and scopes count as boxes, not eqns", () => {
    const ix = indexFunction(synthFunction({ flat: 30, scope: "net" }));
    expect(visibleEqnCount(ix, new Set())).toBe(0); // one collapsed scope box
    expect(visibleEqnCount(ix, defaultExpansion(ix, 20))).toBe(20); // net + two of the 3 blocks (10 each)
  });

  it("expand all shows every eqn; reveal opens a node's ancestors", () => {
    const fn = synthFunction({ outer: 8, inner: 50, flat: 10, scope: "s" });
    const ix = indexFunction(fn);
    expect(visibleEqnCount(ix, allCollapsibles(ix))).toBe(fn.n_eqns);
    const exp = new Set();
    const deep = fn.nodes[fn.nodes.length - 1];
    expect(reveal(ix, exp, "N:" + deep.id)).toBe(true);
    const owner = ix.parent.get(ix.parent.get("N:" + deep.id)); // node -> its group -> owner eqn
    expect(owner).toBe("N:" + fn.groups.find((g) => g.id === deep.group).node);
    expect(exp.has(owner)).toBe(true);
    expect(visibleEqnCount(ix, exp)).toBe(10 * 0 + 8 + 50); // scope stays closed, one loop open
  });
});
