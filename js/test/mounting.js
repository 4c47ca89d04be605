/**
 * Mounting views in jsdom for tests: one place for the render / clean-up / wait-for-
 * layout helpers the view tests share.
 */
import { afterEach } from "vitest";
import { mount } from "../../widgets/index.js";

/**
 * `render(doc)` mounts one view straight from its module (`view(root, doc)` returns a cleanup)
 * into a fresh `.jm-root`, as the bundle entries do; everything is unmounted after each test.
 */
export function useView(view) {
  const cleanups = [];
  afterEach(() => {
    while (cleanups.length) cleanups.pop()();
    document.body.textContent = "";
  });
  return function render(doc) {
    const root = document.createElement("div");
    root.className = "jm-root";
    document.body.appendChild(root);
    cleanups.push(view(root, doc));
    return root;
  };
}

/** `render(doc)` mounts into a fresh element; everything is unmounted after each test. */
export function useMounting() {
  const cleanups = [];
  afterEach(() => {
    while (cleanups.length) cleanups.pop()();
    document.body.textContent = "";
  });
  return function render(doc) {
    const el = document.createElement("div");
    document.body.appendChild(el);
    cleanups.push(mount(el, doc));
    return el;
  };
}

/**
 * Resolve once no layout is pending and the canvas carries `attr` (`data-layout` once
 * laid out; `data-draws` once the canvas renderer has drawn).
 */
export async function settled(el, attr = "data-layout", tries = 200) {
  for (let i = 0; i < tries; i++) {
    await new Promise((r) => setTimeout(r, 5));
    const st = el.querySelector(".jm-status");
    if ((!st || !st.classList.contains("jm-busy")) && el.querySelector(`.jm-canvas[${attr}]`)) return;
  }
  throw new Error("layout did not finish");
}

export const click = (node) => node.dispatchEvent(new MouseEvent("click", { bubbles: true }));
