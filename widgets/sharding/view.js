/**
 * The sharding view (`kind: "sharding"`): what `%%sharding` recorded, the cell's own story
 * first. Findings on top, a legend of the colours, then the meshes (by the names the user
 * bound) with the jitted calls beside or below them (the collectives between their inputs and
 * outputs: the caption's key element shows with the view's top), this cell's arrays as grids of
 * their blocks, and last the arrays earlier cells left (context) as one closed row that opens
 * on click or Enter. Owns the selection: a device (click a mesh cell or
 * a block) lights every block it holds and every collective group it is in; a collective
 * lights the devices that talk in the meshes, tagged with their group. Esc or the bar's button
 * clears. One hover card serves every grid. The first collective is the story's key element
 * (`data-jm-key-element`): the caption is about what XLA inserted. The selection is
 * selection.js's, playback playback.js's; this module builds the parts and wires them.
 */
import { h } from "../ui/dom.js";
import { docHeader } from "../ui/header.js";
import { readSharding } from "./model.js";
import { meshCard, looseDevices } from "./mesh.js";
import { arrayCard } from "./arrays.js";
import { callCard } from "./calls.js";
import { findingsList } from "./findings.js";
import { shardingLegend } from "./legend.js";
import { plural } from "./format.js";
import { shardingStory } from "./story.js";
import { shardingPlayback } from "./playback.js";
import { clearAll, pickBlock, pickCollective, pickDevice, pickFinding, showBar, showTip } from "./selection.js";

/** `14 arrays from earlier cells` (jaxmagic/views/static_sharding.py `earlier_text`: the same words). */
export const earlierText = (n) => `${plural(n, "array")} from earlier cells`;

/**
 * The closed row of the arrays earlier cells left: a button that says how many and opens the
 * cards below it (keyboard: it is a button, Enter and Space toggle). Returns `{el, open()}`.
 */
function earlierRow(ref, cards) {
  const words = h("span", null, earlierText(cards.length), ref);
  const caret = h("span", { class: "jm-sh-caret", "aria-hidden": "true" }, "▸", ref);
  const body = h("div", { class: "jm-sh-cards jm-sh-earlier-cards", hidden: true }, cards, ref);
  const btn = h("button", { type: "button", class: "jm-sh-earlier-toggle", "aria-expanded": "false" }, [
    caret, " ", words, h("span", { class: "jm-muted" }, " · placed before this cell ran, not read by its jitted calls", ref),
  ], ref);
  const set = (open) => {
    body.hidden = !open;
    btn.setAttribute("aria-expanded", String(open));
    caret.textContent = open ? "▾" : "▸";
  };
  btn.addEventListener("click", () => set(body.hidden));
  const el = h("section", { class: "jm-sh-sec jm-sh-earlier-row" }, [btn, body], ref);
  return { el, open: () => set(true) };
}

/** The story's key element: the first collective XLA inserted, else the first call, else null. */
function keyElement(calls) {
  const withColl = calls.find((c) => c.colls.length);
  return withColl ? withColl.colls[0] : calls.length ? calls[0].el : null;
}

/** The drawn cards (mesh, array, call) with their events sent to the view's state `S`. */
function shardingCards(root, S, present) {
  const m = S.m, tip = (lines, rect) => showTip(S, lines, rect);
  const meshList = [...m.meshes, looseDevices(m)].filter(Boolean);
  S.meshes = meshList.map((x) => ({ ...meshCard(root, m, x, { pickDevice: (d) => pickDevice(S, d), tip }, present), mesh: x }));
  S.arrays = m.arrays.map((a) => arrayCard(root, m, a, { pickBlock: (arr, i) => pickBlock(S, arr, i), tip }, present));
  S.calls = m.calls.map((c, ci) => callCard(root, m, c, { pickCollective: (k) => pickCollective(S, ci, k) }));
  S.cardOfArray = new Map(m.arrays.map((a, i) => [a.id, S.arrays[i].el]));
  return meshList;
}

