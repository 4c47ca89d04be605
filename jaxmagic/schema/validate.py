"""Check a document against its declaration (jaxmagic/schema/): the test suite's strict mode.

pydantic (a test dependency, never a run-time one) validates the TypedDicts as they are,
strictly: a missing or misspelt field, an unknown field, a wrong type, a string where the
declaration lists literals, a bool where an int is due (or the reverse), a tuple where JSON
has a list. Imported only when strict mode is on (jaxmagic/strict.py), so users' cells never
pay for it.
"""

from __future__ import annotations

import functools
from typing import Any

from . import DOCUMENTS, common, grad, graph, keys, requests, sharding, timeline, wire

# Every field is checked and none may be added; types are matched as JSON would carry them.
_CONFIG = {"extra": "forbid", "strict": True}


class SchemaError(AssertionError):
    """A document that does not match its declaration: which kind, and pydantic's account of where."""


@functools.cache
def _configured() -> None:
    """Give every declared TypedDict the strict config (pydantic reads it from the class)."""
    from typing_extensions import is_typeddict

    for module in (common, graph, timeline, grad, sharding, keys, wire, requests):
        for value in vars(module).values():
            if is_typeddict(value):
                value.__pydantic_config__ = _CONFIG


@functools.cache
def _adapter(declared: Any) -> Any:
    from pydantic import TypeAdapter

    _configured()
    return TypeAdapter(declared)


def declaration(doc: Any) -> Any:
    """The TypedDict `doc` claims to be (its `kind`, and the wire form for an encoded graph)."""
    if not isinstance(doc, dict):
        raise SchemaError(f"a jaxmagic document is a dict, not {type(doc).__name__}")
    kind = doc.get("kind")
    if kind == "graph" and doc.get("encoding") == wire.ENCODING:
        return wire.WireGraphDocument
    if kind not in DOCUMENTS:
        raise SchemaError(f"no document kind {kind!r} is declared (known: {', '.join(DOCUMENTS)})")
    return DOCUMENTS[kind]


def check(doc: Any, declared: Any = None) -> Any:
    """`doc` unchanged when it matches its declaration (or `declared`), else SchemaError."""
    declared = declared or declaration(doc)
    from pydantic import ValidationError

    try:
        _adapter(declared).validate_python(doc)
    except ValidationError as exc:
        name = getattr(declared, "__name__", str(declared))
        raise SchemaError(f"not a valid {name}: {exc}") from None
    return doc


MESSAGES = {"request": requests.Request, "reply": requests.Reply}  # the custom messages, by their `jm`
ANSWERS = {
    "levels": requests.LevelsAnswer,
    "jaxpr": requests.JaxprAnswer,
    "function": requests.FunctionAnswer,
}  # a reply's buffer, by `what`
