/**
 * The graph view: header, one tab per Function, toolbar, SVG canvas, details panel
 * and linked text panes (jaxpr / StableHLO / HLO). Owns the interaction state (per
 * function: what is expanded, what is selected, search matches) and asks the layout
 * engine for a new layout whenever the expansion changes.
 *
 * Playback (widgets/ui/playback.js, `options.playback`): the current tab's eqns in trace
 * order as drawn (story.js), marked on the drawing (replay.js), the source lines in the
 * code strip (codestrip.js); in forward mode values flow into each eqn as it runs.
 * Presentation mode (`options.present`, or a `.jm-present` root) measures and draws the
 * graph with larger text (metrics.js PRESENT) and never zooms below legible.
 */
import { h, s, clear, download } from "../ui/dom.js";
import { search, step, countText } from "../ui/search.js";
import { docHeader } from "../ui/header.js";
import { indexFunction, isCollapsible, visibleRep } from "./model.js";
import * as ids from "./ids.js";
import { defaultExpansion, allCollapsibles, visibleEqnCount, reveal } from "./expansion.js";
import { buildScene } from "./scene.js";
import { createStage } from "./stage.js";
import { createHood } from "./neighbourhood.js";
import { timed, record, now } from "./timing.js";
import { showDetails } from "./details.js";
import { createPanes } from "./panes.js";
import { loadLevels } from "./deferred.js";
import { functionTabs } from "./tabs.js";
import { searchRecords } from "./find.js";
import { svgExport, fileName } from "./export.js";
import { svgToPng, canvasToPng } from "./png.js";
import { createBreadcrumbs } from "./breadcrumbs.js";
import { bindKeys, helpPanel, expandBelow } from "./keys.js";
import { modeControl, overlayControl } from "./controls.js";
import { modeState, labelFor, firstBadNode, findingNode } from "./modes.js";
import { graphLegend } from "./legend.js";
import { LEGIBLE_PX, PRESENT_PX } from "./framing.js";
import { costOverlay, legend } from "./overlay.js";
import { BASE, PRESENT } from "./metrics.js";
import { storySteps, storyLabel, stepLines } from "./story.js";
import { createReplay } from "./replay.js";
import { codeStrip } from "./codestrip.js";
import { findingsList } from "../ui/findings.js";
import { srcText } from "./model.js";

let viewCounter = 0;
/** Per-module-instance tag: SVG ids (the arrow marker) must be unique in the page. */
const instance = Math.random().toString(36).slice(2, 7);

/**
 * Mount a graph view for `doc` into `root`.
 *
 * Other views embed it (the grad view draws a forward and a backward pass with it):
 * `opts.compact` leaves out the document header, the function tabs, the label-mode
 * switch and the side panel (the host shows its own details); `opts.mirrored` draws
 * right to left (mirror.js); `opts.tone` ("backward") recolours values for that pass
 * (a class, `.jm-tone-backward`, that both renderers read through CSS variables);
 * `opts.onSelect(key, ix)` hears every selection; `opts.label` names the drawing;
 * `opts.onStory()` hears that a new drawing changed the story (a host playing it back
 * sets its playback again). `opts.present` / `opts.playback` are what widgets/mount.js
 * passes a view: presentation mode, and the shared playback controls (a standalone view
 * plays its own story; an embedded one leaves the story to its host).
 *
 * @param {import("../types/documents").GraphDocument} doc a graph document in the logical form (decode.js decodes the wire form first)
 * @param {{run: Function, threaded?: boolean}} engine layout engine (see widgets/ui/layout-client.js)
 * @returns {() => void} cleanup, carrying the controller of the view for hosts:
 *   `dispose()`, `select(key)` (reveal, select, centre; null clears), `selected()`,
 *   `highlight(keys, cls, vars)` (mark elements, and edges carrying `vars`, with class
 *   `cls`; empty keys and vars remove it), `reveal(keys)` (open what hides them and
 *   bring them into view), `setMode(m)`, `setDecorations(fn)` (shown while the cost
 *   overlay is off), `fit()` (frame it as the first view does: whole, or readable),
 *   `index()` (the current function's index, model.js), `story()` (the drawn story,
 *   story.js storySteps, or null before the first drawing), `play(p, from, {flow, tone})`
 *   (show step p of it, replay.js; a host's playback drives it).
 */