/** The view's sections in reading order: findings, the selection bar, meshes and calls, legend, arrays, earlier arrays, tip. */
function shardingSections(root, S, findings, own, before) {
  const { m, meshes, calls } = S;
  const sec = (title, cls, body) => h("section", { class: "jm-sh-sec " + cls }, [h("h4", null, title, root), body], root);
  return [
    findings && sec(`Findings (${m.findings.length})`, "jm-sh-top", findings),
    S.bar,
    // The meshes and the jitted calls share a band (the calls beside the meshes when the width
    // allows): the first collective, what the caption is about, shows with the view's top.
    h("div", { class: "jm-sh-band" }, [
      meshes.length ? sec("Devices", "jm-sh-meshes", h("div", { class: "jm-sh-cards" }, meshes.map((x) => x.el), root)) : null,
      calls.length ? sec(`Jitted calls (${calls.length})`, "jm-sh-calls", calls.map((x) => x.el)) : null,
    ], root),
    shardingLegend(root, m), // the first screen is the story (meshes, first collective); its legend follows it
    own.length ? sec(before.length ? `Arrays from this cell (${own.length})` : `Arrays (${own.length})`, "jm-sh-own",
      h("div", { class: "jm-sh-cards" }, own, root)) : null,
    S.earlier && S.earlier.el,
    S.tip,
  ].filter(Boolean); // append() would write a null as the text "null"
}

/**
 * Mount a sharding view for `doc` into `root`. `options` (widgets/mount.js): `present` draws
 * at presentation sizes; `playback` receives the story (story.js, playback.js). Both are absent
 * when a test mounts the view directly.
 * @param {import("../types/documents").ShardingDocument} doc a sharding document (its packed blocks already inflated)
 * @returns {() => void} cleanup
 */
export function shardingView(root, doc, engine, options = {}) {
  const present = !!options.present;
  const m = readSharding(doc);
  const view = h("div", { class: "jm-sharding" }, docHeader(doc, root), root);
  root.appendChild(view);
  if (m.empty) {
    view.appendChild(h("div", { class: "jm-empty" },
      "Nothing to show: the cell left no jax.Array in its namespace and made no jitted call. Bind the arrays you want to see to names, or call a jitted function, in the cell.", root));
    return () => {};
  }
  /** @type {import("./selection.js").ShardingView} */
  const S = /** @type {any} */ ({ root, view, m, st: { device: null, coll: null, picked: null }, earlier: null });
  S.tip = h("div", { class: "jm-sh-tip", role: "tooltip", hidden: true }, null, root);
  const meshList = shardingCards(root, S, present);
  const own = S.arrays.filter((_, i) => !m.arrays[i].earlier).map((x) => x.el);
  const before = S.arrays.filter((_, i) => m.arrays[i].earlier).map((x) => x.el);
  S.earlier = before.length ? earlierRow(root, before) : null;
  const key = keyElement(S.calls);
  if (key) key.setAttribute("data-jm-key-element", "");
  S.bar = h("div", { class: "jm-sh-bar", "aria-live": "polite" }, null, root);
  const findings = findingsList(root, m.findings, (f) => pickFinding(S, f));
  view.append(...shardingSections(root, S, findings, own, before));

  root.setAttribute("tabindex", "0");
  const onKey = (e) => {
    if (e.key !== "Escape" || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    e.stopPropagation(); // keep Jupyter's command mode out of it
    S.tip.hidden = true;
    clearAll(S);
  };
  root.addEventListener("keydown", onKey);
  showBar(S, null, null);

  const playback = shardingPlayback({
    root, view, m, story: shardingStory(m, meshList), meshes: S.meshes, arrays: S.arrays, calls: S.calls,
    findings: findings ? [...findings.children] : [],
    clearSelection: () => {
      if (S.st.device != null || S.st.coll || S.st.picked) clearAll(S);
      S.tip.hidden = true;
    },
  });
  if (options.playback) options.playback.set(playback);
  return () => {
    playback.dispose();
    root.removeEventListener("keydown", onKey);
  };
}
