"""NaN and Inf found without options (capture/values/nan_check.py), checked against JAX's own
`jax_debug_nans` / `jax_debug_infs`: the finding names the op and the line JAX stops at."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import textwrap
import threading
import traceback

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxmagic
from jaxmagic.capture.jit import readiness
from jaxmagic.capture.values import nan_check


def log_likelihood(x):
    var = jnp.mean(x) - 2.0  # negative for x = ones: log(var) is NaN
    return -0.5 * jnp.log(var) - x.sum()


def softplus(x):
    return jnp.log(1 + jnp.exp(x))  # exp(100) overflows: the value is Inf, the gradient NaN


def blow_up(x):
    return jnp.exp(x) * 2.0


def masked_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)  # NaN inside, never in the output


def in_fresh_thread(thunk) -> BaseException | None:
    """What `thunk()` raised (None if nothing), run in a new thread.

    On JAX 0.10, once a thread has left a `jax.debug_nans(False)` context (JAX enters one itself in
    `jnp.var`, `checkpoint`'s eager evaluation, `shard_map`; earlier tests do), functions compiled
    before skip the user's check in that thread, and its de-optimized re-run checks nothing: JAX's
    own verdict is asked where no such context was ever left."""
    raised: list[BaseException | None] = [None]

    def run() -> None:
        try:
            thunk()
        except BaseException as exc:
            raised[0] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return raised[0]


def stopped_at(exc: BaseException) -> str:
    """What JAX's debug-NaN/Inf FloatingPointError names: an op (`log`), or on JAX 0.4 a jitted call."""
    return re.search(r"encountered in (\S+?)\.?(?:\s|$)", str(exc)).group(1)


def _raised_at(flag: str, thunk) -> tuple[str, int | None]:
    """(what JAX's FloatingPointError names, line in this file) for `thunk` under `flag`."""
    jax.config.update(flag, True)
    try:
        exc = in_fresh_thread(thunk)
    finally:
        jax.config.update(flag, False)
    if isinstance(exc, FloatingPointError):
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == __file__]
        return stopped_at(exc), lines[-1] if lines else None
    if exc is not None:
        raise exc
    raise AssertionError(f"{flag} did not raise")


def jax_verdict(flag: str, thunk) -> tuple[str, int | None]:
    """(primitive, line in this file) that JAX's own checker raises at (`in_fresh_thread`).

    JAX 0.4's de-optimized re-run of a jitted call does not reach the op: it names only the jitted
    function (`jit(f)`). JAX is then asked again with jit disabled, where each op runs and is checked
    on its own; there jnp's ops are themselves jitted functions, so `jit(log)` names the op `log`."""
    op, line = _raised_at(flag, thunk)
    if not op.startswith("jit("):
        return op, line

    def eager() -> None:
        with jax.disable_jit():
            thunk()

    op, line = _raised_at(flag, eager)
    return re.fullmatch(r"(?:jit\()?(\w+)\)?", op).group(1), line


def nan_findings(cap, kind=None):
    return [f for f in cap.findings if f.kind in ((kind,) if kind else ("nan", "inf"))]


def test_jitted_nan_is_located_at_the_op_jax_debug_nans_stops_at():
    f = jax.jit(log_likelihood)
    x = jnp.ones(3)
    with jaxmagic.capture({}) as cap:
        y = f(x)
    assert np.isnan(np.asarray(y))
    (found,) = nan_findings(cap)
    primitive, line = jax_verdict("jax_debug_nans", lambda: f(x))
    assert found.kind == "nan" and found.severity == "bug" and found.call == 0
    assert (
        found.function == "log_likelihood" and primitive == "log" and "the first NaN comes from `log`" in found.message
    )
    assert found.source.line == line and "jnp.log(var)" in found.source.code
    assert "clip" in found.message and "log_likelihood returned NaN in its output" in found.message


def test_eager_grad_nan_is_a_backward_op_and_its_inf_a_forward_op_as_jax_says():
    with jaxmagic.capture({}, grads=True) as cap:
        value, grad = jax.value_and_grad(softplus)(100.0)
    assert np.isinf(value) and np.isnan(grad)
    (nan,) = nan_findings(cap, "nan")
    (inf,) = nan_findings(cap, "inf")
    nan_op, _ = jax_verdict("jax_debug_nans", lambda: jax.grad(softplus)(100.0))
    inf_op, inf_line = jax_verdict("jax_debug_infs", lambda: jax.grad(softplus)(100.0))
    assert f"`{nan_op}` in the backward pass" in nan.message and "its gradient" in nan.message
    assert f"`{inf_op}` in the forward pass" in inf.message and "its value" in inf.message
    assert inf.source.line == inf_line == nan.source.line  # the backward op keeps its forward line
    assert "softplus" in inf.message and "logaddexp" in inf.message


