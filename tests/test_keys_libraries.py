"""%%prng on the libraries people train with: Flax's Dropout and Equinox's Dropout draw from
`jax.random` at call time, eagerly or inside a jitted apply, and show up with the library line
in between (`via`) and the user's line as the source."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxmagic

jr = jax.random


def _reused(cap) -> list:
    return [r for r in cap.keys if r.state == "reused"]


def test_flax_dropout_in_a_jitted_apply_consumes_each_step_key_once():
    nn = pytest.importorskip("flax.linen")

    class Model(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = nn.Dense(4)(x)
            x = nn.Dropout(0.5, deterministic=not train)(x)
            return nn.Dropout(0.5, deterministic=not train)(x)

    model = Model()
    params = model.init(jr.key(0), jnp.ones(3), False)
    with jaxmagic.capture({}) as cap:
        apply = jax.jit(lambda p, x, k: model.apply(p, x, True, rngs={"dropout": k}))
        key = jr.key(1)
        for _ in range(4):
            key, sub = jr.split(key)
            apply(params, jnp.ones(3), sub)
    assert not _reused(cap)
    masks = [u for r in cap.keys for u in r.uses if u.name == "bernoulli"]
    assert len(masks) == 8  # two dropout layers, four steps
    assert all(u.via and "flax" in u.via and u.function.endswith("<lambda>") for u in masks), [
        (u.via, u.function, u.source) for u in masks
    ]
    assert {u.source.file for u in masks} == {__file__}  # the user's model lines


def test_flax_dropout_with_the_same_rng_twice_is_reuse():
    nn = pytest.importorskip("flax.linen")
    layer = nn.Dropout(0.5, deterministic=False)
    with jaxmagic.capture({}) as cap:
        rng = jr.key(2)
        layer.apply({}, jnp.ones(8), rngs={"dropout": rng})
        layer.apply({}, jnp.ones(8), rngs={"dropout": rng})  # the same mask twice
    assert _reused(cap) and any(f.kind == "key_reuse" for f in cap.findings)


def test_equinox_dropout_reuse_and_clean_use():
    eqx = pytest.importorskip("equinox")
    dropout = eqx.nn.Dropout(0.5)
    with jaxmagic.capture({}) as cap:
        k = jr.key(3)
        dropout(jnp.ones(4), key=k)
        dropout(jnp.ones(4), key=k)
    [reused] = _reused(cap)
    assert [u.name for u in reused.uses] == ["bernoulli", "bernoulli"]
    assert all("equinox" in u.via for u in reused.uses)
    with jaxmagic.capture({}) as cap:
        k1, k2 = jr.split(jr.key(4))
        eqx.filter_jit(dropout)(jnp.ones(4), key=k1)
        dropout(jnp.ones(4), key=k2)
    assert not _reused(cap)
