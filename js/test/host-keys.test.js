// @vitest-environment jsdom
// Keys typed into a view's controls, and keys a view handles, never reach the page around it
// (widgets/ui/host-keys.js): notebook hosts (VS Code's Jupyter extension, JupyterLab, Notebook,
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

/** Type every key of TYPED into every control of `root`; the controls' names, for messages. */
function typeIntoControls(kind, root) {
  const controls = [...root.querySelectorAll(CONTROLS)];
  expect(controls.length, `${kind} has controls`).toBeGreaterThan(0);
  for (const control of controls) {
    for (const key of TYPED) {
      const down = press(control, key);
      // Text still reaches the box: the guard stops propagation, never the default action.
      if (key.length === 1 || key === "Delete" || key === "Backspace") expect(down.defaultPrevented, `${kind} ${key}`).toBe(false);
    }
  }
  return controls.map((c) => c.tagName.toLowerCase() + (c.type ? `[${c.type}]` : "") + (c.className ? `.${c.className}` : ""));
}

/** Enter and space on every button, tab and tree item: they activate it, and must not reach the notebook. */
function activateButtons(kind, root) {
  const buttons = [...root.querySelectorAll("button, [role='button'], [role='tab'], [role='treeitem']")].slice(0, 40);
  expect(buttons.length, `${kind} has buttons`).toBeGreaterThan(0);
  for (const b of buttons) for (const key of ["Enter", " "]) if (b.isConnected) press(b, key);
  expect(heard, `${kind}: Enter / space on its buttons`).toEqual([]);
}

/** Press ROOT_KEYS on the view's root: those the view took (keydown defaultPrevented) must stay in it. */
function pressRootKeys(kind, root) {
  const handled = [];
  for (const key of ROOT_KEYS) {
    const before = heard.length;
    if (press(root, key).defaultPrevented) {
      handled.push(key);
      expect(heard.slice(before), `${kind} ${JSON.stringify(key)}`).toEqual([]);
    }
  }
  return handled;
}

describe("no key typed into a view's controls, or handled by a view, reaches the notebook", () => {
  for (const [kind, name, graphs] of KINDS) {
    it(`${kind}: every input, select, textarea and contenteditable; Enter / space on buttons; the keys its root handles`, async () => {
      const { root } = await mounted(name, graphs);
      const controls = typeIntoControls(kind, root);
      expect(heard, `${kind}: ${controls.join(", ")}`).toEqual([]);
      if (kind === "graph") {
        for (const cls of ["jm-search", "jm-overlay", "jm-pb-slider", "jm-pb-speed"]) expect(controls.join(" "), cls).toContain(cls);
      }
      activateButtons(kind, root);
      const handled = pressRootKeys(kind, root);
      expect(handled, kind).toContain("Escape"); // every view clears its selection on Escape
      if (kind !== "grad") expect(handled, kind).toEqual(expect.arrayContaining([" ", "ArrowLeft", "ArrowRight", "Home", "End"]));
      // A key no view takes, pressed while the view has focus, is the notebook's: keydown, keypress, keyup, twice.
      press(root, "m");
      expect(heard.filter((h) => h.includes('"m"')).length, kind).toBe(6);
    });
  }

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
