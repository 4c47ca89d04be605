"""Forward values (`capture(values=True)`, `%%jaxpr --values`): summaries that match JAX's own results."""

from __future__ import annotations

import gc
import weakref
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmagic
from jaxmagic.capture import jax_compat
from jaxmagic.capture.values import forward as values_mod
from tests import programs


@pytest.fixture(autouse=True)
def generous_budget(monkeypatch):
    """Correctness tests must not depend on how loaded the machine is: first evaluations compile
    every primitive once (about 10-30 ms each on CPU). The budget has its own tests below."""
    monkeypatch.setattr(values_mod, "TIME_BUDGET_S", 120.0)


def record(fn, *args, **kwargs):
    """Call jitted `fn` inside a values capture (through a namespace, as a notebook binds it)."""
    namespace = {"fn": fn}
    with jaxmagic.capture(namespace, values=True) as cap:
        out = namespace["fn"](*args, **kwargs)
    return out, cap.calls[0].artifacts


def assert_matches(summary: dict, array) -> None:
    """A summary agrees with an array JAX computed (finite elements only for min/max/mean)."""
    array = np.asarray(array)
    assert summary["shape"] == list(array.shape)
    assert summary["dtype"] == str(array.dtype)
    finite = array[np.isfinite(array)]
    assert summary["nan"] == int(np.isnan(array).sum()) and summary["inf"] == int(np.isinf(array).sum())
    if finite.size:
        scale = max(1.0, float(np.abs(finite).max()))
        for key, expected in (("min", finite.min()), ("max", finite.max()), ("mean", finite.mean())):
            assert summary[key] == pytest.approx(float(expected), rel=1e-5, abs=1e-6 * scale), key
    if array.size <= values_mod.MAX_PRINTED_ELEMENTS:
        assert summary["value"] is not None
    else:
        assert summary["value"] is None


def eqns_of(jaxpr, prim):
    """Eqns of primitive `prim` (`jit` also finds `pjit`, its name before JAX 0.7)."""
    names = {prim, "pjit"} if prim == "jit" else {prim}
    return [e for e in jaxpr.eqns if e.primitive.name in names]


