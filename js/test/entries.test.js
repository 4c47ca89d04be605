// @vitest-environment jsdom
/**
 * The per-kind bundle entries (widgets/entries/) and the all-kinds entry share one
 * mount (widgets/mount.js): each draws its own kinds, says so for the others, and
 * injects exactly its kinds' style sheets.
 */
import { describe, it, expect, afterEach } from "vitest";
import { readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as all from "../../widgets/index.js";
import * as graphEntry from "../../widgets/entries/graph.js";
import * as timelineEntry from "../../widgets/entries/timeline.js";
import * as gradEntry from "../../widgets/entries/grad.js";
import * as shardingEntry from "../../widgets/entries/sharding.js";
import * as keysEntry from "../../widgets/entries/keys.js";
import * as sheets from "../../widgets/ui/styles.js";
import { fixture } from "./helpers.js";

const DOCS = { graph: () => fixture("trig"), timeline: () => fixture("timeline-small"), grad: () => fixture("grad-mlp"),
  sharding: () => fixture("sharding-small"), keys: () => fixture("keys-handmade") };
const VIEW_CLASS = { graph: "jm-graph", timeline: "jm-timeline", grad: "jm-grad", sharding: "jm-sharding", keys: "jm-keys" };
const ENTRIES = [
  ["graph", graphEntry, ["graph"], ["theme", "graph", "scale", "listed"]],
  ["timeline", timelineEntry, ["timeline"], ["theme", "timeline"]],
  ["grad", gradEntry, ["grad"], ["theme", "graph", "scale", "grad"]],
  ["sharding", shardingEntry, ["sharding"], ["theme", "sharding"]],
  ["keys", keysEntry, ["keys"], ["theme", "keys"]],
  ["all kinds", all, ["graph", "timeline", "grad", "sharding", "keys"], ["theme", "graph", "scale", "listed", "timeline", "grad", "sharding", "keys"]],
];

const cleanups = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()();
  document.body.textContent = "";
});
function mountWith(entry, doc) {
  const el = document.createElement("div");
  document.body.appendChild(el);
  cleanups.push(entry.mount(el, doc));
  return el;
}

describe("bundle entries", () => {
  it("cover every kind of widgets/entries/ and export the same interface", () => {
    const files = readdirSync(resolve(dirname(fileURLToPath(import.meta.url)), "../../widgets/entries")).filter((f) => f.endsWith(".js"));
    expect(files.sort()).toEqual(["grad.js", "graph.js", "keys.js", "sharding.js", "timeline.js"]);
    for (const [name, text] of Object.entries(sheets)) expect(text, `${name} sheet is real CSS text`).toContain(".jm-root");
    for (const [name, entry] of ENTRIES) {
      expect(typeof entry.mount, name).toBe("function");
      expect(typeof entry.mountAll, name).toBe("function");
      expect(typeof entry.default.render, name).toBe("function");
    }
  });

  for (const [name, entry, kinds, css] of ENTRIES) {
    it(`${name}: draws ${kinds.join(", ")} and only those, with exactly its style sheets`, () => {
      for (const kind of Object.keys(DOCS)) {
        const el = mountWith(entry, DOCS[kind]());
        const drawn = el.querySelector(`.${VIEW_CLASS[kind]}`);
        const refused = el.querySelector(".jm-unsupported");
        if (kinds.includes(kind)) {
          expect(drawn, `${name} draws ${kind}`).toBeTruthy();
          expect(refused).toBeNull();
        } else {
          expect(refused.textContent, `${name} refuses ${kind}`).toContain(`cannot show kind "${kind}"`);
        }
        expect(el.querySelector(".jm-root > style").textContent).toBe(css.map((s) => sheets[s]).join("\n"));
      }
    });
  }
});
