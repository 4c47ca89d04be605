/**
 * Draws placed geometry (place.js) into SVG layers (boxes under edges under nodes).
 * Used while the drawing is small (see stage.js for the switch to canvas.js).
 * Pure drawing: no state, no listeners; the stage wires interaction by delegation
 * on the classes and data attributes set here:
 *   .jm-group[data-group-id]   .jm-group-head (toggles the owner eqn)
 *   .jm-scope[data-scope-id]   .jm-scope-head (toggles), .jm-scope.jm-collapsed
 *   .jm-cbox[data-box-id][data-box-kind=R|U|K]  repeat / unit / chunk box,
 *                              .jm-cbox-head (toggles), .jm-cbox.jm-collapsed
 *   .jm-owner[data-owner-id]   box of an open eqn; its header is the .jm-eqn
 *   .jm-node.jm-eqn[data-node-id]  exactly one per visible eqn
 *   .jm-port[data-port-id][data-var-id]  .jm-port-in / -const / -out
 *   .jm-edge[data-from][data-to]  .jm-edge-label
 *   .jm-toggle  the ▸/▾ marker
 */
import { s } from "../ui/dom.js";
import { srcText } from "./model.js";
import { curve } from "./curve.js";
import { BASE, textW, chipW } from "./metrics.js";
import * as ids from "./ids.js";

/**
 * Sizes and baselines come from the metrics the scene was measured with (`geo.m`), so
 * text drawn in presentation mode sits where its larger boxes expect it.
 *
 * @param out  optional: receives `labels`, one `{el, key, sid}` per drawn edge label
 *   (its container and segment: what a playback fades with the edges through it)
 * @returns {Map<string, Element>} drawn element of every leaf and open container
 *   (a leaf wins over its own open box: the header of an open owner eqn)
 */
export function drawSvg(layers, geo, ix, markerId, out = null) {
  const elements = new Map();
  const m = geo.m || BASE;
  for (const c of geo.conts) {
    const el = drawContainer(layers, c, ix, m);
    if (el) elements.set(c.key, el);
  }
  for (const l of geo.leaves) {
    const el = drawItem(l, ix, m);
    layers.nodes.appendChild(el);
    elements.set(l.key, el);
  }
  for (const e of geo.edges) {
    const tip = e.vars.map((v) => {
      const vv = ix.vars.get(v);
      return vv ? `${vv.name}: ${vv.aval}` : v;
    }).join("\n");
    const d = curve(e.pts, e.ox, e.oy, e.dir);
    layers.edges.appendChild(
      s("g", { class: "jm-edge", "data-from": e.from, "data-to": e.to }, [
        s("title", null, tip),
        s("path", { d, "marker-end": `url(#${markerId})` }),
        s("path", { class: "jm-edge-hit", d }),
      ]),
    );
  }
  const labels = [];
  for (const gr of geo.labelGroups) {
    for (const l of gr.list()) {
      const el = s("text", { class: "jm-edge-label", x: l.x + gr.x, y: l.y + gr.y + m.LABEL_DY }, l.text);
      layers.labels.appendChild(el);
      labels.push({ el, key: gr.key, sid: l.sid });
    }
  }
  if (out) out.labels = labels;
  return elements;
}

/** Frame + header of an open group, scope, repeat/unit/chunk box or owner eqn. */
function drawContainer(layers, c, ix, m) {
  const face = c.face;
  const tr = `translate(${c.x},${c.y})`;
  let el;
  if (c.kind === "G") {
    const gid = ids.body(c.key);
    el = s("g", { class: "jm-group" + (c.key === ix.root ? " jm-root-group" : ""), "data-group-id": gid, transform: tr }, [
      s("rect", { class: "jm-frame", width: c.w, height: c.h, rx: 8 }),
      s("g", { class: "jm-group-head" }, [
        s("text", { x: 12 * m.z, y: m.HEAD_TY, class: "jm-head-title" }, face.title),
        s("text", { x: 12 * m.z + textW(face.title, m.F_PRIM) + 10 * m.z, y: m.HEAD_TY, class: "jm-head-sub" }, face.sub),
      ]),
    ]);
  } else if (c.kind === "N") {
    el = s("g", { class: "jm-owner", "data-owner-id": ids.body(c.key), transform: tr }, [
      s("rect", { class: "jm-frame", width: c.w, height: c.h, rx: 8 }),
    ]);
  } else {
    const scope = c.kind === "S";
    const attrs = scope
      ? { class: "jm-scope", "data-scope-id": c.key, "data-scope-path": ix.scopes.get(c.key).path.join("/") }
      : { class: "jm-cbox jm-cbox-" + c.kind, "data-box-id": c.key, "data-box-kind": c.kind };
    el = s("g", { ...attrs, transform: tr }, [
      s("rect", { class: "jm-frame", width: c.w, height: c.h, rx: 8 }),
      s("g", { class: scope ? "jm-scope-head" : "jm-cbox-head" }, [
        s("title", null, "click to collapse"),
        s("rect", { class: "jm-head-hit", width: c.w, height: m.HEAD_HIT, rx: 8 }),
        s("text", { x: 10 * m.z, y: m.SCOPE_TY, class: "jm-head-title" }, face.title),
        s("text", { x: 10 * m.z + textW(face.title, m.F_PRIM) + 10 * m.z, y: m.SCOPE_TY, class: "jm-head-sub" }, face.sub),
      ]),
    ]);
  }
  layers.boxes.appendChild(el);
  return el;
}

