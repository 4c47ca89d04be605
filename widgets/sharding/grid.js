/**
 * One grid of cells (an array's blocks or a mesh's devices), drawn from a layout
 * (geometry.js): absolutely placed elements, one per cell, up to DOM_CAP cells; above
 * that one canvas, so a 64x64 mesh or a 4,096-block array costs one element. Both keep
 * one tab stop per grid (arrow keys move between cells, Enter or Space picks one), show
 * the hover card on hover and on focus, and are lit by `mark`.
 *
 * A cell with several holders is striped in their colours (at most STRIPES of them,
 * evenly sampled) and badged `×N`; the hover card lists every holder.
 */
import { h } from "../ui/dom.js";
import { neighbour } from "./geometry.js";

/** Cells drawn as elements at most; a bigger grid is a canvas. */
export const DOM_CAP = 2000;
/** Holder colours a striped cell shows at most. */
export const STRIPES = 8;
const DIM = 0.22;

/** At most STRIPES colours, evenly spread over the list. */
export function sampleColors(colors) {
  if (colors.length <= STRIPES) return colors;
  return [...Array(STRIPES).keys()].map((k) => colors[Math.floor((k * colors.length) / STRIPES)]);
}

/** CSS background of a cell: its colour, or diagonal stripes of its holders' colours. */
export function cellBackground(colors) {
  const cs = sampleColors(colors);
  if (cs.length <= 1) return cs[0] || "transparent";
  const w = 5;
  return `repeating-linear-gradient(135deg,${cs.map((c, k) => `${c} ${k * w}px ${(k + 1) * w}px`).join(",")})`;
}

/**
 * `createGrid(ref, layout, o)`: o = `{label, colors(item), text(item), aria(item),
 * pick(item), tip(item | null, clientRect), fits(item, text)?}`. Returns `{el, canvas, items,
 * rect(i), mark(fn, ring)}`: `mark(fn)` lights the cells for which `fn(item)` is true or a
 * string (a tag drawn in the corner) and dims the rest; `mark(null)` clears; `ring` is an item
 * key (device id) whose cells get a ring. `rect(i)` is where cell i is on the page (playback
 * flies blocks between cells). `fits` says whether a cell is big enough for its text (default:
 * 18 x 13 px, the 10 px ids; presentation mode measures its larger ids).
 */
export function createGrid(ref, lay, o) {
  return lay.items.length > DOM_CAP ? canvasGrid(ref, lay, o) : domGrid(ref, lay, o);
}

const px = (v) => `${v}px`;

/** Arrow keys, Home/End, Enter/Space on a grid whose current cell is `cur()`. */
function roving(el, items, cur, moveTo, pick) {
  el.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const i = cur();
    let j = -1;
    if (e.key === "Home") j = 0;
    else if (e.key === "End") j = items.length - 1;
    else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      if (items[i]) pick(items[i]);
      return;
    } else j = neighbour(items, i, e.key);
    if (j < 0) return;
    e.preventDefault();
    e.stopPropagation();
    moveTo(j);
  });
}

function domGrid(ref, lay, o) {
  const fits = o.fits ? (it) => o.fits(it, o.text(it)) : (it) => it.w >= 18 && it.h >= 13;
  const el = h("div", { class: "jm-sh-grid", role: "group", "aria-label": o.label, style: `width:${px(lay.width)};height:${px(lay.height)}` }, null, ref);
  for (const l of lay.labels) el.appendChild(h("div", { class: "jm-sh-flabel", style: `left:${px(l.x)};top:${px(l.y)}` }, l.text, ref));
  const cells = lay.items.map((it, i) => {
    const c = h("div", {
      class: "jm-sh-cell", role: "button", tabindex: i ? -1 : 0, "data-i": i, "aria-label": o.aria(it),
      style: `left:${px(it.x)};top:${px(it.y)};width:${px(it.w)};height:${px(it.h)};background:${cellBackground(o.colors(it))}`,
    }, fits(it) ? o.text(it) : null, ref);
    el.appendChild(c);
    return c;
  });
  let current = 0;
  const itemOf = (t) => {
    const c = t && t.closest && t.closest(".jm-sh-cell");
    return c && c.parentNode === el ? Number(c.getAttribute("data-i")) : -1;
  };
  const show = (i) => o.tip(lay.items[i], cells[i].getBoundingClientRect());
  el.addEventListener("click", (e) => {
    const i = itemOf(e.target);
    if (i >= 0) o.pick(lay.items[i]);
  });
  el.addEventListener("mouseover", (e) => {
    const i = itemOf(e.target);
    if (i >= 0) show(i);
  });
  el.addEventListener("mouseleave", () => o.tip(null));
  el.addEventListener("focusin", (e) => {
    const i = itemOf(e.target);
    if (i < 0) return;
    cells[current].setAttribute("tabindex", "-1");
    cells[(current = i)].setAttribute("tabindex", "0");
    show(i);
  });
  el.addEventListener("focusout", () => o.tip(null));
  roving(el, lay.items, () => current, (j) => cells[j].focus(), o.pick);

  const lit = new Array(cells.length).fill(false);
  const tags = new Array(cells.length).fill(null);
  let ringed = -1;
  return {
    el,
    canvas: null,
    items: lay.items,
    rect: (i) => cells[i].getBoundingClientRect(),
    mark(fn, ring = null) {
      el.classList.toggle("jm-sh-marking", !!fn);
      lay.items.forEach((it, i) => {
        const v = fn ? fn(it) : false;
        const on = v === true || typeof v === "string";
        const tag = typeof v === "string" && v ? v : null;
        if (on !== lit[i]) cells[i].classList.toggle("jm-sh-on", (lit[i] = on));
        if (tag !== tags[i]) {
          if ((tags[i] = tag) == null) cells[i].removeAttribute("data-tag");
          else cells[i].setAttribute("data-tag", tag);
        }
      });
      const r = ring == null ? -1 : lay.items.findIndex((it) => it.device === ring);
      if (r !== ringed) {
        if (ringed >= 0) cells[ringed].classList.remove("jm-sh-ring");
        if ((ringed = r) >= 0) cells[r].classList.add("jm-sh-ring");
      }
    },
  };
}

