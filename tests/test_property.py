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
    assert [(nodes[g["id"]], edges[g["id"]]) for g in graph["groups"]] == [
        (len(j.eqns), var_uses(j)) for j in jaxprs]
    assert all(n["line"] is not None for n in graph["nodes"])
