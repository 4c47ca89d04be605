/**
 * The wire form (jaxmagic/views/wire.py) decodes back to exactly the logical
 * document the Python model built: real fixtures written by tools/make_fixtures.py.
 */
import { describe, it, expect } from "vitest";
import { readFileSync } from "node:fs";
import { resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeDocument, decodeFunction } from "../../widgets/graph/decode.js";

const dir = resolve(dirname(fileURLToPath(import.meta.url)), "../../tests/fixtures");
const load = (name) => JSON.parse(readFileSync(resolve(dir, name + ".json"), "utf8"));

describe("wire form", () => {
  for (const name of ["control_flow", "small_transformer"]) {
    it(`round-trips ${name} to the logical document`, async () => {
      const logical = load("graph_" + name);
      const wire = load("wire_" + name);
      expect(wire.encoding).toBe("columnar");
      expect(JSON.stringify(wire).length).toBeLessThan(JSON.stringify(logical).length);
      expect(await decodeDocument(wire)).toEqual(logical);
    });
  }

  it("inflates gzip+base64 functions", async () => {
    const logical = load("graph_sin_cos");
    const wire = load("wire_sin_cos_packed");
    expect(wire.functions[0].packed).toBe("gzip+base64");
    expect(await decodeDocument(wire)).toEqual(logical);
  });

  it("passes logical documents through untouched", async () => {
    const logical = load("graph_sin_cos");
    expect(await decodeDocument(logical)).toBe(logical);
  });

  it("rebuilds node outputs, group inputs and sub-groups from the tables", () => {
    const fn = decodeFunction(load("wire_control_flow").functions[0]);
    for (const n of fn.nodes) for (const v of n.outs) expect(fn.vars.find((x) => x.id === v).def).toBe(n.id);
    for (const g of fn.groups) if (g.node) expect(fn.nodes.find((n) => n.id === g.node).subgroups).toContain(g.id);
  });
});

describe("packed timeline documents", () => {
  it("inflates packed column blocks and leaves the rest as it is", async () => {
    const { gzipSync } = await import("node:zlib");
    const calls = { lane: [0, 0], start: [1, 5], end: [3, 9], hit: [0, 1] };
    const data = gzipSync(Buffer.from(JSON.stringify(calls))).toString("base64");
    const doc = { schema: "jaxmagic", kind: "timeline", version: 1, encoding: "packed",
      calls: { packed: "gzip+base64", data, bytes: 10 }, lanes: [{ name: "f" }] };
    const out = await decodeDocument(doc);
    expect(out.calls).toEqual(calls);
    expect(out.lanes).toEqual(doc.lanes);
    expect(out.encoding).toBeUndefined();
  });
});

describe("function inputs", () => {
  it("carry their pytree paths through the wire form onto the input ports", async () => {
    const { indexFunction } = await import("../../widgets/graph/model.js");
    const { portFace } = await import("../../widgets/graph/metrics.js");
    const doc = await decodeDocument(load("wire_small_transformer"));
    const fn = doc.functions[0];
    const ix = indexFunction(fn);
    const root = fn.groups.find((g) => g.id === fn.root);
    const faces = root.invars.map((v) => portFace(ix, "P:" + v).text);
    expect(faces.some((t) => t.startsWith("params['w1'] · "))).toBe(true);
    for (const v of root.invars) {
      const path = ix.vars.get(v).path;
      expect(path).toBeTruthy();
      expect(portFace(ix, "P:" + v).text.startsWith(path)).toBe(true);
    }
  });
});

describe("node sources", () => {
  it("carry the library frame under the user's line only where the wire gives one", () => {
    const wire = load("wire_control_flow").functions[0];
    const withLib = JSON.parse(JSON.stringify(wire));
    withLib.strings.push("flax/nnx/nn/linear.py:422 (Linear.__call__)");
    withLib.sources[0] = [...withLib.sources[0].slice(0, 5), withLib.strings.length - 1];
    const plain = decodeFunction(wire), lib = decodeFunction(withLib);
    const at = lib.nodes.findIndex((n) => n.src && n.src.lib);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lib.nodes[at].src.lib).toBe("flax/nnx/nn/linear.py:422 (Linear.__call__)");
    expect(lib.nodes[at].src.file).toBe(plain.nodes[at].src.file);
    expect(plain.nodes.every((n) => !n.src || !("lib" in n.src))).toBe(true);
  });
});

describe("grad documents", () => {
  const front = resolve(dirname(fileURLToPath(import.meta.url)), "fixtures");
  const read = (name) => JSON.parse(readFileSync(resolve(front, name + ".json"), "utf8"));

  it("decode their columnar step programs back to the logical document", async () => {
    const logical = read("grad-multi");
    const { wire } = read("grad-multi-wire");
    expect(wire.encoding).toBe("packed");
    expect(wire.entries.some((e) => e.program && !Array.isArray(e.program.groups))).toBe(true);
    expect(JSON.stringify(wire).length).toBeLessThan(JSON.stringify(logical).length);
    expect(await decodeDocument(wire)).toEqual(logical);
  });

  it("leave a logical step program (an older saved view) as it is", async () => {
    const logical = read("grad-multi");
    expect(await decodeDocument({ ...logical, encoding: "packed" })).toEqual(logical);
  });
});
