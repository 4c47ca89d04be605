"""Browser tests run only where Chromium is: skipped without it unless CI demands them.

With `JAXMAGIC_REQUIRE_BROWSER` set (CI), a missing browser or Playwright is a test
failure with the reason, never a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .harness import CHROMIUM, DEMO_NOTEBOOK, PYTHON, chromium_browser, guarded_page, run_isolated  # noqa: F401 - fixtures


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
    """One export for every test that opens the demo page (each export runs the demo in a kernel, ~15 s)."""
    import time

    out = tmp_path_factory.mktemp("exported") / "demo.html"
    t0 = time.monotonic()
    proc = run_isolated([PYTHON, "-m", "jaxmagic.export", str(DEMO_NOTEBOOK), "--execute", "-o", str(out)], timeout=240)
    assert proc.returncode == 0 and out.exists(), (
        f"export failed (rc={proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return ExportedDemo(out, round(time.monotonic() - t0, 2))
