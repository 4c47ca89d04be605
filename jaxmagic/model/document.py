"""The envelope every JSON document shares (see docs/schema.md)."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from ..capture.record import Capture, SourceLocation

SCHEMA = "jaxmagic"


def source_json(loc: SourceLocation | None) -> dict | None:
    if loc is None:
        return None
    return {"file": loc.file, "line": loc.line, "col": loc.column, "func": loc.function, "code": loc.code}


def error_json(capture: Capture) -> dict | None:
    err = capture.error
    if err is None:
        return None
    src = err.source
    return {"type": err.type, "message": err.message, "file": src.file if src else None,
            "line": src.line if src else None, "code": src.code if src else None}


def envelope(kind: str, version: int, title: str, capture: Capture, notes: list[str], **body: Any) -> dict:
    return {"schema": SCHEMA, "version": version, "kind": kind, "title": title,
            "notes": list(capture.notes) + notes, "error": error_json(capture), **body}


OWN_FAILURE_HINT = "please open an issue with this message"
T = TypeVar("T")


def guarded(what: str, build: Callable[[], T], notes: list[str]) -> T | None:
    """`build()`, or None with a note when it fails: one part the model cannot build (an unknown
    primitive, a new JAX version, odd params) costs that part, not the view."""
    try:
        return build()
    except Exception as exc:  # our failure is never the user's
        notes.append(f"jaxmagic could not draw {what}: {type(exc).__name__}: {exc} ({OWN_FAILURE_HINT})")
        return None
