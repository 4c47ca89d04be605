"""Browser tests run only where Chromium is: skipped without it unless CI demands them.

With `JAXMAGIC_REQUIRE_BROWSER` set (CI), a missing browser or Playwright is a test
failure with the reason, never a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .harness import CHROMIUM, chromium_browser, guarded_page  # noqa: F401 - fixtures


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
