"""Jitted calls jaxmagic makes itself while recording a call are never recorded as the user's.

On JAX 0.4 to 0.6 binding `shard_map` eagerly (what `--values` does) makes and calls jitted
helpers through `jax.jit`; recording those as user calls evaluated them again for values, whose
`shard_map` made more helpers: a capture that never ended. `_helper_p` below reproduces that
pattern on any JAX: its eager rule calls `jax.jit(program)` where `program` binds `_helper_p`
again, so every recorded evaluation would start another.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend.core import Primitive  # JAX's public API for new primitives
from jax.interpreters import mlir

import jaxmagic

_helper_p = Primitive("jaxmagic_test_helper")


def _program(x):
    return _helper_p.bind(x)


def _eager(x):
    """Like old `shard_map`'s eager rule: a fresh jitted helper, looked up as `jax.jit` at call time."""
    return jax.jit(_program)(x)


_helper_p.def_impl(_eager)
_helper_p.def_abstract_eval(lambda aval: aval)
mlir.register_lowering(_helper_p, mlir.lower_fun(lambda x: x + 1.0, multiple_results=False))


@pytest.mark.timeout(120)
def test_values_evaluation_records_nothing_of_its_own():
    """The user's one call is the only one recorded, with values; without the guard this never returns."""
    namespace = {"f": jax.jit(lambda x: _helper_p.bind(x) * 2.0)}
    x = jnp.arange(4.0)
    with jaxmagic.capture(namespace, values=True) as cap:
        out = namespace["f"](x)
    np.testing.assert_allclose(out, (np.arange(4.0) + 1.0) * 2.0)
    assert len(cap.calls) == 1, [c.name for c in cap.calls]
    artifacts = cap.calls[0].artifacts
    assert artifacts.values, (artifacts.values_note, cap.notes)
    outvar = artifacts.jaxpr.jaxpr.outvars[0]
    assert artifacts.values[outvar]["max"] == pytest.approx(8.0)
    assert not [n for n in cap.notes if "could not record" in n], cap.notes


@pytest.mark.timeout(120)
def test_user_calls_after_recording_are_recorded_again():
    """The recorder is back on after each recorded call: the user's later calls are all seen."""
    namespace = {"f": jax.jit(lambda x: _helper_p.bind(x) * 2.0), "g": jax.jit(lambda x: x - 1.0)}
    with jaxmagic.capture(namespace, values=True) as cap:
        namespace["f"](jnp.ones(3))
        namespace["g"](jnp.ones(3))
        namespace["f"](jnp.ones(5))
    assert [c.name.split(".")[-1] for c in cap.calls] == ["<lambda>"] * 3
    first, second, third = cap.calls
    assert (first.function_id, second.function_id != first.function_id, third.function_id) == (
        first.function_id,
        True,
        first.function_id,
    )
    assert [c.cache_hit for c in cap.calls] == [False, False, False]
    assert all(c.artifacts.values for c in cap.calls), [c.artifacts.values_note for c in cap.calls]
