/**
 * Counting words, one rule for every view: "1 call", "2 calls", "1 child", "3 children".
 * A view that needs an irregular plural passes it (`plural(n, "child", "children")`).
 */

/** `n` and the word, singular for exactly 1 and plural otherwise (0 calls, 2 calls). */
export const plural = (n, w, ws = w + "s") => `${n} ${n === 1 ? w : ws}`;
