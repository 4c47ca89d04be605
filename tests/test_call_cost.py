"""What a capture costs while the cell runs: no work per leaf that JAX makes expensive,
and signatures that stay what they were for concrete arrays.

Timing goals live in bench/ (bench/trace.py, bench/run.py); these tests check the behaviour
the fast paths must keep, each able to fail.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from jaxmagic.capture import jax_compat
from jaxmagic.capture.jit.signature import signature_of

from .jax_versions import typeof


def _sharding_of(fn, *args):
    return [a.sharding for a in signature_of(fn, args, {}).args]


def test_concrete_signatures_keep_their_placement():
    """Default device: no placement; another device: `device N`; a NamedSharding: its spec."""
    f = jax.jit(lambda a, b, c: a)
    default = jnp.ones(4)
    other = jax.device_put(jnp.ones(4), jax.devices()[3])
    mesh = jax.make_mesh((len(jax.devices()),), ("x",))
    named = jax.device_put(jnp.ones((len(jax.devices()), 2)), NamedSharding(mesh, P("x")))
    assert _sharding_of(f, default, other, named) == [None, "device 3", "P('x',)"]
    avals = [a.aval for a in signature_of(f, (default, other, named), {}).args]
    assert avals == ["f32[4]", "f32[4]", jax_compat.short_aval(typeof(named))]


class _CountingSharding:
    """Counts reads of `Tracer.sharding` and then does what JAX's own property does."""

    def __init__(self, original: property):
        self.original = original
        self.reads = 0

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        self.reads += 1
        return self.original.__get__(obj, owner)


@pytest.fixture
def tracer_sharding_reads(monkeypatch):
    tracer_type = jax.core.Tracer
    counter = _CountingSharding(tracer_type.__dict__["sharding"])
    monkeypatch.setattr(tracer_type, "sharding", counter)
    return counter


def test_the_counter_sees_a_read(tracer_sharding_reads):
    """The instrument works: one read of a tracer's `.sharding` inside jit is counted."""
    jax.jit(lambda x: (getattr(x, "sharding", None), x)[1])(jnp.ones(2))
    assert tracer_sharding_reads.reads == 1


def test_grad_inside_jit_reads_no_tracer_sharding(tracer_sharding_reads):
    """A jit(grad) over many leaves: every traced leaf gets its aval, none is asked for `.sharding`."""
    params = [{"w": jnp.ones((2, 2)) * i, "b": jnp.zeros(2)} for i in range(40)]

    def loss(params, x):
        for p in params:
            x = jnp.tanh(x @ p["w"] + p["b"])
        return x.sum()

    with jaxmagic.capture({}) as cap:  # grads made inside the capture are recorded
        jax.jit(jax.grad(loss))(params, jnp.ones(2))
    [grad] = cap.grads
    assert grad.traced and len(grad.args) == 81
    assert grad.args[0].aval == "f32[2]" and all(a.sharding is None for a in grad.args)
    assert cap.calls[0].signature is not None and len(cap.calls[0].signature.args) == 81
    assert tracer_sharding_reads.reads == 0


def test_explicit_sharding_is_read_from_the_aval(tracer_sharding_reads):
    """In explicit-sharding mode a traced argument's spec comes from its abstract value."""
    axis_type = getattr(jax.sharding, "AxisType", None)
    if axis_type is None or not hasattr(axis_type, "Explicit"):
        pytest.skip("this JAX has no explicit-sharding mode")
    n = len(jax.devices())
    mesh = jax.make_mesh((n,), ("x",), axis_types=(axis_type.Explicit,))
    x = jax.device_put(jnp.ones((n, 2)), NamedSharding(mesh, P("x")))
    with jaxmagic.capture({}) as cap:
        jax.jit(jax.grad(lambda v: (v * v).sum()))(x)
    [grad] = cap.grads
    [arg] = grad.args
    assert arg.sharding == jax_compat.spec_text(typeof(x).sharding.spec)
    assert "'x'" in arg.sharding
    assert tracer_sharding_reads.reads == 0


def _plus_one(v):
    return v + 1


def test_jit_made_anew_for_the_same_function_is_one_function():
    """`jax.jit(f)` made anew each iteration hits JAX's call cache: one function, its wrappers counted;
    other jit options make another function."""
    x = jnp.ones(3)
    with jaxmagic.capture({}) as cap:
        for _ in range(30):
            jax.jit(_plus_one)(x)
        jax.jit(_plus_one, donate_argnums=0)(jnp.ones(3))
    assert len(cap.calls) == 31
    first = {c.function_id for c in cap.calls[:30]}
    assert len(first) == 1 and cap.calls[30].function_id not in first
    assert cap.wrappers == {first.pop(): 30}
    assert not cap.calls[0].cache_hit and all(c.cache_hit for c in cap.calls[1:30])
    # JAX's cache holds the one program: recorded in full once, not once per wrapper; every hit names it
    assert sum(c.phases is not None for c in cap.calls[:30]) == 1
    assert len({id(c.artifacts) for c in cap.calls[:30]}) == 1 and cap.calls[0].artifacts is not None
    assert len({id(c.signature) for c in cap.calls[:30]}) == 1


