"""Property test: random JAX programs (elementwise ops, reductions, cond, scan, nested jit) -> the graph
has one node per eqn in each (sub-)jaxpr and one edge per var use, as JAX's own jaxpr says."""

from __future__ import annotations

from collections import Counter

import jax
import jax.numpy as jnp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxmagic
from jaxmagic.model import derive_edges, graph_document

from .jaxpr_oracle import jaxprs_preorder, var_uses

UNARY = [jnp.sin, jnp.cos, jnp.tanh, jnp.exp, lambda v: v * 2.0, lambda v: v + 1.0, jnp.abs]
BINARY = [jnp.add, jnp.multiply, jnp.maximum, jnp.subtract]

op = st.one_of(
    st.tuples(st.just("unary"), st.integers(0, len(UNARY) - 1)),
    st.tuples(st.just("binary"), st.integers(0, len(BINARY) - 1)),
    st.tuples(st.just("cond"), st.integers(0, len(UNARY) - 1)),
    st.tuples(st.just("scan"), st.integers(0, len(UNARY) - 1)),
    st.tuples(st.just("jit"), st.integers(0, len(UNARY) - 1)),
    st.tuples(st.just("sum"), st.just(0)),
)


def build(ops):
    def program(x):
        values = [x]
        for kind, i in ops:
            v = values[-1]
            if kind == "unary":
                v = UNARY[i](v)
            elif kind == "binary":
                v = BINARY[i](v, values[len(values) // 2])
            elif kind == "cond":
                v = jax.lax.cond(v.sum() > 0, UNARY[i], jnp.negative, v)
            elif kind == "scan":
                v = jax.lax.scan(lambda c, e: (c + UNARY[i](e), c), 0.0, v)[1]
            elif kind == "jit":
                v = jax.jit(UNARY[i])(v)
            else:
                v = v - v.sum()
            values.append(v)
        return values[-1]

    return program


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=8))
def test_random_programs(ops):
    with jaxmagic.capture() as cap:
        f = jax.jit(build(ops))
        f(jnp.linspace(-1.0, 1.0, 4))
    graph = graph_document(cap)["functions"][0]
    jaxprs = jaxprs_preorder(f.trace(jnp.linspace(-1.0, 1.0, 4)).jaxpr)
    nodes = Counter(n["group"] for n in graph["nodes"])
    var_group = {v["id"]: v["group"] for v in graph["vars"]}
    edges = Counter(var_group[vid] for _, _, vid in derive_edges(graph))
    assert [(nodes[g["id"]], edges[g["id"]]) for g in graph["groups"]] == [(len(j.eqns), var_uses(j)) for j in jaxprs]
    assert all(n["line"] is not None for n in graph["nodes"])


# --- issue 8: the result under every capture, grad residuals, key trees -------------------------

from .test_grads import jax_saved_residuals, our_residuals  # noqa: E402

MODES = [{}, {"values": True}, {"vmap": True}, {"grads": True}, {"shardings": True}, {"keys": False}, {"sync": True}]
more_op = st.one_of(
    op,
    st.tuples(st.just("while"), st.integers(1, 3)),
    st.tuples(st.just("vmap"), st.integers(0, 6)),
    st.tuples(st.just("dot"), st.just(0)),
)