/** One cell on the canvas: its holders' colours side by side (dimmed unless lit), an outline, its tag. */
function paintCell(ctx, it, cs, v) {
  ctx.globalAlpha = v === true || typeof v === "string" ? 1 : DIM;
  const bw = it.w / Math.max(1, cs.length);
  cs.forEach((c, k) => {
    ctx.fillStyle = c;
    ctx.fillRect(it.x + k * bw, it.y, bw, it.h);
  });
  ctx.globalAlpha = 1;
  if (it.w > 2 && it.h > 2) {
    ctx.strokeStyle = "rgba(0,0,0,0.25)";
    ctx.lineWidth = 0.5;
    ctx.strokeRect(it.x, it.y, it.w, it.h);
  }
  if (typeof v === "string" && v && it.w >= 14) {
    ctx.fillStyle = "#111";
    ctx.fillText(v, it.x + 1, it.y + 1);
  }
}

/** Draw a canvas grid `G` (`{canvas, lay, dpr, colors, fn, ring, cursor}`): labels, cells, the ringed and the cursor's cell. */
function paintGrid(G) {
  const { canvas, lay, dpr } = G;
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, lay.width, lay.height);
  ctx.font = "10px sans-serif";
  ctx.textBaseline = "top";
  ctx.fillStyle = "#888";
  for (const l of lay.labels) ctx.fillText(l.text, l.x, l.y + 2);
  lay.items.forEach((it, i) => paintCell(ctx, it, G.colors[i], G.fn ? G.fn(it) : true));
  for (const i of [lay.items.findIndex((it) => G.ring != null && it.device === G.ring), G.cursor]) {
    const it = lay.items[i];
    if (!it) continue;
    ctx.strokeStyle = "#111";
    ctx.lineWidth = 2;
    ctx.strokeRect(it.x + 1, it.y + 1, Math.max(1, it.w - 2), Math.max(1, it.h - 2));
  }
  canvas.setAttribute("data-draws", String(Number(canvas.getAttribute("data-draws") || 0) + 1));
}

function canvasGrid(ref, lay, o) {
  const dpr = (ref.ownerDocument.defaultView || globalThis).devicePixelRatio || 1;
  const canvas = h("canvas", {
    class: "jm-sh-canvas", tabindex: 0, role: "img", width: Math.ceil(lay.width * dpr), height: Math.ceil(lay.height * dpr),
    style: `width:${px(lay.width)};height:${px(lay.height)}`,
    "aria-label": `${o.label}: ${lay.items.length} cells on a canvas; arrow keys move, Enter selects`,
  }, null, ref);
  const el = h("div", { class: "jm-sh-grid", style: `width:${px(lay.width)};height:${px(lay.height)}` }, canvas, ref);
  const G = { canvas, lay, dpr, colors: lay.items.map((it) => sampleColors(o.colors(it))), fn: null, ring: null, cursor: -1 };
  const draw = () => paintGrid(G);

  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    return lay.items.findIndex((it) => x >= it.x && x < it.x + it.w && y >= it.y && y < it.y + it.h);
  };
  const rectOf = (i) => {
    const r = canvas.getBoundingClientRect(), it = lay.items[i];
    return { left: r.left + it.x, top: r.top + it.y, right: r.left + it.x + it.w, bottom: r.top + it.y + it.h, width: it.w, height: it.h };
  };
  canvas.addEventListener("mousemove", (e) => {
    const i = at(e);
    if (i >= 0) o.tip(lay.items[i], rectOf(i));
    else o.tip(null);
  });
  canvas.addEventListener("mouseleave", () => o.tip(null));
  const moveTo = (j) => {
    G.cursor = j;
    draw();
    o.tip(lay.items[j], rectOf(j));
  };
  // A click focuses the canvas before it lands: the keyboard cursor goes to the clicked cell, not the first one.
  let pointing = false;
  canvas.addEventListener("mousedown", () => (pointing = true));
  canvas.addEventListener("click", (e) => {
    pointing = false;
    const i = at(e);
    if (i < 0) return;
    G.cursor = i;
    o.pick(lay.items[i]);
  });
  canvas.addEventListener("focus", () => pointing || moveTo(Math.max(0, G.cursor)));
  canvas.addEventListener("blur", () => o.tip(null));
  roving(canvas, lay.items, () => Math.max(0, G.cursor), moveTo, o.pick);
  // Probe for tests and tools: where cell i is drawn, in canvas px.
  /** @type {any} */ (canvas).jmProbe = { item: (i) => lay.items[i], count: lay.items.length };
  draw();
  return {
    el,
    canvas,
    items: lay.items,
    rect: rectOf,
    mark(f, r = null) {
      G.fn = f;
      G.ring = r;
      draw();
    },
  };
}
