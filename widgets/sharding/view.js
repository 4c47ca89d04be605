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
 * (`data-jm-key-element`): the caption is about what XLA inserted.
 */
import { h, clear } from "../ui/dom.js";
import { docHeader } from "../ui/header.js";
import { readSharding, collectiveTags, deviceTitle, heldText, heldArrays } from "./model.js";
import { meshCard, looseDevices } from "./mesh.js";
import { arrayCard } from "./arrays.js";
import { callCard, operandsText } from "./calls.js";
import { findingsList } from "./findings.js";
import { shardingLegend } from "./legend.js";
import { bytesText, plural } from "./format.js";
import { shardingStory } from "./story.js";
import { createStage } from "./stage.js";

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

/** Arrays the selection bar lists for a device, at most. */
const BAR_ARRAYS = 8;
// One line at a notebook's 848 px: the hint must not push the story's first collective off the first screen.
const HINT = "Click a device or block to light what it holds (again: a replicated block's next holder), a collective to see who talks; Esc clears.";

/**
 * Mount a sharding view for `doc` into `root`. `options` (widgets/mount.js): `present` draws
 * at presentation sizes; `playback` receives the story (story.js, stage.js). Both are absent
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
  const st = { device: null, coll: null, picked: null };
  const tip = h("div", { class: "jm-sh-tip", role: "tooltip", hidden: true }, null, root);
  const showTip = (lines, rect) => {
    if (!lines || !rect) {
      tip.hidden = true;
      return;
    }
    tip.textContent = lines.join("\n");
    tip.hidden = false;
    const vr = view.getBoundingClientRect();
    tip.style.left = `${Math.max(0, Math.min(rect.left - vr.left, vr.width - (tip.offsetWidth || 320)))}px`;
    tip.style.top = `${rect.bottom - vr.top + 4}px`;
  };

  // ---- the parts ----------------------------------------------------------------------
  const pickDevice = (d) => select({ device: st.device === d ? null : d });
  const pickBlock = (arr, i) => {
    // Again on the same block: its next holder; after the last, nothing.
    const ds = arr.blocks[i].devices || [];
    const at = ds.indexOf(st.device);
    select({ device: at < 0 ? ds[0] ?? null : ds[at + 1] ?? null });
  };
  const meshList = [...m.meshes, looseDevices(m)].filter(Boolean);
  const meshes = meshList.map((x) => ({ ...meshCard(root, m, x, { pickDevice, tip: showTip }, present), mesh: x }));
  const arrays = m.arrays.map((a) => arrayCard(root, m, a, { pickBlock, tip: showTip }, present));
  const calls = m.calls.map((c, ci) => callCard(root, m, c, { pickCollective: (k) => pickCollective(ci, k) }));
  const cardOfArray = new Map(m.arrays.map((a, i) => [a.id, arrays[i].el]));
  const own = arrays.filter((_, i) => !m.arrays[i].earlier).map((x) => x.el);
  const before = arrays.filter((_, i) => m.arrays[i].earlier).map((x) => x.el);
  const earlier = before.length ? earlierRow(root, before) : null;
  const key = keyElement(calls);
  if (key) key.setAttribute("data-jm-key-element", "");

  const bar = h("div", { class: "jm-sh-bar", "aria-live": "polite" }, null, root);
  const legend = shardingLegend(root, m);
  const sec = (title, cls, body) => h("section", { class: "jm-sh-sec " + cls }, [h("h4", null, title, root), body], root);
  const findings = findingsList(root, m.findings, (f) => pickFinding(f));
  view.append(...[
    findings && sec(`Findings (${m.findings.length})`, "jm-sh-top", findings),
    bar,
    // The meshes and the jitted calls share a band (the calls beside the meshes when the width
    // allows): the first collective, what the caption is about, shows with the view's top.
    h("div", { class: "jm-sh-band" }, [
      meshes.length ? sec("Devices", "jm-sh-meshes", h("div", { class: "jm-sh-cards" }, meshes.map((x) => x.el), root)) : null,
      calls.length ? sec(`Jitted calls (${calls.length})`, "jm-sh-calls", calls.map((x) => x.el)) : null,
    ], root),
    legend, // the first screen is the story (meshes, first collective); its legend follows it
    own.length ? sec(before.length ? `Arrays from this cell (${own.length})` : `Arrays (${own.length})`, "jm-sh-own",
      h("div", { class: "jm-sh-cards" }, own, root)) : null,
    earlier && earlier.el,
    tip,
  ].filter(Boolean)); // append() would write a null as the text "null"

  // ---- selection ----------------------------------------------------------------------
  function pickCollective(ci, k) {
    const same = st.coll && st.coll.c === ci && st.coll.k === k;
    select({ coll: same ? null : { c: ci, k } });
  }
  function pick(card) {
    if (st.picked) st.picked.classList.remove("jm-sh-picked");
    st.picked = card;
    if (!card) return;
    card.classList.add("jm-sh-picked");
    if (card.scrollIntoView) card.scrollIntoView({ block: "nearest" });
    card.focus({ preventScroll: true });
  }
  function pickFinding(f) {
    const ci = f.call != null ? m.callById.get(f.call) : undefined;
    if (ci != null && f.collective != null && calls[ci].colls[f.collective]) {
      select({ coll: { c: ci, k: f.collective } });
      pick(calls[ci].el);
      calls[ci].colls[f.collective].focus({ preventScroll: true });
    } else if (f.array != null && cardOfArray.has(f.array)) {
      if (earlier && m.arrays.some((a) => a.id === f.array && a.earlier)) earlier.open();
      pick(cardOfArray.get(f.array));
    }
    else if (ci != null) pick(calls[ci].el);
  }

  function select(change) {
    Object.assign(st, change);
    const d = st.device;
    const col = st.coll && m.calls[st.coll.c].collectives[st.coll.k];
    for (const a of arrays) a.grid.mark(d == null ? null : (it) => it.holders.includes(d));
    const tags = col ? collectiveTags(col) : null;
    const meshMark = tags ? (it) => (tags.has(it.device) ? tags.get(it.device) || true : it.device === d)
      : d == null ? null : (it) => it.device === d;
    for (const x of meshes) x.grid.mark(meshMark, d);
    calls.forEach((c, ci) => {
      for (const r of c.rows) r.el.classList.toggle("jm-sh-on", d != null && r.devices.has(d));
      c.colls.forEach((b, k) => {
        const on = !!st.coll && st.coll.c === ci && st.coll.k === k;
        b.classList.toggle("jm-sh-on", on);
        b.setAttribute("aria-pressed", String(on));
      });
    });
    showBar(d, col);
  }

  function showBar(d, col) {
    clear(bar);
    const parts = [];
    if (d != null) {
      const held = heldArrays(m, d);
      parts.push(h("div", { class: "jm-sh-bar-dev" }, [
        h("b", null, deviceTitle(m, d), root), ` ${heldText(m, d)}`,
        held.length ? h("span", { class: "jm-muted" },
          ": " + held.slice(0, BAR_ARRAYS).map((x) => `${x.array.name ?? "(unnamed)"} ${bytesText(x.bytes)}`).join(", ") +
          (held.length > BAR_ARRAYS ? `, +${held.length - BAR_ARRAYS} more` : ""), root) : null,
      ], root));
    }
    if (col) {
      const c = m.calls[st.coll.c];
      const n = Array.isArray(col.groups) && col.groups.length ? plural(col.groups.length, "group") : plural((col.pairs || []).length, "pair");
      parts.push(h("div", { class: "jm-sh-bar-coll" }, [
        h("b", null, String(col.kind ?? "?"), root), ` in ${c.name}: ${operandsText(col.operands)} → ${col.result ?? "?"}, ${n}`,
        col.op_name ? ` · from ${col.op_name}` : "",
      ], root));
    }
    if (!parts.length) {
      bar.append(h("span", { class: "jm-muted jm-clutter" }, HINT, root));
      return;
    }
    const btn = h("button", { type: "button", class: "jm-btn jm-btn-quiet", title: "Clear the selection (Esc)" }, "Clear", root);
    btn.addEventListener("click", () => clearAll());
    bar.append(...parts, btn);
  }

  function clearAll() {
    pick(null);
    select({ device: null, coll: null });
  }

  root.setAttribute("tabindex", "0");
  const onKey = (e) => {
    if (e.key !== "Escape" || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    e.stopPropagation(); // keep Jupyter's command mode out of it
    tip.hidden = true;
    clearAll();
  };
  root.addEventListener("keydown", onKey);
  showBar(null, null);

  // ---- playback ---------------------------------------------------------------------------
  const stage = createStage({
    root, view, m, story: shardingStory(m, meshList), meshes, arrays, calls,
    findings: findings ? [...findings.children] : [],
    clearSelection: () => {
      if (st.device != null || st.coll || st.picked) clearAll();
      tip.hidden = true;
    },
  });
  if (options.playback) options.playback.set(stage);
  return () => {
    stage.dispose();
    root.removeEventListener("keydown", onKey);
  };
}