def test_grad_inside_a_jitted_step_is_located_in_the_backward_pass():
    step = jax.jit(jax.grad(softplus))
    with jaxmagic.capture({}) as cap:
        g = step(100.0)
    (found,) = nan_findings(cap)
    primitive, _ = jax_verdict("jax_debug_nans", lambda: step(100.0))
    assert np.isnan(g) and f"`{primitive}` in the backward pass" in found.message


def test_an_inf_is_located_like_jax_debug_infs():
    f = jax.jit(blow_up)
    x = jnp.full(4, 100.0)
    with jaxmagic.capture({}) as cap:
        y = f(x)
    (found,) = nan_findings(cap)
    primitive, line = jax_verdict("jax_debug_infs", lambda: f(x))
    assert found.kind == "inf" and f"`{primitive}`" in found.message and found.source.line == line
    assert "(4 elements)" in found.message and np.isinf(np.asarray(y)).all()


@pytest.mark.parametrize(
    "fn, arg",
    [
        (lambda x: jnp.sqrt(x - 2.0), 1.0),
        (lambda x: (x - 1.0) / (x - 1.0) + 2.0, jnp.float32(1.0)),
        (lambda x: jnp.arcsin(x * 3.0), 0.5),
        (lambda x: jnp.log(jnp.sin(x) - 2.0) + 1.0, 0.3),
    ],
)
def test_the_op_agrees_with_jax_debug_nans(fn, arg):
    f = jax.jit(fn)
    with jaxmagic.capture({}) as cap:
        y = f(arg)
    (found,) = nan_findings(cap, "nan")
    primitive, _ = jax_verdict("jax_debug_nans", lambda: f(arg))
    assert np.isnan(y) and f"the first NaN comes from `{primitive}`" in found.message


def test_silent_when_jax_is_silent():
    f, g = jax.jit(masked_log), jax.jit(lambda x: jnp.tanh(x) * 3.0)
    x = jnp.array([-1.0, 2.0])
    with jaxmagic.capture({}, grads=True) as cap:
        a, _b = f(x), g(x)
        _c = jax.grad(lambda v: jnp.sum(g(v)))(x)
    jax.config.update("jax_debug_nans", True)
    try:
        f(x), g(x)  # JAX checks a jitted call's outputs: no NaN there
    finally:
        jax.config.update("jax_debug_nans", False)
    assert not nan_findings(cap) and np.isfinite(np.asarray(a)).all()


def test_temporary_arguments_of_a_call_already_known_to_return_nan_are_kept_for_its_origin(monkeypatch):
    monkeypatch.setattr(nan_check, "PIN_SMALL_BYTES", 0)  # only because its output held NaN when read
    f = jax.jit(log_likelihood)
    with jaxmagic.capture({}) as cap:
        _y = jax.block_until_ready(f(jnp.ones(3)))  # a temporary argument; the output is read at once
    (found,) = nan_findings(cap)
    assert "`log`" in found.message and found.source is not None and "could not be located" not in found.message


def test_small_temporary_arguments_are_kept_until_the_cell_ends_and_then_let_go(monkeypatch):
    monkeypatch.setattr(nan_check, "EARLY_MAX_BYTES", 0)  # as if the output were computed after the call
    f = jax.jit(lambda v, w: jnp.log(v - w))
    with jaxmagic.capture({}) as cap:
        _out = f(jnp.ones(4), jnp.full(4, 2.0)).block_until_ready()  # the arguments are temporaries
    (found,) = nan_findings(cap)
    assert "`log`" in found.message and found.source is not None
    gc.collect()
    assert not any(isinstance(o, nan_check.NanWatch) for o in gc.get_objects())


def test_origin_not_located_when_the_arguments_are_gone_says_why_and_what_finds_it():
    f = jax.jit(lambda v: jnp.log(v - 2.0))
    with jaxmagic.capture({}) as cap:
        # the argument (2 MiB: past what is held) is a temporary, freed before the cell ends; the output
        # is too big to read at once
        _y = f(jnp.ones(1 << 19)).block_until_ready()
    (found,) = nan_findings(cap)
    assert "could not be located" in found.message and "freed" in found.message
    assert "jax_debug_nans" in found.message and "--values" in found.message and found.source is None


