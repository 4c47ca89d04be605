// @vitest-environment jsdom
/**
 * The shared playback controller (widgets/ui/playback.js) and the stage bar every mounted view gets
 * (widgets/ui/stagebar.js via widgets/mount.js): caption, presentation toggle, controls, keyboard.
 */
import { describe, it, expect, vi, afterEach } from "vitest";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createPlayback, BASE_INTERVAL_MS } from "../../widgets/ui/playback.js";
import { captionOf } from "../../widgets/ui/stagebar.js";
import { useMounting } from "./mounting.js";

const here = dirname(fileURLToPath(import.meta.url));
const fixture = (name) => JSON.parse(readFileSync(resolve(here, "fixtures", name), "utf8"));

function setup(steps = 5) {
  const root = document.createElement("div");
  const bar = document.createElement("div");
  root.appendChild(bar);
  document.body.appendChild(root);
  const shown = [];
  const pb = createPlayback(root, bar);
  pb.set({ steps, show: (p, from) => shown.push([p, from]), label: (p) => (p ? `step ${p}` : "start") });
  return { root, bar, pb, shown };
}

const key = (target, k, extra = {}) => {
  const e = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...extra });
  target.dispatchEvent(e);
  return e;
};

afterEach(() => {
  vi.useRealTimers();
  document.body.textContent = "";
});

describe("playback controller", () => {
  it("opens at the complete state, with the controls shown", () => {
    const { bar, pb, shown } = setup(5);
    expect(pb.position()).toBe(5);
    expect(bar.hidden).toBe(false);
    expect(bar.querySelector(".jm-pb-count").textContent).toBe("5 / 5");
    expect(bar.querySelector(".jm-pb-fwd").disabled).toBe(true);
    expect(shown).toEqual([]); // the view is already complete: nothing redrawn
  });

  it("as opened, the step line invites to play; the first move shows the step's own line", () => {
    const { bar, pb } = setup(5);
    const line = bar.querySelector(".jm-pb-label");
    expect(line.textContent).toBe("5 steps · ▶ or space plays them from the start");
    expect(line.classList.contains("jm-pb-opening")).toBe(true);
    pb.go(4);
    expect(line.textContent).toBe("step 4");
    pb.go(5);
    expect(line.textContent).toBe("step 5"); // back at the end by a move: what that move did
    expect(line.classList.contains("jm-pb-opening")).toBe(false);
    pb.set({ steps: 1, show: () => {}, label: () => "x" });
    expect(line.textContent).toBe("1 step · ▶ or space plays them from the start");
  });

  it("play restarts from the start, advances on the clock and stops at the last step", () => {
    vi.useFakeTimers();
    const { root, bar, pb, shown } = setup(3);
    bar.querySelector(".jm-pb-play").click();
    expect(pb.position()).toBe(0);
    expect(pb.playing()).toBe(true);
    expect(root.classList.contains("jm-playing")).toBe(true);
    expect(bar.querySelector(".jm-pb-play").getAttribute("aria-label")).toBe("pause (space)");
    expect(bar.querySelector(".jm-pb-play svg path")).not.toBeNull(); // drawn icons, not font glyphs
    expect(bar.querySelector(".jm-pb-label").textContent).toBe("start");
    vi.advanceTimersByTime(BASE_INTERVAL_MS);
    expect(pb.position()).toBe(1);
    expect(bar.querySelector(".jm-pb-label").textContent).toBe("step 1");
    vi.advanceTimersByTime(BASE_INTERVAL_MS * 5);
    expect(pb.position()).toBe(3);
    expect(pb.playing()).toBe(false);
    expect(bar.querySelector(".jm-pb-play").getAttribute("aria-label")).toBe("play (space)");
    expect(shown.map(([p]) => p)).toEqual([0, 1, 2, 3]);
    expect(shown[2]).toEqual([2, 1]); // `from` lets a view animate single forward steps
    expect(root.classList.contains("jm-pb-active")).toBe(false);
  });

  it("speed changes the pace", () => {
    vi.useFakeTimers();
    const { bar, pb } = setup(10);
    const sel = bar.querySelector(".jm-pb-speed");
    sel.value = "4";
    sel.dispatchEvent(new Event("change"));
    pb.toggle();
    vi.advanceTimersByTime(BASE_INTERVAL_MS);
    expect(pb.position()).toBe(4);
  });

  it("steps, the slider and the ends", () => {
    const { bar, pb, shown } = setup(4);
    bar.querySelector(".jm-pb-first").click();
    expect(pb.position()).toBe(0);
    bar.querySelector(".jm-pb-fwd").click();
    bar.querySelector(".jm-pb-fwd").click();
    expect(pb.position()).toBe(2);
    bar.querySelector(".jm-pb-back").click();
    expect(pb.position()).toBe(1);
    const slider = bar.querySelector(".jm-pb-slider");
    slider.value = "3";
    slider.dispatchEvent(new Event("input"));
    expect(pb.position()).toBe(3);
    bar.querySelector(".jm-pb-last").click();
    expect(pb.position()).toBe(4);
    expect(shown.at(-1)).toEqual([4, 3]);
  });

  it("keyboard: space plays and pauses, arrows step, Home and End jump", () => {
    vi.useFakeTimers();
    const { root, pb } = setup(6);
    expect(key(root, "Home").defaultPrevented).toBe(true);
    expect(pb.position()).toBe(0);
    key(root, "ArrowRight");
    key(root, "ArrowRight");
    key(root, "ArrowLeft");
    expect(pb.position()).toBe(1);
    key(root, " ");
    expect(pb.playing()).toBe(true);
    key(root, " ");
    expect(pb.playing()).toBe(false);
    key(root, "End");
    expect(pb.position()).toBe(6);
  });

  it("keyboard: leaves keys typed into fields, taken by the view, or with modifiers", () => {
    const { root, pb } = setup(6);
    const input = document.createElement("input");
    root.appendChild(input);
    expect(key(input, "ArrowLeft").defaultPrevented).toBe(false);
    key(root, "ArrowLeft", { ctrlKey: true });
    const taken = new KeyboardEvent("keydown", { key: "ArrowLeft", bubbles: true, cancelable: true });
    taken.preventDefault();
    root.dispatchEvent(taken);
    const button = document.createElement("button");
    root.appendChild(button);
    key(button, " "); // a focused button's own activation
    expect(pb.position()).toBe(6);
    expect(pb.playing()).toBe(false);
  });

  it("a story of no steps hides the controls; dispose unbinds the keyboard", () => {
    const { root, bar, pb } = setup(3);
    pb.set({ steps: 0, show: () => {} });
    expect(bar.hidden).toBe(true);
    pb.set({ steps: 3, show: () => {} });
    pb.dispose();
    expect(key(root, "Home").defaultPrevented).toBe(false);
  });
});

