import { describe, it, expect } from "vitest";
import * as ids from "../../widgets/graph/ids.js";

const EVERY = [
  ["group", ids.group("g0"), { kind: "group", id: "g0" }],
  ["node", ids.node("n12"), { kind: "node", id: "n12" }],
  ["port", ids.port("v3"), { kind: "port", id: "v3" }],
  ["output", ids.output("g0", 2), { kind: "output", group: "g0", index: 2 }],
  ["scope", ids.scope(4), { kind: "scope", n: 4 }],
  ["repeat", ids.repeat(1), { kind: "repeat", n: 1 }],
  ["unit", ids.unit(1, 7), { kind: "unit", repeat: 1, n: 7 }],
  ["chunk", ids.chunk(9), { kind: "chunk", n: 9 }],
  ["bundle", ids.bundle(0), { kind: "bundle", n: 0 }],
];
const PREDICATE = {
  group: ids.isGroup, node: ids.isNode, port: ids.isPort, output: ids.isOutput, scope: ids.isScope,
  repeat: ids.isRepeat, unit: ids.isUnit, chunk: ids.isChunk, bundle: ids.isBundle,
};

describe("element ids", () => {
  it("keep the strings the view has always used", () => {
    expect(EVERY.map(([, id]) => id)).toEqual(["G:g0", "N:n12", "P:v3", "O:g0:2", "S:4", "R:1", "U:1:7", "K:9", "Q:0"]);
  });

  it("parse back to what built them, for every kind", () => {
    for (const [kind, id, parsed] of EVERY) {
      expect(ids.kindOf(id)).toBe(kind);
      expect(ids.PREFIX[kind]).toBe(ids.letter(id) + ":");
      expect(ids.parse(id)).toEqual(parsed);
    }
  });

  it("answer exactly one kind predicate each", () => {
    for (const [kind, id] of EVERY) {
      const yes = Object.entries(PREDICATE).filter(([, is]) => is(id)).map(([k]) => k);
      expect(yes).toEqual([kind]);
      expect(ids.isMadeBox(id)).toBe(["scope", "repeat", "unit", "chunk", "bundle"].includes(kind));
      expect(ids.isAnyPort(id)).toBe(kind === "port" || kind === "output");
      expect(ids.isPortColumn(id)).toBe(kind === "port" || kind === "output" || kind === "bundle");
    }
  });

  it("parse document ids containing ':' (and prefix look-alikes) whole", () => {
    const hostile = "N:G:a:b:";
    expect(ids.parse(ids.node(hostile))).toEqual({ kind: "node", id: hostile });
    expect(ids.parse(ids.group(hostile))).toEqual({ kind: "group", id: hostile });
    expect(ids.parse(ids.port(hostile))).toEqual({ kind: "port", id: hostile });
    expect(ids.parse(ids.output(hostile, 11))).toEqual({ kind: "output", group: hostile, index: 11 });
    expect(ids.splitOutput(ids.output("x:1", 0))).toEqual(["x:1", 0]);
    expect(ids.body(ids.node(""))).toBe("");
  });

  it("say no to strings and values that are no element ids", () => {
    for (const x of ["", "N", "n:1", "X:1", "N1", ":N", null, undefined, 42, {}]) {
      expect(ids.kindOf(x)).toBe(null);
      expect(ids.parse(x)).toBe(null);
      for (const is of Object.values(PREDICATE)) expect(is(x)).toBe(false);
      expect(ids.isMadeBox(x)).toBe(false);
    }
  });
});
