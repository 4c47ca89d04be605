/**
 * Draws a laid-out scene into SVG layers (boxes under edges under nodes).
 * Pure drawing: no state, no listeners; the view wires interaction by delegation
 * on the classes and data attributes set here:
 *   .jm-group[data-group-id]   .jm-group-head (toggles the owner eqn)
 *   .jm-scope[data-scope-id]   .jm-scope-head (toggles), .jm-scope.jm-collapsed
 *   .jm-owner[data-owner-id]   box of an open eqn; its header is the .jm-eqn
 *   .jm-node.jm-eqn[data-node-id]  exactly one per visible eqn
 *   .jm-port[data-port-id][data-var-id]  .jm-port-in / -const / -out
 *   .jm-edge[data-from][data-to]  .jm-edge-label
 *   .jm-toggle  the ▸/▾ marker
 */
import { s } from "../../js/src/dom.js";
import { srcText } from "./model.js";
import { VIN, VOUT } from "./scene.js";
import { PAD_X, GAP, CHIP_H, F_PRIM, F_SMALL, textW, chipW } from "./metrics.js";

/**
 * @returns {{boxes: Map<string, {x,y,w,h}>, bbox: {x,y,w,h}}}
 */
export function drawScene(layers, scene, results, ix, markerId) {
  const boxes = new Map();
  const origin = new Map();
  const walk = (c, ox, oy) => {
    const r = results[c.key];
    if (!r) return;
    origin.set(c.id, [ox, oy]);
    boxes.set(c.id, { x: ox, y: oy, w: r.w, h: r.h });
    drawContainer(layers, c, ox, oy, r, scene, ix);
    for (const it of c.items) {
      const p = r.pos[it.id];
      if (!p || it.virtual) continue;
      const [x, y, w, h] = [ox + p[0], oy + p[1], p[2], p[3]];
      if (it.child) walk(it.child, x, y);
      else {
        boxes.set(it.id, { x, y, w, h });
        layers.nodes.appendChild(drawItem(it.id, x, y, w, h, scene.faces.get(it.id), ix));
      }
    }
  };
  if (scene.root) walk(scene.root, 0, 0);
  drawEdges(layers, scene, results, origin, ix, markerId);
  const rb = scene.root ? boxes.get(scene.root.id) : null;
  return { boxes, bbox: rb || { x: 0, y: 0, w: 0, h: 0 } };
}

/** Frame + header of an open group, scope or owner eqn. */
function drawContainer(layers, c, x, y, r, scene, ix) {
  const face = scene.faces.get(c.id);
  const tr = `translate(${x},${y})`;
  if (c.kind === "G") {
    const gid = c.id.slice(2);
    const isRoot = c.id === ix.root;
    layers.boxes.appendChild(
      s("g", { class: "jm-group" + (isRoot ? " jm-root-group" : ""), "data-group-id": gid, transform: tr }, [
        s("rect", { class: "jm-frame", width: r.w, height: r.h, rx: 8 }),
        s("g", { class: "jm-group-head" }, [
          s("text", { x: 12, y: 17, class: "jm-head-title" }, face.title),
          s("text", { x: 12 + textW(face.title, F_PRIM) + 10, y: 17, class: "jm-head-sub" }, face.sub),
        ]),
      ]),
    );
  } else if (c.kind === "S") {
    const sc = ix.scopes.get(c.id);
    layers.boxes.appendChild(
      s("g", { class: "jm-scope", "data-scope-id": c.id, "data-scope-path": sc.path.join("/"), transform: tr }, [
        s("rect", { class: "jm-frame", width: r.w, height: r.h, rx: 8 }),
        s("g", { class: "jm-scope-head" }, [
          s("rect", { class: "jm-head-hit", width: r.w, height: 22, rx: 8 }),
          s("text", { x: 10, y: 16, class: "jm-head-title" }, face.title),
          s("text", { x: 10 + textW(face.title, F_PRIM) + 10, y: 16, class: "jm-head-sub" }, face.sub),
        ]),
      ]),
    );
  } else {
    const nid = c.id.slice(2);
    layers.boxes.appendChild(
      s("g", { class: "jm-owner", "data-owner-id": nid, transform: tr }, [
        s("rect", { class: "jm-frame", width: r.w, height: r.h, rx: 8 }),
      ]),
    );
    layers.nodes.appendChild(eqn(ix, nid, x, y, r.w, face, " jm-expanded"));
  }
}