describe("stage bar in every mounted view", () => {
  const render = useMounting();

  it("shows the caption as text under the header, before the view", () => {
    const doc = { ...fixture("timeline-small.json"), caption: ["f was compiled 2 times.", "<img src=x onerror=alert(1)>"] };
    const el = render(doc);
    const bar = el.querySelector(".jm-stagebar");
    expect(bar).not.toBeNull();
    const items = [...bar.querySelectorAll(".jm-caption-list li")].map((li) => li.textContent);
    expect(items).toEqual(doc.caption);
    expect(el.querySelector("img")).toBeNull(); // text, never markup
    const header = el.querySelector(".jm-header");
    expect(header.nextElementSibling).toBe(bar);
  });

  it("presenting, the caption shows its first sentence and a toggle for the rest", () => {
    const caption = ["first.", "second.", "third."];
    const el = render({ ...fixture("timeline-small.json"), caption, present: true });
    const items = () => [...el.querySelectorAll(".jm-caption-list li")].filter((li) => !li.hidden).map((li) => li.textContent);
    expect(items()).toEqual(["first."]);
    const more = el.querySelector(".jm-caption-more");
    expect(more.textContent).toBe("+2 more");
    expect(more.getAttribute("aria-expanded")).toBe("false");
    more.click();
    expect(items()).toEqual(caption);
    expect(more.getAttribute("aria-expanded")).toBe("true");
    more.click();
    expect(items()).toEqual(["first."]);
    el.querySelector(".jm-present-toggle").click(); // out of presentation: the whole caption, no toggle
    expect(items()).toEqual(caption);
    expect(el.querySelector(".jm-caption-more")).toBeNull();
  });

  it("drops caption entries that are not strings", () => {
    expect(captionOf({ caption: ["a", 3, null, { x: 1 }, " ", "b"] })).toEqual(["a", "b"]);
    expect(captionOf({ caption: "not a list" })).toEqual([]);
  });

  it("the presentation toggle redraws the view in presentation mode and back", () => {
    const el = render(fixture("timeline-small.json"));
    const root = el.querySelector(".jm-root");
    expect(root.classList.contains("jm-present")).toBe(false);
    el.querySelector(".jm-present-toggle").click();
    expect(root.classList.contains("jm-present")).toBe(true);
    const toggle = el.querySelector(".jm-present-toggle");
    expect(toggle.getAttribute("aria-pressed")).toBe("true");
    expect(el.querySelectorAll(".jm-stagebar").length).toBe(1);
    toggle.click();
    expect(root.classList.contains("jm-present")).toBe(false);
  });

  it("`present: true` in the document (the --present option) opens in presentation mode", () => {
    const el = render({ ...fixture("keys-small.json"), present: true });
    expect(el.querySelector(".jm-root").classList.contains("jm-present")).toBe(true);
  });
});
