"""The envelope every JSON document shares (declared in jaxmagic/schema/common.py)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from .. import strict
from ..capture import source as capture_source
from ..capture.record import Capture, SourceLocation
from ..schema import SCHEMA


def source_json(loc: SourceLocation | None) -> dict | None:
    if loc is None:
        return None
    return {"file": loc.file, "line": loc.line, "col": loc.column, "func": loc.function, "code": loc.code}


def error_json(capture: Capture) -> dict | None:
    err = capture.error
    if err is None:
        return None
    src = err.source
    out = {
        "type": err.type,
        "message": err.message,
        "file": src.file if src else None,
        "line": src.line if src else None,
        "code": src.code if src else None,
    }
    # JAX's concretization errors come with an explanation (capture/findings/concretization.py), shown under the error.
    explained = [f.message for f in capture.findings if f.kind == "concretization"]
    if explained:
        out["explanation"] = explained[-1]
    return out


# Keys of graph-like documents whose values hold no sources (avals, operands, params, texts, a grad
# document's node links and residual consumers): not walked,
# which keeps the walk of a 50,000-eqn graph to a few milliseconds per thousand eqns.
_NO_SOURCES = frozenset(
    {
        "params",
        "ins",
        "outs",
        "vars",
        "groups",
        "levels",
        "text",
        "values",
        "batch",
        "cost",
        "scope",
        "outvars",
        "invars",
        "constvars",
        "subgroups",
        "shlo",
        "hlo",
        "repeats",
        "links",
        "consumers",
    }
)


def files_in(value: Any) -> set[str]:
    """Every `file` a document's sources name (any dict with a string `file`, at any depth).

    One pass over plain JSON with an explicit stack, skipping what holds no sources (the key is
    tested before the value's type: most keys of a graph node are skipped)."""
    found: set[str] = set()
    stack = [value]
    push, pop = stack.append, stack.pop
    while stack:
        item = pop()
        if type(item) is dict:
            file = item.get("file")
            if type(file) is str:
                found.add(file)
            for key, inner in item.items():
                if key not in _NO_SOURCES and type(inner) in _CONTAINERS:
                    push(inner)
        else:
            for inner in item:
                if type(inner) in _CONTAINERS:
                    push(inner)
    return found


_CONTAINERS = (dict, list, tuple)


def cells_json(*parts: Any) -> dict[str, int]:
    """`cells`: {file: execution count} of the notebook cells the document's sources are in, so every
    view names a line as the user knows it ("cell [3], line 5") wherever the document is drawn.
    Read from IPython when the document is built (capture/source.py); outside IPython nothing is walked."""
    if "IPython" not in sys.modules:
        return {}
    return capture_source.cell_names(files_in(list(parts)))


def envelope(kind: str, version: int, title: str, capture: Capture, notes: list[str], **body: Any) -> dict:
    error = error_json(capture)
    doc = {
        "schema": SCHEMA,
        "version": version,
        "kind": kind,
        "title": title,
        "notes": list(capture.notes) + notes,
        "error": error,
        **body,
    }
    cells = cells_json(error, body)
    if cells:
        doc["cells"] = cells
    return doc


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


def checked(build: Callable[..., dict]) -> Callable[..., dict]:
    """A document builder whose documents are checked against their declaration (jaxmagic/schema/)
    under strict mode (the test suite): a misspelt, missing or mistyped field fails there. Never
    outside it: users' cells do not pay for the check (about 0.1 s for a 10,000-eqn graph)."""

    @functools.wraps(build)
    def build_and_check(*args: Any, **kwargs: Any) -> dict:
        doc = build(*args, **kwargs)
        if strict.enabled():
            from ..schema.validate import check

            check(doc)
        return doc

    return build_and_check
