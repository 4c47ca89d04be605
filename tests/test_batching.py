"""vmap batch dimensions of recorded programs, checked against the shapes JAX gives."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import jaxmagic
from jaxmagic.capture.values import batching

from .jax_versions import needs

ORIGINAL_VMAP = jax.vmap


def record(fn, *args, **kwargs):
    """Call jitted `fn` inside a capture (through a namespace, as a notebook binds it)."""
    namespace = {"fn": fn}
    with jaxmagic.capture(namespace, vmap=True) as cap:
        out = namespace["fn"](*args, **kwargs)
    assert jax.vmap is ORIGINAL_VMAP
    return out, cap.calls[0].artifacts


def by_prim(artifacts, prim, jaxpr=None):
    jaxpr = jaxpr or artifacts.jaxpr.jaxpr
    return [e for e in jaxpr.eqns if e.primitive.name == prim]


def dims_of(artifacts, eqns):
    return [artifacts.batch_dims[e.outvars[0]] for e in eqns]


def test_jit_of_vmap_in_axes_0_and_none():
    f = jax.jit(jax.vmap(lambda x, y: jnp.sin(x) * y, in_axes=(0, None)))
    x, y = jnp.ones((8, 3)), jnp.ones(3)
    _, a = record(f, x, y)
    jaxpr = a.jaxpr.jaxpr
    (sin,) = by_prim(a, "sin")
    assert sin.outvars[0].aval.str_short() == "float32[8,3]" and a.batch_dims[sin.outvars[0]] == 0
    assert [a.batch_dims[v] for v in jaxpr.invars] == [0, None]
    assert dims_of(a, by_prim(a, "broadcast_in_dim")) == [None]  # y broadcast to [1,3]: not batched
    assert a.batch_dims[jaxpr.outvars[0]] == 0
    assert a.batch_size == 8 and a.batch_note is None
    assert set(a.batch_dims) >= set(jaxpr.invars) | {v for e in jaxpr.eqns for v in e.outvars}


def test_jit_of_vmap_in_axes_1_moves_the_batch_dim():
    f = jax.jit(jax.vmap(lambda x, y: jnp.sin(x) * y, in_axes=(1, 0)))
    x, y = jnp.ones((3, 8)), jnp.ones((8, 3))
    out, a = record(f, x, y)
    jaxpr = a.jaxpr.jaxpr
    assert [a.batch_dims[v] for v in jaxpr.invars] == [1, 0]
    (sin,) = by_prim(a, "sin")
    assert sin.outvars[0].aval.str_short() == "float32[3,8]" and a.batch_dims[sin.outvars[0]] == 1
    assert dims_of(a, by_prim(a, "transpose")) == [0]  # mul needs both batched on axis 0
    assert a.batch_dims[jaxpr.outvars[0]] == 0 and out.shape == (8, 3)


def test_jit_of_vmap_with_pytree_in_axes_and_out_axes():
    def f(p, x):
        return jnp.tanh(x @ p["w"] + p["b"])

    g = jax.jit(jax.vmap(f, in_axes=({"w": None, "b": 0}, 0), out_axes=1))
    p = {"w": jnp.ones((3, 2)), "b": jnp.ones((5, 2))}
    out, a = record(g, p, jnp.ones((5, 3)))
    jaxpr = a.jaxpr.jaxpr
    # invars are p['b'], p['w'], x (pytree leaves in key order)
    assert [a.batch_dims[v] for v in jaxpr.invars] == [0, None, 0]
    assert dims_of(a, by_prim(a, "tanh")) == [0]
    assert a.batch_dims[jaxpr.outvars[0]] == 1 and out.shape == (2, 5) and a.batch_size == 5


def test_nested_vmap_reports_the_outer_dim():
    inner = jax.vmap(lambda x, y: jnp.sin(x) * y, in_axes=(0, None))  # over axis 0 of [4, 3]
    f = jax.jit(jax.vmap(inner, in_axes=(1, None)))  # outer over axis 1 of [4, 8, 3]
    _, a = record(f, jnp.ones((4, 8, 3)), jnp.ones(3))
    (sin,) = by_prim(a, "sin")
    assert sin.outvars[0].aval.str_short() == "float32[4,8,3]"
    assert a.batch_dims[sin.outvars[0]] == 1  # the outer vmap's; the inner one's (0) is not shown
    assert a.batch_dims[a.jaxpr.jaxpr.invars[0]] == 1
    assert a.batch_size == 8 and "outermost" in a.batch_note


def test_vmap_inside_jit_per_example_gradients():
    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

    @jax.jit
    def train_step(w, x, y):
        grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, x, y)
        return w - 0.1 * grads.mean(0), grads

    w, x, y = jnp.ones((4, 2)), jnp.ones((8, 4)), jnp.ones((8, 2))
    (new_w, grads), a = record(train_step, w, x, y)
    jaxpr = a.jaxpr.jaxpr
    assert [a.batch_dims[v] for v in jaxpr.invars] == [None, 0, 0]  # w is not mapped; x, y on axis 0
    tanh = by_prim(a, "tanh")[0]
    assert tanh.outvars[0].aval.str_short() == "float32[8,2]" and a.batch_dims[tanh.outvars[0]] == 0
    w_grad, new_w_var = jaxpr.outvars[1], jaxpr.outvars[0]
    assert w_grad.aval.str_short() == "float32[8,4,2]" and a.batch_dims[w_grad] == 0
    assert a.batch_dims[new_w_var] is None  # outside the vmap: the mean over examples
    assert a.batch_size == 8 and a.batch_note is None
    np.testing.assert_allclose(grads, jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, x, y))


def test_grad_of_vmap_inside_jit():
    @jax.jit
    def step(w, x):
        return jax.grad(lambda w: jnp.mean(jax.vmap(lambda xi: jnp.tanh(xi @ w))(x)))(w)

    _, a = record(step, jnp.ones((4, 2)), jnp.ones((8, 4)))
    tanh = by_prim(a, "tanh")[0]
    assert a.batch_dims[tanh.outvars[0]] == 0
    assert a.batch_dims[a.jaxpr.jaxpr.outvars[0]] is None and a.batch_note is None


def test_vmap_over_keys_and_axis_size():
    f = jax.jit(jax.vmap(lambda k: jax.random.normal(k, (3,))))
    keys = jax.random.split(jax.random.key(0), 6)
    _, a = record(f, keys)
    assert a.batch_dims[a.jaxpr.jaxpr.invars[0]] == 0 and a.batch_dims[a.jaxpr.jaxpr.outvars[0]] == 0
    assert a.batch_size == 6

    g = jax.jit(lambda x: jax.vmap(lambda: x * 2, axis_size=5, in_axes=())())
    out, b = record(g, jnp.ones(3))
    assert out.shape == (5, 3) and b.batch_size == 5 and b.batch_dims[b.jaxpr.jaxpr.outvars[0]] == 0


def test_vmap_called_through_a_from_import_alias():
    from jax import vmap

    namespace = {"vmap": vmap, "jnp": jnp}
    exec("def f(x):\n    return vmap(jnp.sin)(x) + 1\n", namespace)
    out, a = record(jax.jit(namespace["f"]), jnp.ones((7, 2)))
    (sin,) = by_prim(a, "sin")
    assert a.batch_dims[sin.outvars[0]] == 0 and a.batch_size == 7
    assert namespace["vmap"] is ORIGINAL_VMAP


def test_without_vmap_there_are_no_batch_dims():
    _, a = record(jax.jit(lambda x: jnp.sin(x) @ x.T), jnp.ones((8, 3)))
    assert (a.batch_dims, a.batch_size, a.batch_note) == (None, None, None)


def test_tracing_again_does_not_print_or_change_results(capsys):
    def f(x):
        print("tracing f")
        return jax.vmap(jnp.cumsum)(x)

    x = jnp.arange(12.0).reshape(3, 4)
    out, a = record(jax.jit(f), x)
    assert capsys.readouterr().out.count("tracing f") == 1
    np.testing.assert_array_equal(out, jnp.cumsum(x, axis=1))
    assert a.batch_dims[a.jaxpr.jaxpr.outvars[0]] == 0


def test_vmap_inside_a_cached_inner_jit_is_noted_not_guessed():
    inner = jax.jit(lambda x: jax.vmap(jnp.sin)(x))
    inner(jnp.ones((4, 3)))  # traced before: the outer trace finds it in JAX's cache
    outer = jax.jit(lambda x: inner(x) + 1)
    _, a = record(outer, jnp.ones((4, 3)))
    assert a.batch_dims is None and "no jax.vmap call was reached" in a.batch_note


@needs(hasattr(lax, "axis_size"), "jax.lax.axis_size")
def test_shape_dependent_python_gives_a_note():
    def f(x):
        def per_example(xi):
            # Python that depends on the batch size: tracing with another size gives other eqns
            return jnp.sin(xi) if lax.axis_size("i") == 8 else jnp.cos(xi)

        return jax.vmap(per_example, axis_name="i")(x)

    _, a = record(jax.jit(f), jnp.ones((8, 3)))
    assert a.batch_dims is None and "different structure" in a.batch_note


def test_large_programs_are_skipped_with_a_note():
    f = jax.jit(jax.vmap(jnp.sin))
    x = jnp.ones((4, 2))
    closed = f.trace(x).jaxpr
    info = batching.batch_info(f, (x,), {}, closed, max_eqns=0)
    assert info.dims is None and "1 eqns" in info.note


def test_batch_dims_agree_with_the_per_example_program():
    """Oracle: where vmap adds no eqns, each batched var is its per-example var with one more dim."""

    def f(x, w):
        h = jnp.tanh(x @ w)
        return jnp.sum(h * h, axis=-1), jnp.exp(h) * 2.0

    g = jax.jit(jax.vmap(f, in_axes=(0, None)))
    x, w = jnp.ones((6, 5, 4)), jnp.ones((4, 3))
    _, a = record(g, x, w)
    plain = jax.make_jaxpr(f)(x[0], w).jaxpr
    batched = a.jaxpr.jaxpr
    assert [e.primitive.name for e in plain.eqns] == [e.primitive.name for e in batched.eqns]
    checked = 0
    for batched_eqn, plain_eqn in zip(batched.eqns, plain.eqns):
        for bv, pv in zip(batched_eqn.outvars, plain_eqn.outvars):
            dim, shape = a.batch_dims[bv], list(bv.aval.shape)
            if dim is None:
                assert shape == list(pv.aval.shape)
            else:
                assert shape[dim] == 6 and shape[:dim] + shape[dim + 1 :] == list(pv.aval.shape)
                checked += 1
    assert checked >= 4


def test_batch_dims_are_opt_in():
    """Without vmap=True nothing is traced again: the user's Python runs exactly once."""
    traces = []

    def f(x):
        traces.append(1)
        return jnp.sin(x)

    fn = jax.jit(jax.vmap(f))
    namespace = {"fn": fn}
    with jaxmagic.capture(namespace) as cap:
        namespace["fn"](jnp.ones((4, 3)))
    assert len(traces) == 1 and cap.calls[0].artifacts.batch_dims is None
