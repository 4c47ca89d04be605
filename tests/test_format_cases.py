"""One table of cases (tests/fixtures/format-cases.json) for the rules both languages implement:
counts, plurals, byte sizes, durations and line names. js/test/format-cases.test.js holds the front
end's homes (widgets/ui/words.js, format.js, source-text.js) to the same table, so the widget and the
text/html fallbacks cannot say one figure two ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jaxmagic.capture.source import lines_where, where_text
from jaxmagic.units import bytes_text, count_text, duration_text, plural, times_word

CASES = json.loads((Path(__file__).parent / "fixtures" / "format-cases.json").read_text(encoding="utf-8"))["cases"]
SPECIAL = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf"), "undefined": None}
FUNCTIONS = {
    "count": count_text,
    "plural": plural,
    "times": times_word,
    "bytes": bytes_text,
    "duration": duration_text,
    "where": where_text,
    "lines_where": lines_where,
}


def _arg(value: Any) -> Any:
    """An argument of the table: {"special": name} stands for what JSON cannot hold."""
    if isinstance(value, dict) and set(value) == {"special"}:
        return SPECIAL[value["special"]]
    return value


def test_the_table_covers_every_rule_and_bad_input():
    assert {c["fn"] for c in CASES} == set(FUNCTIONS)
    specials = {a["special"] for c in CASES for a in c["args"] if isinstance(a, dict) and "special" in a}
    assert specials == set(SPECIAL)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['fn']}{json.dumps(c['args'], ensure_ascii=False)}")
def test_python_says_what_the_table_says(case: dict):
    assert FUNCTIONS[case["fn"]](*map(_arg, case["args"])) == case["expected"]