def test_origin_not_located_when_the_cell_dropped_the_function_says_so(monkeypatch):
    """The capture holds a recorded function weakly (its closure may hold big arrays): dropped before
    the cell ends, its program cannot be evaluated again, unless its outputs held NaN when read."""
    monkeypatch.setattr(nan_check, "EARLY_MAX_BYTES", 0)  # as if the output were computed after the call
    shift = jnp.full(4, 2.0)
    with jaxmagic.capture({}) as cap:
        _y = jax.jit(lambda v: jnp.log(v - shift))(jnp.ones(4)).block_until_ready()  # the function: a temporary
    (found,) = nan_findings(cap)
    assert "could not be located" in found.message and "dropped the jitted function" in found.message


_LOOP_CELL = "for _ in range(60):\n    p = f(p)\nstate = {'w': p, 'b': jnp.zeros(2)}\np.block_until_ready()\n"


def _loop_findings(monkeypatch, sample_s: float) -> list:
    """Findings of a 60-step loop that ends in NaN, with cache hits readiness-sampled every `sample_s`
    (whether the loop's last call is sampled is a matter of timing; each test fixes it one way)."""
    monkeypatch.setattr(readiness, "SAMPLE_S", sample_s)
    monkeypatch.setattr(readiness, "COST_FACTOR", 0)  # the interval is SAMPLE_S, whatever a sample costs
    namespace = {"f": jax.jit(lambda p: p * 0.5 + jnp.log(p - 3.0)), "p": jnp.full(8, 4.0), "jnp": jnp}
    with jaxmagic.capture(namespace) as cap:
        exec(_LOOP_CELL, namespace)
    assert np.isnan(np.asarray(namespace["p"])).all()
    found = nan_findings(cap)
    assert found and all(f.kind == "nan" for f in found)  # the steps' own outputs were freed in the loop
    assert not any("`state" in f.message for f in found)  # the same array under another name: once
    return found


def test_a_loops_last_result_is_checked_by_the_name_the_cell_bound(monkeypatch):
    found = _loop_findings(monkeypatch, sample_s=1e9)  # no cache hit sampled: the last call kept nothing
    named = [f for f in found if "`p`, bound by this cell, holds NaN (8 elements)" in f.message]
    assert len(named) == 1 and "jax_debug_nans" in named[0].message


def test_a_loops_last_result_from_a_sampled_call_is_named_once_as_that_calls_output(monkeypatch):
    found = _loop_findings(monkeypatch, sample_s=0.0)  # every call sampled: the last one's output is watched
    named = [f for f in found if "`p`" in f.message]
    assert len(named) == 1, [f.message for f in found]
    # the first call's origin is located; the last one's output, bound to `p`, is named in the same finding
    assert "more calls of it did too, one of them into `p`)" in named[0].message
    assert "the first NaN comes from `log`" in named[0].message and "bound by this cell" not in named[0].message


def test_a_small_output_freed_at_once_was_read_right_after_its_call_a_large_one_is_not():
    f, big = jax.jit(log_likelihood), jax.jit(lambda v: jnp.log(v - 2.0))
    x, wide = jnp.ones(3), jnp.ones(1 << 15)  # 128 KiB out: past what is read right after a call
    with jaxmagic.capture({}) as cap:
        print(f(x))  # freed before the cell ends
        big(wide)
    (found,) = nan_findings(cap)
    assert found.function == "log_likelihood" and "`log`" in found.message
    gc.collect()
    assert not any(isinstance(o, nan_check.NanWatch) for o in gc.get_objects())


def test_budget_skips_outputs_with_a_note(monkeypatch):
    monkeypatch.setattr(nan_check, "MAX_CHECK_BYTES", 200_000)
    f = jax.jit(lambda v: jnp.log(v - 2.0))
    wide = jnp.ones(1 << 15)  # 128 KiB outputs: read at stop, one fits
    with jaxmagic.capture({}) as cap:
        _y = jax.block_until_ready((f(wide), f(wide + 1)))  # both ready when the cell ends
    (found,) = nan_findings(cap)
    assert "(32,768 elements)" in found.message or "32768" in found.message
    assert any(n.startswith("1 output not checked for NaN/Inf: past the 195") for n in cap.notes), cap.notes


