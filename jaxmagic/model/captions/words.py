"""Words every caption writer shares: sentence length, user names, counts, lists, lines, avals."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ...capture.source import where_text
from ...units import duration_text as duration_text  # captions read them from here
from ...units import plural as units_plural
from ...units import times_word as times_word

MAX_CHARS = 159  # every sentence stays under 160 characters
NAME_CHARS = 40  # a user's name longer than this is cut with "…" so the sentence keeps its figures
MAX_LISTED = 4  # items named in one list before "and N more"
MAX_CHAIN = 3  # values of one changing argument named in a recompile sentence


def fit(sentence: str) -> str:
    return sentence if len(sentence) <= MAX_CHARS else sentence[: MAX_CHARS - 1].rstrip() + "…"


def fitting(*candidates: str) -> str:
    """The first candidate that fits, longest and most complete first; else the last one, cut."""
    return next((c for c in candidates if len(c) <= MAX_CHARS), fit(candidates[-1]))


def user_name(text: Any, limit: int = NAME_CHARS) -> str:
    """A user's name as they wrote it: `loss`, not `make.<locals>.loss`; very long ones cut."""
    text = str(text)
    if ".<locals>." in text:
        text = text.rsplit(".<locals>.", 1)[1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def counted(count: int, word: str, plural: str | None = None) -> str:
    """'1 call', '2,614 eqns' (units.plural)."""
    return units_plural(count, word, plural)


def listed(items: list[str], limit: int = MAX_LISTED) -> str:
    """'a', 'a and b', 'a, b and c', 'a, b, c, d and 3 more'."""
    if len(items) > limit:
        items = [*items[:limit], f"{len(items) - limit} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# The `cells` of the document being captioned ({file: execution count}): lines are named from the
# document, as the views name them, whichever process writes the caption.
_CELLS: ContextVar[dict | None] = ContextVar("jaxmagic_caption_cells", default=None)


@contextmanager
def cells_of(doc: dict) -> Iterator[None]:
    """While writing `doc`'s caption, name cell lines from its `cells`."""
    cells = doc.get("cells")
    token = _CELLS.set(cells if isinstance(cells, dict) else {})
    try:
        yield
    finally:
        _CELLS.reset(token)


def where(src: dict | None) -> str:
    """`cell [3], line 12` or `train.py:12` for a source location (capture/source.py where_text), '' without one."""
    if not src or src.get("line") is None:
        return ""
    return where_text(src.get("file"), src["line"], _CELLS.get())


def lines_listed(srcs: Iterable[dict | None]) -> str:
    """`cell [3], lines 4 and 7` (separate uses, not a range) when the sources are lines of one place,
    `lines 4 and 7` in a cell whose number is unknown, `train.py, lines 4 and 7`; else each place listed."""
    known = [s for s in srcs if s and s.get("line") is not None]
    files = {s.get("file") for s in known}
    lines = sorted({s["line"] for s in known})
    if len(files) != 1 or len(lines) < 2:
        return listed(list(dict.fromkeys(where(s) for s in known))) if known else ""
    one = where(known[0])  # `cell [3], line 4`, `line 4` or `train.py:4`: its place, then the lines
    place = one.rsplit("line ", 1)[0] if "line " in one else one.rsplit(":", 1)[0] + ", "
    return f"{place}lines {listed([str(line) for line in lines])}"


def at_line(src: dict | None) -> str:
    """' (cell [3], line 12)' or ' (train.py:12)' for a source location, '' without one."""
    text = where(src)
    return f" ({text})" if text else ""


def aval_text(dtype: str, shape: Iterable[int]) -> str:
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def first_clause(message: str) -> str:
    """A finding's message up to its first ': ' or '. ' outside backticks: its headline."""
    quoted = False
    for i, ch in enumerate(message):
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in ":." and message[i + 1 : i + 2] == " ":
            return message[:i]
    return message.rstrip(".")


def finding_sentence(f: dict) -> str:
    """'<a finding's headline> (cell [3], line 5).'"""
    return first_clause(str(f.get("message") or f.get("kind"))) + at_line(f.get("source")) + "."


def top_findings(
    doc: dict, severities: tuple[str, ...] = ("bug", "warning"), limit: int = 2, skip: tuple[str, ...] = ()
) -> list[dict]:
    """A document's most severe findings (`findings` is sorted, bugs first): at most `limit`, of
    `severities`, none of the kinds in `skip`."""
    return [f for f in doc.get("findings") or [] if f.get("severity") in severities and f.get("kind") not in skip][
        :limit
    ]
