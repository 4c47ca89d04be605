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
 * anything with those methods). It starts and ends exactly at the polygon's ends.
 */
export function traceCurve(pts, out) {
  const p = controlPoints(pts);
  const at = (i) => p[Math.max(0, Math.min(p.length - 1, i))];
  out.moveTo(p[0][0], p[0][1]);
  out.lineTo((5 * p[0][0] + p[1][0]) / 6, (5 * p[0][1] + p[1][1]) / 6);
  for (let i = 2; i <= p.length; i++) {
    const [p0, p1, q] = [at(i - 2), at(i - 1), at(i)];
    out.bezierCurveTo(
      (2 * p0[0] + p1[0]) / 3, (2 * p0[1] + p1[1]) / 3,
      (p0[0] + 2 * p1[0]) / 3, (p0[1] + 2 * p1[1]) / 3,
      (p0[0] + 4 * p1[0] + q[0]) / 6, (p0[1] + 4 * p1[1] + q[1]) / 6,
    );
  }
  const z = p[p.length - 1];
  out.lineTo(z[0], z[1]);
}

/** The same spline as an SVG path `d` (coordinates rounded to 0.1 px). */
export function curve(pts) {
  const f = (v) => Math.round(v * 10) / 10;
  let d = "";
  traceCurve(pts, {
    moveTo: (x, y) => (d += `M${f(x)},${f(y)}`),
    lineTo: (x, y) => (d += `L${f(x)},${f(y)}`),
    bezierCurveTo: (a, b, c, e, x, y) => (d += `C${f(a)},${f(b)} ${f(c)},${f(e)} ${f(x)},${f(y)}`),
  });
  return d;
}