def test_magic_cells_show_the_finding_and_the_users_debug_nans_verdict(magic_shell):
    ip = magic_shell
    ip.run_cell(
        "import jax, jax.numpy as jnp\n"
        "@jax.jit\n"
        "def log_likelihood(x):\n"
        "    var = jnp.mean(x) - 2.0\n"
        "    return -0.5 * jnp.log(var) - x.sum()\n"
        "x = jnp.ones(3)\n"
    )
    for magic in ("jaxpr", "trace"):
        result = ip.run_cell(f"%%{magic} --name nancap\nll = log_likelihood(x)\n")
        assert result.success
        (found,) = nan_findings(ip.user_ns["nancap"])
        assert "`log`" in found.message and found.source.line == 5 and "its output (`ll`)" in found.message
    jax.clear_caches()  # JAX 0.10 skips the check in functions compiled before (`jax_verdict`)
    jax.config.update("jax_debug_nans", True)
    try:
        result = ip.run_cell("%%jaxpr --name nancap\nlog_likelihood(x)\n")
    finally:
        jax.config.update("jax_debug_nans", False)
    assert isinstance(result.error_in_exec, FloatingPointError)  # the cell's own exception, unchanged
    cap = ip.user_ns["nancap"]
    (found,) = nan_findings(cap)
    if stopped_at(result.error_in_exec) == "log":
        assert "JAX stopped the cell in log_likelihood at `log` at line 5" in found.message
    else:  # JAX 0.4 names the jitted call only: no op is claimed
        assert stopped_at(result.error_in_exec) == "jit(log_likelihood)"
        assert "JAX stopped the cell in log_likelihood inside the jitted call `jit(log_likelihood)`" in found.message
        assert "this JAX does not name the op" in found.message and "Usual fix" not in found.message
    assert cap.calls[0].error.startswith("FloatingPointError") and cap.calls[0].jaxpr is not None


_OPS = {
    "log": jax.lax.log,
    "sqrt": jax.lax.sqrt,
    "exp": jax.lax.exp,
    "sin": jax.lax.sin,
    "neg": jax.lax.neg,
    "add": lambda v: v + 1.0,
    "sub": lambda v: v - 3.0,
    "mul": lambda v: v * 2.0,
    "div": lambda v: 1.0 / v,
}


def _chain(names):
    def program(v):
        for name in names:
            v = _OPS[name](v)
        return v

    return program


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    names=st.lists(st.sampled_from(sorted(_OPS)), min_size=1, max_size=4),
    x=st.sampled_from([-2.0, -0.5, 0.0, 0.5, 3.0, 100.0]),
)
def test_random_programs_the_finding_exists_exactly_when_jax_debug_nans_raises(names, x):
    f = jax.jit(_chain(names))
    arg = jnp.float32(x)
    with jaxmagic.capture({}) as cap:
        y = f(arg)
    found = nan_findings(cap, "nan")
    try:
        raised, _ = jax_verdict("jax_debug_nans", lambda: f(arg))
    except AssertionError:  # JAX's check did not raise
        raised = None
    assert bool(found) == (raised is not None) == bool(np.isnan(np.asarray(y)))
    if raised:
        assert f"the first NaN comes from `{raised}`" in found[0].message


def test_an_output_still_being_computed_is_not_waited_for_and_said():
    slow = jax.jit(lambda a: jnp.log(a @ a @ a - 1e12))  # ~0.1 s of device work after dispatch
    a = jnp.ones((1024, 1024))
    slow.lower(a).compile()
    with jaxmagic.capture({}) as cap:
        out = slow(a)
    stopped_ready = out.is_ready()
    if stopped_ready:
        pytest.skip("the device finished before the capture stopped (a fast machine): nothing to show")
    assert not nan_findings(cap) and np.isnan(np.asarray(out)).all()  # NaN, not seen: never waited for
    assert any("1 output still being computed when the cell ended" in n for n in cap.notes)


def test_under_the_users_jax_debug_infs_the_finding_is_what_jax_stopped_at():
    f = jax.jit(blow_up)
    x = jnp.full(2, 100.0)
    jax.config.update("jax_debug_infs", True)
    try:
        with pytest.raises(FloatingPointError) as raised, jaxmagic.capture({}, grads=True) as cap:
            f(x)
    finally:
        jax.config.update("jax_debug_infs", False)
    (found,) = nan_findings(cap)
    if stopped_at(raised.value) == "exp":
        assert found.kind == "inf" and "JAX stopped the cell in blow_up at `exp`" in found.message
        assert found.source.line == blow_up.__code__.co_firstlineno + 1  # the op's line
    else:  # JAX 0.4 names jnp.exp's own jit, not the op, and its traceback ends at the call
        assert stopped_at(raised.value) == "jit(exp)" and "inside the jitted call `jit(exp)`" in found.message
        assert found.source.code == "f(x)"
    assert found.call == 0


def test_under_the_users_jax_debug_nans_an_eager_grad_names_the_op_jax_stopped_at():
    jax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError) as raised, jaxmagic.capture({}, grads=True) as cap:
            jax.grad(softplus)(100.0)
    finally:
        jax.config.update("jax_debug_nans", False)
    (found,) = nan_findings(cap)
    assert found.kind == "nan" and f"`{stopped_at(raised.value)}`" in found.message and found.function == "softplus"


