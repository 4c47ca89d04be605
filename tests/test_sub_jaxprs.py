"""The one sub-jaxpr walker (capture/jax_compat/jaxprs.py) against JAX's own `jaxprs_in_params`.

Real programs with every kind of eqn that holds jaxprs (cond, while, scan, pjit, custom_jvp,
custom_vjp, remat, shard_map, custom_linear_solve): on every eqn, at every depth, the walker
finds the same jaxprs as JAX's helper, in params order unopened and sorted by param name when
asked, with the labels the graph's groups use (`branches[1]`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, PartitionSpec

from jaxmagic.capture import jax_compat
from tests.jax_versions import shard_map

try:  # JAX's own walker: public in jax.extend on recent JAX, in jax.core on older ones
    from jax.extend.core import jaxprs_in_params
except ImportError:
    from jax.core import jaxprs_in_params


@jax.custom_jvp
def _soft(x):
    return jnp.log1p(jnp.exp(x))


@_soft.defjvp
def _soft_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _soft(x), t * jax.nn.sigmoid(x)


@jax.custom_vjp
def _clip(x):
    return x


_clip.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))


def _differentiable(x):
    y = jax.lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    y, _ = jax.lax.scan(lambda c, v: (c + v, c), y, jnp.stack([x, x]))
    y = jax.jit(lambda v: jnp.sin(v))(y)
    y = _soft(y) + _clip(y)
    return jax.checkpoint(lambda v: jnp.cos(v) * v)(y)


def _program(x):
    y = jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5), (0, _differentiable(x)))[1]
    matrix = jnp.eye(x.shape[0]) * 2.0
    solved = jax.lax.custom_linear_solve(lambda v: matrix @ v, y, lambda _, b: b / 2.0, symmetric=True)
    return solved.sum()


def _sharded(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("d",))
    body = shard_map(
        lambda v: jax.lax.psum(v * 2.0, "d"), mesh=mesh, in_specs=PartitionSpec("d"), out_specs=PartitionSpec()
    )
    return body(x)


def _every_eqn(closed):
    """Every eqn of the program, at every depth (through JAX's walker, so the walk is JAX's)."""
    todo, seen = [closed.jaxpr], set()
    while todo:
        jaxpr = todo.pop()
        if id(jaxpr) in seen:
            continue
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            yield eqn
            todo.extend(jaxprs_in_params(eqn.params))


@functools.cache
def _programs():
    x = jnp.arange(1.0, 4.0)
    return {
        "control flow and calls": jax.make_jaxpr(jax.jit(_program))(x),
        "its gradient": jax.make_jaxpr(jax.jit(jax.grad(lambda v: _differentiable(v).sum())))(x),
        "shard_map": jax.make_jaxpr(jax.jit(_sharded))(jnp.arange(4.0)),
    }


@pytest.mark.parametrize("name", ["control flow and calls", "its gradient", "shard_map"])
def test_the_walker_finds_what_jaxs_own_helper_finds(name):
    closed = _programs()[name]
    holders = set()
    for eqn in _every_eqn(closed):
        theirs = list(jaxprs_in_params(eqn.params))
        ours = [sub for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False, opened=True)]
        assert [id(j) for j in ours] == [id(j) for j in theirs], eqn.primitive.name
        unopened = [sub for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False)]
        assert [id(getattr(j, "jaxpr", j)) for j in unopened] == [id(j) for j in theirs]
        assert jax_compat.has_sub_jaxprs(eqn) == bool(theirs)
        if theirs:
            holders.add(eqn.primitive.name)
    # Names vary between JAX releases (`pjit`/`jit`, `remat2`/`checkpoint`, `custom_vjp_call_jaxpr`).
    assert holders & {"pjit", "jit"}, holders
    if name == "shard_map":
        assert "shard_map" in holders, holders
        return
    assert {"cond", "scan"} <= holders, holders
    assert holders & {"checkpoint", "remat2", "remat"}, holders
    if name == "control flow and calls":
        assert {"while", "custom_jvp_call", "custom_linear_solve"} <= holders, holders
        assert holders & {"custom_vjp_call", "custom_vjp_call_jaxpr"}, holders


def test_sorted_order_and_labels_follow_the_params_names():
    closed = _programs()["control flow and calls"]
    for eqn in _every_eqn(closed):
        labelled = list(jax_compat.sub_jaxprs(eqn))
        names = [label.split("[")[0] for label, _ in labelled]
        assert names == sorted(names)
        assert sorted(id(j) for _, j in labelled) == sorted(id(j) for _, j in jax_compat.sub_jaxprs(eqn, ordered=False))
        for label, sub in labelled:
            key, _, rest = label.partition("[")
            held = eqn.params[key]
            assert (held[int(rest[:-1])] if rest else held) is sub
        if eqn.primitive.name == "cond":
            assert [label for label, _ in labelled] == ["branches[0]", "branches[1]"]
            assert all(isinstance(sub, jax_compat.jaxpr_types()[0]) for _, sub in labelled)
            opened = [sub for _, sub in jax_compat.sub_jaxprs(eqn, opened=True)]
            assert all(isinstance(sub, jax_compat.jaxpr_types()[1]) for sub in opened)
