/**
 * Sizes and durations as people read them, one rule for every view: the front end's home of
 * jaxmagic/units.py `bytes_text` and `duration_text`, held to the same answers by
 * tests/fixtures/format-cases.json (js/test/format-cases.test.js, tests/test_format_cases.py).
 * A figure that is missing or not a finite number reads `?` (`—` for a duration), never a
 * made-up zero. Counts and plurals: widgets/ui/words.js; line names: widgets/ui/source-text.js.
 */
import { plural } from "./words.js";

const finite = (x) => (typeof x === "number" && Number.isFinite(x) ? x : null);
/** @type {[string, number][]} */
const BYTE_UNITS = [["GB", 2 ** 30], ["MB", 2 ** 20], ["KB", 2 ** 10]];

/** `1 byte`, `48 bytes`, `1,000 bytes`, `1.5 KB`, `2.0 MB`, `1.1 GB` (binary units); `?` for a bad size. */
export function bytesText(n) {
  const size = finite(n);
  if (size === null || size < 0) return "?";
  for (const [unit, scale] of BYTE_UNITS) if (size >= scale) return `${(size / scale).toFixed(1)} ${unit}`;
  return plural(size, "byte");
}

/**
 * `x` to three significant digits, halves away from zero on its exact value (`toPrecision`),
 * without exponent or trailing zeros: `1.13`, `750`, `1000`.
 */
const threeDigits = (x) => {
  const v = +x.toPrecision(3);
  return Number.isInteger(v) ? BigInt(v).toString() : String(v);
};

/** `750 µs`, `1.25 ms`, `2.5 s`, `—` for a missing figure: three significant digits of a µs count. */
export function durationText(us) {
  const t = finite(us);
  if (t === null) return "—";
  const a = Math.abs(t);
  if (a < 1000) return `${threeDigits(t)} µs`;
  if (a < 1e6) return `${threeDigits(t / 1000)} ms`;
  return `${threeDigits(t / 1e6)} s`;
}
