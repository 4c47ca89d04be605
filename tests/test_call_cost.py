"""What a capture costs while the cell runs: no work per leaf that JAX makes expensive,
and signatures that stay what they were for concrete arrays.

Timing goals live in bench/ (bench/trace.py, bench/run.py); these tests check the behaviour
the fast paths must keep, each able to fail.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxmagic
from jaxmagic.capture import jax_compat
from jaxmagic.capture.signature import signature_of


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
    assert avals == ["f32[4]", "f32[4]", jax_compat.short_aval(jax.typeof(named))]


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
    assert arg.sharding == jax_compat.spec_text(jax.typeof(x).sharding.spec)
    assert "'x'" in arg.sharding
    assert tracer_sharding_reads.reads == 0