/** A leaf item: collapsed/plain eqn, collapsed scope, or port. */
function drawItem(key, x, y, w, h, face, ix) {
  const tr = `translate(${x},${y})`;
  if (key.startsWith("N:")) {
    const collapsed = ix.items.has(key);
    return eqn(ix, key.slice(2), x, y, w, face, collapsed ? " jm-collapsed" : "");
  }
  if (key.startsWith("S:")) {
    const sc = ix.scopes.get(key);
    return s("g", { class: "jm-scope jm-collapsed", "data-scope-id": key, "data-scope-path": sc.path.join("/"), transform: tr }, [
      s("title", null, `scope ${sc.path.join("/")} — click to expand`),
      s("rect", { class: "jm-box", width: w, height: h, rx: 6 }),
      s("text", { x: PAD_X, y: 17, class: "jm-prim jm-toggle" }, face.title),
      s("text", { x: PAD_X, y: 34, class: "jm-avals" }, face.sub),
    ]);
  }
  return s("g", { class: `jm-port jm-port-${face.kind}`, "data-port-id": key, "data-var-id": face.varId ?? false, transform: tr }, [
    s("rect", { class: "jm-box", width: w, height: h, rx: h / 2 }),
    s("text", { x: 9, y: h / 2 + 4, class: "jm-port-label" }, face.text),
  ]);
}

/** One eqn element (also the header of an open owner box). */
function eqn(ix, nid, x, y, w, face, extra) {
  const n = ix.nodes.get(nid);
  const tip = [n.prim, srcText(n.src, false), n.src && n.src.code].filter(Boolean).join("\n");
  const kids = [
    s("title", null, tip),
    s("rect", { class: "jm-box", width: w, height: face.h, rx: 6 }),
    s("text", { x: PAD_X, y: 17, class: "jm-prim" }, face.prim),
  ];
  let cx = PAD_X + textW(face.prim, F_PRIM) + GAP;
  for (const c of face.chips) {
    const cw = chipW(c);
    kids.push(
      s("g", { class: "jm-chip", transform: `translate(${cx},5)` }, [
        s("rect", { width: cw, height: CHIP_H, rx: 3 }),
        s("text", { x: 4, y: 12 }, c),
      ]),
    );
    cx += cw + 4;
  }
  if (face.marker) {
    const mw = textW(face.marker, F_SMALL) + 8;
    kids.push(
      s("g", { class: "jm-toggle", transform: `translate(${w - PAD_X - mw + 4},4)` }, [
        s("title", null, face.marker === "▾" ? "collapse" : `${face.marker.slice(2)} eqns inside — click to expand`),
        s("rect", { width: mw, height: 18, rx: 4 }),
        s("text", { x: 4, y: 13 }, face.marker),
      ]),
    );
  }
  if (face.avals) kids.push(s("text", { x: PAD_X, y: 34, class: "jm-avals" }, face.avals));
  return s("g", { class: "jm-node jm-eqn" + extra, "data-node-id": nid, transform: `translate(${x},${y})` }, kids);
}