def test_the_replay_under_a_threads_own_debug_nans_leaves_the_global_flag_alone():
    """A check turned on for one thread (`with jax.debug_nans(True):`, as JAX's own test harness
    does) is never written to the process-wide flag by jaxmagic's replay; the replay stops where
    that check stops, and the values say so."""
    f = jax.jit(lambda v: jnp.where(v > 0, jnp.log(v), 0.0) * 3)  # a NaN inside, masked in the output
    x = jnp.array([1.0, -1.0])
    seen = {}

    def cell() -> None:
        with jax.debug_nans(True):
            with jaxmagic.capture({}, values=True) as cap:
                seen["out"] = f(x)
            seen["inside"] = jax.config.jax_debug_nans
        seen["cap"] = cap

    assert in_fresh_thread(cell) is None
    assert seen["inside"] is True and jax.config.jax_debug_nans is False  # the thread's, and the global value
    assert np.asarray(seen["out"]).tolist() == [0.0, 0.0]
    (call,) = seen["cap"].calls
    assert "FloatingPointError" in (call.artifacts.values_note or ""), call.artifacts.values_note


def test_jaxmagics_replay_leaves_the_users_debug_nans_working_for_functions_jitted_before():
    """On JAX 0.10, leaving a `jax.debug_nans(False)` context makes functions jitted before it skip
    the user's check for the rest of the process; jaxmagic's replay under the user's
    jax_debug_nans (`--values`, the NaN origin search) must not do that. A fresh process: JAX's own
    ops enter that context too (`jnp.var`), so an earlier test may have done it already."""
    script = textwrap.dedent("""
        import jax, jax.numpy as jnp, jaxmagic
        earlier = jax.jit(lambda v: jnp.log(v) + 1.0)
        masked = jax.jit(lambda v: jnp.where(v > 0, jnp.log(v), 0.0) * 3)
        earlier(jnp.ones(2))
        x = jnp.array([1.0, -1.0, 2.0])
        masked(x)
        jax.config.update("jax_debug_nans", True)
        with jaxmagic.capture({}, values=True):
            masked(x)  # replayed eqn by eqn with the checks off
        try:
            earlier(-jnp.ones(2))
            print("no check")
        except FloatingPointError:
            print("checked")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1:] == ["checked"], out.stdout + out.stderr


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dtype=st.sampled_from(["float32", "float64", "float16", "bfloat16", "complex64"]),
    size=st.integers(1, 3000),
    nans=st.lists(st.integers(0, 2999), max_size=4),
    infs=st.lists(st.integers(0, 2999), max_size=4),
    scale=st.sampled_from([1.0, 1e20, 1e38]),
)
def test_host_counts_equal_numpys_exact_counts_whatever_the_dtype_and_magnitude(dtype, size, nans, infs, scale):
    """The one-pass finiteness check never hides a NaN or Inf, and overflowing finite values count as none."""
    if dtype == "float16":
        scale = min(scale, 6e4)
    host = np.full(size, scale, np.float64)
    for i in nans:
        host[i % size] = np.nan
    for i in infs:
        host[i % size] = -np.inf if i % 2 else np.inf
    array = host if dtype == "float64" else jnp.asarray(host, dtype=jnp.dtype(dtype))  # float64: a numpy output
    got = nan_check.host_counts(array)
    exact = np.asarray(array, dtype=np.complex128 if dtype == "complex64" else np.float64).view(np.float64)
    assert got == (int(np.isnan(exact).sum()), int(np.isinf(exact).sum()))


def test_host_counts_read_each_distinct_part_once_sharded_replicated_or_on_one_device():
    """A sharded array's NaN/Inf are counted in every shard; a replicated one's once, not per device."""
    devices = jax.devices()
    assert len(devices) == 8
    mesh = jax.sharding.Mesh(np.array(devices).reshape(4, 2), ("x", "y"))
    host = np.zeros((8, 6), np.float32)
    host[0, 0] = host[7, 5] = np.nan  # in the first and the last shard
    host[3, 2] = np.inf
    expected = (2, 1)
    P = jax.sharding.PartitionSpec
    layouts = {
        "sharded": jax.sharding.NamedSharding(mesh, P("x", "y")),
        "sharded on one axis, replicated on the other": jax.sharding.NamedSharding(mesh, P("x")),
        "replicated": jax.sharding.NamedSharding(mesh, P()),
        "one device": jax.sharding.SingleDeviceSharding(devices[3]),
    }
    for what, sharding in layouts.items():
        array = jax.device_put(host, sharding)
        assert nan_check.host_counts(array) == expected, what
