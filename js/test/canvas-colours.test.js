// @vitest-environment jsdom
// The graph's canvas renderer (used above 1,500 drawn elements) reads its colours only from a
// host that is in a document: rendered into a detached element it draws nothing, then draws
// with real colours once attached (never "", which a canvas ignores, painting black); a theme
// switch of the host makes it read them again.
import { describe, it, expect, beforeAll, afterAll, afterEach } from "vitest";
import { indexFunction } from "../../widgets/graph/model.js";
import { allCollapsibles } from "../../widgets/graph/expansion.js";
import { buildScene } from "../../widgets/graph/scene.js";
import { placeScene } from "../../widgets/graph/place.js";
import { createCanvasRenderer } from "../../widgets/graph/canvas.js";
import { layoutTree, createCache } from "../../widgets/ui/layout.js";
import { fixture } from "./helpers.js";
import { recorder } from "./timeline-helpers.js";

let real;
beforeAll(() => {
  real = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function () {
    const ctx = (this.__ctx ||= recorder());
    return new Proxy(ctx, { get: (t, k) => (k === "getImageData" ? () => ({ data: [10, 20, 30, 255] }) : t[k]) });
  };
});
afterAll(() => {
  HTMLCanvasElement.prototype.getContext = real;
});
afterEach(() => {
  document.body.textContent = "";
  document.body.removeAttribute("data-jp-theme-light");
});
const frame = () => new Promise((r) => setTimeout(r, 40));
const fills = (cv) => cv.__ctx.calls.filter((c) => c[0] === "set:fillStyle" || c[0] === "set:strokeStyle").map((c) => c[1]);

function scene() {
  const ix = indexFunction(fixture("scoped").functions[0]);
  const sc = buildScene(ix, allCollapsibles(ix), "t:");
  return { ix, geo: placeScene(sc, layoutTree(sc.root, createCache()).results) };
}

describe("graph canvas colours", () => {
  it("draws nothing while its host is detached, then draws with resolved colours", async () => {
    const host = document.createElement("div"), cv = document.createElement("canvas");
    host.appendChild(cv);
    const r = createCanvasRenderer(cv, host);
    const { ix, geo } = scene();
    r.setScene(geo, ix);
    await frame();
    expect(fills(cv)).toEqual([]);
    document.body.appendChild(host);
    for (let i = 0; i < 20 && !fills(cv).length; i++) await frame();
    const used = fills(cv);
    expect(used.length).toBeGreaterThan(3);
    expect(used.filter((f) => typeof f !== "string" || !f.trim() || f.includes("var("))).toEqual([]);
    r.dispose();
  });

  it("draws again when the host switches theme", async () => {
    const host = document.createElement("div"), cv = document.createElement("canvas");
    host.appendChild(cv);
    document.body.appendChild(host);
    const r = createCanvasRenderer(cv, host);
    const { ix, geo } = scene();
    r.setScene(geo, ix);
    for (let i = 0; i < 20 && !fills(cv).length; i++) await frame();
    cv.__ctx.calls.length = 0;
    document.body.setAttribute("data-jp-theme-light", "false");
    for (let i = 0; i < 20 && !fills(cv).length; i++) await frame();
    expect(fills(cv).length).toBeGreaterThan(3);
    r.dispose();
  });
});