def test_hot_calls_misses_and_errors_are_recorded_in_order():
    """Past the signature budget cache hits take the routed call's own path; a miss and an error
    of the same function are still recorded as the recorder records them."""
    f = jax.jit(lambda v: v * 2)
    with pytest.raises(TypeError):
        with jaxmagic.capture({}) as cap:
            for _ in range(20):
                f(jnp.ones(3))
            f(jnp.ones(4))  # a new shape: JAX traces and compiles again
            f(jnp.ones(4))
            f("not an array")
    assert len(cap.calls) == 23 and [c.index for c in cap.calls] == list(range(23))
    assert len({c.function_id for c in cap.calls}) == 1
    assert all(c.cache_hit for c in cap.calls[1:20]) and cap.calls[21].cache_hit
    miss = cap.calls[20]
    assert not miss.cache_hit and miss.signature is not None and miss.miss_reason is not None
    assert miss.signature.args[0].aval == "f32[4]" and miss.artifacts is not None
    assert cap.calls[22].error.startswith("TypeError")
    assert all(c.start <= c.end for c in cap.calls)
    assert all(a.end <= b.start for a, b in zip(cap.calls, cap.calls[1:]))


_SCALE = jnp.arange(4.0)


def test_a_constant_is_named_by_the_value_read_at_the_call():
    """Constants are matched when the capture stops, against what the function could reach right
    after the call: a global given a new value later in the cell is still named."""
    global _SCALE
    before = _SCALE
    f = jax.jit(lambda v: v * _SCALE)
    try:
        with jaxmagic.capture({}) as cap:
            f(jnp.ones(4))
            _SCALE = jnp.zeros(4)
    finally:
        _SCALE = before
    [found] = [f for f in cap.findings if f.kind == "global_constant"]
    assert "`_SCALE`" in found.message and found.call == 0


def test_explanations_go_off_when_lambdas_made_anew_keep_compiling(monkeypatch):
    """Each `jax.jit(lambda ...)` made anew is new to JAX, which looks through every cached entry to
    explain the miss; past the limit for one definition site JAX's explanations go off, with a note,
    and the reasons still say the function was made anew."""
    from jaxmagic.capture.jit import cache_log

    monkeypatch.setattr(cache_log, "EXPLAIN_LIMIT", 3)
    x = jnp.ones(2)
    with jaxmagic.capture({}) as cap:
        for k in range(6):
            jax.jit(lambda v: v * k)(x)
    assert len(cap.calls) == 6 and not any(c.cache_hit for c in cap.calls)
    assert len({c.function_id for c in cap.calls}) == 6
    [note] = [n for n in cap.notes if "explanations were turned off" in n]
    assert "jitted functions made from the code at" in note and __file__ in note
    assert cap.calls[-1].miss_reason.redefined and cap.calls[-1].explanations == ()
    assert cap.calls[1].explanations  # JAX's own words, while they were on


def test_jitted_calls_under_a_trace_run_at_once_and_the_traced_call_is_recorded(monkeypatch):
    """An optimizer's jitted helpers called while its update is traced (thousands for a real model)
    never reach the recorder's `record`: JAX's call runs at once. The call being traced is
    recorded as ever, and the inner jit still appears inside its program."""
    from jaxmagic.capture.jit.recorder import JitRecorder

    calls = []
    original = JitRecorder.record

    def counted(self, fn, args, kwargs):
        calls.append(getattr(fn, "__name__", "?"))
        return original(self, fn, args, kwargs)

    monkeypatch.setattr(JitRecorder, "record", counted)

    @jax.jit
    def scale(x):
        return x * 0.9

    @jax.jit
    def update(params):
        return [scale(p) for p in params]

    params = [jnp.ones(3)] * 50
    with jaxmagic.capture({}, keys=False) as cap:
        out = update(params)
    assert calls == ["update"]
    assert [c.name.rsplit(".", 1)[-1] for c in cap.calls] == ["update"]
    assert all(float(o[0]) == pytest.approx(0.9) for o in out)
    inner = [e for e in cap.calls[0].jaxpr.jaxpr.eqns if "jaxpr" in e.params]
    assert len(inner) == 50  # each traced call of `scale` is a nested program of `update`


def test_an_equinox_step_donating_nothing_or_all_is_recorded_and_a_donated_state_named():
    """`eqx.filter_jit` as people write it: its jit always donates its first argument, a dict that is
    empty unless `donate` asks (nothing noted then); with `donate="all"` the model's arrays are
    noted at each call, and reading a donated one names the call that took it."""
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(4, 1, 8, 2, key=jax.random.key(0))
    x = jnp.ones((5, 4))

    def step(model, x):
        params = eqx.filter(model, eqx.is_array)
        return eqx.apply_updates(model, jax.tree.map(lambda p: -0.1 * p, params)), jax.vmap(model)(x).sum()

    def fresh(model):  # a copy of the model's arrays, to donate
        return eqx.apply_updates(model, jax.tree.map(jnp.zeros_like, eqx.filter(model, eqx.is_array)))

    plain, donating = eqx.filter_jit(step), eqx.filter_jit(step, donate="all")
    plain(model, x), donating(fresh(model), x)
    with jaxmagic.capture({}) as cap:
        m = model
        for _ in range(20):
            m, _loss = plain(m, x)
        jax.vmap(model)(x)  # the model passed first: not donated, still readable
    assert len(cap.calls) == 20 and all(c.cache_hit for c in cap.calls) and not cap.findings
    with pytest.raises((RuntimeError, ValueError), match="deleted"):  # as JAX's dispatch reaches it
        with jaxmagic.capture({}) as cap:
            m = fresh(model)
            for _ in range(12):
                first, (m, _loss) = m, donating(m, x)
            jax.vmap(first)(x)
    (f,) = [f for f in cap.findings if f.kind == "donated_then_read"]
    assert f.call == 11 and "donated" in f.message, f.message
