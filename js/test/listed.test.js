// @vitest-environment jsdom
import { describe, it, expect, afterEach } from "vitest";
import { gzipSync } from "node:zlib";
import widget, { mount } from "../../widgets/index.js";
import { LOADING, MAX_ROWS, STATIC, filterRows, sentence } from "../../widgets/graph/listed.js";
import { createRequester, KERNEL_GONE, WAITING } from "../../widgets/ui/requests.js";
import { fixture } from "./helpers.js";
import { settled, click } from "./mounting.js";

/**
 * A document drawing f0 and listing `n` more functions without their graph (as
 * jaxmagic/model/graph.py graph_document does past its budget), and the kernel's answer for
 * one of them: a Function in logical form, with its notes.
 */
function listedDoc(n = 3) {
  const doc = fixture("trig");
  const f0 = doc.functions[0];
  f0.wrappers = 3;
  doc.listed = Array.from({ length: n }, (_, i) => ({
    id: `f${i + 1}`, name: i === 1 ? "layer_<b>norm</b>" : `g${i + 1}`, signature: "f32[3]", source: f0.source,
    calls: i + 1, cache_hits: i, wrappers: i === 0 ? 2 : 1, n_eqns: f0.n_eqns,
  }));
  doc.folded = { wrappers: 3, folded_functions: 2, listed: n, unlisted: 0, functions: n + 1, listed_graphs: "on request" };
  const answer = (fid) => {
    const row = doc.listed.find((r) => r.id === fid);
    return { ...JSON.parse(JSON.stringify(f0)), ...row, notes: [`${row.name}: a note from the kernel`] };
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
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
};
const until = async (cond, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
};

const GRAPH_GONE = "No answer from the kernel: reconnect the kernel to load its graph.";
const GRAPH_WAITING = "Still waiting for the kernel: it may be busy running a cell, or gone (then reconnect the kernel to load its graph).";
expect(sentence(KERNEL_GONE)).toBe(GRAPH_GONE);
expect(sentence(WAITING)).toBe(GRAPH_WAITING);

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
const toggle = (el) => el.querySelector(".jm-listed-toggle");
const row = (el, fid) => el.querySelector(`.jm-listed-row[data-function-id="${fid}"]`);
const tabs = (el) => [...el.querySelectorAll(".jm-tab")].map((t) => t.getAttribute("data-function-id"));

describe("functions listed without their graph", () => {
  it("shows the count after the tabs and lists the rows, searchable", async () => {
    const { doc } = listedDoc(3);
    const model = fakeModel(doc, () => null);
    const el = renderWidget(model);
    await settled(el);
    expect(toggle(el).textContent).toMatch(/^3 more functions/);
    expect(toggle(el).previousElementSibling.classList.contains("jm-tabs")).toBe(true);
    expect(el.querySelector(".jm-listed").hidden).toBe(true);
    click(toggle(el));
    expect(el.querySelector(".jm-listed").hidden).toBe(false);
    expect(el.querySelectorAll(".jm-listed-row").length).toBe(3);
    expect(row(el, "f1").textContent).toContain("× 2 wrappers");
    expect(row(el, "f2").querySelector("b")).toBe(null); // names are text, never markup
    const search = el.querySelector(".jm-listed-search");
    search.value = "NORM";
    search.dispatchEvent(new Event("input"));
    expect([...el.querySelectorAll(".jm-listed-row")].map((r) => r.dataset.functionId)).toEqual(["f2"]);
    expect(el.querySelector(".jm-listed-count").textContent).toBe("1 of 3 functions");
    expect(model.sent).toEqual([]); // listing asks the kernel nothing
  });

  it("caps the rows drawn and says how many more match", async () => {
    const { doc } = listedDoc(MAX_ROWS + 40);
    const el = renderWidget(fakeModel(doc, () => null));
    await settled(el);
    click(toggle(el));
    expect(el.querySelectorAll(".jm-listed-row").length).toBe(MAX_ROWS);
    expect(el.querySelector(".jm-listed-more").textContent).toContain("40 more functions: type to narrow the list");
    expect(filterRows(["a", "b"], ["g1 f32[3]", "g2 i32[]"], "i32 g2")).toEqual(["b"]);
  });

  it("choosing a row asks the kernel once, then adds the function as a tab and shows it", async () => {
    const { doc, answer } = listedDoc(3);
    const model = fakeModel(doc, (c) => [{ jm: "reply", id: c.id, ok: true }, [gz(answer(c.args.function))]]);
    const el = renderWidget(model);
    await settled(el);
    expect(el.querySelector(".jm-tab").title).toContain("× 3 wrappers");
    expect(el.querySelector(".jm-details").textContent).toContain("jit wrappers× 3");
    click(toggle(el));
    click(row(el, "f3"));
    expect(row(el, "f3").textContent).toContain(LOADING);
    click(row(el, "f3")); // a second click while loading asks nothing more
    expect(model.sent).toEqual([{ jm: "request", id: 1, what: "function", args: { function: "f3" } }]);
    await until(() => tabs(el).length === 2);
    await settled(el);
    expect(tabs(el)).toEqual(["f0", "f3"]);
    expect(el.querySelector(".jm-tab-active").dataset.functionId).toBe("f3");
    expect(el.querySelector(".jm-listed").hidden).toBe(true);
    expect(toggle(el).textContent).toMatch(/^2 more functions/);
    expect(el.querySelector(".jm-details").textContent).toContain("g3: a note from the kernel");
    expect(el.querySelectorAll(".jm-canvas .jm-node.jm-eqn[data-node-id]").length).toBeGreaterThan(0); // drawn
    // Chosen again, it is its tab: no second request.
    el.querySelector('.jm-tab[data-function-id="f0"]').click();
    click(toggle(el));
    expect(row(el, "f3").textContent).toContain("loaded");
    click(row(el, "f3"));
    expect(el.querySelector(".jm-tab-active").dataset.functionId).toBe("f3");
    expect(model.sent.length).toBe(1);
  });

  it("says to reconnect the kernel when no kernel answers, and the kernel's own sentence", async () => {
    const { doc, answer } = listedDoc(3);
    let dead = true;
    const model = fakeModel(doc, (c) => {
      if (dead) throw new Error("Kernel is dead");
      if (c.args.function === "f2") return [{ jm: "reply", id: c.id, ok: false, error: "the kernel could not compute it: <i>x</i>" }, []];
      return [{ jm: "reply", id: c.id, ok: true }, [gz(answer(c.args.function))]];
    });
    const el = renderWidget(model);
    await settled(el);
    click(toggle(el));
    click(row(el, "f1"));
    await until(() => row(el, "f1").textContent.includes(GRAPH_GONE));
    expect(row(el, "f1").classList.contains("jm-listed-error")).toBe(true);
    expect(tabs(el)).toEqual(["f0"]);
    dead = false;
    click(row(el, "f2"));
    await until(() => row(el, "f2").textContent.includes("could not compute it"));
    expect(row(el, "f2").querySelector("i")).toBe(null);
    click(row(el, "f1")); // after a failure the next click asks again
    await until(() => tabs(el).length === 2);
    expect(tabs(el)).toEqual(["f0", "f1"]);
  });

  it("shows the waiting sentence while a slow kernel has not answered", async () => {
    const { doc } = listedDoc(2);
    // The widget's requester waits 8 s before it says so; a view given a quicker one says it sooner.
    const requester = createRequester(fakeModel(doc, () => null), { slowMs: 20, timeoutMs: 5000 });
    const view = document.createElement("div");
    document.body.appendChild(view);
    cleanups.push(mount(view, doc, { request: requester.request }), () => requester.dispose());
    await settled(view);
    click(toggle(view));
    click(row(view, "f1"));
    expect(row(view, "f1").textContent).toContain(LOADING);
    await until(() => row(view, "f1").textContent.includes(GRAPH_WAITING));
  });

  it("rejects an answer that is not the function asked for", async () => {
    const { doc, answer } = listedDoc(2);
    const model = fakeModel(doc, (c) => [{ jm: "reply", id: c.id, ok: true }, [gz(answer("f2"))]]);
    const el = renderWidget(model);
    await settled(el);
    click(toggle(el));
    click(row(el, "f1"));
    await until(() => row(el, "f1").textContent.includes("not f1"));
    expect(tabs(el)).toEqual(["f0"]);
  });

  it("in a static page (no kernel) each row says it is listed only, and nothing is asked", async () => {
    const { doc } = listedDoc(2);
    doc.folded.listed_graphs = "not in this page";
    const el = document.createElement("div");
    document.body.appendChild(el);
    cleanups.push(mount(el, doc));
    await settled(el);
    click(toggle(el));
    expect(row(el, "f1").disabled).toBe(true);
    expect(row(el, "f1").textContent).toContain(STATIC);
    expect(row(el, "f2").textContent).toContain("not in this page (listed only)");
    click(row(el, "f1"));
    expect(tabs(el)).toEqual(["f0"]);
  });

  it("draws no control when nothing is listed", async () => {
    const el = renderWidget(fakeModel(fixture("trig"), () => null));
    await settled(el);
    expect(toggle(el)).toBe(null);
  });
});