/** Edges as smooth curves through their segment points, plus aval labels. */
function drawEdges(layers, scene, results, origin, ix, markerId) {
  const segPoints = (ck, sid) => {
    const c = scene.containers.get(ck);
    const r = c && results[c.key];
    const e = r && r.edges[sid];
    const o = origin.get(ck);
    return e && o ? { e, o } : null;
  };
  for (const ch of scene.chains) {
    // Join segments at box borders: the virtual entry/exit point on the border
    // replaces the box-boundary end of the neighbouring segment.
    const pts = [];
    let ok = true, prevW = "";
    for (const [ck, sid, v, w] of ch.segs) {
      const sp = segPoints(ck, sid);
      if (!sp) {
        ok = false;
        break;
      }
      let seg = sp.e.pts.map(([x, y]) => [x + sp.o[0], y + sp.o[1]]);
      if (prevW.startsWith(VOUT)) seg = seg.slice(1);
      if (v.startsWith(VIN)) pts.pop();
      for (const p of seg) {
        const last = pts[pts.length - 1];
        if (!last || Math.abs(last[0] - p[0]) > 0.5 || Math.abs(last[1] - p[1]) > 0.5) pts.push(p);
      }
      prevW = w;
    }
    if (!ok || pts.length < 2) continue;
    const tip = [...ch.vars].map((v) => {
      const vv = ix.vars.get(v);
      return vv ? `${vv.name}: ${vv.aval}` : v;
    }).join("\n");
    layers.edges.appendChild(
      s("g", { class: "jm-edge", "data-from": ch.from, "data-to": ch.to }, [
        s("title", null, tip),
        s("path", { d: curve(pts), "marker-end": `url(#${markerId})` }),
        s("path", { class: "jm-edge-hit", d: curve(pts) }),
      ]),
    );
  }
  for (const [ck, c] of scene.containers) {
    const r = results[c.key], o = origin.get(ck);
    if (!r || !o) continue;
    for (const [sid, e] of Object.entries(r.edges)) {
      const text = scene.labels.get(ck + "|" + sid);
      if (!text || e.lx == null) continue;
      const [lx, ly] = onCurve(e.pts, e.lx, e.ly);
      layers.labels.appendChild(s("text", { class: "jm-edge-label", x: lx + o[0], y: ly + o[1] + 3.5 }, text));
    }
  }
}

/**
 * Control polygon of an edge: dagre's bend points (which avoid boxes) plus short
 * horizontal stubs at both ends, so edges leave and enter boxes left-to-right.
 */
export function controlPoints(pts) {
  const n = pts.length;
  if (n < 2) return pts;
  const [a, z] = [pts[0], pts[n - 1]];
  const stub = Math.min(14, Math.abs(z[0] - a[0]) / 4);
  return [a, [a[0] + stub, a[1]], ...pts.slice(1, -1), [z[0] - stub, z[1]], z];
}

/**
 * SVG path: a uniform cubic B-spline over the control polygon (like d3.curveBasis),
 * smooth even where dagre's route bends sharply; it starts and ends exactly at the
 * polygon's end points.
 */
export function curve(pts) {
  const p = controlPoints(pts);
  const f = (v) => Math.round(v * 10) / 10;
  const at = (i) => p[Math.max(0, Math.min(p.length - 1, i))];
  let d = `M${f(p[0][0])},${f(p[0][1])}`;
  d += `L${f((5 * p[0][0] + p[1][0]) / 6)},${f((5 * p[0][1] + p[1][1]) / 6)}`;
  for (let i = 2; i <= p.length; i++) {
    const [p0, p1, q] = [at(i - 2), at(i - 1), at(i)];
    d += `C${f((2 * p0[0] + p1[0]) / 3)},${f((2 * p0[1] + p1[1]) / 3)} ${f((p0[0] + 2 * p1[0]) / 3)},${f((p0[1] + 2 * p1[1]) / 3)} ${f((p0[0] + 4 * p1[0] + q[0]) / 6)},${f((p0[1] + 4 * p1[1] + q[1]) / 6)}`;
  }
  const z = p[p.length - 1];
  return d + `L${f(z[0])},${f(z[1])}`;
}

/**
 * Where the B-spline passes near control point (x, y) of `pts`: dagre puts an
 * edge label on a bend point, which the smooth curve does not go through, so the
 * label moves onto the drawn line.
 */
export function onCurve(pts, x, y) {
  const p = controlPoints(pts);
  let j = 0;
  p.forEach((q, i) => {
    if (Math.hypot(q[0] - x, q[1] - y) < Math.hypot(p[j][0] - x, p[j][1] - y)) j = i;
  });
  if (j === 0 || j === p.length - 1) return [x, y];
  return [0, 1].map((k) => (p[j - 1][k] + 4 * p[j][k] + p[j + 1][k]) / 6);
}
