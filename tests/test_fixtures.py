"""Every committed fixture is a valid document and is what its generator makes now.

The fixtures (tests/fixtures/, js/test/fixtures/) are made by one command, `./dev fixtures`
(tools/make_fixtures.py). A fixture that is not what the generators make now is a test of an
older jaxmagic; a document that does not match its declaration (jaxmagic/schema/) is a test of
a document jaxmagic cannot make.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from jaxmagic.schema.validate import check

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import make_fixtures  # noqa: E402

FOLDERS = (ROOT / "tests" / "fixtures", ROOT / "js" / "test" / "fixtures")


def _documents() -> list[Path]:
    """The fixtures that are documents (other JSON fixtures, e.g. format-cases.json, are tables)."""
    found = []
    for folder in FOLDERS:
        for path in sorted(folder.glob("*.json")):
            if json.loads(path.read_text(encoding="utf-8")).get("schema") == "jaxmagic":
                found.append(path)
    return found


def test_the_documents_are_the_generated_and_hand_written_ones() -> None:
    listed = {ROOT / p for p in (*make_fixtures.HAND_MADE, *make_fixtures.HAND_WRITTEN)}
    made_names = {p.name for p in _documents()} - {p.name for p in listed}
    assert {p for p in listed if not p.is_file()} == set()
    assert made_names, "no generated document fixtures found"


@pytest.mark.parametrize("path", _documents(), ids=lambda p: p.name)
def test_every_fixture_matches_its_declaration(path: Path) -> None:
    check(json.loads(path.read_text(encoding="utf-8")))


def test_the_committed_fixtures_are_current() -> None:
    """Regenerate every fixture in a temporary folder and compare (a real timeline but for its
    times). About 40 s of CPU: the generators are six small JAX programs, two at a time. Only on the
    JAX they were made with: they hold JAX's texts and numbers, which another JAX writes otherwise."""
    import jax

    if make_fixtures.made_with() != jax.__version__:
        pytest.skip(f"the fixtures were made with JAX {make_fixtures.made_with()}, this is JAX {jax.__version__}")
    start = time.perf_counter()
    stale = make_fixtures.stale()
    assert not stale, f"stale fixtures (run ./dev fixtures and commit them): {stale}"
    print(f"fixtures regenerated and compared in {time.perf_counter() - start:.1f} s")


def test_a_fixture_matches_through_float_noise_and_nothing_else() -> None:
    """XLA's CPU reductions add in an order that follows the machine's vector width: a fixture made
    on another CPU differs in last bits (and in a near-zero mean's text). That passes; a changed
    word, count or structure does not."""
    committed = {
        "message": "the gradient of b has RMS 1.05e-09 (below 1e-07)",
        "value": "[[-0.007849  2.021404]\n [ 0.        1.5     ]]",
        "mean": -2.07e-11,
        "norm": 118.24223925155614,
        "n": 3,
        "ok": True,
    }
    noisy = {
        "message": "the gradient of b has RMS 3.73e-09 (below 1e-07)",
        "value": "[[-0.00785   2.021403]\n [ 1.2e-10   1.5     ]]",
        "mean": 1.72e-09,
        "norm": 118.24223924135683,
        "n": 3,
        "ok": True,
    }
    same = make_fixtures.same
    assert same("x.json", json.dumps(noisy), json.dumps(committed))
    for key, changed in [
        ("message", "the gradient of w has RMS 1.05e-09 (below 1e-07)"),
        ("message", "the gradient of b has RMS 1.05e-03 (below 1e-07)"),
        ("value", "[[-0.007849  2.021404]]"),
        ("n", 4),
        ("ok", 1),
        ("norm", 119.2),
    ]:
        assert not same("x.json", json.dumps({**committed, key: changed}), json.dumps(committed)), key
    assert not same("x.json", json.dumps({**committed, "extra": 1}), json.dumps(committed))
