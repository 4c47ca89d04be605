/**
 * Pure text formatting of the numbers a graph document carries: SI quantities
 * (FLOPs, bytes), value summaries of recorded arrays (`fn.values`) and avals with
 * the vmap batch dimension marked (`fn.batch`). Shared by the details panel, the
 * edge-label modes and the cost legend so the same number reads the same everywhere.
 */

const PREFIX = ["", "k", "M", "G", "T", "P", "E"];

/** `1.23 GFLOP`, `512 B`, `—` for a missing figure. Decimal (SI) prefixes. */
export function si(n, unit) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "—";
  let v = Math.abs(n), i = 0;
  // Round first, then step: 999.96 must read "1 k", not "1000".
  while (i < PREFIX.length - 1 && +v.toPrecision(3) >= 1000) {
    v /= 1000;
    i++;
  }
  return `${n < 0 ? "-" : ""}${+v.toPrecision(3)} ${PREFIX[i]}${unit}`;
}

/** A compact number for labels: `3`, `-1.2`, `0.5`, `1.2e5`, `3e-7`. */
export function num(x) {
  if (typeof x !== "number") return x == null ? "?" : String(x);
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "Inf" : "-Inf";
  const a = Math.abs(x);
  if (Number.isInteger(x) && a < 1e6) return String(x);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return x.toExponential(1).replace("e+", "e").replace(".0e", "e");
  return String(+x.toPrecision(3));
}

/**
 * Summary of one recorded value: `{text, bad}`. `text` is the printed value when the
 * document has one (tiny arrays), else `[min … max] μ mean`; `bad` is `NaN 3 Inf 1`
 * (shown in red by callers) or "" when the value is clean. Null for no record.
 */
export function valueSummary(v) {
  if (!v || typeof v !== "object") return null;
  let text;
  if (v.value != null) text = cutText(String(v.value).replace(/\s+/g, " "), 48); // one line
  else {
    const parts = [];
    if (v.min != null || v.max != null) parts.push(`[${num(v.min)} … ${num(v.max)}]`);
    if (v.mean != null) parts.push(`μ ${num(v.mean)}`);
    text = parts.join(" ");
  }
  const bad = [v.nan > 0 ? `NaN ${v.nan}` : "", v.inf > 0 ? `Inf ${v.inf}` : ""].filter(Boolean).join(" ");
  return { text, bad };
}

/** The summary as one string (text then the NaN/Inf counts). */
export function valueText(v) {
  const s = valueSummary(v);
  return s ? [s.text, s.bad].filter(Boolean).join(" ") : "";
}

/**
 * `f32[8,3]` with the batch dimension at `pos` marked: `f32[‹8›,3]`. Unchanged when
 * `pos` is null (not batched) or does not name a dimension of the aval.
 */
export function batchAval(aval, pos) {
  const s = String(aval ?? "");
  if (!Number.isInteger(pos) || pos < 0) return s;
  const a = s.indexOf("["), b = s.indexOf("]", a + 1);
  if (a < 0 || b < 0) return s;
  const dims = s.slice(a + 1, b).split(",");
  if (pos >= dims.length || !dims[pos].trim()) return s;
  dims[pos] = dims[pos].replace(/\S.*\S|\S/, (d) => `‹${d}›`);
  return s.slice(0, a + 1) + dims.join(",") + s.slice(b);
}

/** Cut long text with an ellipsis. */
export const cutText = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
