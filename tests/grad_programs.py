"""Differentiated programs shared by the grad tests (split, regions, document)."""

from __future__ import annotations

import jax
import jax.ad_checkpoint
import jax.numpy as jnp

from bench.programs import _layer


def block_args():
    """Parameters and activations of one attention + MLP block (`bench.programs._layer`)."""
    d = 16
    ks = iter(jax.random.split(jax.random.key(2), 8))
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d), "w1": (d, 4 * d), "w2": (4 * d, d)}
    return {n: jax.random.normal(next(ks), s) * 0.1 for n, s in shapes.items()}, jax.random.normal(next(ks), (2, 8, d))


def block_loss(p, h):
    return jnp.mean(_layer(p, h, heads=4) ** 2)


def remat_loss(w, x):
    """A block under `jax.checkpoint` saving only the value named "a"."""

    def block(v):
        a = jax.ad_checkpoint.checkpoint_name(jnp.sin(v @ w), "a")
        b = jnp.cos(a) * jnp.tanh(a)
        return jnp.exp(b)

    policy = jax.checkpoint_policies.save_only_these_names("a")
    return jnp.sum(jax.checkpoint(block, policy=policy)(x))


def stacked_blocks(n: int = 12):
    """(loss, args) of `n` blocks written as a Python loop with a named scope per layer."""
    p, h = block_args()
    params = [jax.tree.map(lambda a: a + i, p) for i in range(n)]

    def loss(params, h):
        for i, layer in enumerate(params):
            with jax.named_scope(f"layer_{i}"):
                h = _layer(layer, h, heads=4)
        return jnp.mean(h**2)

    return loss, (params, h)


def small_mlp():
    """(loss, params, x) of a two-layer tanh MLP with a nested params dict (`params['layer1']['w']`)."""
    params = {
        "layer1": {"w": jnp.ones((4, 8)) * 0.1, "b": jnp.zeros(8)},
        "layer2": {"w": jnp.ones((8, 1)) * 0.1, "b": jnp.zeros(1)},
    }
    x = jnp.linspace(-1, 1, 12).reshape(3, 4)

    def loss(params, x):
        h = jnp.tanh(x @ params["layer1"]["w"] + params["layer1"]["b"])
        y = h @ params["layer2"]["w"] + params["layer2"]["b"]
        return jnp.mean(y**2)

    return loss, params, x


@jax.custom_jvp
def softplus(x):
    """A custom_jvp rule: JAX inlines its jvp (the sigmoid) into the forward."""
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    return softplus(primals[0]), tangents[0] * jax.nn.sigmoid(primals[0])


@jax.custom_vjp
def clip_gradient(x):
    """Identity forward, gradient clipped to [-1, 1]: a custom_vjp bwd rule inlined into the backward."""
    return x


def _clip_fwd(x):
    return x, None


def clip_bwd(_, g):
    return (jnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, clip_bwd)
