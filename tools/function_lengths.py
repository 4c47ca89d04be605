"""The longest functions in jaxmagic/ (Python) and widgets/ (JS), inner closures counted in their parent.

`python tools/function_lengths.py [N]` lists the N longest of each (default 10). The limits the
project keeps: about 80 lines, never over 100 in Python or 120 in JS. JS is measured with the
TypeScript compiler's parser (js/node_modules), so run it after `./dev test` or `npm ci` in js/.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

JS_WALK = r"""
const ts = require(process.argv[1]); const fs = require('fs'); const path = require('path');
const files = []; (function walk(d) { for (const f of fs.readdirSync(d)) { const p = path.join(d, f);
  if (fs.statSync(p).isDirectory()) walk(p); else if (p.endsWith('.js')) files.push(p); } })(process.argv[2]);
const rows = [];
for (const f of files) {
  const sf = ts.createSourceFile(f, fs.readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true);
  (function visit(n) {
    if (ts.isFunctionLike(n) && n.body) {
      const a = sf.getLineAndCharacterOfPosition(n.getStart()).line, b = sf.getLineAndCharacterOfPosition(n.end).line;
      const name = n.name ? n.name.getText() : (n.parent && n.parent.name ? n.parent.name.getText() : '<anonymous>');
      rows.push([b - a + 1, path.relative(process.argv[3], f), name]);
    }
    ts.forEachChild(n, visit);
  })(sf);
}
console.log(JSON.stringify(rows));
"""


def python_functions() -> list[tuple[int, str, str]]:
    rows = []
    for path in sorted((ROOT / "jaxmagic").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                rows.append((node.end_lineno - node.lineno + 1, str(path.relative_to(ROOT)), node.name))
    return sorted(rows, reverse=True)


def js_functions() -> list[tuple[int, str, str]]:
    typescript = ROOT / "js" / "node_modules" / "typescript"
    out = subprocess.run(
        ["node", "-e", JS_WALK, str(typescript), str(ROOT / "widgets"), str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted((tuple(row) for row in json.loads(out)), reverse=True)


def main(argv: list[str]) -> int:
    most = int(argv[0]) if argv else 10
    for language, rows, limit in (("Python", python_functions(), 100), ("JS", js_functions(), 120)):
        over = sum(1 for n, _, _ in rows if n > 80)
        print(
            f"{language}: {len(rows)} functions, {over} over 80 lines, {sum(1 for r in rows if r[0] > limit)} over {limit}"
        )
        for n, path, name in rows[:most]:
            print(f"  {n:4d}  {path}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
