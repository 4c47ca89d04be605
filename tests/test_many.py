"""Many functions in one cell: documents stay bounded, fold what is one program, list the rest.

Real JAX captures (no mocks): thousands of fresh jit wrappers of one function, and tens of
distinct jitted functions with a small drawing budget (model/folding.py).
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.model import DOCUMENT_BUILDERS, folding
from jaxmagic.model.graph import graph_document
from jaxmagic.model.on_demand import OnDemand
from jaxmagic.views.requests import answer
from jaxmagic.views.static_html import fallback_html, text_summary
from jaxmagic.views.wire import encode_document, safe_document

WRAPPERS = 1_500
DISTINCT = 24
BOUND = 3_000_000  # bytes: a view's saved state and each fallback


def f(x):
    return jnp.sin(x) * 2 + x


@pytest.fixture(scope="module")
def wrappers_capture():
    """`%timeit jax.jit(f)(x)`: a fresh wrapper of the same f on every call."""
    x = jnp.ones(6)
    kept = []  # alive, so each wrapper has an id() of its own (a freed one's id is reused)
    with jaxmagic.capture() as cap:
        for _ in range(WRAPPERS):
            kept.append(jax.jit(f))
            kept[-1](x)
    return cap


@pytest.fixture(scope="module")
def distinct_capture():
    """DISTINCT jitted lambdas of one definition, each closing over its own constant: DISTINCT programs."""
    x = jnp.ones(3)
    make = lambda i: jax.jit(lambda v: v * i + 1.0)
    with jaxmagic.capture() as cap:
        for i in range(DISTINCT):
            make(i)(x)
        make(0)(x)  # one more wrapper of the first program: folded into it
    return cap


def state_bytes(doc: dict) -> int:
    return len(json.dumps(encode_document(safe_document(doc)), separators=(",", ":")))


def test_thousands_of_wrappers_are_one_entry_with_their_counts(wrappers_capture):
    doc = DOCUMENT_BUILDERS["graph"](wrappers_capture)
    [fn] = doc["functions"]
    assert len(wrappers_capture.calls) == WRAPPERS
    assert fn["name"].endswith("f") and fn["calls"] == WRAPPERS
    assert fn["cache_hits"] == sum(c.cache_hit for c in wrappers_capture.calls)
    # every wrapper the cell made is counted, whether the capture recorded it as its own function
    # or as the one JAX's call cache keys (Capture.wrappers)
    ids = {c.function_id for c in wrappers_capture.calls}
    made = sum(wrappers_capture.wrappers.get(i, 1) for i in ids)
    assert made == WRAPPERS
    assert fn["wrappers"] == WRAPPERS and not doc.get("listed")
    assert doc["folded"]["wrappers"] == WRAPPERS - 1
    assert f"{WRAPPERS:,} jit wrappers of f folded into one entry" in " ".join(doc["caption"])
    assert state_bytes(doc) < 50_000, "one entry, not one graph per wrapper"
    sharding = DOCUMENT_BUILDERS["sharding"](wrappers_capture)
    assert [c.get("wrappers", 1) for c in sharding["calls"]] == [WRAPPERS]


def test_distinct_functions_past_the_budget_are_listed_by_name(distinct_capture):
    doc = graph_document(distinct_capture, max_graphs=5)
    drawn, listed = doc["functions"], doc["listed"]
    assert len(drawn) == 5 and len(listed) == DISTINCT - 5
    assert sorted(int(e["id"][1:]) for e in drawn + listed) == list(range(DISTINCT)), "every function, once"
    assert all(
        e["name"].endswith("<lambda>") and e["signature"] == "f32[3]" and e["n_eqns"] == 2 and "nodes" not in e
        for e in listed
    )
    assert sum(e["calls"] for e in drawn + listed) == DISTINCT + 1
    assert drawn[0]["wrappers"] == 2 and drawn[0]["calls"] == 2
    assert doc["folded"] == {
        **doc["folded"],
        "listed": DISTINCT - 5,
        "unlisted": 0,
        "functions": DISTINCT,
        "listed_graphs": "not in this page",
    }
    assert f"{DISTINCT - 5} more functions listed without graphs (not in this page" in " ".join(
        DOCUMENT_BUILDERS["graph"](distinct_capture, max_graphs=5)["caption"]
    )
    whole = graph_document(distinct_capture, max_graphs=None)
    assert len(whole["functions"]) == DISTINCT and not whole.get("listed")


def test_a_listed_function_loads_the_graph_the_eager_builder_draws(distinct_capture):
    on_demand = OnDemand()
    doc = graph_document(distinct_capture, max_graphs=3, on_demand=on_demand)
    assert doc["folded"]["listed_graphs"] == "on request"
    eager = {
        fn["id"]: fn for fn in graph_document(distinct_capture, max_graphs=None, on_demand=OnDemand())["functions"]
    }
    for row in (doc["listed"][0], doc["listed"][-1]):
        loaded = on_demand.handlers["function"]({"function": row["id"]})
        assert loaded.pop("notes") == []
        assert loaded == eager[row["id"]] and loaded["nodes"]
    reply, buffers = answer(
        on_demand.handlers,
        {"jm": "request", "id": 1, "what": "function", "args": {"function": doc["functions"][0]["id"] + "x"}},
    )
    assert reply["ok"] is False and "no function" in reply["error"] and not buffers


def test_listing_past_its_cap_is_counted_by_name(distinct_capture):
    entries = folding.fold(graph_document.__globals__["_function_entries"](distinct_capture)[0])
    rows, counts, notes = folding.listing(entries, max_listed=10)
    assert len(rows) == 10 and counts["unlisted"] == DISTINCT - 10
    assert notes and f"{DISTINCT - 10} more functions recorded but not listed" in notes[0] and "<lambda>" in notes[0]


def test_fallbacks_of_a_huge_listing_stay_bounded(distinct_capture):
    doc = DOCUMENT_BUILDERS["graph"](distinct_capture, max_graphs=2)
    rows = doc["listed"]
    doc["listed"] = [{**rows[i % len(rows)], "id": f"f{i + 2}"} for i in range(40_000)]
    html, text = fallback_html(doc), text_summary(doc)
    assert len(html) < BOUND and len(text) < BOUND
    assert "40,000 functions listed without graphs" in html and "40,000 functions listed without graphs" in text
    assert rows[0]["name"].rsplit(".", 1)[-1] in text
