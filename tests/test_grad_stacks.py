"""Forward/backward roles in one jitted jaxpr, checked against JAX's own answers.

Residuals are compared with `saved_residuals` (the values JAX's vjp keeps for the backward
pass) as multisets of avals; optimizer eqns against the jaxpr of the update traced alone.
"""

from __future__ import annotations

import collections
import json

import jax
import jax.numpy as jnp
import pytest

from bench.programs import _layer, transformer_step
from jaxmagic.capture import jax_compat
from jaxmagic.capture.grads.stacks import BACKWARD, FORWARD, OTHER, UNKNOWN, grad_regions

try:  # the public name moved between JAX versions; the function is the same
    from jax.ad_checkpoint import saved_residuals  # type: ignore[attr-defined]
except ImportError:
    from jax._src.ad_checkpoint import saved_residuals


def mlp_loss(params, batch):
    h = batch["x"]
    for name in sorted(params):
        with jax.named_scope(name):
            h = jnp.tanh(h @ params[name]["w"] + params[name]["b"])
    return jnp.mean((h - batch["y"]) ** 2)


def mlp_args():
    ks = jax.random.split(jax.random.key(0), 3)
    sizes = [(4, 8), (8, 8), (8, 3)]
    params = {
        f"layer_{i}": {"w": jax.random.normal(k, s), "b": jnp.zeros(s[1])} for i, (k, s) in enumerate(zip(ks, sizes))
    }
    return params, {"x": jnp.ones((5, 4)), "y": jnp.zeros((5, 3))}


def tanh_chain(x, w):
    for _ in range(4):
        x = jnp.tanh(x * w) + jnp.sin(x)
    return jnp.sum(x)


def block_loss(p, h):
    return jnp.mean(_layer(p, h, 4) ** 2)


def block_args():
    d = 16
    ks = iter(jax.random.split(jax.random.key(2), 6))
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d), "w1": (d, 4 * d), "w2": (4 * d, d)}
    return {n: jax.random.normal(next(ks), s) * 0.1 for n, s in shapes.items()}, jnp.ones((2, 6, d))


_dense = jax.jit(lambda w, x: jnp.tanh(x @ w))


def jitted_layers(w, x):
    """The forward of each layer is a jit eqn under jvp, its backward a jit eqn under transpose."""
    return jnp.sum(_dense(w, _dense(w, x)) ** 2)


@jax.custom_vjp
def _sin_clipped(x):
    return jnp.sin(x)


_sin_clipped.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (jnp.clip(g * c, -1, 1),))


@jax.custom_jvp
def _safe_log(x):
    return jnp.log(jnp.maximum(x, 1e-6))


_safe_log.defjvp(lambda p, t: (_safe_log(p[0]), t[0] / p[0]))


def custom_rules(w, x):
    return jnp.sum(_safe_log(_sin_clipped(x @ w) ** 2 + 1))


def dense_args():
    return jax.random.normal(jax.random.key(1), (4, 4)) * 0.3, jnp.ones((2, 4))


CASES = {
    "mlp": (mlp_loss, mlp_args),
    "jitted_layers": (jitted_layers, dense_args),
    "custom_rules": (custom_rules, dense_args),
    "tanh_chain": (tanh_chain, lambda: (jnp.linspace(0, 1, 7), jnp.float32(0.5))),
    "transformer_block": (block_loss, block_args),
}


def jax_residual_avals(f, *args) -> collections.Counter:
    """JAX's residuals, less those "from a literal": a constant known at trace time is written into
    the backward eqn that reads it (`div ct 16.0`), so inside one jitted jaxpr nothing is saved."""
    return collections.Counter(
        jax_compat.short_aval(aval) for aval, src in saved_residuals(f, *args) if src != "from a literal"
    )


def our_residual_avals(regions, region=None) -> collections.Counter:
    return collections.Counter(r.aval for r in regions.residuals if region is None or r.region == region)


def eqn_at(closed_jaxpr, key):
    """The eqn a key names: (i, label, j, ...) as documented in grad_stacks."""
    jaxpr = closed_jaxpr.jaxpr
    *walk, last = key
    for i in range(0, len(walk), 2):
        eqn, label = jaxpr.eqns[walk[i]], walk[i + 1]
        name, _, index = label.partition("[")
        sub = eqn.params[name] if not index else eqn.params[name][int(index[:-1])]
        jaxpr = getattr(sub, "jaxpr", sub)
    return jaxpr.eqns[last]


