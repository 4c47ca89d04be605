"""docs/design.md opens with the module map, made from the modules' own docstrings: it names every
module under jaxmagic/ and widgets/ and no module that is gone (tools/module_map.py)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_module_map_in_design_md_is_current():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "module_map.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_map_names_every_module_once():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import module_map
    finally:
        sys.path.remove(str(ROOT / "tools"))
    text = (ROOT / "docs" / "design.md").read_text()
    mapped = text[text.index(module_map.START) : text.index(module_map.END)]
    files = [p for _, group in module_map.modules() for p in group]
    assert len(files) > 200  # the test can fail: every Python module and every front-end module
    for p in files:
        assert f"* `{p.name}`" in mapped, p
    undocumented = [p for p in files if not (module_map.python_doc(p) if p.suffix == ".py" else module_map.js_doc(p))]
    assert undocumented == [], f"modules without a docstring saying what they are for: {undocumented}"