def is_plain(value) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(is_plain(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


@pytest.mark.parametrize(
    "name",
    [
        "sin_cos",
        "control_flow",
        "nested_jit_and_scopes",
        "small_transformer",
        "custom_rules",
        "remat_and_grad",
        "switch_three_branches",
        "global_constant",
        "shard_map_psum",
    ],
)
def test_output_summaries_match_the_calls_real_outputs(name):
    fn, args, kwargs = programs.PROGRAMS[name]()
    out, artifacts = record(fn, *args, **kwargs)
    assert artifacts.values, artifacts.values_note
    outvars = artifacts.jaxpr.jaxpr.outvars
    leaves = jax.tree.leaves(out)
    assert len(outvars) == len(leaves)
    for var, leaf in zip(outvars, leaves):
        assert_matches(artifacts.values[var], leaf)
    assert all(is_plain(s) for s in artifacts.values.values())
    # every invar and every top-level eqn output has a summary
    jaxpr = artifacts.jaxpr.jaxpr
    expected = list(jaxpr.invars) + [v for e in jaxpr.eqns for v in e.outvars if not jax_compat.is_dropvar(v)]
    assert all(v in artifacts.values for v in expected)


def test_intermediates_match_values_computed_directly():
    fn, (x,), _ = programs.sin_cos()
    _, artifacts = record(fn, x)
    jaxpr = artifacts.jaxpr.jaxpr
    assert_matches(artifacts.values[eqns_of(jaxpr, "sin")[0].outvars[0]], jnp.sin(x))
    assert_matches(artifacts.values[eqns_of(jaxpr, "cos")[0].outvars[0]], jnp.cos(x))
    squares = [e.outvars[0] for e in eqns_of(jaxpr, "integer_pow")]
    assert_matches(artifacts.values[squares[0]], jnp.sin(x) ** 2)
    assert artifacts.values[jaxpr.invars[0]]["value"] == "[0. 1. 2.]"


def test_control_flow_outputs_of_loops_have_values_and_their_bodies_are_noted():
    fn, (x,), kwargs = programs.control_flow()
    _, artifacts = record(fn, x, **kwargs)
    jaxpr = artifacts.jaxpr.jaxpr
    cond = eqns_of(jaxpr, "cond")[0]
    assert_matches(artifacts.values[cond.outvars[0]], jnp.tanh(x))  # x.sum() > 0: the tanh branch
    scan = eqns_of(jaxpr, "scan")[0]
    _, hist = jax.lax.scan(lambda c, xi: (c * 0.9 + xi, c), 0.0, jnp.tanh(x))
    assert_matches(artifacts.values[scan.outvars[-1]], hist)
    body_vars = [v for e in scan.params["jaxpr"].jaxpr.eqns for v in e.outvars]
    assert body_vars and not any(v in artifacts.values for v in body_vars)
    assert "cond" in artifacts.values_note and "scan" in artifacts.values_note and "while" in artifacts.values_note


def test_variables_inside_an_inner_jit_get_values():
    @jax.jit
    def inner(v):
        return jnp.sin(v) * 3

    @jax.jit
    def f(x):
        return inner(x + 1).sum()

    x = jnp.arange(4.0)
    _, artifacts = record(f, x)
    (call,) = eqns_of(artifacts.jaxpr.jaxpr, "jit")
    body = call.params["jaxpr"].jaxpr
    assert_matches(artifacts.values[body.invars[0]], x + 1)
    assert_matches(artifacts.values[eqns_of(body, "sin")[0].outvars[0]], jnp.sin(x + 1))
    assert artifacts.values_note is None


def test_a_sub_jaxpr_shared_by_two_calls_gets_no_inner_values():
    fn, (x,), _ = programs.nested_jit_and_scopes()
    _, artifacts = record(fn, x)
    jaxpr = artifacts.jaxpr.jaxpr
    calls = eqns_of(jaxpr, "jit")
    assert len(calls) == 2 and calls[0].params["jaxpr"] is calls[1].params["jaxpr"]
    inner = calls[0].params["jaxpr"].jaxpr
    assert not any(v in artifacts.values for v in [*inner.invars, *inner.eqns[0].outvars])
    assert "several eqns" in artifacts.values_note
    first, second = (artifacts.values[c.outvars[0]] for c in calls)  # the calls' own results do
    assert_matches(first, x * 2)
    assert_matches(second, jnp.tanh(x * 2) * 2)
    tanhs = eqns_of(jaxpr, "tanh")
    assert_matches(artifacts.values[tanhs[1].outvars[0]], jnp.tanh(jnp.tanh(x * 2) * 2))


def test_small_transformer_intermediates():
    fn, (params, x), _ = programs.small_transformer()
    _, artifacts = record(fn, params, x)
    dots = [e for e in artifacts.jaxpr.jaxpr.eqns if e.primitive.name == "dot_general"]
    assert_matches(artifacts.values[dots[0].outvars[0]], x @ params["wq"])  # all 16.0
    assert artifacts.values_note is None


def test_nan_and_inf_are_counted_and_left_out_of_min_max_mean():
    f = jax.jit(lambda x: (jnp.log(x), 1.0 / x, jnp.full(3, jnp.nan)))
    x = jnp.array([0.0, -1.0, 1.0, 2.0])
    (logs, recips, nans), artifacts = record(f, x)
    outs = artifacts.jaxpr.jaxpr.outvars
    log_summary = artifacts.values[outs[0]]
    assert (log_summary["nan"], log_summary["inf"]) == (1, 1)
    assert log_summary["min"] == 0.0 and log_summary["max"] == pytest.approx(np.log(2.0))
    assert_matches(log_summary, logs)
    assert_matches(artifacts.values[outs[1]], recips)
    all_nan = artifacts.values[outs[2]]
    assert all_nan["nan"] == 3 and all_nan["min"] is None and all_nan["mean"] is None


def test_key_typed_values():
    @jax.jit
    def f(key):
        a, b = jax.random.split(key)
        return a, jax.random.normal(b, (4,))

    key = jax.random.key(42)
    (a, normal), artifacts = record(f, key)
    jaxpr = artifacts.jaxpr.jaxpr
    key_in = artifacts.values[jaxpr.invars[0]]
    assert key_in["dtype"] == "key<fry>" and key_in["shape"] == []
    assert key_in["min"] is None and key_in["mean"] is None and key_in["nan"] == 0
    assert key_in["value"] == str(np.asarray(jax.random.key_data(key)))
    out_key = artifacts.values[jaxpr.outvars[0]]
    assert out_key["value"] == str(np.asarray(jax.random.key_data(a)))
    assert_matches(artifacts.values[jaxpr.outvars[1]], normal)


def test_integer_and_bool_values():
    f = jax.jit(lambda x: (x * 2, x > 1))
    x = jnp.arange(5)
    (doubled, greater), artifacts = record(f, x)
    outs = artifacts.jaxpr.jaxpr.outvars
    assert artifacts.values[outs[0]] | {"value": None} == {
        "shape": [5],
        "dtype": "int32",
        "min": 0,
        "max": 8,
        "mean": 4.0,
        "norm": None,
        "nan": 0,
        "inf": 0,
        "value": None,
    }
    assert artifacts.values[outs[1]]["mean"] == pytest.approx(0.6) and artifacts.values[outs[1]]["dtype"] == "bool"


def test_static_and_keyword_arguments_are_matched_to_the_jaxpr_inputs():
    @partial(jax.jit, static_argnums=1, static_argnames="mode")
    def f(x, n, y=None, mode="sum"):
        return x * n + y if mode == "sum" else x

    x, y = jnp.ones(3), jnp.arange(3.0)
    out, artifacts = record(f, x, 4, y=y, mode="sum")
    assert_matches(artifacts.values[artifacts.jaxpr.jaxpr.invars[1]], y)
    assert_matches(artifacts.values[artifacts.jaxpr.jaxpr.outvars[0]], out)


def test_no_array_survives_the_capture(monkeypatch):
    made = []
    bind = jax_compat.bind_eqn

    def tracking_bind(eqn, invals):
        outs = bind(eqn, invals)
        made.extend(weakref.ref(o) for o in outs if isinstance(o, jax.Array))
        return outs

    monkeypatch.setattr(jax_compat, "bind_eqn", tracking_bind)
    fn, args, _ = programs.small_transformer()
    out, artifacts = record(fn, *args)
    del out
    gc.collect()
    assert len(made) > 50 and all(ref() is None for ref in made)
    assert all(is_plain(s) for s in artifacts.values.values())


def test_only_when_asked():
    with jaxmagic.capture() as cap:
        jax.jit(jnp.sin)(jnp.ones(3))
    assert cap.calls
    assert cap.calls[0].artifacts.values is None and cap.calls[0].artifacts.values_note is None


def test_only_the_first_call_of_a_signature_is_evaluated(monkeypatch):
    runs = []
    forward = values_mod.forward_values
    monkeypatch.setattr(values_mod, "forward_values", lambda *a, **k: runs.append(1) or forward(*a, **k))
    with jaxmagic.capture(values=True) as cap:
        f = jax.jit(lambda x: x + 1)
        f(jnp.ones(3))
        f(jnp.ones(3))
        f(jnp.ones(4))
    assert len(runs) == 2 and cap.calls[1].artifacts is cap.calls[0].artifacts


def test_our_evaluation_adds_no_events_to_the_capture():
    x = jnp.ones(7)  # made outside: eager ops compile too, and would report events

    def run(values):
        with jaxmagic.capture(values=values) as cap:
            jax.jit(lambda x: jnp.cos(x) * 3 + jnp.tanh(x))(x)
        assert cap.calls[0].artifacts.values is None or cap.calls[0].artifacts.values_note is None
        return sorted((e.name, e.fun_name) for e in cap.events)

    run(False)  # JAX 0.4's jnp functions are jitted themselves: their first traces happen here, not below
    assert run(True) == run(False)


def test_programs_with_side_effects_are_not_run_twice(capfd):
    @jax.jit
    def f(x):
        jax.debug.print("printed {}", x.sum())
        return x * 2

    _, artifacts = record(f, jnp.ones(3))
    jax.effects_barrier()
    assert capfd.readouterr().out.count("printed") == 1
    assert artifacts.values is None and "side effects" in artifacts.values_note


def test_donated_arguments_are_skipped():
    f = jax.jit(lambda x: x * 2, donate_argnums=0)
    x = jnp.ones(3)
    _, artifacts = record(f, x)
    if not x.is_deleted():
        pytest.skip("this backend did not donate the buffer")
    assert artifacts.values is None and "donated" in artifacts.values_note


def test_argument_size_guard(monkeypatch):
    monkeypatch.setattr(values_mod, "MAX_ARG_ELEMENTS", 10)
    _, artifacts = record(jax.jit(jnp.sin), jnp.ones(11))
    assert artifacts.values is None and "11 elements" in artifacts.values_note


def test_eqn_guard_keeps_what_was_done(monkeypatch):
    monkeypatch.setattr(values_mod, "MAX_EQNS", 2)
    fn, (x,), _ = programs.sin_cos()
    _, artifacts = record(fn, x)
    jaxpr = artifacts.jaxpr.jaxpr
    assert "stopped after 2 eqns" in artifacts.values_note
    assert [e.outvars[0] in artifacts.values for e in jaxpr.eqns] == [True, True] + [False] * (len(jaxpr.eqns) - 2)


def test_time_budget_stops_and_says_so():
    fn, (x,), _ = programs.sin_cos()
    closed = fn.trace(x).jaxpr
    values, note = values_mod.forward_values(closed, [x], budget_s=0.0)
    assert "values are partial: stopped after 0 eqns: the 0 s budget ran out" in note
    assert set(values) == {closed.jaxpr.invars[0]}  # inputs are known before any eqn


def test_a_slow_call_is_not_evaluated_again():
    fn, (x,), _ = programs.sin_cos()
    closed = fn.trace(x).jaxpr
    values, note = values_mod.forward_values(closed, [x], call_seconds=5.0, budget_s=2.0)
    assert values is None and "ran for 5.0 s" in note


def test_failures_become_notes_and_the_cell_goes_on(monkeypatch):
    def broken(eqn, invals):
        raise RuntimeError("boom")

    monkeypatch.setattr(jax_compat, "bind_eqn", broken)
    out, artifacts = record(jax.jit(lambda x: jnp.sin(x) + 1), jnp.zeros(2))
    assert out.tolist() == [1.0, 1.0]
    assert "RuntimeError: boom" in artifacts.values_note and "after 0 eqns" in artifacts.values_note


def test_values_option_of_the_magic():
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()
    loaded = "jaxmagic" in shell.extension_manager.loaded
    if not loaded:
        shell.run_line_magic("load_ext", "jaxmagic")
    try:
        cell = "import jax, jax.numpy as jnp\njax.jit(jnp.cos)(jnp.zeros(2))\n"
        assert shell.run_cell("%%jaxpr --values --static -n with_values\n" + cell).success
        assert shell.run_cell("%%jaxpr --static -n without_values\n" + cell).success
        with_values = shell.user_ns["with_values"].calls[0].artifacts
        assert with_values.values[with_values.jaxpr.jaxpr.outvars[0]]["value"] == "[1. 1.]"
        assert shell.user_ns["without_values"].calls[0].artifacts.values is None
    finally:
        if not loaded:
            shell.run_line_magic("unload_ext", "jaxmagic")


def test_a_program_that_calls_back_into_python_is_not_evaluated_again():
    """A `pure_callback` has no effect, so JAX may drop it when its result is unused (XLA's DCE) or call
    it any number of times; evaluating the program again would call the user's Python where plain
    JAX did not (the dead one), or once more. The callback runs exactly as often as without the
    capture (plain JAX is the oracle), and the note says why there are no values."""
    calls = []

    def callback(x):
        calls.append("called")
        return (x * 2.0).astype(x.dtype)

    def dead(x):
        _ = jax.pure_callback(callback, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return x * 2.0

    def live(x):
        return jnp.sin(jax.pure_callback(callback, jax.ShapeDtypeStruct(x.shape, x.dtype), x))

    x = jnp.arange(3.0)
    for program in (dead, live):
        calls.clear()
        expected = jax.jit(program)(x)
        plain_calls = len(calls)
        calls.clear()
        with jaxmagic.capture({}, values=True) as cap:
            out = jax.jit(program)(x)
        np.testing.assert_array_equal(out, expected)
        assert len(calls) == plain_calls, (program.__name__, len(calls), plain_calls)
        (call,) = cap.calls
        assert call.artifacts.values is None
        assert "calls back into Python (pure_callback)" in call.artifacts.values_note, call.artifacts.values_note
