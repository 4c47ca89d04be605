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
  const n = pts.length;
  if (n < 2) return;
  // The control polygon, kept per points array (placed edges keep theirs across frames
  // and layouts, place.js): a frame of a big drawing traces thousands of edges.
  const { X, Y } = polygonOf(pts, dir);
  const m = X.length;
  /** Whether the piece ending at control point i may be inside `clip` (its hull meets it). */
  const near = (i) => {
    if (!clip) return true;
    const a = i < 3 ? 0 : i - 3, b = i < m ? i : m - 1;
    let x0 = X[a], y0 = Y[a], x1 = x0, y1 = y0;
    for (let j = a + 1; j <= b; j++) {
      const qx = X[j], qy = Y[j];
      if (qx < x0) x0 = qx;
      else if (qx > x1) x1 = qx;
      if (qy < y0) y0 = qy;
      else if (qy > y1) y1 = qy;
    }
    return x0 + ox <= clip.x1 && x1 + ox >= clip.x0 && y0 + oy <= clip.y1 && y1 + oy >= clip.y0;
  };
  const inClip = (ax, ay, bx, by) => !clip ||
    (Math.min(ax, bx) + ox <= clip.x1 && Math.max(ax, bx) + ox >= clip.x0 &&
      Math.min(ay, by) + oy <= clip.y1 && Math.max(ay, by) + oy >= clip.y0);
  const big = clip ? bigPiece(clip) : null;
  let x = (5 * X[0] + X[1]) / 6, y = (5 * Y[0] + Y[1]) / 6;
  let pen = false; // whether the path is at (x, y)
  if (inClip(X[0], Y[0], x, y)) {
    out.moveTo(X[0] + ox, Y[0] + oy);
    out.lineTo(x + ox, y + oy);
    pen = true;
  }
  for (let i = 2; i <= m; i++) {
    const p0x = X[i - 2], p0y = Y[i - 2], p1x = X[i - 1], p1y = Y[i - 1];
    const qx = i < m ? X[i] : X[m - 1], qy = i < m ? Y[i] : Y[m - 1];
    const ex = (p0x + 4 * p1x + qx) / 6, ey = (p0y + 4 * p1y + qy) / 6;
    if (near(i)) {
      const c1x = (2 * p0x + p1x) / 3 + ox, c1y = (2 * p0y + p1y) / 3 + oy;
      const c2x = (p0x + 2 * p1x) / 3 + ox, c2y = (p0y + 2 * p1y) / 3 + oy;
      if (!seen || seen(x + ox, y + oy, c1x, c1y, c2x, c2y, ex + ox, ey + oy)) {
        if (big && big(x + ox, y + oy, c1x, c1y, c2x, c2y, ex + ox, ey + oy)) {
          pen = cubicIn(out, x + ox, y + oy, c1x, c1y, c2x, c2y, ex + ox, ey + oy, clip, pen, 0);
        } else {
          if (!pen) out.moveTo(x + ox, y + oy);
          out.bezierCurveTo(c1x, c1y, c2x, c2y, ex + ox, ey + oy);
          pen = true;
        }
      } else pen = false;
    } else pen = false;
    x = ex;
    y = ey;
  }
  if (!inClip(x, y, X[m - 1], Y[m - 1])) return;
  if (!pen) out.moveTo(x + ox, y + oy);
  out.lineTo(X[m - 1] + ox, Y[m - 1] + oy);
}

/** Per points array: its control polygon (controlPoints) as two Float64Arrays, and for which `dir`. */
const polygons = new WeakMap();
function polygonOf(pts, dir) {
  let p = polygons.get(pts);
  if (p && p.dir === dir) return p;
  const c = controlPoints(pts, dir);
  p = { dir, X: Float64Array.from(c, (q) => q[0]), Y: Float64Array.from(c, (q) => q[1]) };
  polygons.set(pts, p);
  return p;
}

/**
 * For clip rectangle `clip`: a test of whether a cubic piece reaches far beyond it
 * (its hull over 4 times the rectangle's size). Such a piece (an edge across a whole
 * 50k-eqn drawing, seen zoomed in) is cut to the part near the rectangle before the
 * canvas gets it: flattening a curve millions of px long for the few hundred on screen
 * was most of a frame.
 */
function bigPiece(clip) {
  const w = 4 * (clip.x1 - clip.x0), h = 4 * (clip.y1 - clip.y0);
  return (x0, y0, x1, y1, x2, y2, x3, y3) =>
    Math.max(x0, x1, x2, x3) - Math.min(x0, x1, x2, x3) > w || Math.max(y0, y1, y2, y3) - Math.min(y0, y1, y2, y3) > h;
}

