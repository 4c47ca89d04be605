/**
 * Text of the numbers and specs a sharding document carries, written the way JAX and
 * the Python side write them, so the widget, the findings (jaxmagic/units.py) and the
 * user's code read alike. Pure functions.
 */
import { shortWhere } from "../ui/source-text.js";

/** `1 byte`, `48 bytes`, `1.5 KB`, `2.0 MB`: widgets/ui/format.js, the rule jaxmagic/units.py shares. */
export { bytesText } from "../ui/format.js";

/** `3 arrays`, `1 array`. */
export { plural } from "../ui/words.js";

/** `f32[512,512]`; `f32[]` for a scalar. */
export const avalText = (dtype, shape) => `${dtype}[${(shape || []).join(",")}]`;

const quoted = (s) => `'${String(s)}'`;

/**
 * A PartitionSpec as JAX prints it: `P('x', 'y')`, `P(None, 'y')`, `P(('data', 'model'),)`, `P()`.
 * Null for no spec.
 */
export function specText(spec, unreduced) {
  if (!Array.isArray(spec)) return null;
  const part = (e) => (e == null ? "None" : Array.isArray(e) ? `(${e.map(quoted).join(", ")}${e.length === 1 ? "," : ""})` : quoted(e));
  // JAX prints unreduced axes after the entries: P('y', None, unreduced={'x'})
  const ur = Array.isArray(unreduced) && unreduced.length ? [`unreduced={${unreduced.map(quoted).join(", ")}}`] : [];
  const parts = [...spec.map(part), ...ur];
  return `P(${parts.join(", ")}${spec.length === 1 && !ur.length ? "," : ""})`;
}

/** How an array is placed, in one phrase: its spec, `device 3`, or the sharding's kind. */
export function shardingText(s) {
  if (!s || typeof s !== "object") return "?";
  if (Array.isArray(s.spec)) return specText(s.spec, s.unreduced);
  if (s.kind === "single_device" && Array.isArray(s.devices) && s.devices.length === 1) return `device ${s.devices[0]}`;
  return String(s.kind || "?");
}

/** How a jitted call's leaf is placed: its spec, `single device`, or the sharding's class. */
export function leafText(leaf) {
  if (Array.isArray(leaf.spec)) return specText(leaf.spec, leaf.unreduced);
  if (leaf.kind === "SingleDeviceSharding") return "single device";
  return leaf.kind ? String(leaf.kind) : "—";
}

/** A block's index as a slice: `[0:256, 128:256]`; `[]` for a scalar. */
export const sliceText = (index) => `[${(index || []).map((r) => `${r[0]}:${r[1]}`).join(", ")}]`;

/** Device ids as a short list: `0, 4` or `0, 1, 2, … (+250)`; at most `max` ids. */
export function idsText(ids, max = 12) {
  const shown = ids.slice(0, max).join(", ");
  return ids.length > max ? `${shown}, … (+${ids.length - max})` : shown;
}

/** `cell [3], line 12` in a notebook cell, `file.py:12` elsewhere (widgets/ui/source-text.js); "" without one. */
export function whereText(src) {
  if (!src || typeof src !== "object" || !src.file) return "";
  return shortWhere(String(src.file), src.line);
}
