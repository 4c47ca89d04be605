""" "What to look at": 1 to 4 short plain sentences on top of every document, most important first.

A caption is a reading of the document alone (docs/schema.md), never of JAX objects, so every
figure in it is one the document holds, and the widget, the static views and exported pages all
say the same thing. Sentences use the names users wrote (functions, arguments from recompile
reasons, keys, arrays) and the lines of the document's source locations, named as the views name them (`cell [3], line 5`,
`train.py:12`). Names pass
through as data: escaping is the views' job (`views/html_parts.esc`). Problems (a NaN, a reused
key, a recompile) come before descriptions, because they are what a reader should look at first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..document import guarded
from .grad import grad_caption
from .graph import graph_caption
from .keys import keys_caption
from .sharding import sharding_caption
from .timeline import timeline_caption
from .words import at_line, cells_of, fit, user_name

MAX_SENTENCES = 4
EMPTY = {
    "graph": "Nothing was recorded: the cell made no calls to jitted functions.",
    "timeline": "Nothing was recorded: the cell made no jitted call and JAX compiled nothing.",
    "grad": "Nothing was differentiated in this cell.",
    "sharding": "Nothing was recorded: no arrays and no jitted calls in this cell.",
    "keys": "No PRNG key was used in this cell.",
}


# ---------------------------------------------------------------------------------------------
# Entry points.


def caption(doc: dict) -> list[str]:
    """The caption of a document: 1 to 4 sentences, each under 160 characters.

    A document with nothing in it gets one sentence saying so, or, when the cell raised before
    anything was recorded, the error. Otherwise the error is left to the error banner every view
    draws right above the caption: saying it twice would push the figures out.
    """
    kind = doc.get("kind", "")
    write = WRITERS.get(kind)
    with cells_of(doc):
        body = [s for s in (write(doc) if write else []) if s]
        sentences = body or [_error_sentence(doc) or EMPTY.get(kind) or fit(str(doc.get("title") or "jaxmagic"))]
    out: list[str] = []
    for sentence in map(fit, sentences):
        if sentence not in out:
            out.append(sentence)
    return out[:MAX_SENTENCES]


def with_caption(doc: dict) -> dict:
    """`doc` with its `caption` after the title; a caption that cannot be written is `[]` and a
    note (model.document.guarded): our failure never costs the view."""
    notes = list(doc.get("notes") or [])
    sentences = guarded("the caption", lambda: caption(doc), notes)
    out: dict[str, Any] = {}
    for key, value in doc.items():
        out[key] = value
        if key == "title":
            out["caption"] = sentences or []
    out.setdefault("caption", sentences or [])
    out["notes"] = notes
    return out


def captioned(build: Callable[..., dict]) -> Callable[..., dict]:
    """A document builder whose documents carry their caption (model.DOCUMENT_BUILDERS)."""

    @functools.wraps(build)
    def build_with_caption(*args: Any, **kwargs: Any) -> dict:
        return with_caption(build(*args, **kwargs))

    return build_with_caption


def _error_sentence(doc: dict) -> str | None:
    error = doc.get("error")
    if not error:
        return None
    message = str(error.get("message") or "")
    message = message.splitlines()[0] if message else ""
    if len(message) > 80:
        message = message[:79] + "…"
    return f"The cell raised {user_name(error.get('type'))}{': ' + message if message else ''}{at_line(error)}."


WRITERS: dict[str, Callable[[dict], list[str]]] = {
    "graph": graph_caption,
    "timeline": timeline_caption,
    "grad": grad_caption,
    "sharding": sharding_caption,
    "keys": keys_caption,
}
