// @vitest-environment jsdom
import { describe, it, expect, afterEach } from "vitest";
import { gzipSync } from "node:zlib";
import widget from "../../widgets/index.js";
import { createRequester, KERNEL_GONE, WAITING } from "../../widgets/ui/requests.js";
import { applyLevels, isDeferred } from "../../widgets/graph/deferred.js";
import { fixture } from "./helpers.js";
import { settled, click } from "./mounting.js";

/** A document whose first function's levels were left for the kernel, and the kernel's answer. */
function deferredDoc() {
  const doc = fixture("trig");
  const fn = doc.functions[0];
  fn.deferred = ["levels"];
  const answer = {
    levels: {
      stablehlo: { text: "module @jit_f {\n  func.func public @main() {\n    %0 = stablehlo.sine %arg0\n  }\n}" },
      hlo: { text: "HloModule jit_f\nENTRY main {\n  sine.1 = f32[3] sine(p0)\n}" },
    },
    shlo: fn.nodes.map((_, i) => (i === 0 ? [2] : [])),
    hlo: fn.nodes.map((_, i) => (i === 0 ? [2] : [])),
    hlo_comp: fn.nodes.map(() => "main"),
    cost: { program: { flops: 12 }, memory: null, note: null },
    notes: ["f: a level note"],
  };
  return { doc, answer };
}

/** A fake anywidget model whose kernel answers with `reply(content)` (or throws on send). */
function fakeModel(doc, reply) {
  const handlers = new Set();
  const sent = [];
  return {
    sent,
    get: (name) => (name === "doc" ? doc : undefined),
    on: (event, fn) => { if (event === "msg:custom") handlers.add(fn); },
    off: (event, fn) => handlers.delete(fn),
    send(content) {
      sent.push(content);
      const out = reply(content);
      if (out) setTimeout(() => { for (const fn of handlers) fn(...out); }, 5);
    },
  };
}

const gz = (data) => {
  const b = gzipSync(Buffer.from(JSON.stringify(data)));
  return new DataView(b.buffer, b.byteOffset, b.byteLength); // as anywidget hands buffers over
};
const okReply = (data) => (content) => [{ jm: "reply", id: content.id, ok: true }, [gz(data)]];
const tab = (el, name) => el.querySelector(`.jm-pane-tab[data-pane="${name}"]`);
const pane = (el, name) => el.querySelector(`.jm-text[data-pane="${name}"]`);
const until = async (cond, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
};

const cleanups = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()();
  document.body.textContent = "";
});
const renderWidget = (model) => {
  const el = document.createElement("div");
  document.body.appendChild(el);
  cleanups.push(widget.render({ model, el }));
  return el;
};

describe("deferred levels", () => {
  it("asks nothing on mount, loads the texts when a StableHLO tab is opened, and shows them", async () => {
    const { doc, answer } = deferredDoc();
    const model = fakeModel(doc, okReply(answer));
    const el = renderWidget(model);
    await settled(el);
    expect(model.sent).toEqual([]);
    expect(el.querySelector(".jm-deferred-status").textContent).toBe("Computed in the kernel when asked for.");
    click(tab(el, "stablehlo"));
    expect(model.sent).toEqual([{ jm: "request", id: 1, what: "levels", args: { function: doc.functions[0].id } }]);
    await until(() => /stablehlo\.sine/.test(pane(el, "stablehlo").textContent));
    click(tab(el, "hlo"));
    await until(() => /HloModule jit_f/.test(pane(el, "hlo").textContent));
    expect(model.sent.length).toBe(1); // one request per function
    expect(el.querySelector(".jm-deferred")).toBe(null); // the summary shows XLA's figures instead
    expect(el.querySelector(".jm-details").textContent).toContain("Whole program (from XLA's cost analysis)");
    expect(el.querySelector(".jm-details").textContent).toContain("f: a level note");
  });

  it("loads on the summary's Load button too", async () => {
    const { doc, answer } = deferredDoc();
    const model = fakeModel(doc, okReply(answer));
    const el = renderWidget(model);
    await settled(el);
    click(el.querySelector(".jm-load-levels"));
    await until(() => /flops/.test(el.querySelector(".jm-details").textContent));
    expect(model.sent.length).toBe(1);
  });

  it("says to reconnect the kernel when the send fails, and tries again on the next click", async () => {
    const { doc, answer } = deferredDoc();
    let dead = true;
    const model = fakeModel(doc, (content) => {
      if (dead) throw new Error("Kernel is dead");
      return okReply(answer)(content);
    });
    const el = renderWidget(model);
    await settled(el);
    click(tab(el, "stablehlo"));
    await until(() => pane(el, "stablehlo").textContent.includes("reconnect the kernel to load the HLO"));
    expect(pane(el, "stablehlo").textContent).toBe(KERNEL_GONE);
    dead = false;
    click(tab(el, "stablehlo"));
    await until(() => /stablehlo\.sine/.test(pane(el, "stablehlo").textContent));
  });

  it("shows the kernel's own error sentence", async () => {
    const { doc } = deferredDoc();
    const model = fakeModel(doc, (c) => [{ jm: "reply", id: c.id, ok: false, error: "the kernel could not compute it: <b>x</b>" }, []]);
    const el = renderWidget(model);
    await settled(el);
    click(tab(el, "hlo"));
    await until(() => pane(el, "hlo").textContent.includes("could not compute it"));
    expect(pane(el, "hlo").querySelector("b")).toBe(null); // text, never markup
  });
});

describe("createRequester", () => {
  it("reports a slow answer and gives up with the sentence after the time-out", async () => {
    const model = fakeModel({}, () => null); // never answers
    const r = createRequester(model, { slowMs: 20, timeoutMs: 60 });
    const waits = [];
    await expect(r.request("levels", { function: "f0" }, { onWaiting: (w) => waits.push(w) })).rejects.toThrow(KERNEL_GONE);
    expect(waits).toEqual([WAITING]);
    r.dispose();
  });

  it("rejects at once without a model (a static page)", async () => {
    await expect(createRequester(null).request("levels")).rejects.toThrow(KERNEL_GONE);
  });

  it("ignores replies to other requests and other messages", async () => {
    const { answer } = deferredDoc();
    const model = fakeModel({}, (c) => [{ jm: "reply", id: c.id + 100, ok: true }, []]);
    const r = createRequester(model, { slowMs: 1000, timeoutMs: 80 });
    await expect(r.request("levels", {})).rejects.toThrow(KERNEL_GONE);
    const fn = { nodes: [{}, {}], deferred: ["levels"] };
    applyLevels(fn, { ...answer, shlo: [[1], []], hlo: [[], [3]], hlo_comp: ["a", null] });
    expect(isDeferred(fn)).toBe(false);
    expect(fn.nodes).toEqual([{ shlo: [1], hlo: [], hlo_comp: "a" }, { shlo: [], hlo: [3], hlo_comp: null }]);
  });
});
