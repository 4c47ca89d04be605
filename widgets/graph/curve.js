/**
 * Edge curves, shared by the SVG and canvas renderers so both draw the same line:
 * a uniform cubic B-spline (like d3.curveBasis) over dagre's bend points plus short
 * horizontal stubs, smooth even where the route bends sharply.
 */

/**
 * Control polygon of an edge: dagre's bend points (which avoid boxes) plus short
 * horizontal stubs at both ends, so edges leave and enter boxes left-to-right
 * (right-to-left with `dir` -1: a mirrored drawing, mirror.js).
 */
export function controlPoints(pts, dir = 1) {
  const n = pts.length;
  if (n < 2) return pts;
  const [a, z] = [pts[0], pts[n - 1]];
  const stub = dir * Math.min(14, Math.abs(z[0] - a[0]) / 4);
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
 * `dir` -1: the end stubs point right-to-left (a mirrored drawing, mirror.js).
 */
export function traceCurve(pts, out, ox = 0, oy = 0, clip = null, seen = null, dir = 1) {
  // The control polygon of controlPoints(pts), read in place: a big frame traces
  // thousands of edges, and an array per edge was most of its garbage.
  const n = pts.length;
  if (n < 2) return;
  const a = pts[0], z = pts[n - 1], m = n + 2;
  const stub = dir * Math.min(14, Math.abs(z[0] - a[0]) / 4);
  const X = (j) => {
    if (j <= 0) return a[0];
    if (j >= m - 1) return z[0];
    return j === 1 ? a[0] + stub : j === m - 2 ? z[0] - stub : pts[j - 1][0];
  };
  const Y = (j) => (j <= 1 ? a[1] : j >= m - 2 ? z[1] : pts[j - 1][1]);
  /** Whether the piece ending at control point i may be inside `clip`. */
  const near = (i) => {
    if (!clip) return true;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let j = i - 3; j <= i; j++) {
      const qx = X(j), qy = Y(j);
      if (qx < x0) x0 = qx;
      if (qx > x1) x1 = qx;
      if (qy < y0) y0 = qy;
      if (qy > y1) y1 = qy;
    }
    return x0 + ox <= clip.x1 && x1 + ox >= clip.x0 && y0 + oy <= clip.y1 && y1 + oy >= clip.y0;
  };
  const inClip = (ax, ay, bx, by) => !clip ||
    (Math.min(ax, bx) + ox <= clip.x1 && Math.max(ax, bx) + ox >= clip.x0 &&
      Math.min(ay, by) + oy <= clip.y1 && Math.max(ay, by) + oy >= clip.y0);
  let x = (5 * X(0) + X(1)) / 6, y = (5 * Y(0) + Y(1)) / 6;
  let pen = false; // whether the path is at (x, y)
  if (inClip(X(0), Y(0), x, y)) {
    out.moveTo(X(0) + ox, Y(0) + oy);
    out.lineTo(x + ox, y + oy);
    pen = true;
  }
  for (let i = 2; i <= m; i++) {
    const p0x = X(i - 2), p0y = Y(i - 2), p1x = X(i - 1), p1y = Y(i - 1), qx = X(i), qy = Y(i);
    const ex = (p0x + 4 * p1x + qx) / 6, ey = (p0y + 4 * p1y + qy) / 6;
    const c1x = (2 * p0x + p1x) / 3 + ox, c1y = (2 * p0y + p1y) / 3 + oy;
    const c2x = (p0x + 2 * p1x) / 3 + ox, c2y = (p0y + 2 * p1y) / 3 + oy;
    if (near(i) && (!seen || seen(x + ox, y + oy, c1x, c1y, c2x, c2y, ex + ox, ey + oy))) {
      if (!pen) out.moveTo(x + ox, y + oy);
      out.bezierCurveTo(c1x, c1y, c2x, c2y, ex + ox, ey + oy);
      pen = true;
    } else pen = false;
    x = ex;
    y = ey;
  }
  if (!inClip(x, y, z[0], z[1])) return;
  if (!pen) out.moveTo(x + ox, y + oy);
  out.lineTo(z[0] + ox, z[1] + oy);
}

/**
 * A set of curve pieces (start, two control points, end: exact coordinates) for one
 * frame: `seen(x0, y0, c1x, c1y, c2x, c2y, x1, y1)` is true the first time a piece
 * is offered, false after.
 */
export function pieceSet() {
  const byHash = new Map(); // hash -> Float64Array of 8 numbers per piece
  const q = (v) => Math.round(v * 16) | 0;
  return (x0, y0, c1x, c1y, c2x, c2y, x1, y1) => {
    const h = (Math.imul(q(x0), 73856093) ^ Math.imul(q(y0), 19349663) ^ Math.imul(q(x1), 83492791) ^
      Math.imul(q(y1), 50331653)) | 0;
    const c = [x0, y0, c1x, c1y, c2x, c2y, x1, y1];
    const old = byHash.get(h);
    for (let k = 0; old && k < old.length; k += 8) {
      let same = true;
      for (let j = 0; j < 8 && same; j++) same = old[k + j] === c[j];
      if (same) return false;
    }
    const grown = new Float64Array((old ? old.length : 0) + 8);
    if (old) grown.set(old);
    grown.set(c, grown.length - 8);
    byHash.set(h, grown);
    return true;
  };
}

/** The same spline as an SVG path `d` (coordinates rounded to 0.1 px), shifted by (ox, oy). */
export function curve(pts, ox = 0, oy = 0, dir = 1) {
  const f = (v) => Math.round(v * 10) / 10;
  let d = "";
  traceCurve(pts, {
    moveTo: (x, y) => (d += `M${f(x)},${f(y)}`),
    lineTo: (x, y) => (d += `L${f(x)},${f(y)}`),
    bezierCurveTo: (a, b, c, e, x, y) => (d += `C${f(a)},${f(b)} ${f(c)},${f(e)} ${f(x)},${f(y)}`),
  }, ox, oy, null, null, dir);
  return d;
}
