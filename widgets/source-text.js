/**
 * How every view names a line of code for a reader: `line 7` for a line of a notebook cell,
 * `train.py:12` elsewhere. A cell's file is `<ipython-input-3-…>` (IPython, Colab), `<cell 3>`,
 * or the file ipykernel writes each cell to (`/tmp/ipykernel_4242/526010223.py`), whose name
 * means nothing to a reader. The Python side says it the same way (capture/source.py `where_text`).
 */

const CELL_FILE = /^<.*>$|[\\/]ipykernel_\d+[\\/]\d+\.py$/;

/** True for a notebook cell's file. */
export function isCellFile(file) {
  return !!file && CELL_FILE.test(String(file));
}

/** `line 7` (a cell) or `train.py:12` (a file, by its name); `line` may be missing. */
export function shortWhere(file, line) {
  const hasLine = line != null && line !== "";
  if (!file || isCellFile(file)) return hasLine ? `line ${line}` : "";
  const base = String(file).split(/[\\/]/).pop();
  return hasLine ? `${base}:${line}` : base;
}
