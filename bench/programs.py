"""Real programs of a chosen size for benchmarks and scale tests.

Each builder returns `(jitted_fn, args)`; the jaxpr sizes (recursive eqn counts) are
what `%%jaxpr` users meet in practice: the gradient of a deep MLP, and a transformer
train step with its layers unrolled (one name scope per layer) or under `lax.scan`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp


def mlp_grad(layers: int, width: int = 32, named: bool = True) -> tuple[Callable, tuple]:
    """jit(grad) of an MLP with `layers` dense+tanh layers; about 17 eqns per layer."""
    keys = jax.random.split(jax.random.key(0), layers)
    params = [{"w": jax.random.normal(k, (width, width)) * 0.1, "b": jnp.zeros(width)} for k in keys]

    def loss(params, x, y):
        h = x
        for i, p in enumerate(params):
            if named:
                with jax.named_scope(f"dense_{i}"):
                    h = jnp.tanh(h @ p["w"] + p["b"])
            else:
                h = jnp.tanh(h @ p["w"] + p["b"])
        return jnp.mean((h - y) ** 2)

    step = jax.jit(jax.grad(loss))
    x = jnp.ones((8, width))
    return step, (params, x, x)


def _attention_block(p: dict, h: Any, heads: int) -> Any:
    b, t, d = h.shape
    q = (h @ p["wq"]).reshape(b, t, heads, d // heads)
    k = (h @ p["wk"]).reshape(b, t, heads, d // heads)
    v = (h @ p["wv"]).reshape(b, t, heads, d // heads)
    scores = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(d // heads)
    mask = jnp.tril(jnp.ones((t, t), bool))
    scores = jnp.where(mask, scores, -1e9)
    att = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhts,bshd->bthd", att, v).reshape(b, t, d)
    return out @ p["wo"]


def _layer(p: dict, h: Any, heads: int) -> Any:
    def norm(x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)

    with jax.named_scope("attention"):
        h = h + _attention_block(p, norm(h), heads)
    with jax.named_scope("mlp"):
        h = h + jax.nn.gelu(norm(h) @ p["w1"]) @ p["w2"]
    return h


def transformer_step(
    layers: int, scan: bool = False, d: int = 32, heads: int = 4, t: int = 8, vocab: int = 64
) -> tuple[Callable, tuple]:
    """jit of one SGD train step of a decoder-only transformer (about 300 eqns per layer)."""
    ks = iter(jax.random.split(jax.random.key(1), 8 * layers + 2))

    def layer_params():
        shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d), "w1": (d, 4 * d), "w2": (4 * d, d)}
        return {n: jax.random.normal(next(ks), s) * 0.05 for n, s in shapes.items()}

    stack = [layer_params() for _ in range(layers)]
    params = {
        "embed": jax.random.normal(next(ks), (vocab, d)) * 0.05,
        "layers": jax.tree.map(lambda *xs: jnp.stack(xs), *stack) if scan else stack,
    }

    def loss(params, tokens):
        h = params["embed"][tokens]
        if scan:
            h, _ = jax.lax.scan(lambda h, p: (_layer(p, h, heads), None), h, params["layers"])
        else:
            for i, p in enumerate(params["layers"]):
                with jax.named_scope(f"layer_{i}"):
                    h = _layer(p, h, heads)
        logits = h @ params["embed"].T
        logp = jax.nn.log_softmax(logits[:, :-1])
        return -jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1).mean()

    @jax.jit
    def train_step(params, tokens):
        value, grads = jax.value_and_grad(loss)(params, tokens)
        return value, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    tokens = jnp.zeros((2, t), jnp.int32)
    return train_step, (params, tokens)


def adam_step(layers: int, width: int = 16, donate: bool = False) -> tuple[Callable, tuple]:
    """A jitted train step with Optax's Adam over `layers` dense layers (2 leaves each; the optimizer's
    state 4 more): a model's thousands of parameters, most eqns made on a few of Optax's lines.
    About 46 eqns per layer. `donate`: the parameters and the optimizer's state are donated
    (`donate_argnums=(0, 1)`, as big-model loops save memory)."""
    import optax

    params = [{"w": jnp.ones((width, width)) * 0.01, "b": jnp.zeros(width)} for _ in range(layers)]
    opt = optax.adam(1e-3)
    x = jnp.ones((4, width))

    def loss(ps: list, x: Any) -> Any:
        h = x
        for p in ps:
            h = jnp.tanh(h @ p["w"] + p["b"])
        return jnp.mean(h**2)

    def step(ps: list, state: Any, x: Any) -> tuple:
        value, grads = jax.value_and_grad(loss)(ps, x)
        updates, state = opt.update(grads, state, ps)
        return optax.apply_updates(ps, updates), state, value

    return jax.jit(step, donate_argnums=(0, 1) if donate else ()), (params, opt.init(params), x)


def eqn_count(closed_jaxpr: Any) -> int:
    """Recursive eqn count, as the graph document counts them."""
    from jaxmagic.capture.jax_compat import sub_jaxprs

    def count(jaxpr: Any) -> int:
        return sum(1 + sum(count(getattr(s, "jaxpr", s)) for _, s in sub_jaxprs(e)) for e in jaxpr.eqns)

    return count(closed_jaxpr.jaxpr)