def build_more(ops):
    """`build`, plus while loops, an inner vmap and a dot."""

    def program(x):
        base = build([o for o in ops if o[0] in ("unary", "binary", "cond", "scan", "jit", "sum")])
        v = base(x)
        for kind, i in ops:
            if kind == "while":
                v = jax.lax.while_loop(lambda c: c[0] < i, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, v))[1]
            elif kind == "vmap":
                v = jax.vmap(UNARY[i])(v.reshape(2, -1)).reshape(-1)
            elif kind == "dot":
                v = v @ jnp.ones((v.shape[0], v.shape[0])) / v.shape[0]
        return v

    return program


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(more_op, min_size=1, max_size=6))
def test_results_are_the_same_under_every_capture(ops):
    x = jnp.linspace(-1.0, 1.0, 4)
    program = build_more(ops)

    def run():
        value = jax.jit(program)(x)
        try:  # reverse mode through a while loop is JAX's own error: it must stay exactly that
            return value, jax.grad(lambda v: program(v).sum())(x)
        except ValueError as exc:
            return value, str(exc)

    plain, plain_grad = run()
    for options in MODES:
        with jaxmagic.capture({}, **options):
            got, got_grad = run()
        assert jnp.array_equal(got, plain, equal_nan=True), options
        if isinstance(plain_grad, str):
            assert got_grad == plain_grad, options
        else:
            assert jnp.array_equal(got_grad, plain_grad, equal_nan=True), options


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=6))
def test_grad_residuals_match_jax(ops):
    x = jnp.linspace(-1.0, 1.0, 4)
    program = build(ops)

    def loss(v):
        return program(v).sum()

    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(loss)(x)
    [call] = cap.grads
    assert call.split is not None, call.error
    ours, theirs = our_residuals(call.split), jax_saved_residuals(loss, x)
    # Constants JAX saves as literal residuals stay literals in the split's backward (0 bytes):
    # tests/test_grads.py explains; everything else must be the same multiset.
    assert {k: n for k, n in ours.items() if k[1] != "literal"} == {
        k: n for k, n in theirs.items() if k[1] != "literal"
    }


SAMPLERS = [jax.random.normal, jax.random.uniform, lambda k, s: jax.random.bernoulli(k, 0.5, s)]
key_op = st.one_of(
    st.tuples(st.just("split"), st.integers(0, 2)),
    st.tuples(st.just("fold_in"), st.integers(0, 9)),
    st.tuples(st.just("draw"), st.integers(0, len(SAMPLERS) - 1)),
    st.tuples(st.just("scan"), st.integers(2, 5)),
)


def _count_prims(closed, names: set[str]) -> Counter:
    from .jaxpr_oracle import jaxprs_preorder

    return Counter(e.primitive.name for j in jaxprs_preorder(closed) for e in j.eqns if e.primitive.name in names)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(key_op, min_size=1, max_size=8))
def test_key_tree_matches_the_programs_splits_and_draws(ops):
    """Inside a jitted program, one split node per `random_split` eqn and one sampler use per sampler
    call: the tree is the program's own, read from its jaxpr."""

    def program(key):
        out = []
        for kind, i in ops:
            if kind == "split":
                key, sub = jax.random.split(key)
                out.append(SAMPLERS[i](sub, (2,)).astype(jnp.float32))
            elif kind == "fold_in":
                key = jax.random.fold_in(key, i)
            elif kind == "draw":
                key, sub = jax.random.split(key)
                out.append(SAMPLERS[i](sub, (2,)).astype(jnp.float32))
            else:
                key, ys = jax.lax.scan(lambda k, _: (jax.random.split(k)[0], jax.random.normal(k)), key, None, length=i)
                out.append(ys[:2])
        return key, out

    with jaxmagic.capture({}) as cap:
        f = jax.jit(program)
        f(jax.random.key(0))
    closed = f.trace(jax.random.key(0)).jaxpr
    prims = _count_prims(closed, {"random_split", "random_fold_in", "random_bits"})
    records = cap.keys
    splits = [r for r in records if r.how == "split"]
    assert len(splits) == prims["random_split"]
    assert sum(r.how == "fold_in" for r in records) == prims["random_fold_in"]
    draws = sum(1 for r in records for u in r.uses if u.kind == "sampler")
    assert draws == prims["random_bits"]
    # every draw is on a fresh key except inside a scan, whose carried key is both split and drawn from
    expected_reuse = any(kind == "scan" for kind, _ in ops)
    assert bool([r for r in records if r.state == "reused"]) == expected_reuse
