"""Repeated layers are found in real programs, and every reported unit really is a copy."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from bench.programs import mlp_grad, transformer_step
from jaxmagic.model.graph import function_graph
from jaxmagic.model.repeats import find_repeats

from .programs import PROGRAMS


def _fn(builder):
    fn, args = builder
    return function_graph("f0", "f", fn.trace(*args).jaxpr)


def _unit_signature(doc: dict, start: int, stop: int) -> list:
    """What must match between units: primitives, params (minus group ids) and avals, in order."""
    avals = {v["id"]: v["aval"] for v in doc["vars"]}
    sig = []
    for node in doc["nodes"][start:stop]:
        params = {k: v for k, v in node["params"].items() if "<jaxpr" not in v}
        ins = [avals.get(op["var"]) if "var" in op else (op["lit"], op["aval"]) for op in node["ins"]]
        sig.append((node["prim"], sorted(params.items()), ins, [avals[v] for v in node["outs"]]))
    return sig


def _check_units(doc: dict) -> None:
    for rep in doc["repeats"]:
        units = rep["units"]
        assert len(units) >= 2
        first = _unit_signature(doc, *units[0])
        for (a, b), (c, _) in zip(units, units[1:]):
            assert b == c, f"units of {rep['id']} are not contiguous"
        for start, stop in units:
            assert _unit_signature(doc, start, stop) == first
            assert all(
                doc["nodes"][i]["scope"][: len(rep["scope"])] == rep["scope"]
                for i in range(start, stop)
                if doc["nodes"][i]["group"] == rep["group"]
            )


@pytest.mark.parametrize("layers", [3, 8])
def test_transformer_layers_are_one_repeat_each_way(layers: int) -> None:
    doc = _fn(transformer_step(layers))
    _check_units(doc)
    counts = sorted(len(r["units"]) for r in doc["repeats"] if len(r["units"]) == layers)
    assert len(counts) >= 2, doc["repeats"]  # the forward layers and their transposes
    labels = " ".join(r["label"] for r in doc["repeats"])
    assert "layer_0" in labels and f"layer_{layers - 1}" in labels


def test_flat_mlp_repeats_without_names() -> None:
    doc = _fn(mlp_grad(40, named=False))
    _check_units(doc)
    biggest = max(doc["repeats"], key=lambda r: len(r["units"]))
    assert len(biggest["units"]) >= 39
    covered = sum(b - a for r in doc["repeats"] for a, b in r["units"])
    assert covered > 0.8 * doc["n_eqns"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_units_are_identical_in_test_programs(name: str) -> None:
    fn, args, kwargs = PROGRAMS[name]()
    jaxpr = fn.trace(*args, **kwargs).jaxpr
    doc = function_graph("f0", "f", jaxpr)
    _check_units(doc)


def test_no_repeats_in_a_small_program() -> None:
    fn, args, kwargs = PROGRAMS["sin_cos"]()
    assert find_repeats(function_graph("f0", "f", fn.trace(*args, **kwargs).jaxpr)) == []


def test_small_named_layers_are_one_unit_each() -> None:
    """24 layers of 3 eqns: 24 units of one scope each, not 12 units of two."""
    import jax
    import jax.numpy as jnp

    def loss(layers, x):
        h = x
        for i, w in enumerate(layers):
            with jax.named_scope(f"dense_{i}"):
                h = jnp.tanh(h @ w)
        return jnp.mean(h**2)

    layers = [jnp.eye(8) for _ in range(24)]
    doc = function_graph("f0", "f", jax.jit(jax.grad(loss)).trace(layers, jnp.ones((2, 8))).jaxpr)
    _check_units(doc)
    forward = doc["repeats"][0]
    assert len(forward["units"]) == 24 and "dense_0" in forward["label"] and "dense_23" in forward["label"]


def test_grad_split_folds_the_layers_of_a_python_loop() -> None:
    """A grad split of three identical layers: the forward pass folds them in its `jvp(…)` box."""
    import jaxmagic
    from jaxmagic.model.grad import grad_document

    def layer(p, x):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return x + jax.nn.softmax(h @ h.T) @ h @ p["w2"]

    def loss(params, x):
        for p in params:
            x = layer(p, x)
        return (x**2).mean()

    params = [{"w1": jnp.ones((8, 8)) * 0.1, "b1": jnp.zeros(8), "w2": jnp.ones((8, 8)) * 0.1} for _ in range(3)]
    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(loss)(params, jnp.ones((4, 8)))
    [entry] = grad_document(cap)["entries"]
    forward = entry["forward"]
    _check_units(forward)
    assert [(r["scope"], len(r["units"])) for r in forward["repeats"]] == [(["jvp(…)"], 3)]