export function graphView(root, doc, engine, opts = {}) {
  const compact = !!opts.compact;
  // Presentation mode: mount.js says so, and an embedding view's root carries the class.
  const present = !!(opts.present || (root.closest && root.closest(".jm-present")));
  const M = present ? PRESENT : BASE;
  const uid = `jm${instance}${++viewCounter}`;
  const fns = Array.isArray(doc.functions) ? [...doc.functions] : []; // and functions loaded later (listed.js)
  const states = new Map(); // function index -> per-function state
  let current = 0;
  let disposed = false;
  let seq = 0;
  let drawn = null; // {boxes, bbox}
  let whenDrawn = []; // a host's requests made before the first drawing (controller)
  let elements = new Map(); // element key -> drawn element (SVG renderer only)
  let labelMode = "aval", labelOf = null; // edge labels: setLabelMode(name, fn)
  let mode = "trace"; // edge labels: trace | forward | vmap (modes.js)
  let overlay = "none"; // cost colouring: none | flops | bytes (overlay.js)

  const btn = (label, title, fn, cls = "") =>
    h("button", { type: "button", class: "jm-btn " + cls, title }, label, root);
  const bFit = btn("Fit", "Fit the graph to the view");
  const bExpand = btn("Expand all", "Open every sub-jaxpr and scope");
  const bCollapse = btn("Collapse all", "Close every sub-jaxpr and scope");
  const searchBox = h("input", {
    type: "search", class: "jm-search", placeholder: "Search prim, var, scope, file:line",
    "aria-label": "Search the graph", spellcheck: "false",
  }, null, root);
  const matchCount = h("span", { class: "jm-match-count", "aria-live": "polite" }, "", root);
  const bPrev = btn("‹", "Previous match (Shift+Enter, N)", null, "jm-btn-quiet jm-search-prev");
  const bNext = btn("›", "Next match (Enter, n)", null, "jm-btn-quiet jm-search-next");
  const bSvg = btn("SVG", "Download the drawing as SVG", null, "jm-btn-quiet jm-clutter");
  const bPng = btn("PNG", "Download the drawing as PNG", null, "jm-btn-quiet jm-clutter");
  const bJson = btn("JSON", "Download the document as JSON", null, "jm-btn-quiet jm-clutter");
  const bHelp = btn("?", "Keyboard shortcuts (?)", null, "jm-btn-quiet jm-help-btn jm-clutter");
  const modes = modeControl(root, (m) => setMode(m));
  // Drawing surface: SVG or canvas renderer, pan/zoom, minimap, clicks (stage.js).
  const stage = createStage(root, uid, { onSelect: (k) => select(k), onToggle: (k) => toggle(k), mirrored: !!opts.mirrored });
  if (opts.label) stage.svg.setAttribute("aria-label", String(opts.label));
  stage.els[2].classList.add("jm-clutter"); // the minimap
  const svg = stage.svg;
  const replay = createReplay(stage);
  const strip = codeStrip(root);
  const hood = createHood({
    ref: root, state: () => stateOf(current), relayout: (after) => relayout(after), pz: stage.pz,
    select: (k) => select(k), refresh: () => runSearch(), fit: () => fit(),
  });
  const toolbar = h("div", { class: "jm-toolbar" }, [
    bFit, bExpand, bCollapse,
    h("div", { class: "jm-search-wrap" }, [searchBox, bPrev, bNext, matchCount], root),
    compact ? null : modes.el, overlayControl(root, (m) => setOverlay(m)), hood.control,
    h("span", { class: "jm-spacer" }, null, root),
    h("span", { class: "jm-muted jm-export-label jm-clutter" }, "Export", root), bSvg, bPng, bJson, bHelp,
  ], root);

  const status = h("div", { class: "jm-status jm-clutter" }, "", root);
  const crumbs = createBreadcrumbs(root, (k) => (k === stateOf(current).ix.root ? (select(null), fit()) : focus(k)));
  const legendSlot = h("div", { class: "jm-legend-slot" }, null, root);
  const help = helpPanel(root);
  const canvas = h("div", { class: "jm-canvas", "data-jm-pane": opts.pane || "graph" }, [...stage.els, crumbs.el, legendSlot, help, hood.banner, status], root);
  const details = h("div", { class: "jm-details", "aria-label": "details" }, null, root);
  const panes = createPanes(root, (name, line) => onPaneLine(name, line), (name) => name !== "jaxpr" && wantLevels(true));
  const side = h("div", { class: "jm-side" }, [details, panes.el], root);
  const main = h("div", { class: "jm-main" }, [canvas, side], root);
  const tabsSlot = h("div", { class: "jm-tabs-slot" }, null, root);
  crumbs.el.classList.add("jm-clutter");
  const cls = "jm-graph" + (compact ? " jm-compact" : "") + (opts.tone ? " jm-tone-" + opts.tone : "") + (present ? " jm-graph-present" : "");
  const legendLine = compact ? null : graphLegend(root); // an embedding view shows its own
  // The cell's findings (NaN, truncated float64, baked globals...): a click frames the node they name.
  const findingsEl = compact ? null : findingsList(root, doc.findings, (f) => pickFinding(f),
    { prefix: "jm-g", max: 12, clamp: true, where: (f) => [f.source && f.source.file ? srcText(f.source) : null] });
  const view = h("div", { class: cls }, [compact ? null : docHeader(doc, root), compact ? null : tabsSlot, toolbar,
    legendLine && legendLine.el, compact ? null : strip.el, findingsEl, main], root);
  view.style.setProperty("--jm-z", String(M.z)); // SVG text sizes follow the metrics (graph.css)
  if (compact) side.remove();
  root.appendChild(view);

  if (!fns.length) {
    toolbar.remove();
    main.remove();
    view.appendChild(h("div", { class: "jm-empty" }, "No jitted functions were recorded in this cell.", root));
    return () => { disposed = true; };
  }

  const pz = stage.pz;

  /** State of function `i`, built on first visit. */
  const stateOf = (i) => {
    if (!states.has(i)) {
      const ix = timed("index", () => indexFunction(fns[i]));
      states.set(i, {
        ix, expanded: timed("expansion", () => defaultExpansion(ix)), selected: null, query: "", matches: [], matchIdx: -1, marks: new Map(),
        // the element a finding is about (an embedding view names its own: setKey)
        key: ((id) => (id && !compact ? ids.node(id) : null))(firstBadNode(ix.fn) || findingNode(doc, ix.fn)),
        records: null, transform: null, prefix: `${uid}:${i}:`, // records: on the first search
      });
    }
    return states.get(i);
  };

  // ---- layout + drawing -------------------------------------------------------

  /** Mark the drawn element standing for the key element (its box when it is folded away). */
  const markKey = (st) => stage.setKey(st.key && st.markKey !== false && st.ix.parent.has(st.key) ? visibleRep(st.ix, st.key, st.expanded) : null);

  /** Re-layout the current function; `after` runs once it is drawn. */
  const relayout = (after) => {
    const st = stateOf(current);
    const my = ++seq;
    const scene = timed("scene", () => buildScene(st.ix, st.expanded, `${st.prefix}${labelMode}:${present ? "P:" : ""}`, { labelOf, m: M }));
    status.textContent = "laying out…";
    status.classList.add("jm-busy");
    const t0 = now();
    engine.run(scene.root).then((out) => {
      if (disposed || my !== seq) return;
      record("layout", t0);
      status.classList.remove("jm-busy");
      canvas.setAttribute("data-layout", engine.threaded ? "worker" : "main-thread");
      drawn = timed("draw", () => stage.draw(scene, out.results, st.ix));
      elements = drawn.elements; // leaves and open containers (a breadcrumb selects those too)
      const shown = visibleEqnCount(st.ix, st.expanded), total = st.ix.count.get(st.ix.root) || 0;
      status.textContent = `${shown} of ${total} eqns shown` + (out.stats && out.stats.layered ? " · simplified layout for large groups" : "");
      paintSelection();
      paintMatches();
      markKey(st);
      if (after) after();
      publishStory();
      for (const f of whenDrawn.splice(0)) f();
    }, (err) => {
      if (disposed || my !== seq) return;
      status.classList.remove("jm-busy");
      status.textContent = `layout failed: ${err && err.message}`;
    });
  };

  /** Toggle a collapsible, keeping it at the same place on screen. */
  const toggle = (key) => {
    const st = stateOf(current);
    if (!isCollapsible(st.ix, key)) return;
    const before = drawn && drawn.boxes.get(key);
    const t0 = pz.transform;
    if (st.expanded.has(key)) st.expanded.delete(key);
    else st.expanded.add(key);
    relayout(() => {
      const after = drawn.boxes.get(key);
      if (before && after) {
        pz.set(t0.x + (before.x - after.x) * t0.k, t0.y + (before.y - after.y) * t0.k, t0.k);
      }
      grow();
    });
  };

  // ---- framing (framing.js): the pane's height, zoom and pan ----------------------

  let fixedH = 0, setH = 0, framedAt = null, framedW = 0; // reader's height; ours; the last framing
  /** Tallest pane: an embedding view's --jm-graph-h; else what a 720 px screen holds under the bars. */
  const maxHeight = () => {
    const vh = (root.ownerDocument.defaultView || {}).innerHeight || 900;
    if (compact) return parseFloat(root.ownerDocument.defaultView.getComputedStyle(main).getPropertyValue("--jm-graph-h")) || 380;
    return present ? Math.max(280, Math.min(vh - 410, 640)) : Math.max(280, Math.min(vh - 240, 580));
  };
  /**
   * Shortest pane. Beside the details and text panes (wide layout) it must leave them room to
   * read (a 5-eqn graph then sits centred); stacked (narrow) or embedded, a short pane is fine.
   */
  const minHeight = () => (compact ? 120 : view.closest(".jm-narrow") ? 180 : 300);
  /** Size the pane (the .jm-main row holding it), in either layout of the view. */
  const setHeight = (px) => {
    setH = px;
    const narrow = !!view.closest(".jm-narrow");
    main.style.minHeight = "0px";
    main.style.gridTemplateRows = narrow ? (compact ? `${px}px` : `${px}px 360px`) : "";
    main.style.height = narrow ? "auto" : `${px}px`;
  };
  /** Box of `key` to centre on: an open box's header, not its middle. Null when not drawn. */
  const anchorBox = (key) => {
    const st = stateOf(current);
    const b = key && st.ix.parent.has(key) ? drawn.boxes.get(visibleRep(st.ix, key, st.expanded)) : null;
    return b ? { x: b.x, y: b.y, w: Math.min(b.w, 360), h: Math.min(b.h, 42) } : null;
  };
  /**
   * Frame the drawing: whole when legible, else the part around `anchors` (boxes; by
   * default the selection, else the finding's node, else the inputs on the left).
   */
  const reframe = (anchors) => {
    if (!drawn) return null;
    const st = stateOf(current);
    const start = startOfComputation(drawn.boxes);
    const sel = anchorBox(st.selected);
    // The story's key node sits near the pane's top (on screen as soon as the view's top is);
    // a selection the reader made is centred, with its neighbours around it.
    const f = stage.frame({
      present, maxH: maxHeight(), minH: minHeight(), fixedH, anchorTop: !anchors && !sel,
      anchors: anchors || [sel || anchorBox(st.key)], startY: start ? start.y : null,
    }, setHeight);
    if (f) {
      framedAt = pz.transform;
      framedW = svg.clientWidth;
    }
    return f;
  };
  /** After a box opened or closed: grow the pane (never past its maximum) to what the drawing needs. */
  const grow = () => {
    if (!drawn || fixedH || !setH) return;
    const want = Math.min(maxHeight(), Math.ceil(drawn.bbox.h * pz.transform.k + 32));
    if (want > setH) setHeight(want);
    stage.publish();
  };
  /** True when `b` (content box) is on screen at a legible zoom: a reveal leaves the view alone. */
  const inView = (b) => {
    const t = pz.transform, w = svg.clientWidth, hh = svg.clientHeight;
    const legible = M.F_TINY * t.k >= (present ? PRESENT_PX : LEGIBLE_PX) - 0.05;
    return !!b && legible && t.x + b.x * t.k >= 0 && t.y + b.y * t.k >= 0 && t.x + (b.x + b.w) * t.k <= w && t.y + (b.y + b.h) * t.k <= hh;
  };
  // A resized output area (a new width, a sidebar closed, narrow layout) frames again,
  // unless the reader moved the drawing since; a height the reader dragged is kept.
  const win = root.ownerDocument.defaultView;
  const ro = win && win.ResizeObserver ? new win.ResizeObserver(() => {
    if (!drawn) return;
    const w = svg.clientWidth, hh = svg.clientHeight, t = pz.transform;
    if (w && w !== framedW) {
      if (!framedAt || ["x", "y", "k"].every((c) => t[c] === framedAt[c])) return void reframe();
      framedW = w;
    } else if (setH && hh && Math.abs(hh - setH) > 2 && !view.closest(".jm-narrow")) fixedH = hh;
    stage.publish();
  }) : null;
  if (ro) ro.observe(canvas);

  /** Fit button (and the first view of a function): frame it (framing.js). */
  const fit = () => void reframe();
  const firstView = fit;

  // ---- selection ---------------------------------------------------------------

  /** Selection, the edges at it, and search matches, in whichever renderer drew (stage.js). */
  const paintSelection = () => {
    const st = stateOf(current);
    stage.paint({ ix: st.ix, expanded: st.expanded, selected: st.selected, matches: st.matches, marks: st.marks });
  };

  /**
   * Select an element key (node, port, container) or null; update details, panes,
   * path. `report` false: the selection is only re-applied (a new layout, a new
   * mode), so a host's onSelect does not hear it again.
   */
  const select = (key, report = true) => {
    const st = stateOf(current);
    st.selected = key;
    paintSelection();
    if (!compact) {
      showDetails(details, st.ix, key, { mode, loadLevels: () => wantLevels(true) });
      panes.highlight(key);
    }
    crumbs.update(st.ix, key);
    if (report && opts.onSelect) opts.onSelect(key, st.ix);
  };

  /** Select `key`, opening whatever hides it, and centre it. */
  const focus = (key) => {
    if (hood.active() && !stateOf(current).ix.parent.has(key)) hood.exit(); // not in the neighbourhood
    const st = stateOf(current);
    const center = () => {
      select(key);
      const b = drawn && anchorBox(key);
      if (b && !inView(b)) reframe([b]);
    };
    if (reveal(st.ix, st.expanded, key)) relayout(center);
    else center();
  };

  /** A finding's function becomes the current one, and its node is revealed, selected and centred. */
  const pickFinding = (f) => {
    const i = fns.findIndex((fn) => fn && fn.id === f.fn);
    if (i < 0) return;
    if (i !== current) show(i);
    if (f.node != null) onceDrawn(() => focus(ids.node(String(f.node))));
  };

  // ---- search ------------------------------------------------------------------

  const paintMatches = () => paintSelection();
  const runSearch = () => {
    const st = stateOf(current);
    st.query = searchBox.value;
    if (!st.records && st.query.trim()) st.records = searchRecords(st.ix);
    st.matches = st.records ? search(st.records, st.query) : [];
    st.matchIdx = -1;
    matchCount.textContent = countText(st.matches.length, st.query);
    paintMatches();
  };
  const onSearchKey = (e) => {
    if (e.key === "Escape") {
      searchBox.value = "";
      runSearch();
      return;
    }
    if (e.key !== "Enter") return;
    e.preventDefault();
    stepMatch(e.shiftKey ? -1 : 1);
  };
  /** Go to the next (+1) / previous (-1) match: Enter, the ‹ › buttons, n / N. */
  const stepMatch = (dir) => {
    const st = stateOf(current);
    if (st.query !== searchBox.value) runSearch();
    if (!st.matches.length) return;
    st.matchIdx = step(st.matchIdx, st.matches.length, dir);
    matchCount.textContent = `${st.matchIdx + 1} of ${countText(st.matches.length, st.query)}`;
    focus(st.matches[st.matchIdx]);
  };

  // ---- deferred levels (deferred.js): StableHLO/HLO and XLA's cost, loaded when asked ----

  /** Load the current function's levels from the kernel (`retry`: the user asked, after a failure too). */
  const wantLevels = (retry) => {
    const f = fns[current];
    loadLevels(f, opts.request, () => {
      if (disposed || fns[current] !== f) return;
      panes.refresh();
      select(stateOf(current).selected, false);
    }, { retry });
  };

  // ---- functions (tabs) ----------------------------------------------------------

  // Functions listed without their graph (`opts.listed`: listed.js listedControl, which the graph
  // kind passes; the grad view embeds the viewer without it): a loaded one becomes a tab of its own.
  const byId = (fid) => fns.findIndex((f) => f && f.id === fid);
  const listed = compact || !opts.listed ? null : opts.listed(root, doc, {
    request: opts.request,
    isLoaded: (fid) => byId(fid) >= 0,
    onPick: (fid) => show(byId(fid)),
    onLoaded: (fn) => {
      if (disposed) return;
      const i = fns.push(fn) - 1;
      try {
        stateOf(i); // index it first: a malformed answer leaves the tabs as they were
      } catch (err) {
        fns.pop();
        states.delete(i);
        throw err;
      }
      show(i);
    },
  });

  const show = (i) => {
    hood.exit(); // a neighbourhood belongs to the function it was opened on
    if (drawn && states.has(current)) Object.assign(states.get(current), { transform: pz.transform, paneH: setH });
    current = i;
    const st = stateOf(i);
    clear(tabsSlot);
    tabsSlot.appendChild(functionTabs(fns, i, (j) => j !== current && show(j), root));
    if (listed) {
      for (const el of listed.els) tabsSlot.appendChild(el);
      listed.refresh();
    }
    panes.setFunction(fns[i], st.ix);
    if (panes.active !== "jaxpr") wantLevels(false);
    strip.setFunction(st.ix);
    if (!modeState(fns[i], mode).ok) mode = "trace";
    modes.update(fns[i], mode);
    if (legendLine) legendLine.update(mode);
    searchBox.value = st.query;
    runSearch();
    select(st.selected, false);
    drawn = null;
    applyLabels();
    applyOverlay();
    relayout(() => {
      if (st.transform) {
        if (st.paneH) setHeight(st.paneH);
        pz.set(st.transform.x, st.transform.y, st.transform.k);
      } else firstView();
      select(st.selected, false);
    });
  };

  // ---- playback (story.js, replay.js, codestrip.js) -------------------------------

  /**
   * After every drawing: its story (the drawn eqns in trace order) to the replay, and
   * to whoever plays it: the shared controls of a standalone view, or the host of an
   * embedded one. A new story starts at its end, the drawing as it is.
   */
  const publishStory = () => {
    const st = stateOf(current);
    const story = storySteps(st.ix, st.expanded);
    story.keys = story.keys.filter((k) => drawn.boxes.has(k));
    replay.bind(story);
    strip.mark(null);
    if (opts.onStory) opts.onStory();
    if (!opts.playback) return;
    const ix = st.ix, keys = story.keys;
    opts.playback.set({
      steps: keys.length,
      show: (p, from) => {
        // Values flow only where the edges show values: forward mode (`--values`).
        replay.show(p, from, { flow: mode === "forward" });
        strip.mark(p >= 1 && p < keys.length ? stepLines(ix, keys[p - 1]) : null);
      },
      label: (p) => storyLabel(ix, keys, p, { values: mode === "forward" ? ix.fn.values : null }),
    });
  };

  // ---- wiring ------------------------------------------------------------------

  const on = (el, ev, fn) => el.addEventListener(ev, fn);
  on(bFit, "click", fit);
  on(bExpand, "click", () => {
    stateOf(current).expanded = allCollapsibles(stateOf(current).ix);
    relayout(firstView);
  });
  on(bCollapse, "click", () => {
    stateOf(current).expanded = new Set();
    relayout(firstView);
  });
  on(searchBox, "input", runSearch);
  on(searchBox, "keydown", onSearchKey);
  // Build the search records (~50 ms at 50k eqns) when the box is entered, not on the first key.
  on(searchBox, "focus", () => { const st = stateOf(current); if (!st.records) st.records = searchRecords(st.ix); });
  const exportSvg = () => stage.withSvg((el) => svgExport(el, drawn.bbox, root.ownerDocument.defaultView.getComputedStyle(canvas).backgroundColor));
  on(bSvg, "click", () => drawn && download(fileName(fns[current].name, ".svg"), exportSvg().text, "image/svg+xml"));
  on(bPng, "click", () => {
    if (!drawn) return;
    const bg = root.ownerDocument.defaultView.getComputedStyle(canvas).backgroundColor;
    // On the canvas renderer (big scenes): the view as drawn; else the whole drawing via SVG.
    const png = stage.renderer === "canvas"
      ? (stage.flush(), canvasToPng(stage.els[0], bg))
      : ((x) => svgToPng(x.text, x.w, x.h, root.ownerDocument))(exportSvg());
    png.then(
      (blob) => download(fileName(fns[current].name, ".png"), blob, "image/png"),
      (err) => { status.textContent = `PNG export failed: ${err && err.message}`; });
  });
  on(bPrev, "click", () => stepMatch(-1));
  on(bNext, "click", () => stepMatch(1));
  on(bHelp, "click", () => { help.hidden = !help.hidden; });
  on(bJson, "click", () => download(fileName("jaxmagic-" + (doc.kind || "doc"), ".json"), JSON.stringify(doc, null, 2), "application/json"));

  // ---- text panes, label modes, cost overlay, shortcuts (panes.js, modes.js, overlay.js, keys.js) ----

  /** A click on line `line` of text pane `name`: select the node owning it, else mark the line. */
  const onPaneLine = (name, line) => {
    const id = panes.ownerOf(name, line);
    if (id) focus(ids.node(id));
    else {
      select(null);
      panes.markLine(name, line);
    }
  };
  const setMode = (m) => {
    if (!modeState(fns[current], m).ok) return;
    mode = m;
    modes.update(fns[current], mode);
    if (legendLine) legendLine.update(mode);
    applyLabels();
    select(stateOf(current).selected, false); // details show values / batch dims per mode
  };
  /**
   * Edge labels of the current mode for the current function (modes.js). In presentation
   * mode trace labels are left out: they repeat the avals every box already shows, and
   * the room they take keeps a graph from fitting a projector at a legible size.
   */
  const applyLabels = () => (present && mode === "trace"
    ? setLabelMode("trace-bare", () => "")
    : setLabelMode(mode, labelFor(mode, stateOf(current).ix)));
  const setOverlay = (m) => {
    overlay = m;
    applyOverlay();
  };
  let hostDecorate = null; // a host's decorations (controller), shown while the overlay is off
  /** Cost colours and their legend for the current function (overlay.js). */
  const applyOverlay = () => {
    const ov = costOverlay(stateOf(current).ix, overlay);
    setDecorations(ov ? ov.decorate : hostDecorate);
    clear(legendSlot);
    if (ov) legendSlot.appendChild(legend(ov, root));
  };
  // ---- drawing API for decorations and edge labels (js/README.md, "Drawing API") ----
  /** `fn(key) -> {fill?: string} | null` fills node boxes in both renderers; null: none. */
  const setDecorations = (fn) => stage.setDecorations(fn);
  /** Edge labels from `fn(varIds) -> text` (null: avals); `name` keys the layout cache. */
  const setLabelMode = (name, fn) => {
    labelMode = String(name || "aval");
    labelOf = fn || null;
    if (drawn) relayout();
  };
  root.setAttribute("tabindex", "0");
  const unbindKeys = bindKeys(root, (action) => {
    const st = stateOf(current);
    if (action === "fit") fit();
    else if (action === "expand") {
      for (const k of expandBelow(st.ix, st.selected)) st.expanded.add(k);
      relayout(st.selected ? () => focus(st.selected) : firstView);
    } else if (action === "collapse") bCollapse.click();
    else if (action === "next" || action === "prev") stepMatch(action === "next" ? 1 : -1);
    else if (action === "search") searchBox.focus();
    else if (action === "clear") hood.exit() || select(null); // Escape leaves a neighbourhood first
    else if (action === "help") help.hidden = !help.hidden;
  });

  show(0);

  // ---- controller for hosts embedding the view (see the doc comment above) ----
  /**
   * Open what hides `keys`, then bring them into view: all of them when they fit at a
   * readable zoom, else the first (callers put the most telling key first).
   */
  const revealKeys = (keys) => {
    if (hood.active() && (keys || []).some((k) => !stateOf(current).ix.parent.has(k))) hood.exit(); // not in the neighbourhood
    const st = stateOf(current);
    const known = (keys || []).filter((k) => st.ix.parent.has(k));
    if (!known.length) return;
    let changed = false;
    for (const k of known) changed = reveal(st.ix, st.expanded, k) || changed;
    // All of them when they fit at a legible zoom, else the first (framing.js).
    const go = () => {
      if (!drawn) return;
      const boxes = known.map(anchorBox).filter(Boolean);
      if (boxes.length && !boxes.every(inView)) reframe(boxes);
    };
    if (changed) relayout(go);
    else go();
  };
  const dispose = () => {
    disposed = true;
    if (ro) ro.disconnect();
    stage.dispose();
    panes.dispose();
    unbindKeys();
  };
  /** Run `f` now when drawn, else once the first drawing is there (centring needs boxes). */
  const onceDrawn = (f) => (drawn ? f() : whenDrawn.push(f));
  return Object.assign(dispose, {
    dispose,
    select: (key) => (key ? onceDrawn(() => focus(key)) : select(null)),
    selected: () => stateOf(current).selected,
    highlight(keys, cls, vars) {
      const st = stateOf(current);
      if ((keys && keys.length) || (vars && vars.length)) st.marks.set(cls, { keys: keys || [], vars: new Set(vars || []) });
      else st.marks.delete(cls);
      paintSelection();
    },
    reveal: (keys) => onceDrawn(() => revealKeys(keys)),
    /**
     * The element the host's story is about (a finding's node): framed first, and marked
     * `data-jm-key-element` unless `mark` is false (the host marks its own element).
     */
    setKey(key, mark = true) {
      const st = stateOf(current);
      st.key = key || null;
      st.markKey = mark;
      if (drawn) markKey(st);
    },
    setMode,
    setDecorations(fn) {
      hostDecorate = fn || null;
      applyOverlay();
    },
    fit: firstView,
    index: () => stateOf(current).ix,
    story: () => (drawn ? replay.story() : null),
    play: (p, from, o) => replay.show(p, from, o),
  });
}

/**
 * Where the computation visibly starts: the vertical middle of the leftmost leaf boxes
 * that are eqns, input ports or boxes of moderate size (not huge open containers). Ports
 * count: a train step's inputs (`model.hidden.kernel`, `opt.opt_state…`) are the names the
 * reader knows, and a long input column is taller than the first eqns beside it. Null when none.
 */
export function startOfComputation(boxes) {
  const leaves = [];
  for (const [key, b] of boxes) {
    if (/^[NSRUKP]/.test(key) && b.w < 900) leaves.push(b);
  }
  if (!leaves.length) return null;
  leaves.sort((a, b) => a.x - b.x);
  const first = leaves.slice(0, 8);
  return { y: first.reduce((sum, b) => sum + b.y + b.h / 2, 0) / first.length };
}
