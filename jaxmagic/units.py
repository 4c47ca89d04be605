"""Sizes and counts as people read them, shared by capture findings, model documents and static views."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 call', '2 calls', '1 miss', '3 misses', '2,614 eqns': every count a title, caption or note
    shows goes through here (the front end's twin is widgets/ui/words.js `plural`). `many` for words
    whose plural is not `word + "s"` (`plural(n, "key array", "key arrays")` needs none)."""
    if many is None:
        many = word + "es" if word.endswith(("s", "sh", "ch", "x")) else word + "s"
    return f"{count:,} {word if count == 1 else many}"


def times_word(count: int) -> str:
    """'once', 'twice', '3 times'."""
    return {1: "once", 2: "twice"}.get(count, f"{count:,} times")


def bytes_text(n: int) -> str:
    """'1 byte', '48 bytes', '1.5 KB', '2.0 MB', '1.1 GB' (binary units)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return plural(n, "byte")
