"""The module map at the top of docs/design.md: one line per module, from each module's own docstring.

The map is made from the code, so it cannot name a module that is gone or miss a new one:
`python tools/module_map.py` rewrites it, `--check` fails when it is stale (tests/test_module_map.py).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"
START, END = "<!-- module map: start -->", "<!-- module map: end -->"
WIDTH = 150  # one line per module: the first sentence, cut here
JSDOC = re.compile(r"/\*\*(.*?)\*/", re.S)


def first_sentence(text: str) -> str:
    """The docstring's first sentence on one line (a sentence ends at '. ' or at a blank line)."""
    para = " ".join(text.strip().split("\n\n")[0].split())
    match = re.search(r"(?<=[a-z0-9)`\]])\.(\s|$)", para)
    sentence = para[: match.start() + 1] if match else para
    return sentence if len(sentence) <= WIDTH else sentence[: WIDTH - 1].rstrip() + "…"


def python_doc(path: Path) -> str:
    return first_sentence(ast.get_docstring(ast.parse(path.read_text())) or "")


def js_doc(path: Path) -> str:
    match = JSDOC.search(path.read_text())
    if not match:
        return ""
    return first_sentence(re.sub(r"^\s*\* ?", "", match.group(1), flags=re.M))


def modules() -> list[tuple[str, list[Path]]]:
    """(heading, files) for every Python package and front-end folder, in data-flow order."""
    py = sorted(p for p in (ROOT / "jaxmagic").rglob("*.py") if "__pycache__" not in p.parts)
    js = sorted(p for p in (ROOT / "widgets").rglob("*") if p.suffix == ".js" or p.name.endswith(".d.ts"))
    groups: dict[str, list[Path]] = {}
    for p in py + js:
        groups.setdefault(str(p.parent.relative_to(ROOT)), []).append(p)
    order = ["jaxmagic", "jaxmagic/capture", "jaxmagic/model", "jaxmagic/schema", "jaxmagic/views", "widgets"]

    def rank(folder: str) -> tuple[int, str]:
        best = max((i for i, o in enumerate(order) if folder == o or folder.startswith(o + "/")), default=len(order))
        return best, folder

    return [(folder, groups[folder]) for folder in sorted(groups, key=rank)]


def render() -> str:
    lines = [START, ""]
    for folder, files in modules():
        lines.append(f"**{folder}/**")
        lines.append("")
        for p in files:
            doc = python_doc(p) if p.suffix == ".py" else js_doc(p)
            lines.append(f"* `{p.name}` {doc}".rstrip())
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def current() -> str:
    text = DESIGN.read_text()
    return text[text.index(START) : text.index(END) + len(END)]


def main(argv: list[str]) -> int:
    fresh = render()
    if "--check" in argv:
        if current() != fresh:
            print("docs/design.md's module map is stale: run python tools/module_map.py", file=sys.stderr)
            return 1
        return 0
    text = DESIGN.read_text()
    DESIGN.write_text(text.replace(current(), fresh))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
