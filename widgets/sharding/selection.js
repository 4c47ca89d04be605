/**
 * The sharding view's selection: a device (a mesh cell, or a block: again on the same block,
 * its next holder) lights every block it holds and every collective group it is in; a
 * collective lights the devices that talk in the meshes, tagged with their group; a finding
 * picks (scrolls to and focuses) the card it names. The bar above the cards says what is
 * selected and offers Clear. Each function takes the view's state object (`ShardingView`,
 * built by view.js).
 */
import { h, clear } from "../ui/dom.js";
import { collectiveTags, deviceTitle, heldText, heldArrays } from "./model.js";
import { operandsText } from "./calls.js";
import { bytesText, plural } from "./format.js";

/** Arrays the selection bar lists for a device, at most. */
const BAR_ARRAYS = 8;
// One line at a notebook's 848 px: the hint must not push the story's first collective off the first screen.
const HINT = "Click a device or block to light what it holds (again: a replicated block's next holder), a collective to see who talks; Esc clears.";

/**
 * @typedef {object} ShardingView  the sharding view's state and drawn parts
 * @property {HTMLElement} root
 * @property {HTMLElement} view
 * @property {any} m                readSharding(doc)
 * @property {{device: any, coll: ({c: number, k: number} | null), picked: (HTMLElement | null)}} st
 * @property {HTMLElement} tip      the hover card shared by every grid
 * @property {HTMLElement} bar      the selection bar
 * @property {any[]} meshes         mesh cards `{el, grid, mesh}`
 * @property {any[]} arrays         array cards `{el, grid}`
 * @property {any[]} calls          call cards `{el, rows, colls}`
 * @property {Map<any, HTMLElement>} cardOfArray
 * @property {{el: HTMLElement, open(): void} | null} earlier  the closed row of earlier cells' arrays
 */

/** Show the hover card with `lines` under `rect` (inside the view); nothing: hide it. */
export function showTip(S, lines, rect) {
  const tip = S.tip;
  if (!lines || !rect) {
    tip.hidden = true;
    return;
  }
  tip.textContent = lines.join("\n");
  tip.hidden = false;
  const vr = S.view.getBoundingClientRect();
  tip.style.left = `${Math.max(0, Math.min(rect.left - vr.left, vr.width - (tip.offsetWidth || 320)))}px`;
  tip.style.top = `${rect.bottom - vr.top + 4}px`;
}

/** Change the selection (`{device}` and / or `{coll}`) and mark every grid, call row and collective. */
export function select(S, change) {
  const { st, m } = S;
  Object.assign(st, change);
  const d = st.device;
  const col = st.coll && m.calls[st.coll.c].collectives[st.coll.k];
  for (const a of S.arrays) a.grid.mark(d == null ? null : (it) => it.holders.includes(d));
  const tags = col ? collectiveTags(col) : null;
  const meshMark = tags ? (it) => (tags.has(it.device) ? tags.get(it.device) || true : it.device === d)
    : d == null ? null : (it) => it.device === d;
  for (const x of S.meshes) x.grid.mark(meshMark, d);
  S.calls.forEach((c, ci) => {
    for (const r of c.rows) r.el.classList.toggle("jm-sh-on", d != null && r.devices.has(d));
    c.colls.forEach((b, k) => {
      const on = !!st.coll && st.coll.c === ci && st.coll.k === k;
      b.classList.toggle("jm-sh-on", on);
      b.setAttribute("aria-pressed", String(on));
    });
  });
  showBar(S, d, col);
}

export const pickDevice = (S, d) => select(S, { device: S.st.device === d ? null : d });

/** A block: its first holder; again on the same block, its next holder; after the last, nothing. */
export function pickBlock(S, arr, i) {
  const ds = arr.blocks[i].devices || [];
  const at = ds.indexOf(S.st.device);
  select(S, { device: at < 0 ? ds[0] ?? null : ds[at + 1] ?? null });
}

/** Collective k of call ci; again: none. */
export function pickCollective(S, ci, k) {
  const same = S.st.coll && S.st.coll.c === ci && S.st.coll.k === k;
  select(S, { coll: same ? null : { c: ci, k } });
}

/** Outline a card, scroll to it and focus it (null: none). */
function pick(S, card) {
  if (S.st.picked) S.st.picked.classList.remove("jm-sh-picked");
  S.st.picked = card;
  if (!card) return;
  card.classList.add("jm-sh-picked");
  if (card.scrollIntoView) card.scrollIntoView({ block: "nearest" });
  card.focus({ preventScroll: true });
}

/** A finding: its collective (selected), else its array's card (opening the earlier row), else its call's card. */
export function pickFinding(S, f) {
  const { m, calls } = S;
  const ci = f.call != null ? m.callById.get(f.call) : undefined;
  if (ci != null && f.collective != null && calls[ci].colls[f.collective]) {
    select(S, { coll: { c: ci, k: f.collective } });
    pick(S, calls[ci].el);
    calls[ci].colls[f.collective].focus({ preventScroll: true });
  } else if (f.array != null && S.cardOfArray.has(f.array)) {
    if (S.earlier && m.arrays.some((a) => a.id === f.array && a.earlier)) S.earlier.open();
    pick(S, S.cardOfArray.get(f.array));
  } else if (ci != null) pick(S, calls[ci].el);
}

/** The bar's line about a device: its title, what it holds and the first BAR_ARRAYS arrays. */
function deviceLine(S, d) {
  const { root, m } = S;
  const held = heldArrays(m, d);
  return h("div", { class: "jm-sh-bar-dev" }, [
    h("b", null, deviceTitle(m, d), root), ` ${heldText(m, d)}`,
    held.length ? h("span", { class: "jm-muted" },
      ": " + held.slice(0, BAR_ARRAYS).map((x) => `${x.array.name ?? "(unnamed)"} ${bytesText(x.bytes)}`).join(", ") +
      (held.length > BAR_ARRAYS ? `, +${held.length - BAR_ARRAYS} more` : ""), root) : null,
  ], root);
}

/** The bar's line about a collective: kind, call, operands → result, groups or pairs, origin. */
function collectiveLine(S, col) {
  const { root, m } = S;
  const c = m.calls[S.st.coll.c];
  const n = Array.isArray(col.groups) && col.groups.length ? plural(col.groups.length, "group") : plural((col.pairs || []).length, "pair");
  return h("div", { class: "jm-sh-bar-coll" }, [
    h("b", null, String(col.kind ?? "?"), root), ` in ${c.name}: ${operandsText(col.operands)} → ${col.result ?? "?"}, ${n}`,
    col.op_name ? ` · from ${col.op_name}` : "",
  ], root);
}

/** The selection bar: what is selected and a Clear button, or the hint. */
export function showBar(S, d, col) {
  const { bar, root } = S;
  clear(bar);
  const parts = [];
  if (d != null) parts.push(deviceLine(S, d));
  if (col) parts.push(collectiveLine(S, col));
  if (!parts.length) {
    bar.append(h("span", { class: "jm-muted jm-clutter" }, HINT, root));
    return;
  }
  const btn = h("button", { type: "button", class: "jm-btn jm-btn-quiet", title: "Clear the selection (Esc)" }, "Clear", root);
  btn.addEventListener("click", () => clearAll(S));
  bar.append(...parts, btn);
}

export function clearAll(S) {
  pick(S, null);
  select(S, { device: null, coll: null });
}
