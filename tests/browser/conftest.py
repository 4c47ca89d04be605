"""Browser tests run only where Chromium is: skipped without it unless CI demands them.

With `JAXMAGIC_REQUIRE_BROWSER` set (CI), a missing browser or Playwright is a test
failure with the reason, never a skip.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from .harness import (  # noqa: F401 - fixtures
    CHROMIUM,
    DEMO_NOTEBOOK,
    PYTHON,
    ExpectedView,
    chromium_browser,
    guarded_page,
    once_per_run,
    oracle_payload,
    run_isolated,
    views_of,
)


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM}"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"Playwright for Python is not installed ({exc})"
    return None


@pytest.fixture(scope="session", autouse=True)
def _browser_available() -> None:
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("JAXMAGIC_REQUIRE_BROWSER"):
        pytest.fail(f"JAXMAGIC_REQUIRE_BROWSER is set but {reason}", pytrace=False)
    pytest.skip(f"{reason} (set JAXMAGIC_REQUIRE_BROWSER=1 to make this a failure)")


class ExportedDemo:
    """The demo exported once per session with `python -m jaxmagic.export --execute`, as a user shares it."""

    def __init__(self, path: Path, seconds: float) -> None:
        self.path = path
        self.seconds = seconds  # wall time of the export, for the tests that report it


@pytest.fixture(scope="session")
def exported_demo(tmp_path_factory: pytest.TempPathFactory) -> ExportedDemo:
    """One export for every test that opens the demo page, shared by the run's workers (each export
    runs the demo in a kernel: ~15 s alone, 35 s in a loaded run)."""

    def export(folder: Path) -> dict:
        t0 = time.monotonic()
        out = folder / "demo.html"
        proc = run_isolated(
            [PYTHON, "-m", "jaxmagic.export", str(DEMO_NOTEBOOK), "--execute", "-o", str(out)], timeout=240
        )
        assert proc.returncode == 0 and out.exists(), (
            f"export failed (rc={proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
        return {"seconds": round(time.monotonic() - t0, 2)}

    folder, result = once_per_run(tmp_path_factory, "exported-demo", export)
    return ExportedDemo(folder / "demo.html", result["seconds"])


@pytest.fixture(scope="session")
def demo_views(tmp_path_factory: pytest.TempPathFactory) -> list[ExpectedView]:
    """The oracle's views of the demo (a plain run of it: ~18 s), once for the run's workers."""
    _, payload = once_per_run(tmp_path_factory, "demo-oracle", lambda _folder: oracle_payload(DEMO_NOTEBOOK))
    return views_of(payload)