@pytest.mark.parametrize("name", sorted(CASES))
def test_residuals_equal_saved_residuals(name):
    f, make = CASES[name]
    args = make()
    closed = jax.make_jaxpr(jax.jit(jax.grad(f, argnums=tuple(range(len(args))))))(*args)
    regions = grad_regions(closed)
    assert regions.by_name_stack and len(regions.regions) == 1
    assert our_residual_avals(regions) == jax_residual_avals(f, *args)
    assert regions.residual_bytes == sum(r.nbytes for r in regions.residuals) > 0
    for key, role in regions.eqns.items():  # keys name the eqns they describe
        assert eqn_at(closed, key).primitive.name == role.primitive


def test_residuals_of_grad_in_params_only():
    """`grad(loss)(params, batch)`: the batch is an input residual, as a closed-over constant is for JAX."""
    params, batch = mlp_args()
    regions = grad_regions(jax.make_jaxpr(jax.jit(jax.grad(mlp_loss)))(params, batch))
    assert our_residual_avals(regions) == jax_residual_avals(lambda p: mlp_loss(p, batch), params)
    origins = {r.origin for r in regions.residuals}
    assert origins == {"forward", "input"}
    for r in regions.residuals:
        if r.origin == "forward":
            assert regions.eqns[r.producer].role == FORWARD
        assert all(regions.eqns[c].role == BACKWARD for c in r.consumers)


def adam_update(params, grads, state):
    m, v = state
    with jax.named_scope("adam"):
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        params = jax.tree.map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, m, v)
    return params, (m, v)


def test_train_step_update_is_other():
    params, batch = mlp_args()
    state = (jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.zeros_like, params))

    @jax.jit
    def step(params, state, batch):
        loss, grads = jax.value_and_grad(mlp_loss)(params, batch)
        params, state = adam_update(params, grads, state)
        return loss, params, state

    regions = grad_regions(jax.make_jaxpr(step)(params, state, batch))
    roles = collections.Counter(e.role for e in regions.eqns.values())
    update_alone = jax.make_jaxpr(adam_update)(params, params, state)
    # the one top-level eqn is the jit itself; everything else "other" is the optimizer
    assert roles[OTHER] == len(regions.keys(OTHER)) == 1 + len(update_alone.jaxpr.eqns)
    assert all(e.role == OTHER for e in regions.eqns.values() if e.name_stack.startswith("adam"))
    assert roles[FORWARD] > 0 and roles[BACKWARD] > 0 and roles[UNKNOWN] == 0
    assert [r.container for r in regions.regions] == [(0, "jaxpr")]


def test_value_and_grad_has_aux():
    params, batch = mlp_args()

    def loss_aux(p, b):
        loss = mlp_loss(p, b)
        with jax.named_scope("aux"):
            return loss, {"norm": sum(jnp.sum(x**2) for x in jax.tree.leaves(p))}

    closed = jax.make_jaxpr(jax.jit(jax.value_and_grad(loss_aux, has_aux=True)))(params, batch)
    regions = grad_regions(closed)
    assert len(regions.regions) == 1
    aux = [e for e in regions.eqns.values() if "aux" in e.scope]
    assert aux and all(e.role == FORWARD for e in aux)  # aux is computed, never differentiated
    assert our_residual_avals(regions) == jax_residual_avals(lambda p: mlp_loss(p, batch), params)


def test_two_grads_in_one_step_are_two_regions():
    params, batch = mlp_args()
    x, w = CASES["tanh_chain"][1]()

    @jax.jit
    def step(params, batch, x, w):
        g1 = jax.grad(mlp_loss)(params, batch)
        g2 = jax.grad(tanh_chain, argnums=(0, 1))(x, w)
        return g1, g2

    regions = grad_regions(jax.make_jaxpr(step)(params, batch, x, w))
    assert [(r.prefix, r.occurrence) for r in regions.regions] == [("", 0), ("", 1)]
    first, second = regions.regions
    assert first.forward and first.backward and second.forward and second.backward
    assert our_residual_avals(regions, 0) == jax_residual_avals(lambda p: mlp_loss(p, batch), params)
    assert our_residual_avals(regions, 1) == jax_residual_avals(tanh_chain, x, w)
    # no residual crosses from one differentiation to the other
    for r in regions.residuals:
        assert all(regions.eqns[c].region == r.region for c in r.consumers)
        assert r.producer is None or regions.eqns[r.producer].region in (r.region, None)


