/**
 * Edge curves, shared by the SVG and canvas renderers so both draw the same line:
 * a uniform cubic B-spline (like d3.curveBasis) over dagre's bend points plus short
 * horizontal stubs, smooth even where the route bends sharply.
 */

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
 * Walk the spline as drawing commands: moveTo(x, y), lineTo(x, y) and
 * bezierCurveTo(c1x, c1y, c2x, c2y, x, y) on `out` (a CanvasRenderingContext2D or
 * anything with those methods), shifted by (ox, oy) (placed edges keep their points
 * relative to a box, see place.js). It starts and ends exactly at the polygon's ends.
 *
 * With `clip` = {x0, y0, x1, y1} (in shifted coordinates) pieces that cannot reach
 * the rectangle are left out: each piece of a uniform B-spline lies in the hull of
 * its four control points. A long edge crossing a zoomed-in view then costs the
 * canvas a few curves, not thousands (rasterising off-screen curves is what made
 * frames of big drawings slow). With `seen` (a `pieceSet()`), a piece already handed
 * over is left out: values sharing a route (a band of residuals between a forward
 * and a backward pass) share their pieces, drawn once instead of once per value.
 */
export function traceCurve(pts, out, ox = 0, oy = 0, clip = null, seen = null) {
  const p = controlPoints(pts);
  const n = p.length;
  const at = (i) => p[Math.max(0, Math.min(n - 1, i))];
  /** Whether the piece ending at control point i may be inside `clip`. */
  const near = (i) => {
    if (!clip) return true;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let j = i - 3; j <= i; j++) {
      const q = at(j);
      if (q[0] < x0) x0 = q[0];
      if (q[0] > x1) x1 = q[0];
      if (q[1] < y0) y0 = q[1];
      if (q[1] > y1) y1 = q[1];
    }
    return x0 + ox <= clip.x1 && x1 + ox >= clip.x0 && y0 + oy <= clip.y1 && y1 + oy >= clip.y0;
  };
  const inClip = (ax, ay, bx, by) => !clip ||
    (Math.min(ax, bx) + ox <= clip.x1 && Math.max(ax, bx) + ox >= clip.x0 &&
      Math.min(ay, by) + oy <= clip.y1 && Math.max(ay, by) + oy >= clip.y0);
  let x = (5 * p[0][0] + p[1][0]) / 6, y = (5 * p[0][1] + p[1][1]) / 6;
  let pen = false; // whether the path is at (x, y)
  if (inClip(p[0][0], p[0][1], x, y)) {
    out.moveTo(p[0][0] + ox, p[0][1] + oy);
    out.lineTo(x + ox, y + oy);
    pen = true;
  }
  for (let i = 2; i <= n; i++) {
    const p0 = at(i - 2), p1 = at(i - 1), q = at(i);
    const ex = (p0[0] + 4 * p1[0] + q[0]) / 6, ey = (p0[1] + 4 * p1[1] + q[1]) / 6;
    const c1x = (2 * p0[0] + p1[0]) / 3 + ox, c1y = (2 * p0[1] + p1[1]) / 3 + oy;
    const c2x = (p0[0] + 2 * p1[0]) / 3 + ox, c2y = (p0[1] + 2 * p1[1]) / 3 + oy;
    if (near(i) && (!seen || seen(x + ox, y + oy, c1x, c1y, c2x, c2y, ex + ox, ey + oy))) {
      if (!pen) out.moveTo(x + ox, y + oy);
      out.bezierCurveTo(c1x, c1y, c2x, c2y, ex + ox, ey + oy);
      pen = true;
    } else pen = false;
    x = ex;
    y = ey;
  }
  const z = p[n - 1];
  if (!inClip(x, y, z[0], z[1])) return;
  if (!pen) out.moveTo(x + ox, y + oy);
  out.lineTo(z[0] + ox, z[1] + oy);
}

/**
 * A set of curve pieces (start, two control points, end: exact coordinates) for one
 * frame: `seen(...8 numbers)` is true the first time a piece is offered, false after.
 */
export function pieceSet() {
  const byHash = new Map();
  const q = (v) => Math.round(v * 16) | 0;
  return (...c) => {
    const h = (Math.imul(q(c[0]), 73856093) ^ Math.imul(q(c[1]), 19349663) ^ Math.imul(q(c[6]), 83492791) ^
      Math.imul(q(c[7]), 50331653)) | 0;
    const list = byHash.get(h);
    if (!list) return void byHash.set(h, [c]), true;
    if (list.some((o) => o.every((v, i) => v === c[i]))) return false;
    list.push(c);
    return true;
  };
}

/** The same spline as an SVG path `d` (coordinates rounded to 0.1 px), shifted by (ox, oy). */
export function curve(pts, ox = 0, oy = 0) {
  const f = (v) => Math.round(v * 10) / 10;
  let d = "";
  traceCurve(pts, {
    moveTo: (x, y) => (d += `M${f(x)},${f(y)}`),
    lineTo: (x, y) => (d += `L${f(x)},${f(y)}`),
    bezierCurveTo: (a, b, c, e, x, y) => (d += `C${f(a)},${f(b)} ${f(c)},${f(e)} ${f(x)},${f(y)}`),
  }, ox, oy);
  return d;
}
