/**
 * Generic search over records of the form
 *   { id, text: string[] (substring match), exact: string[] (whole-word match),
 *     locs: {file, line}[] (source locations) }.
 * Matching is case-insensitive. One-character queries only match whole words (a
 * search for var `s` should not hit every primitive containing "s"). A query
 * shaped like `file:line` (or `:line`) matches
 * locations whose line is equal and whose path contains the file part; a query
 * that looks like a path (has `.`, `/` or `\`) matches locations whose path contains it.
 */
import { plural } from "./words.js";

/** Compile a query into a predicate over records; null for an empty query. */
export function matcher(query) {
  const q = String(query || "").trim().toLowerCase();
  if (!q) return null;
  const loc = /^(.*):(\d+)$/.exec(q);
  const locFile = loc ? loc[1] : null, locLine = loc ? Number(loc[2]) : null;
  const sub = q.length > 1;
  const fileLike = /[./\\]/.test(q);
  return (r) => {
    if ((r.text || []).some((s) => (sub ? String(s).toLowerCase().includes(q) : String(s).toLowerCase() === q))) return true;
    if ((r.exact || []).some((s) => String(s).toLowerCase() === q)) return true;
    return (r.locs || []).some((l) => {
      if (!l || !l.file) return false;
      const f = String(l.file).toLowerCase();
      return loc ? l.line === locLine && f.includes(locFile) : fileLike && f.includes(q);
    });
  };
}

/** Ids of the records matching `query`, in record order. */
export function search(records, query) {
  const m = matcher(query);
  return m ? records.filter(m).map((r) => r.id) : [];
}

/** Step through `n` matches from `i` by `dir` (+1 / -1), wrapping around. */
export function step(i, n, dir) {
  if (!n) return -1;
  if (i < 0) return dir > 0 ? 0 : n - 1;
  return (((i + dir) % n) + n) % n;
}

/** "1 match", "3 matches", "" for no query. */
export function countText(n, query) {
  if (!String(query || "").trim()) return "";
  return plural(n, "match");
}