def test_grad_of_scan_over_layers():
    ws = jax.random.normal(jax.random.key(3), (5, 6, 6)) * 0.3
    x = jnp.ones((2, 6))

    def loss(ws, x):
        h, _ = jax.lax.scan(lambda h, w: (jnp.tanh(h @ w), None), x, ws)
        return jnp.sum(h**2)

    closed = jax.make_jaxpr(jax.jit(jax.grad(loss, argnums=(0, 1))))(ws, x)
    regions = grad_regions(closed)
    assert our_residual_avals(regions) == jax_residual_avals(loss, ws, x)
    scans = {e.role: k for k, e in regions.eqns.items() if e.primitive == "scan"}
    assert set(scans) == {FORWARD, BACKWARD}
    body = [
        e
        for k, e in regions.eqns.items()
        if k[: len(scans[BACKWARD])] == scans[BACKWARD] and len(k) > len(scans[BACKWARD])
    ]
    assert body and all(e.role == BACKWARD for e in body)  # the transposed body inherits its owner's role


def test_grad_inside_scan_body():
    ws = jax.random.normal(jax.random.key(4), (3, 4, 4))
    x = jnp.ones((2, 4))

    def layer_loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    @jax.jit
    def per_layer_update(ws, x):
        return jax.lax.scan(lambda c, w: (c, w - 0.1 * jax.grad(layer_loss)(w, x)), 0.0, ws)[1]

    closed = jax.make_jaxpr(per_layer_update)(ws, x)
    regions = grad_regions(closed)
    assert len(regions.regions) == 1
    region = regions.regions[0]
    scan_key = next(k for k, e in regions.eqns.items() if e.primitive == "scan")
    assert regions.eqns[scan_key].role == OTHER
    assert region.container == (*scan_key, "jaxpr")  # the differentiation happened in the body's trace
    assert all(k[: len(region.container)] == region.container for k in region.forward + region.backward)
    # x reaches the body as a constant of the scan: JAX lists it "from a constant" when closed over
    assert our_residual_avals(regions) == jax_residual_avals(lambda w: layer_loss(w, x), ws[0])


@pytest.mark.parametrize(
    "policy,recomputes",
    [(jax.checkpoint_policies.nothing_saveable, True), (jax.checkpoint_policies.everything_saveable, False)],
)
def test_checkpoint_recomputed_eqns(policy, recomputes):
    w = jax.random.normal(jax.random.key(5), (6, 6))
    x = jnp.ones((3, 6))

    def loss(w, x):
        layer = jax.checkpoint(lambda w, x: jnp.sin(jnp.tanh(x @ w)) @ w, policy=policy)
        return jnp.sum(layer(w, layer(w, x)) ** 2)

    regions = grad_regions(jax.make_jaxpr(jax.jit(jax.grad(loss, argnums=(0, 1))))(w, x))
    recomputed = [e for e in regions.eqns.values() if e.recomputed]
    assert bool(recomputed) == recomputes
    assert all(e.role == BACKWARD for e in recomputed)
    assert regions.regions[0].recomputed == len(recomputed)
    if recomputes:
        assert {"tanh", "sin", "dot_general"} <= {e.primitive for e in recomputed}
    assert our_residual_avals(regions) == jax_residual_avals(loss, w, x)


def test_backward_dot_generals_link_to_forward_dot_generals():
    params, h = block_args()
    closed = jax.make_jaxpr(jax.jit(jax.grad(block_loss)))(params, h)
    regions = grad_regions(closed)
    dots = [k for k, e in regions.eqns.items() if e.role == BACKWARD and e.primitive == "dot_general"]
    assert len(dots) >= 12
    for key in dots:
        link = regions.links[key]
        line = regions.eqns[key].source.rsplit(":", 2)[0]
        assert any(
            regions.eqns[f].primitive == "dot_general" and regions.eqns[f].source.rsplit(":", 2)[0] == line
            for f in link.forward
        ), (key, link)
        assert all(regions.eqns[f].role == FORWARD for f in link.forward)
    kinds = collections.Counter(link.kind for link in regions.links.values())
    assert kinds["exact"] > kinds["by_source"] > 0


def test_no_differentiation_is_unknown_not_guessed():
    params, batch = mlp_args()
    regions = grad_regions(jax.make_jaxpr(jax.jit(mlp_loss))(params, batch))
    assert not regions.by_name_stack and regions.notes
    assert {e.role for e in regions.eqns.values()} == {UNKNOWN}
    assert regions.regions == [] and regions.residuals == [] and regions.links == {}


def test_transformer_step_has_one_region_and_serialises():
    """Scale as correctness (bench/grad.py times it)."""
    step, args = transformer_step(12)
    regions = grad_regions(jax.make_jaxpr(step)(*args))
    assert len(regions.regions) == 1
    roles = collections.Counter(e.role for e in regions.eqns.values())
    assert roles[FORWARD] > 1000 and roles[BACKWARD] > 1000
    document = json.loads(json.dumps(regions.to_dict()))
    assert document["residual_bytes"] == regions.residual_bytes
    assert len(document["eqns"]) == len(regions.eqns) and len(document["links"]) == len(regions.links)
