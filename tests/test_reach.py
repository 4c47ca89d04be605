"""Every jitted call a cell reaches is recorded, through whatever reference, and nothing is replaced.

Counts are checked against independent ones: a jitted function's Python body runs once per
trace, so the number of misses is the number of times the body ran, and hits are the rest.
"""

from __future__ import annotations

import collections
import functools
import importlib
import pickle
import sys
import textwrap
from unittest import mock

import jax
import jax.numpy as jnp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxmagic
from jaxmagic.capture.jit import call_hook
from jaxmagic.capture.jit import patch as jit_patch

SHAPES = (3, 3, 4, 3)  # miss, hit, miss, hit
EXPECTED_HITS = [False, True, False, True]


def _counted(traces: collections.Counter, name: str):
    def body(x):
        traces[name] += 1  # runs only when JAX traces: one per miss
        return x * 2 + 1

    return body


class Trainer:
    """A trainer whose `__init__` jits its step, the way training code is written."""

    def __init__(self, traces: collections.Counter):
        self.traces = traces
        self.step = jax.jit(self._step)

    def _step(self, x):
        self.traces["attribute"] += 1
        return x - 1


def _user_module(tmp_path, name: str):
    """A module of the user's own (a file beside the notebook) with a jitted module global."""
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent("""
        import jax

        traces = []

        @jax.jit
        def helper(x):
            traces.append(1)
            return x + 3
    """)
    )
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def _references(tmp_path, traces: collections.Counter) -> dict:
    """Jitted functions made before the cell and reached through every kind of reference."""
    in_dict = {"step": jax.jit(_counted(traces, "dict"))}
    in_list = [jax.jit(_counted(traces, "list"))]
    closed_over = jax.jit(_counted(traces, "closure"))
    module = _user_module(tmp_path, f"user_helpers_{len(traces)}_{id(traces)}")
    trainer = Trainer(traces)
    scaled = jax.jit(lambda x, k: (traces.update(["partial"]), x * k)[1], static_argnums=1)
    return {
        "dict": (in_dict["step"], lambda x: in_dict["step"](x)),
        "list": (in_list[0], lambda x: in_list[0](x)),
        "closure": (closed_over, (lambda g: lambda x: g(x))(closed_over)),
        "module": (module.helper, lambda x: module.helper(x)),
        "attribute": (trainer.step, lambda x: trainer.step(x)),
        "partial": (scaled, functools.partial(scaled, k=2)),
    }, module


def test_calls_through_every_reference_are_recorded_with_jaxs_own_hits_and_misses(tmp_path):
    traces: collections.Counter = collections.Counter()
    refs, module = _references(tmp_path, traces)
    with jaxmagic.capture({}) as cap:  # an empty namespace: nothing is reached through it
        for name, (_, call) in refs.items():
            for n in SHAPES:
                call(jnp.ones(n))
    by_function = collections.defaultdict(list)
    for c in cap.calls:
        by_function[c.function_id].append(c)
    assert len(by_function) == len(refs)
    for name, (jitted, _) in refs.items():
        calls = by_function[id(jitted)]
        misses = len(module.traces) if name == "module" else traces[name]
        assert [c.cache_hit for c in calls] == EXPECTED_HITS, name
        assert sum(not c.cache_hit for c in calls) == misses == 2, name
        assert all(c.artifacts is not None and c.artifacts.jaxpr is not None for c in calls if not c.cache_hit)
    assert by_function[id(refs["attribute"][0])][0].name == "Trainer._step"
    assert {c.call_site.file for c in cap.calls if c.phases is not None} == {__file__}  # those recorded in full
    for calls in by_function.values():  # the hit after the first miss ran the one program JAX held: a row
        assert calls[1].phases is None and calls[1].signature is calls[0].signature
        assert calls[1].artifacts is calls[0].artifacts and calls[1].call_site is None
        assert calls[3].phases is not None and str(calls[3].signature) == str(calls[0].signature)  # two held


def test_functions_compiled_in_an_earlier_cell_show_hits_and_their_graph(tmp_path):
    traces: collections.Counter = collections.Counter()
    refs, _ = _references(tmp_path, traces)
    for _, call in refs.values():
        call(jnp.ones(3))  # "an earlier cell": compiled before the capture
    before = sum(traces.values())
    with jaxmagic.capture({}) as cap:
        for _, call in refs.values():
            for _ in range(3):
                call(jnp.ones(3))
    assert sum(traces.values()) == before  # JAX traced nothing: every call a hit
    assert len(cap.calls) == 3 * len(refs) and all(c.cache_hit for c in cap.calls)
    doc = jaxmagic.document(cap, "graph")
    assert all(f["nodes"] for f in doc["functions"])
    # the dict, list and closure jits wrap one definition (`_counted`'s body) with one program: one
    # entry that counts its three wrappers and nine calls (model/folding.py); the others are their own
    assert len(doc["functions"]) == len(refs) - 2
    [body] = [f for f in doc["functions"] if f["name"].endswith("body")]
    assert (body["wrappers"], body["calls"], body["cache_hits"]) == (3, 9, 9)
    assert sum(f["calls"] for f in doc["functions"]) == 3 * len(refs)


def _pickled(fn):
    try:
        return len(pickle.dumps(fn))
    except Exception as exc:  # whatever plain JAX does, the capture must do the same
        return type(exc).__name__


