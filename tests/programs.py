"""JAX programs the graph must get right: tutorial classics, control flow, custom rules, sharding, a transformer.

Each entry builds (jitted function, args, kwargs) fresh, so tests can call it inside a capture.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .jax_versions import shard_map


def sin_cos():
    f = jax.jit(lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2)
    return f, (jnp.arange(3.0),), {}


def dot_plus_one():
    @jax.jit
    def f(x, y):
        return jnp.dot(x + 1, y + 1)

    return f, (jnp.ones((3, 4)), jnp.ones(4)), {}


def control_flow():
    @partial(jax.jit, static_argnames="steps")
    def f(x, steps):
        x = jax.lax.cond(x.sum() > 0, jnp.tanh, jnp.sin, x)
        total, hist = jax.lax.scan(lambda c, xi: (c * 0.9 + xi, c), 0.0, x)
        return jax.lax.while_loop(lambda t: t > 1.0, lambda t: t / 2, total), hist

    return f, (jnp.arange(4.0),), {"steps": 3}


def switch_three_branches():
    @jax.jit
    def f(i, x):
        return jax.lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * 2], x)

    return f, (1, jnp.ones(3)), {}


def custom_rules():
    @jax.custom_jvp
    def safe_log(x):
        return jnp.log(jnp.maximum(x, 1e-6))

    safe_log.defjvp(lambda p, t: (safe_log(p[0]), t[0] / p[0]))

    @jax.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))

    @jax.jit
    def f(x):
        return safe_log(jnp.sum(clip_grad(x) ** 2))

    return f, (jnp.ones(4),), {}


def remat_and_grad():
    @jax.jit
    def f(w, x):
        g = lambda w: jnp.sum(jax.checkpoint(lambda v: jnp.tanh(v @ w))(x) ** 2)
        return jax.grad(g)(w)

    return f, (jnp.ones((4, 4)), jnp.ones((2, 4))), {}


def shard_map_psum():
    mesh = jax.make_mesh((8,), ("data",))

    @jax.jit
    def f(x):
        return shard_map(lambda b: jax.lax.psum(b.sum(), "data"), mesh=mesh, in_specs=P("data"), out_specs=P())(x)

    return f, (jax.device_put(jnp.arange(32.0), NamedSharding(mesh, P("data"))),), {}


def nested_jit_and_scopes():
    @jax.jit
    def inner(v):
        return v * 2

    @jax.jit
    def f(x):
        with jax.named_scope("encoder"):
            with jax.named_scope("layer0"):
                x = jnp.tanh(inner(x))
            with jax.named_scope("layer1"):
                x = jnp.tanh(inner(x))
        return x.sum()

    return f, (jnp.ones(3),), {}


def small_transformer():
    def block(p, x):
        with jax.named_scope("attention"):
            q, k, v = x @ p["wq"], x @ p["wk"], x @ p["wv"]
            x = x + jax.nn.softmax(q @ k.T / 4.0, axis=-1) @ v
        with jax.named_scope("mlp"):
            x = x + jax.nn.gelu(x @ p["w1"]) @ p["w2"]
        return x

    @jax.jit
    def train_step(params, x):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean(block(p, x) ** 2))(params)
        return loss, jax.tree.map(lambda a, g: a - 0.01 * g, params, grads)

    params = {
        "wq": jnp.ones((16, 16)),
        "wk": jnp.ones((16, 16)),
        "wv": jnp.ones((16, 16)),
        "w1": jnp.ones((16, 32)),
        "w2": jnp.ones((32, 16)),
    }
    return train_step, (params, jnp.ones((8, 16))), {}


def global_constant():
    table = jnp.arange(12.0).reshape(3, 4)

    @jax.jit
    def f(x):
        return table @ x

    return f, (jnp.ones(4),), {}


PROGRAMS: dict[str, Callable] = {
    fn.__name__: fn
    for fn in (
        sin_cos,
        dot_plus_one,
        control_flow,
        switch_three_branches,
        custom_rules,
        remat_and_grad,
        shard_map_psum,
        nested_jit_and_scopes,
        small_transformer,
        global_constant,
    )
}
