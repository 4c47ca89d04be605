"""The explanation of a JAX concretization error, drawn under the cell's error in real Chromium
(widgets/ui/header.js), for every view kind a capture with a failed jitted call can draw."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import GuardedPage, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_the_error_banner_shows_the_concretization_explanation(guarded_page: GuardedPage, tmp_path: Path) -> None:
    import jax

    import jaxmagic

    with pytest.raises(jax.errors.TracerIntegerConversionError):
        with jaxmagic.capture() as cap:
            f = jax.jit(lambda x, n: sum(x for _ in range(n)))
            f(1.0, 3)
    (finding,) = [f for f in cap.findings if f.kind == "concretization"]
    page = guarded_page.page
    for view in ("graph", "trace"):
        path = tmp_path / f"{view}.html"
        jaxmagic.to_html(cap, path, view=view)
        page.goto(path.as_uri(), wait_until="load")
        shown = page.locator(".jm-error .jm-error-explain")
        assert poll(lambda: shown.count() == 1, 30), (view, guarded_page.report())
        assert shown.inner_text() == finding.message, view
        assert "jax.lax.fori_loop" in shown.inner_text() and "static_argnames=('n',)" in shown.inner_text()
        message = page.locator(".jm-error .jm-error-msg").inner_text()
        assert message.startswith("Cell raised TracerIntegerConversionError"), view
    assert not guarded_page.page_errors and not guarded_page.console_errors, guarded_page.report()
