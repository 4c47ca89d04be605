// @vitest-environment jsdom
// Keys typed into a view's controls, and keys a view handles, never reach the page around it
// (widgets/host-keys.js): notebook hosts (VS Code's Jupyter extension, JupyterLab, Notebook,
// Colab) listen on document / window and turn Delete, a, b, dd, x, z… into cell commands.
// Every kind is mounted through the bundles' own mount() on its fixture.
import { describe, it, expect, beforeEach, afterEach } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, settled } from "./mounting.js";

const render = useMounting();
const TYPES = ["keydown", "keypress", "keyup"];
/** What a user types into a search box, and the notebook's command-mode keys ("dd" twice). */
const TYPED = ["Delete", "Backspace", "a", "b", "d", "d", "x", "z", "Enter", "Escape", "ArrowUp"];
/** Keys the views handle on their root (playback, selection, fit, zoom, help). */
const ROOT_KEYS = [" ", "ArrowLeft", "ArrowRight", "Home", "End", "Escape", "ArrowUp", "f", "+", "-", "?"];
const CONTROLS = "input, textarea, select, [contenteditable]";
const KINDS = [
  ["graph", "control", true], ["grad", "grad-mlp", true], ["timeline", "timeline-small", false],
  ["keys", "keys-small", false], ["sharding", "sharding-small", false],
];

/** Record every key event that reaches document or window (bubble phase, as hosts listen). */
function hostEars() {
  const heard = [];
  const hear = (where) => (e) => heard.push(`${where} ${e.type} ${JSON.stringify(e.key)}`);
  const ears = [[document, hear("document")], [window, hear("window")]];
  beforeEach(() => {
    heard.length = 0;
    for (const [target, fn] of ears) for (const t of TYPES) target.addEventListener(t, fn);
  });
  afterEach(() => {
    for (const [target, fn] of ears) for (const t of TYPES) target.removeEventListener(t, fn);
  });
  return heard;
}
const heard = hostEars();

/** Press `key` on `node` as a browser would: keydown, keypress, keyup. Returns the keydown. */
function press(node, key) {
  const down = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
  node.dispatchEvent(down);
  for (const t of ["keypress", "keyup"]) node.dispatchEvent(new KeyboardEvent(t, { key, bubbles: true, cancelable: true }));
  return down;
}

/** Mount a kind's fixture and wait until it is drawn (laid out, for kinds with graphs). */
async function mounted(name, graphs) {
  const el = render(fixture(name));
  if (graphs) await settled(el);
  else for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
  const root = el.querySelector(".jm-root");
  expect(root, name).toBeTruthy();
  expect(root.querySelector(".jm-unsupported"), name).toBeNull();
  return { el, root };
}

describe("keys typed into a view's controls stay in the view", () => {
  for (const [kind, name, graphs] of KINDS) {
    it(`${kind}: every input, select, textarea and contenteditable`, async () => {
      const { root } = await mounted(name, graphs);
      const controls = [...root.querySelectorAll(CONTROLS)];
      expect(controls.length, `${kind} has controls`).toBeGreaterThan(0);
      const described = [];
      for (const control of controls) {
        described.push(control.tagName.toLowerCase() + (control.type ? `[${control.type}]` : ""));
        for (const key of TYPED) {
          const down = press(control, key);
          // Text still reaches the box: the guard stops propagation, never the default action.
          if (key.length === 1 || key === "Delete" || key === "Backspace") expect(down.defaultPrevented, `${kind} ${key}`).toBe(false);
        }
      }
      expect(heard, `${kind}: ${described.join(", ")}`).toEqual([]);
    });
  }

  it("the graph's search box, the cost colouring and the playback controls are among them", async () => {
    const { root } = await mounted("control", true);
    for (const sel of [".jm-search", "select.jm-overlay", ".jm-pb-slider", ".jm-pb-speed"]) {
      const node = root.querySelector(sel);
      expect(node, sel).toBeTruthy();
      press(node, "Delete");
    }
    expect(heard).toEqual([]);
  });

  it("the key view's search box: typing, Enter and Escape stay in it", async () => {
    const { root } = await mounted("keys-small", false);
    const box = root.querySelector("input.jm-search");
    box.value = "key";
    box.dispatchEvent(new Event("input", { bubbles: true }));
    for (const key of ["Delete", "Backspace", "a", "Enter", "Escape", "Escape"]) press(box, key);
    expect(box.value).toBe(""); // the first Escape cleared it
    expect(heard).toEqual([]);
  });
});

describe("keys a view handles stop at the view; the others reach the notebook", () => {
  for (const [kind, name, graphs] of KINDS) {
    it(`${kind}: handled keys on the root (keydown, keypress, keyup) never reach document or window`, async () => {
      const { root } = await mounted(name, graphs);
      const handled = [];
      for (const key of ROOT_KEYS) {
        const before = heard.length;
        const down = press(root, key);
        if (down.defaultPrevented) {
          handled.push(key);
          expect(heard.slice(before), `${kind} ${JSON.stringify(key)}`).toEqual([]);
        }
      }
      expect(handled, kind).toContain("Escape"); // every view clears its selection on Escape
      if (kind !== "grad") expect(handled, kind).toEqual(expect.arrayContaining([" ", "ArrowLeft", "ArrowRight", "Home", "End"]));
      // A key no view takes, pressed while the view has focus, is the notebook's.
      press(root, "m");
      expect(heard.filter((h) => h.includes('"m"')).length, kind).toBe(6);
    });
  }
});
