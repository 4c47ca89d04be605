/**
 * Counting words, one rule for every view: "1 call", "2 calls", "1 miss", "3 misses",
 * "2,614 eqns". The same rule as jaxmagic/units.py `plural` and `count_text`, held to the same
 * answers by tests/fixtures/format-cases.json. A view that needs an irregular plural passes it
 * (`plural(n, "child", "children")`).
 */

/** A finite number (not a bool, not NaN), or null. */
const finite = (x) => (typeof x === "number" && Number.isFinite(x) ? x : null);

/** Thousands separators on the digits of an integer's text: "-2614" -> "-2,614". */
const grouped = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/**
 * `2,614`, `-3`, `1.5`, `?` for a count that is missing or not a finite number. Whole numbers are
 * written in full (BigInt: no exponent however big), as Python writes an int.
 */
export function countText(n) {
  const x = finite(n);
  if (x === null) return "?";
  if (Number.isInteger(x)) return grouped(BigInt(x).toString());
  const [whole, frac] = String(x).split(".");
  return frac === undefined ? String(x) : `${grouped(whole)}.${frac}`;
}

/** The default plural: `+ "es"` after s, sh, ch and x (`misses`, `branches`), else `+ "s"`. */
const pluralOf = (w) => (/(s|sh|ch|x)$/.test(w) ? w + "es" : w + "s");

/** `n` and the word, singular for exactly 1 and plural otherwise (0 calls, 2 calls, ? calls). */
export const plural = (n, w, ws = pluralOf(w)) => `${countText(n)} ${finite(n) === 1 ? w : ws}`;
