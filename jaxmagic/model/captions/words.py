"""Words every caption writer shares: sentence length, user names, counts, lists, lines, avals."""

from __future__ import annotations

from typing import Any, Iterable

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
    """'1 call', '2,614 eqns'."""
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


def times_word(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count:,} times")


def listed(items: list[str], limit: int = MAX_LISTED) -> str:
    """'a', 'a and b', 'a, b and c', 'a, b, c, d and 3 more'."""
    if len(items) > limit:
        items = [*items[:limit], f"{len(items) - limit} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def at_line(src: dict | None) -> str:
    """' (line 12)' for a source location, '' without one."""
    return f" (line {src['line']})" if src and src.get("line") is not None else ""


def aval_text(dtype: str, shape: Iterable[int]) -> str:
    return f"{dtype}[{','.join(str(d) for d in shape)}]"


def duration_text(us: float) -> str:
    if us < 1000:
        return f"{us:.0f} µs"
    if us < 1_000_000:
        return f"{us / 1000:.3g} ms"
    return f"{us / 1e6:.3g} s"


def first_clause(message: str) -> str:
    """A finding's message up to its first ': ' or '. ' outside backticks: its headline."""
    quoted = False
    for i, ch in enumerate(message):
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in ":." and message[i + 1:i + 2] == " ":
            return message[:i]
    return message.rstrip(".")
