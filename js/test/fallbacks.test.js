// @vitest-environment jsdom
// Hosts without Web Workers or DecompressionStream (old or locked-down webviews, strict CSPs):
// packed documents still inflate (widgets/ui/gunzip.js falls back to the bundled decoder) and
// layouts run on the main thread at once (widgets/ui/layout-client.js decides up front; no
// multi-second wait for a worker that never comes).
import { describe, it, expect, vi, afterEach } from "vitest";
import { readFileSync } from "node:fs";
import { resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { decodeDocument } from "../../widgets/graph/decode.js";
import { acquireLayout, HANDSHAKE_MS } from "../../widgets/ui/layout-client.js";
import { indexFunction } from "../../widgets/graph/model.js";
import { defaultExpansion } from "../../widgets/graph/expansion.js";
import { buildScene } from "../../widgets/graph/scene.js";
import { fixture } from "./helpers.js";
import { useMounting, settled } from "./mounting.js";

const dir = resolve(dirname(fileURLToPath(import.meta.url)), "../../tests/fixtures");
const load = (name) => JSON.parse(readFileSync(resolve(dir, name + ".json"), "utf8"));
const render = useMounting();
const engines = [];
afterEach(() => {
  while (engines.length) engines.pop().release();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** DecompressionStream as a host may have it: missing, or a constructor that throws. */
const NO_STREAM = {
  missing: () => vi.stubGlobal("DecompressionStream", undefined),
  throwing: () => vi.stubGlobal("DecompressionStream", class { constructor() { throw new TypeError("unsupported format"); } }),
};

describe("packed documents without DecompressionStream", () => {
  for (const [how, stub] of Object.entries(NO_STREAM)) {
    it(`${how}: a packed graph document decodes to the logical one and renders`, async () => {
      stub();
      const wire = load("wire_sin_cos_packed");
      expect(wire.functions[0].packed).toBe("gzip+base64");
      expect(await decodeDocument(wire)).toEqual(load("graph_sin_cos"));
      const el = render(wire);
      await settled(el);
      expect(el.querySelector(".jm-unsupported")).toBeNull();
      expect(el.querySelectorAll(".jm-eqn").length).toBeGreaterThan(0);
    });

    it(`${how}: a packed timeline's columns inflate (UTF-8 text included)`, async () => {
      stub();
      const calls = { lane: [0, 0], start: [1, 5], end: [3, 9], name: ["f", "λ·√"] };
      const data = gzipSync(Buffer.from(JSON.stringify(calls))).toString("base64");
      const doc = { schema: "jaxmagic", kind: "timeline", version: 1, encoding: "packed",
        calls: { packed: "gzip+base64", data, bytes: 10 }, lanes: [{ name: "f" }] };
      expect((await decodeDocument(doc)).calls).toEqual(calls);
    });
  }

  it("a corrupt packed block is reported in the view, not thrown", async () => {
    vi.stubGlobal("DecompressionStream", undefined);
    const wire = load("wire_sin_cos_packed");
    wire.functions[0].data = btoa("not gzip at all");
    const el = render(wire);
    for (let i = 0; i < 20 && !el.textContent.includes("could not read"); i++) await new Promise((r) => setTimeout(r, 5));
    expect(el.textContent).toContain("jaxmagic could not read this document");
  });
});

/** A small layout request: the default expansion of a fixture's first function. */
function request() {
  const ix = indexFunction(fixture("control").functions[0]);
  return buildScene(ix, defaultExpansion(ix), "t:").root;
}

/** Resolve `promise` with fake timers advanced by `ms` at most; null if it is still pending. */
async function within(promise, ms) {
  let out = null;
  promise.then((v) => (out = v));
  await vi.advanceTimersByTimeAsync(ms);
  return out;
}

/** Worker stand-ins for what hosts do: blocked by CSP (throws, or fires `error`), or silent. */
class ThrowingWorker {
  constructor() {
    throw new DOMException("blocked by the page's content security policy", "SecurityError");
  }
}
class FailingWorker {
  constructor() {
    this.onerror = null;
    setTimeout(() => this.onerror && this.onerror({ preventDefault() {} }), 10); // as Chromium does, ~10 ms
  }
  postMessage() {}
  terminate() {}
}
class SilentWorker {
  postMessage() {}
  terminate() {}
}
const withBlobUrls = () => {
  vi.stubGlobal("URL", Object.assign(function (...a) { return new globalThis.URL(...a); }, { createObjectURL: () => "blob:x", revokeObjectURL: () => {} }));
};

describe("layouts without a worker run on the main thread at once", () => {
  const cases = {
    "no Worker": () => vi.stubGlobal("Worker", undefined),
    "Worker throws (SecurityError)": () => (withBlobUrls(), vi.stubGlobal("Worker", ThrowingWorker)),
  };
  for (const [how, stub] of Object.entries(cases)) {
    it(`${how}: not threaded, first layout within a tick`, async () => {
      vi.useFakeTimers();
      stub();
      const engine = acquireLayout();
      engines.push(engine);
      expect(engine.threaded).toBe(false);
      const out = await within(engine.run(request(), {}), 1);
      expect(out && Object.keys(out.results).length).toBeGreaterThan(0);
    });
  }

  it("a worker that fires `error` hands its queued layouts to the main thread as it fails", async () => {
    vi.useFakeTimers();
    withBlobUrls();
    vi.stubGlobal("Worker", FailingWorker);
    const engine = acquireLayout();
    engines.push(engine);
    expect(engine.threaded).toBe(true);
    const out = await within(engine.run(request(), {}), 20);
    expect(out && Object.keys(out.results).length).toBeGreaterThan(0);
    expect(engine.threaded).toBe(false);
  });

  it(`a silent worker is waited for ${HANDSHAKE_MS} ms at most`, async () => {
    vi.useFakeTimers();
    withBlobUrls();
    vi.stubGlobal("Worker", SilentWorker);
    const engine = acquireLayout();
    engines.push(engine);
    const pending = engine.run(request(), {});
    expect(await within(pending, HANDSHAKE_MS - 10)).toBeNull();
    const out = await within(pending, 20);
    expect(out && Object.keys(out.results).length).toBeGreaterThan(0);
    expect(HANDSHAKE_MS).toBeLessThanOrEqual(1000);
  });

  it("a mounted graph view draws without a worker, sooner than any handshake would end", async () => {
    vi.stubGlobal("Worker", undefined);
    const t0 = performance.now();
    const el = render(fixture("trig"));
    await settled(el);
    const waited = performance.now() - t0;
    expect(el.querySelectorAll(".jm-eqn").length).toBeGreaterThan(0);
    expect(waited).toBeLessThan(HANDSHAKE_MS); // no handshake: only jsdom's drawing and the layout itself
  });
});