def test_the_cell_sees_its_own_objects(tmp_path):
    traces: collections.Counter = collections.Counter()
    refs, module = _references(tmp_path, traces)
    store = {"step": refs["dict"][0]}
    keyed = {refs["dict"][0]: "found"}
    x = jnp.ones(3)
    plain_jaxpr = str(jax.make_jaxpr(store["step"])(x))
    plain_pickle = _pickled(module.helper)
    mocked = mock.MagicMock(name="looks_jitted", lower=None, trace=None, _cache_size=lambda: 0)
    namespace = {"f": store["step"], "mocked": mocked}
    with jaxmagic.capture(namespace) as cap:
        assert namespace["f"] is store["step"] and namespace["mocked"] is mocked
        assert type(store["step"]) is jit_patch._JITTED_TYPE and keyed[store["step"]] == "found"
        assert str(jax.make_jaxpr(store["step"])(x)) == plain_jaxpr  # a `jit` eqn, not an inlined body
        assert _pickled(module.helper) == plain_pickle
        namespace["mocked"](1)
        made = jax.jit(lambda y: y + 1)
        store["made"] = made
        made(x)
    assert mocked.call_count == 1 and namespace["mocked"] is mocked
    assert type(store["made"]) is jit_patch._JITTED_TYPE  # nothing made during the cell outlives it wrapped
    assert [c.name for c in cap.calls] == ["test_the_cell_sees_its_own_objects.<locals>.<lambda>"]


def test_jaxs_own_jitted_operations_are_not_the_users_programs():
    def user(x):
        return jnp.sin(x)

    with jaxmagic.capture({}) as cap:
        jnp.where(jnp.ones(3) > 0, 1.0, 0.0)
        jax.random.normal(jax.random.key(0), (3,))
        jax.nn.relu(jnp.ones(3))
        jax.jit(jax.vmap(user))(jnp.ones((2, 3)))  # JAX's vmap wrapper, but the user's function under it
    [call] = cap.calls
    assert call.name.endswith("user") and call.source.line == user.__code__.co_firstlineno


def test_a_librarys_internal_jit_is_recorded():
    optax = pytest.importorskip("optax")
    moment = {"w": jnp.ones(3)}
    with jaxmagic.capture({}) as cap:
        optax.tree_utils.tree_bias_correction(moment, 0.9, 1)
    [call] = cap.calls
    assert call.name == "tree_bias_correction" and call.artifacts.jaxpr is not None


def test_where_the_type_cannot_be_routed_the_namespace_is_wrapped_and_the_view_says_so(monkeypatch):
    monkeypatch.setattr(call_hook, "route_calls", lambda cls, call: None)
    traces: collections.Counter = collections.Counter()
    bound, elsewhere = jax.jit(_counted(traces, "bound")), [jax.jit(_counted(traces, "elsewhere"))]
    namespace = {"bound": bound}
    with jaxmagic.capture(namespace) as cap:
        namespace["bound"](jnp.ones(2))
        elsewhere[0](jnp.ones(2))
    assert len(cap.calls) == 1 and namespace["bound"] is bound
    assert any("cannot route jitted calls" in n for n in cap.notes)


# --- random compositions: the recorded sequence equals an independent count ---------------------

WRAPPERS = ("plain", "dict", "attribute", "partial", "closure")


def _wrapped(kind: str, traces: list, tag: int):
    def body(x):
        traces.append(tag)
        return x + tag

    jitted = jax.jit(body)
    if kind == "dict":
        box = {"f": jitted}
        return jitted, lambda x: box["f"](x)
    if kind == "attribute":
        holder = type("Holder", (), {})()
        holder.f = jitted
        return jitted, lambda x: holder.f(x)
    if kind == "partial":
        return jitted, functools.partial(jitted)
    if kind == "closure":
        return jitted, (lambda g: lambda x: g(x))(jitted)
    return jitted, jitted


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(st.sampled_from(WRAPPERS), min_size=1, max_size=3),
    calls=st.lists(st.tuples(st.integers(0, 2), st.sampled_from([1, 2])), min_size=1, max_size=8),
)
def test_random_compositions_record_exactly_the_calls_made(kinds, calls):
    traces: list = []
    made = [_wrapped(kind, traces, tag) for tag, kind in enumerate(kinds)]
    expected, seen = [], set()
    with jaxmagic.capture({}) as cap:
        for which, size in calls:
            jitted, call = made[which % len(made)]
            before = len(traces)
            call(jnp.ones(size))
            expected.append((id(jitted), len(traces) == before))  # a hit: JAX did not trace
            seen.add((which % len(made), size))
    assert [(c.function_id, c.cache_hit) for c in cap.calls] == expected
    assert sum(not hit for _, hit in expected) == len(seen)


def test_experimental_pjit_is_recorded_where_this_jax_has_it():
    pjit_module = pytest.importorskip("jax.experimental.pjit")
    if not hasattr(pjit_module, "pjit"):
        pytest.skip("this JAX has no jax.experimental.pjit.pjit")
    traces: collections.Counter = collections.Counter()
    stepped = pjit_module.pjit(_counted(traces, "pjit"))
    with jaxmagic.capture({}) as cap:
        for n in SHAPES:
            stepped(jnp.ones(n))
    assert [c.cache_hit for c in cap.calls] == EXPECTED_HITS and traces["pjit"] == 2
