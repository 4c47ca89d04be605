"""The one-way flow docs/design.md draws, checked on the sources: capture never imports model, views or
widget code; model never imports views; views never import JAX; nothing outside capture/jax_compat/
names JAX's internals."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "jaxmagic"


def _imports(path: Path) -> list[str]:
    """Every module `path` imports, absolute, relative ones resolved against its package."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found += [module] + [f"{module}.{alias.name}" for alias in node.names]
    return found


def _sources(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("capture", ("jaxmagic.model", "jaxmagic.views", "jaxmagic.magics", "jaxmagic.api")),
        ("model", ("jaxmagic.views", "jaxmagic.magics", "jaxmagic.api")),
        ("schema", ("jax", "jaxmagic.capture", "jaxmagic.model", "jaxmagic.views")),
        ("views", ("jax", "jaxmagic.capture.jax_compat")),
    ],
)
def test_imports_flow_one_way(folder, forbidden):
    sources = _sources(folder)
    assert sources  # the test can fail: the folder has modules to read
    wrong = [
        (str(path.relative_to(PACKAGE)), module)
        for path in sources
        for module in _imports(path)
        if any(module == f or module.startswith(f + ".") for f in forbidden)
    ]
    assert wrong == []


def test_only_the_compat_package_names_jax_internals():
    outside = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "jax_compat" not in path.parts and ("jax._src" in path.read_text() or "jax/_src" in path.read_text())
    ]
    assert outside == []
