/**
 * Functions the document lists without their graph (`doc.listed`, docs/schema.md): past the
 * drawing budget (jaxmagic/model/folding.py) a cell's further functions travel as one compact
 * row each. After the function tabs, "N more functions" opens a searchable list of them
 * (capped: a cell may list thousands); choosing a row asks the kernel for that function's
 * graph (a "function" request, widgets/ui/requests.js) and the view adds it as a tab and shows it.
 * A static page has no kernel to ask: its rows say so.
 *
 * State per row lives here (loading, the sentence shown, loaded), so the control survives the
 * tabs being redrawn on every switch of function.
 */
import { h, clear } from "../ui/dom.js";
import { plural } from "../ui/words.js";
import { srcPath, srcText } from "./model.js";
import { retold } from "../ui/requests.js";

/** Rows drawn at once: a few hundred buttons stay cheap; the search narrows the rest. */
export const MAX_ROWS = 200;
export const LOADING = "Loading from the kernel…";
export const STATIC = "not in this page (listed only)";

/** The requester's sentences, told of the graph: "No answer from the kernel: reconnect the kernel to load its graph." */
export const sentence = (text) => retold(text, "its graph");

/** "2 calls · 1 cache hit · × 3 wrappers · 5 eqns · defined at cell [2], line 4" for a listed row or a Function. */
export function rowStats(row) {
  const calls = Number(row.calls) || 0, hits = Number(row.cache_hits) || 0, wrappers = Number(row.wrappers) || 0;
  return [plural(calls, "call"), hits ? plural(hits, "cache hit") : null, wrappers > 1 ? `× ${plural(wrappers, "wrapper")}` : null,
    row.n_eqns != null ? plural(Number(row.n_eqns) || 0, "eqn") : null, row.source ? `defined at ${srcText(row.source)}` : null]
    .filter(Boolean).join(" · ");
}

/** Lower-case text a row is searched by: name, signature, where it is defined. */
const haystack = (row) => [row.name, row.signature, srcText(row.source), srcPath(row.source), row.id]
  .map((x) => String(x ?? "")).join("\n").toLowerCase();

/** Rows matching every word of `query` (all rows for an empty query). */
export function filterRows(rows, hay, query) {
  const words = String(query || "").toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return rows;
  return rows.filter((row, i) => words.every((w) => hay[i].includes(w)));
}

/**
 * A "function" answer as the view reads functions: it arrives in logical form (what
 * decode.js decodeDocument hands the view), so it is checked, not decoded. Throws a sentence
 * when the answer is not the graph of the function asked for.
 */
export function answerFunction(fn, fid) {
  if (!fn || !Array.isArray(fn.nodes) || !Array.isArray(fn.groups) || !Array.isArray(fn.vars)) throw new Error("the kernel's answer was not a function's graph");
  if (fn.id !== fid) throw new Error(`the kernel answered with function ${String(fn.id)}, not ${fid}`);
  return fn;
}

/**
 * The control for `doc.listed`, or null when the document lists nothing.
 * `request`: `options.request` (absent in static pages); `isLoaded(fid)`: whether a tab shows it;
 * `onLoaded(fn)`: add and show a loaded function (may throw: its sentence is shown);
 * `onPick(fid)`: show the tab of a function loaded before.
 * Returns `{els, refresh()}`: the toggle and the panel, placed after the tabs on every redraw.
 */
export function listedControl(ref, doc, { request, isLoaded, onLoaded, onPick }) {
  const rows = Array.isArray(doc.listed) ? doc.listed.filter((r) => r && typeof r.id === "string") : [];
  if (!rows.length) return null;
  const live = typeof request === "function";
  const unlisted = Number(doc.folded && doc.folded.unlisted) || 0;
  const hay = rows.map(haystack);
  const state = new Map(); // fid -> {loading, note, error}: the sentence a row carries
  const toggle = h("button", { type: "button", class: "jm-btn jm-btn-quiet jm-listed-toggle", "aria-expanded": "false",
    title: "Functions of this cell listed without their graph" }, "", ref);
  const search = h("input", { type: "search", class: "jm-listed-search", placeholder: "Filter by name, signature, file",
    "aria-label": "Filter the listed functions", spellcheck: "false" }, null, ref);
  const count = h("span", { class: "jm-muted jm-listed-count" }, "", ref);
  const list = h("ul", { class: "jm-listed-rows", "aria-live": "polite" }, null, ref);
  const more = h("div", { class: "jm-muted jm-listed-more" }, "", ref);
  const panel = h("div", { class: "jm-listed", hidden: true }, [h("div", { class: "jm-listed-bar" }, [search, count], ref), list, more], ref);

  /** One row (disabled in a static page, which has no kernel to ask). */
  const rowEl = (row) => {
    const st = state.get(row.id) || {};
    const note = isLoaded(row.id) ? "loaded: shown in its tab" : st.note || (live ? null : STATIC);
    const b = h("button", {
      type: "button", class: "jm-listed-row" + (st.error ? " jm-listed-error" : ""), "data-function-id": row.id,
      title: row.source ? srcPath(row.source) : false, disabled: !live, "aria-busy": st.loading ? "true" : false,
    }, [
      h("span", { class: "jm-tab-name" }, String(row.name ?? row.id), ref),
      h("span", { class: "jm-tab-sig" }, `(${row.signature ?? ""})`, ref),
      h("span", { class: "jm-tab-stats" }, rowStats(row), ref),
      note ? h("span", { class: "jm-listed-note" }, note, ref) : null,
    ], ref);
    b.addEventListener("click", () => choose(row));
    return h("li", null, b, ref);
  };

  /** The toggle's count, and the rows matching the search (the first MAX_ROWS of them) while open. */
  const refresh = () => {
    toggle.textContent = `${plural(rows.filter((r) => !isLoaded(r.id)).length, "more function")} ${panel.hidden ? "▾" : "▴"}`;
    toggle.setAttribute("aria-expanded", String(!panel.hidden));
    if (panel.hidden) return;
    const hits = filterRows(rows, hay, search.value);
    clear(list);
    for (const row of hits.slice(0, MAX_ROWS)) list.appendChild(rowEl(row));
    count.textContent = `${hits.length < rows.length ? hits.length + " of " : ""}${plural(rows.length, "function")}`;
    more.textContent = [hits.length > MAX_ROWS ? `… ${plural(hits.length - MAX_ROWS, "more function")}: type to narrow the list` : "",
      unlisted ? `${plural(unlisted, "more function")} recorded but not listed (see the notes)` : ""].filter(Boolean).join(" · ");
  };
  const open = (yes) => { panel.hidden = !yes; refresh(); };

  /** Ask the kernel for `row`'s graph: once while it loads; after a failure the next click asks again. */
  function choose(row) {
    if (isLoaded(row.id)) return onPick(row.id);
    if (!live || (state.get(row.id) || {}).loading) return;
    const set = (st) => { state.set(row.id, st); refresh(); };
    set({ loading: true, note: LOADING });
    request("function", { function: row.id }, { onWaiting: (why) => set({ loading: true, note: sentence(why) }) })
      .then((fn) => {
        onLoaded(answerFunction(fn, row.id));
        state.delete(row.id);
        open(false);
      })
      .catch((err) => set({ error: true, note: sentence((err && err.message) || err) }));
  }

  toggle.addEventListener("click", () => {
    open(panel.hidden);
    if (!panel.hidden) search.focus({ preventScroll: true });
  });
  search.addEventListener("input", refresh);
  search.addEventListener("keydown", (e) => e.key === "Escape" && open(false));
  refresh();
  return { els: [toggle, panel], refresh };
}