/**
 * The parts of a cubic Bézier (absolute coordinates) near `clip` as drawing commands on
 * `out`: halved (de Casteljau, exact) while a half is much bigger than the rectangle,
 * halves whose hull misses it left out. `pen`: whether the path is at the start point;
 * returns whether it is at the end point.
 */
function cubicIn(out, x0, y0, x1, y1, x2, y2, x3, y3, clip, pen, depth) {
  if (depth === 0 && (x0 <= x1 && x1 <= x2 && x2 <= x3 || x0 >= x1 && x1 >= x2 && x2 >= x3)) {
    // x runs one way (most long edges): take the part over the clip's x range at once
    const up = x3 >= x0, xt = (t) => cubic1(x0, x1, x2, x3, t);
    const ta = up ? solve(xt, clip.x0, true) : solve(xt, clip.x1, false);
    const tb = up ? solve(xt, clip.x1, true) : solve(xt, clip.x0, false);
    if (ta >= tb) return false;
    const q = subCubic(x0, y0, x1, y1, x2, y2, x3, y3, ta, tb);
    const end = cubicIn(out, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], clip, pen && ta === 0, 1);
    return end && tb === 1;
  }
  const lx = Math.min(x0, x1, x2, x3), hx = Math.max(x0, x1, x2, x3);
  const ly = Math.min(y0, y1, y2, y3), hy = Math.max(y0, y1, y2, y3);
  if (lx > clip.x1 || hx < clip.x0 || ly > clip.y1 || hy < clip.y0) return false;
  const cw = clip.x1 - clip.x0, ch = clip.y1 - clip.y0;
  if (depth >= 40 || (hx - lx <= 2 * cw && hy - ly <= 2 * ch)) {
    if (!pen) out.moveTo(x0, y0);
    out.bezierCurveTo(x1, y1, x2, y2, x3, y3);
    return true;
  }
  const ax = (x0 + x1) / 2, ay = (y0 + y1) / 2, bx = (x1 + x2) / 2, by = (y1 + y2) / 2, cx = (x2 + x3) / 2, cy = (y2 + y3) / 2;
  const dx = (ax + bx) / 2, dy = (ay + by) / 2, ex = (bx + cx) / 2, ey = (by + cy) / 2;
  const mx = (dx + ex) / 2, my = (dy + ey) / 2;
  const mid = cubicIn(out, x0, y0, ax, ay, dx, dy, mx, my, clip, pen, depth + 1);
  return cubicIn(out, mx, my, ex, ey, cx, cy, x3, y3, clip, mid, depth + 1);
}

/** The cubic polynomial with Bézier coefficients a, b, c, d at t. */
function cubic1(a, b, c, d, t) {
  const u = 1 - t;
  return u * u * (u * a + 3 * t * b) + t * t * (3 * u * c + t * d);
}

/**
 * For a monotone f on [0, 1] (rising: `up`), where it crosses v, by bisection: 0 or 1
 * when it stays on one side. The result errs towards the outside of the clip by under
 * 2^-40 of the piece (a few millionths of a pixel for a piece millions of px long).
 */
function solve(f, v, up) {
  let lo = 0, hi = 1;
  if ((f(0) >= v) === up) return 0;
  if ((f(1) < v) === up) return 1;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if ((f(mid) < v) === up) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Control points [x0, y0 … x3, y3] of the part of a cubic Bézier between t = a and t = b. */
function subCubic(x0, y0, x1, y1, x2, y2, x3, y3, a, b) {
  const split = (p, t) => {
    // de Casteljau at t: the right part's and the left part's control points
    const l = (i, j) => [p[i] + (p[j] - p[i]) * t, p[i + 1] + (p[j + 1] - p[i + 1]) * t];
    const ab = l(0, 2), bc = l(2, 4), cd = l(4, 6);
    const abc = [ab[0] + (bc[0] - ab[0]) * t, ab[1] + (bc[1] - ab[1]) * t];
    const bcd = [bc[0] + (cd[0] - bc[0]) * t, bc[1] + (cd[1] - bc[1]) * t];
    const m = [abc[0] + (bcd[0] - abc[0]) * t, abc[1] + (bcd[1] - abc[1]) * t];
    return { left: [p[0], p[1], ...ab, ...abc, ...m], right: [...m, ...bcd, ...cd, p[6], p[7]] };
  };
  let p = [x0, y0, x1, y1, x2, y2, x3, y3];
  if (b < 1) p = split(p, b).left;
  if (a > 0) p = split(p, a / b).right;
  return p;
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