/** A leaf: plain/collapsed eqn, open owner header, collapsed scope or box, or port. */
function drawItem(l, ix, m) {
  const { key, x, y, w, h, face } = l;
  const tr = `translate(${x},${y})`;
  if (ids.isNode(key)) {
    const extra = l.open ? " jm-expanded" : ix.items.has(key) ? " jm-collapsed" : "";
    return eqn(ix, ids.body(key), x, y, w, face, extra, m);
  }
  if (ids.isPort(key) || ids.isOutput(key)) {
    return s("g", { class: `jm-port jm-port-${face.kind}`, "data-port-id": key, "data-var-id": face.varId ?? false, transform: tr }, [
      s("rect", { class: "jm-box", width: w, height: h, rx: h / 2 }),
      s("text", { x: m.PORT_TX, y: h / 2 + m.PORT_TY, class: "jm-port-label" }, face.text),
    ]);
  }
  if (ids.isBundle(key)) {
    // Port bundle: a pill in the port column; its header toggles it, open or not.
    const open = face.title.startsWith("▾");
    return s("g", {
      class: `jm-cbox jm-cbox-Q jm-port-${face.kind}` + (open ? "" : " jm-collapsed"), "data-box-id": key, "data-box-kind": "Q", transform: tr,
    }, s("g", { class: "jm-cbox-head" }, [
      s("title", null, face.tip + (open ? "\n— click to fold" : "\n— click to show the ports")),
      s("rect", { class: "jm-box", width: w, height: h, rx: h / 2 }),
      s("text", { x: m.PORT_TX, y: h / 2 + m.PORT_TY, class: "jm-prim jm-toggle" }, face.title),
    ]));
  }
  const attrs = ids.isScope(key)
    ? { class: "jm-scope jm-collapsed", "data-scope-id": key, "data-scope-path": ix.scopes.get(key).path.join("/") }
    : { class: `jm-cbox jm-cbox-${key[0]} jm-collapsed`, "data-box-id": key, "data-box-kind": key[0] };
  return s("g", { ...attrs, transform: tr }, [
    s("title", null, face.tip + "\n— click to expand"),
    s("rect", { class: "jm-box", width: w, height: h, rx: 6 }),
    s("text", { x: m.PAD_X, y: m.Y1, class: "jm-prim jm-toggle" }, face.title),
    s("text", { x: m.PAD_X, y: m.Y2, class: "jm-io" }, face.sub),
    face.avals ? s("text", { x: m.PAD_X, y: m.Y3, class: "jm-avals" }, face.avals) : null,
  ]);
}

/** One eqn element (also the header of an open owner box). */
function eqn(ix, nid, x, y, w, face, extra, m) {
  const n = ix.nodes.get(nid);
  const tip = [n.prim, srcText(n.src), n.src && n.src.code, face.tip].filter(Boolean).join("\n");
  const kids = [
    s("title", null, tip),
    s("rect", { class: "jm-box", width: w, height: face.h, rx: 6 }),
    s("text", { x: m.PAD_X, y: m.Y1, class: "jm-prim" }, face.prim),
  ];
  let cx = m.PAD_X + textW(face.prim, m.F_PRIM) + m.GAP;
  for (const c of face.chips) {
    const cw = chipW(c, m);
    kids.push(
      s("g", { class: "jm-chip", transform: `translate(${cx},${m.CHIP_Y})` }, [
        s("rect", { width: cw, height: m.CHIP_H, rx: 3 }),
        s("text", { x: 4 * m.z, y: m.CHIP_TY }, c),
      ]),
    );
    cx += cw + 4 * m.z;
  }
  if (face.marker) {
    const mw = textW(face.marker, m.F_SMALL) + 8 * m.z;
    kids.push(
      s("g", { class: "jm-toggle", transform: `translate(${w - m.PAD_X - mw + 4 * m.z},${m.MARK_Y})` }, [
        s("title", null, face.marker === "▾" ? "collapse" : `${face.marker.slice(2)} eqns inside — click to expand`),
        s("rect", { width: mw, height: m.MARK_H, rx: 4 }),
        s("text", { x: 4 * m.z, y: m.MARK_TY }, face.marker),
      ]),
    );
  }
  if (face.avals) kids.push(s("text", { x: m.PAD_X, y: m.Y2, class: "jm-avals" }, face.avals));
  if (face.io && !extra.includes("jm-expanded")) kids.push(s("text", { x: m.PAD_X, y: m.Y3, class: "jm-io" }, face.io));
  return s("g", { class: "jm-node jm-eqn" + extra, "data-node-id": nid, transform: `translate(${x},${y})` }, kids);
}
