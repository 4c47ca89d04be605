/**
 * How every view names a line of code for a reader: `cell [3], line 7` for a line of a notebook
 * cell (as IPython's own tracebacks say "Cell In[3], line 7"), `train.py:12` elsewhere. A cell's
 * file is `<ipython-input-3-…>` (IPython, Colab), `<cell 3>`, or the file ipykernel writes each
 * cell to (`/tmp/ipykernel_4242/526010223.py`), whose name means nothing to a reader.
 *
 * Which cell a file holds comes from the document's `cells` ({file: execution count}, written
 * from IPython's map when the document was built): `mount` hands each document's to
 * `rememberCells` before drawing it. Without it (IPython 7, Colab's ipykernel files, a document
 * made outside a notebook) a cell's line reads `line 7`. Every function here also takes a
 * document's `cells` as its last argument, to name lines from that document alone (as Python's
 * `names` argument). The Python side says it the same way (capture/source.py `where_text`), held
 * to the same answers by tests/fixtures/format-cases.json.
 */

const CELL_FILE = /^<.*>$|[\\/]ipykernel_\d+[\\/]\d+\.py$/;
/** IPython before 8 (and Colab) put the execution count in the file's name. */
const INPUT_NUMBER = /^<ipython-input-(\d+)-/;

/**
 * file -> execution count, from every document drawn in this page. A kernel names a cell's file
 * after its code, so one file is one code text: if it ran twice, the latest count is kept.
 */
const cellNumbers = new Map();

/** Learn a document's `cells`; anything but `{string: integer}` entries is ignored. */
export function rememberCells(cells) {
  if (!cells || typeof cells !== "object" || Array.isArray(cells)) return;
  for (const [file, n] of Object.entries(cells)) {
    if (Number.isInteger(n) && n >= 0) cellNumbers.set(file, n);
  }
}

/** True for a notebook cell's file. */
export function isCellFile(file) {
  return !!file && CELL_FILE.test(String(file));
}

/** A document's `cells` entry for `file` when it is a count, else undefined. */
function countIn(cells, file) {
  if (!cells || typeof cells !== "object" || !Object.hasOwn(cells, file)) return undefined;
  const n = cells[file];
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * The execution count of the cell `file` holds (3 for `In [3]`), or null when unknown: from
 * `cells` when given, else from every document drawn in this page.
 */
export function cellNumber(file, cells) {
  if (!file) return null;
  const known = cells === undefined ? cellNumbers.get(String(file)) : countIn(cells, String(file));
  if (known != null) return known;
  const m = INPUT_NUMBER.exec(String(file));
  return m ? Number(m[1]) : null;
}

/** `cell [3]` for a cell whose number is known, else null. */
export function cellName(file, cells) {
  const n = isCellFile(file) ? cellNumber(file, cells) : null;
  return n == null ? null : `cell [${n}]`;
}

/**
 * `cell [3], line 7` (a cell; `line 7` when its number is unknown) or `train.py:12` (a file, by
 * its name); `line` may be missing (then `cell [3]`, or the file's name).
 */
export function shortWhere(file, line, cells) {
  const hasLine = line != null && line !== "";
  if (!file || isCellFile(file)) {
    const cell = cellName(file, cells);
    if (!hasLine) return cell || "";
    return cell ? `${cell}, line ${line}` : `line ${line}`;
  }
  const base = String(file).split(/[\\/]/).pop();
  return hasLine ? `${base}:${line}` : base;
}

/**
 * Several lines of one place: `cell [3], lines 44–45`, `train.py:12–14`, `line 54`; null when the
 * places differ (the caller lists them) or `lines` is empty.
 */
export function linesWhere(file, lines, cells) {
  const v = [...new Set(lines.filter((x) => Number.isFinite(x)))].sort((a, b) => a - b);
  if (!v.length) return null;
  if (v.length === 1) return shortWhere(file, v[0], cells);
  const range = `${v[0]}–${v[v.length - 1]}`;
  if (!file || isCellFile(file)) {
    const cell = cellName(file, cells);
    return cell ? `${cell}, lines ${range}` : `lines ${range}`;
  }
  return `${String(file).split(/[\\/]/).pop()}:${range}`;
}

/** The full `path:line`, for a tooltip under the short name (where the file really is). */
export function fullWhere(file, line) {
  if (!file) return "";
  return line != null && line !== "" ? `${file}:${line}` : String(file);
}
