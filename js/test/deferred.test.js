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
    /** Hand a reply over now (a test that holds it back until it has looked at the view). */
    deliver(out) {
      for (const fn of handlers) fn(...out);
    },
  };
}

const gz = (data) => {
  const b = gzipSync(Buffer.from(JSON.stringify(data)));
  return new DataView(b.buffer, b.byteOffset, b.byteLength); // as anywidget hands buffers over
};
const okReply = (data) => (content) => [{ jm: "reply", id: content.id, ok: true }, [gz(data)]];
/** A model whose sends fail (a kernel gone) until `revive()`, then answer with `answer`. */
function deadKernel(doc, answer) {
  let dead = true;
  const model = fakeModel(doc, (content) => {
    if (dead) throw new Error("Kernel is dead");
    return okReply(answer)(content);
  });
  return { model, revive: () => { dead = false; } };
}
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
    const { model, revive } = deadKernel(doc, answer);
    const el = renderWidget(model);
    await settled(el);
    click(tab(el, "stablehlo"));
    await until(() => pane(el, "stablehlo").textContent.includes("reconnect the kernel to load the HLO"));
    expect(pane(el, "stablehlo").textContent).toBe(KERNEL_GONE);
    revive();
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

/** A document whose first function carries the head of its jaxpr text only, and the kernel's answer. */
function deferredTextDoc() {
  const doc = fixture("trig");
  const fn = doc.functions[0];
  const whole = fn.text, lines = fn.nodes.map((n) => n.line);
  const first = fn.nodes[0];
  fn.text = whole.split("\n").slice(0, first.line + 1).join("\n") + "\n    …";
  fn.nodes.forEach((n, i) => { n.line = i === 0 ? lines[0] : null; });
  fn.deferred = ["jaxpr"];
  return { doc, fn, whole, answer: { text: whole, lines } };
}
const noteOf = (el) => el.querySelector(".jm-pane-note-top");

describe("deferred jaxpr text", () => {
  it("shows the head at first paint, asks for the whole text at once, and shows it with every line linked", async () => {
    const { doc, fn, whole, answer } = deferredTextDoc();
    let replied = null;
    const model = fakeModel(doc, (content) => { replied = okReply(answer)(content); return null; });
    const el = renderWidget(model);
    await settled(el);
    await until(() => model.sent.length > 0); // asked once the first frame is painted
    expect(model.sent).toEqual([{ jm: "request", id: 1, what: "jaxpr", args: { function: fn.id } }]);
    expect(pane(el, "jaxpr").textContent).toContain(whole.split("\n")[0]);
    expect(noteOf(el).hidden).toBe(false);
    expect(noteOf(el).textContent).toBe("The first eqns: the whole text is loading from the kernel…");
    const last = whole.split("\n").filter((l) => l.includes(" = ")).pop().trim();
    expect(pane(el, "jaxpr").textContent).not.toContain(last);
    model.deliver(replied);
    await until(() => pane(el, "jaxpr").textContent.includes(last));
    expect(noteOf(el).hidden).toBe(true);
    expect(doc.functions[0].deferred).toEqual([]);
    expect(doc.functions[0].nodes.map((n) => n.line)).toEqual(answer.lines);
    expect(model.sent.length).toBe(1);
  });

  it("keeps the head and says to reconnect the kernel when the send fails; the tab asks again", async () => {
    const { doc, answer } = deferredTextDoc();
    const { model, revive } = deadKernel(doc, answer);
    const el = renderWidget(model);
    await settled(el);
    await until(() => noteOf(el).textContent.includes("reconnect the kernel"));
    expect(noteOf(el).textContent).toBe("No answer from the kernel: reconnect the kernel to load the whole jaxpr text.");
    expect(pane(el, "jaxpr").textContent).toContain(doc.functions[0].text.split("\n")[0]);
    revive();
    click(tab(el, "jaxpr"));
    await until(() => noteOf(el).hidden);
    expect(pane(el, "jaxpr").textContent).toContain(answer.text.split("\n").slice(-2)[0].trim());
  });

  it("does not ask for a text the document carries whole", async () => {
    const model = fakeModel(fixture("trig"), () => null);
    const el = renderWidget(model);
    await settled(el);
    await new Promise((r) => setTimeout(r, 100));
    expect(model.sent).toEqual([]);
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
