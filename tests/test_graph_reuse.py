"""A jaxpr's printout is made once per Jaxpr object: a second document of the same program
(a re-run cell, `document`/`to_html` of a capture, JAX's trace cache handing back the same
jaxpr) is the same document, built without JAX's printer; a cut printout is kept apart from
the whole one, and nothing outlives its jaxpr."""

from __future__ import annotations

import gc
import json
import weakref

import jax
import jax.numpy as jnp

from jaxmagic.capture import jax_compat
from jaxmagic.model import jaxpr_text
from jaxmagic.model.cost import estimate_all
from jaxmagic.model.graph import function_graph

from .programs import PROGRAMS, control_flow


def _counting_printer(monkeypatch) -> list[int]:
    """Counts the calls of JAX's real printer (it still prints)."""
    real = jax_compat.jaxpr_pretty_printer
    calls: list[int] = []

    def printer():
        inner = real()

        def counted(jaxpr, *names):
            calls.append(len(jaxpr.eqns))
            return inner(jaxpr, *names)

        return counted

    monkeypatch.setattr(jax_compat, "jaxpr_pretty_printer", printer)
    return calls


def _dump(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True, default=str)


def test_same_jaxpr_prints_once_and_gives_the_same_document(monkeypatch):
    calls = _counting_printer(monkeypatch)
    fn, args, kwargs = control_flow()
    closed = fn.trace(*args, **kwargs).jaxpr
    assert fn.trace(*args, **kwargs).jaxpr.jaxpr is closed.jaxpr  # JAX's trace cache: the same object
    first = function_graph("f0", "f", closed)
    again = function_graph("f0", "f", fn.trace(*args, **kwargs).jaxpr)
    assert len(calls) == 1
    assert _dump(first) == _dump(again)
    assert first["text"] == str(closed.jaxpr)  # still JAX's own text
    jaxpr_text.forget_printed()
    function_graph("f0", "f", closed)
    assert len(calls) == 2


def test_cut_and_whole_printouts_are_kept_apart(monkeypatch):
    calls = _counting_printer(monkeypatch)
    closed = jax.make_jaxpr(lambda x: jnp.tanh(jnp.sin(x) * 2 + 1).sum())(jnp.ones(3))
    whole = function_graph("f0", "f", closed)
    cut = function_graph("f0", "f", closed, max_eqns=2)
    assert cut["truncated"] and not whole["truncated"]
    assert len(cut["text"].splitlines()) < len(whole["text"].splitlines())
    assert _dump(function_graph("f0", "f", closed, max_eqns=2)) == _dump(cut)
    assert _dump(function_graph("f0", "f", closed)) == _dump(whole)
    assert calls == [len(closed.jaxpr.eqns), 2]


def test_a_kept_printout_goes_with_its_jaxpr():
    closed = jax.make_jaxpr(lambda x: jnp.cos(x) + 3)(jnp.ones(2))
    function_graph("f0", "f", closed)
    assert closed.jaxpr in jaxpr_text._PRINTED
    gone = weakref.ref(closed.jaxpr)
    del closed
    gc.collect()
    assert gone() is None  # the kept printout did not keep its jaxpr (nor its Vars' owner) alive


def test_node_costs_are_estimate_all_of_the_jaxpr_whole_and_cut():
    """The graph costs its nodes from the eqns it walked (cost.estimate_nodes); that is JAX's jaxpr
    walked again by `estimate_all`, owners summing their bodies, also where the graph is cut."""
    owners = 0
    for name, program in PROGRAMS.items():
        fn, args, kwargs = program()
        closed = fn.trace(*args, **kwargs).jaxpr
        for limit in (None, 3):
            doc = function_graph("f0", name, closed) if limit is None else function_graph("f0", name, closed, limit)
            want = [c.json() for c in estimate_all(closed, limit=len(doc["nodes"]))]
            assert [node["cost"] for node in doc["nodes"]] == want, (name, limit)
            owners += sum(bool(node["subgroups"]) for node in doc["nodes"])
    assert owners > 10  # scan, cond, while, jit, custom rules, remat, shard_map: costed from their bodies


def _repeats_of(f, *args) -> list[tuple[int, int]]:
    """(units, eqns per unit) of each repeat in the graph of `f`."""
    doc = function_graph("f0", "f", jax.make_jaxpr(f)(*args))
    return [(len(r["units"]), r["units"][0][1] - r["units"][0][0]) for r in doc["repeats"]]


def test_repeated_blocks_differ_by_their_wiring_inside_and_from_before():
    """Units with the same ops are one repeat only if wired alike: inside a block (a*b against a*a),
    and in what a block reads from before it, nested a level down (the input y against the
    block's own first layer)."""

    def inside(x, y):
        for i in range(6):
            with jax.named_scope(f"layer_{i}"):
                a, b = jnp.sin(x), jnp.cos(x)
                x = (a * b if i % 2 == 0 else a * a) + y
        return x

    def alike(x, y):
        for i in range(6):
            with jax.named_scope(f"layer_{i}"):
                a, b = jnp.sin(x), jnp.cos(x)
                x = a * b + y
        return x

    def nested(x, y):
        for i in range(6):
            with jax.named_scope(f"block_{i}"):
                with jax.named_scope("first"):
                    h = jnp.tanh(jnp.sin(x) * 2.0 + 1.0)
                with jax.named_scope("second"):
                    x = jnp.tanh(jnp.sin(x) * 2.0 + (y if i % 2 == 0 else h))
        return x

    x = jnp.ones(3)
    assert _repeats_of(alike, x, x) == [(6, 4)]
    assert _repeats_of(inside, x, x) == [(3, 8)]  # pairs of layers: a layer alone is not a unit
    assert _repeats_of(nested, x, x) == [(3, 16)]
