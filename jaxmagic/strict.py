"""Strict mode: `JAXMAGIC_STRICT=1` turns jaxmagic's silent fallbacks into errors.

A fallback keeps the user's cell and view working when a JAX release moves an internal jaxmagic
reads, or a text JAX prints changes shape: the feature degrades instead of failing. The same
fallback would hide that break from jaxmagic's own tests, so the test suite runs strict and a
probe that stops finding what it looks for fails loudly there. Users never set it.
"""

from __future__ import annotations

import os

ENV = "JAXMAGIC_STRICT"


class FallbackTaken(AssertionError):
    """A fallback that strict mode forbids was taken: what degraded, and the error behind it."""


def enabled() -> bool:
    """Read each time (not at import), so a test can switch it with monkeypatch.setenv."""
    return os.environ.get(ENV, "") not in ("", "0")


def fallback(what: str, error: BaseException | None = None) -> None:
    """Mark a silent degradation; raises `FallbackTaken` under strict mode, returns otherwise.

    Call it in the `except` of a handler that would otherwise `pass`, with what the user loses
    ("HLO line links", "the compile cache counters"), so the strict failure says it.
    """
    if enabled():
        raise FallbackTaken(f"jaxmagic fell back: {what}") from error
