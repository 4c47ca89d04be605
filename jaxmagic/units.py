"""Counts, sizes and durations as people read them: the one Python home of these rules, shared by
capture findings, model documents, captions and static views.

The front end's twin is widgets/ui/format.js, held to the same answers by one table of cases
(tests/fixtures/format-cases.json, read by tests/test_format_cases.py and js/test/format-cases.test.js).
Both sides take what a JSON document can hold: a figure that is missing or not a finite number
(None, NaN, a string, a bool) reads `?` (`—` for a duration), never a made-up zero.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

MISSING_DURATION = "—"
_BYTE_UNITS = (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10))


def _finite(value: Any) -> float | int | None:
    """`value` when it is a finite number (a bool is not one), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if isinstance(value, int) or math.isfinite(value) else None


def count_text(count: Any) -> str:
    """'2,614', '-3', '1.5', '?': a count with thousands separators (whole floats as integers, as a
    JSON number reads in the browser)."""
    n = _finite(count)
    if n is None:
        return "?"
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    return f"{n:,}"


def plural(count: Any, word: str, many: str | None = None) -> str:
    """'1 call', '2 calls', '1 miss', '3 misses', '2,614 eqns', '? calls': every count a title,
    caption or note shows goes through here. `many` for words whose plural is not `word + "s"`
    (or `+ "es"` after s, sh, ch, x): `plural(n, "copy", "copies")`."""
    if many is None:
        many = word + "es" if word.endswith(("s", "sh", "ch", "x")) else word + "s"
    return f"{count_text(count)} {word if _finite(count) == 1 else many}"


_TIMES_WORDS: dict[float, str] = {1: "once", 2: "twice"}


def times_word(count: Any) -> str:
    """'once', 'twice', '3 times'."""
    n = _finite(count)
    return _TIMES_WORDS.get(n, f"{count_text(count)} times") if n is not None else "? times"


def bytes_text(n: Any) -> str:
    """'1 byte', '48 bytes', '1,000 bytes', '1.5 KB', '2.0 MB', '1.1 GB' (binary units, GB the
    largest); '?' for a size that is missing, negative or not a finite number."""
    size = _finite(n)
    if size is None or size < 0:
        return "?"
    for unit, scale in _BYTE_UNITS:
        if size >= scale:
            tenths = Decimal(size / scale).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
            return f"{tenths:f} {unit}"  # halves up, as JavaScript's toFixed(1): 1,280 bytes is 1.3 KB
    return plural(size, "byte")


def _three_digits(x: float) -> str:
    """`x` to three significant digits, halves away from zero on its exact value (as JavaScript's
    `toPrecision(3)` rounds), written without exponent or trailing zeros: '1.13', '750', '1000'."""
    if x == 0:
        return "0"
    exact = Decimal(x)
    step = Decimal(1).scaleb(exact.adjusted() - 2)
    rounded = exact.quantize(step, rounding=ROUND_HALF_UP)
    text = f"{rounded:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def duration_text(us: Any) -> str:
    """'750 µs', '1.25 ms', '2.5 s' (three significant digits; the unit from the size: under 1,000 µs,
    under 1,000,000 µs, else seconds); '—' for a missing figure. Documents count µs."""
    t = _finite(us)
    if t is None:
        return MISSING_DURATION
    if abs(t) < 1000:
        return f"{_three_digits(t)} µs"
    if abs(t) < 1_000_000:
        return f"{_three_digits(t / 1000)} ms"
    return f"{_three_digits(t / 1e6)} s"
