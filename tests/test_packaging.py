"""What a user installs: the wheel and the sdist hold exactly the package, its built bundles and the licence.

Built here with the project's own backend (hatchling, no build isolation: no download), so a
stray file in the tree, a bundle the build list forgot or a missing LICENSE fails this test
rather than a user's install.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytest.importorskip("hatchling", reason="the packaging tests build with hatchling (in the test extras)")


def _tracked(prefix: str) -> set[str]:
    out = subprocess.run(["git", "ls-files", prefix], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines() if line}


def _bundles() -> set[str]:
    """One bundle per widgets/entries/<kind>.js, the all-kinds bundle for pages, the widgets' packed loader."""
    kinds = sorted(p.stem for p in (REPO / "widgets" / "entries").glob("*.js"))
    return {"jaxmagic/static/jaxmagic.js", "jaxmagic/static/packed-loader.js"} | {
        f"jaxmagic/static/jaxmagic-{k}.js" for k in kinds
    }


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    for target in ("wheel", "sdist"):
        proc = subprocess.run(
            [sys.executable, "-m", "hatchling", "build", "-t", target, "-d", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_wheel_holds_the_package_its_bundles_and_the_licence(dist: Path) -> None:
    (wheel,) = dist.glob("jaxmagic-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    info = {n for n in names if ".dist-info/" in n}
    code = {n for n in names - info}
    python = {p for p in _tracked("jaxmagic") if p.endswith(".py")}
    assert code == python | _bundles()
    assert {n.split(".dist-info/")[1] for n in info} == {"METADATA", "WHEEL", "RECORD", "licenses/LICENSE"}
    meta = Parser().parsestr(zipfile.ZipFile(wheel).read(next(n for n in info if n.endswith("METADATA"))).decode())
    assert meta["License-Expression"] == "Apache-2.0"
    assert "export" in meta.get_all("Provides-Extra")
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("nbformat") and "extra == 'export'" in r.replace('"', "'") for r in requires)
    licence = zipfile.ZipFile(wheel).read(next(n for n in info if n.endswith("licenses/LICENSE"))).decode()
    assert "Apache License" in licence and "Version 2.0" in licence


def test_sdist_holds_what_builds_the_wheel(dist: Path) -> None:
    (sdist,) = dist.glob("jaxmagic-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ["LICENSE", "README.md", "pyproject.toml", "docs/design.md", *_bundles()]:
        assert needed in names, needed
    assert not any(n.startswith(("tests/", "build/", "js/", ".venv")) for n in names)
    assert {p for p in _tracked("jaxmagic") if p.endswith(".py")} <= names


def test_build_lists_every_bundle_the_front_end_builds() -> None:
    """A new widgets/entries/<kind>.js must be added to pyproject's lists, or the wheel would lack it."""
    text = (REPO / "pyproject.toml").read_text()
    for bundle in _bundles():
        assert text.count(f'"{bundle}" = "{bundle}"') == 2, f"{bundle} missing from the wheel or sdist force-include"


def test_export_says_which_extra_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from jaxmagic import export

    monkeypatch.setitem(sys.modules, "nbformat", None)  # as if not installed: import raises ImportError
    assert export.main([str(REPO / "demo.ipynb")]) == 2
    err = capsys.readouterr().err
    assert "needs nbformat" in err and "pip install 'jaxmagic[export]'" in err
    monkeypatch.delitem(sys.modules, "nbformat")
    assert export.main([str(tmp_path / "missing.ipynb")]) == 2
    assert "no notebook at" in capsys.readouterr().err
    (tmp_path / "bad.ipynb").write_text("not json")
    assert export.main([str(tmp_path / "bad.ipynb")]) == 2
    assert "is not a notebook" in capsys.readouterr().err


def test_to_dot_says_which_extra_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import jaxmagic

    from .programs import PROGRAMS

    with jaxmagic.capture() as cap:
        fn, args, kwargs = PROGRAMS["sin_cos"]()
        fn(*args, **kwargs)
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match=r"pip install 'jaxmagic\[dot\]'"):
        jaxmagic.to_dot(cap)
