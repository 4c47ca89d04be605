"""A grad split's inputs are named as the user wrote them, never `flat[0]`.

The split's programs are traced from flat leaf lists, so JAX's debug info alone would call
their inputs `flat[i]`. The document names every input port, gradient and residual by the
differentiated function's parameter names and pytree paths. The oracle is JAX's own
`keystr` of `tree_flatten_with_path` over the arguments bound to the function's signature:
every name the document gives must be one of those.
"""

from __future__ import annotations

import functools
import inspect

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.capture import jax_compat
from jaxmagic.model.grad import grad_document

W, X, Y = jnp.ones((3, 2)), jnp.ones((4, 3)), jnp.ones((4, 2))


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def layered_loss(params, x):
    h = x
    for layer in params["layers"]:
        h = jnp.tanh(h @ layer["w"] + layer["b"])
    return jnp.sum(h) * params["scale"]


def stacked_loss(w, *ws, x, **extra):
    h = x @ w
    for v in ws:
        h = h @ v
    return jnp.sum(h) + sum(jnp.sum(e) for e in extra.values())


def _oracle(fn, args: tuple, kwargs: dict) -> set[str]:
    """Every leaf name JAX itself gives the bound arguments: parameter name + keystr of the leaf."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    return {
        name + jax.tree_util.keystr(path)
        for name, value in bound.arguments.items()
        for path, _ in jax.tree_util.tree_flatten_with_path(value)[0]
    }


def _names(run) -> dict:
    """The single entry's input names: forward ports, backward ports, gradients, input residuals."""
    with jaxmagic.capture({}, grads=True) as cap:
        run()
    doc = grad_document(cap)
    [entry] = doc["entries"]
    assert entry["origin"] in ("split", "tangent")

    def ports(graph: dict) -> list[str | None]:
        by_id = {v["id"]: v for v in graph["vars"]}
        return [by_id[v].get("path") for v in graph["groups"][0]["invars"]]

    if entry["origin"] == "tangent":
        return {"program": ports(entry["program"]), "tangents": [t["path"] for t in entry["tangents_of"]]}
    return {
        "forward": ports(entry["forward"]),
        "backward": ports(entry["backward"]),
        "grads": [g["path"] for g in entry["grads_of"]],
        "residual_inputs": sorted(
            {
                r["producer"]["path"]
                for r in entry["residuals"]
                if isinstance(r["producer"], dict) and "path" in r["producer"]
            }
        ),
    }


def _check_oracle(names: dict, oracle: set[str]) -> None:
    for key in ("forward", "grads", "residual_inputs", "program", "tangents"):
        for name in names.get(key, []):
            assert name is not None and "flat[" not in name
            assert name.removeprefix("tangent of ") in oracle, (key, name, sorted(oracle))


def test_plain_arguments_by_parameter_name():
    names = _names(lambda: jax.grad(loss)(W, X, Y))
    assert names["forward"] == ["w", "x", "y"]
    assert names["grads"] == ["w"]
    assert "x" in names["residual_inputs"]
    assert names["backward"][0] == "x"  # the residual that is the input x itself, by its name
    _check_oracle(names, _oracle(loss, (W, X, Y), {}))


def test_value_and_grad_argnums_and_keywords():
    names = _names(lambda: jax.value_and_grad(loss, argnums=(0, 2))(W, X, Y))
    assert names["forward"] == ["w", "x", "y"] and names["grads"] == ["w", "y"]
    _check_oracle(names, _oracle(loss, (W, X, Y), {}))
    names = _names(lambda: jax.grad(loss)(W, X, y=Y))
    assert names["forward"] == ["w", "x", "y"] and names["grads"] == ["w"]
    _check_oracle(names, _oracle(loss, (W, X), {"y": Y}))


def test_nested_dict_and_list_params_by_pytree_path():
    params = {
        "layers": [{"w": jnp.ones((3, 3)), "b": jnp.zeros(3)}, {"w": jnp.ones((3, 3)), "b": jnp.zeros(3)}],
        "scale": jnp.float32(2.0),
    }
    names = _names(lambda: jax.grad(layered_loss)(params, X))
    expected = [
        "params['layers'][0]['b']",
        "params['layers'][0]['w']",
        "params['layers'][1]['b']",
        "params['layers'][1]['w']",
        "params['scale']",
    ]
    assert names["forward"] == [*expected, "x"]
    assert names["grads"] == expected
    _check_oracle(names, _oracle(layered_loss, (params, X), {}))


def test_star_args_and_star_kwargs_named_as_jax_names_them():
    v = jnp.ones((2, 2))
    names = _names(lambda: jax.grad(stacked_loss, argnums=(0, 1))(W, v, v, x=X, bias=Y))
    assert names["forward"] == ["w", "ws[0]", "ws[1]", "extra['bias']", "x"]
    assert names["grads"] == ["w", "ws[0]"]
    _check_oracle(names, _oracle(stacked_loss, (W, v, v), {"x": X, "bias": Y}))
    # JAX's own jit names the same arguments the same way, where its debug info keeps names.
    jit_names = jax_compat.argument_paths(
        jax.make_jaxpr(jax.jit(stacked_loss))(W, v, v, x=X, bias=Y).eqns[0].params["jaxpr"].jaxpr
    )
    if jit_names is not None:
        assert set(names["forward"]) == set(jit_names)


def test_functools_partial_names_the_remaining_parameters():
    bound = functools.partial(loss, x=X)
    names = _names(lambda: jax.grad(bound)(W, y=Y))
    assert names["forward"] == ["w", "y"] and names["grads"] == ["w"]
    _check_oracle(names, _oracle(bound, (W,), {"y": Y}))
    first = functools.partial(loss, W)
    names = _names(lambda: jax.grad(first)(X, Y))
    assert names["forward"] == ["x", "y"] and names["grads"] == ["x"]
    _check_oracle(names, _oracle(first, (X, Y), {}))


def test_jitted_function_differentiated_names_its_parameters():
    names = _names(lambda: jax.grad(jax.jit(loss))(W, X, Y))
    assert names["forward"] == ["w", "x", "y"] and names["grads"] == ["w"]


def test_forward_mode_program_inputs_and_tangents():
    names = _names(lambda: jax.jvp(lambda w, x: loss(w, x, Y), (W, X), (W, X)))
    assert names["program"] == ["w", "x", "tangent of w", "tangent of x"]
    assert names["tangents"] == ["w", "x"]


def test_no_signature_falls_back_to_positions():
    class Loss:
        """A callable whose signature inspect cannot read."""

        __signature__ = "not a signature"

        def __call__(self, *a):
            return loss(*a)

    names = _names(lambda: jax.grad(Loss())(W, X, Y))
    assert names["forward"] == ["args[0]", "args[1]", "args[2]"] and names["grads"] == ["args[0]"]


def test_equinox_module_fields():
    eqx = pytest.importorskip("equinox")

    class Model(eqx.Module):
        hidden: eqx.nn.Linear
        out: eqx.nn.Linear

        def __call__(self, x):
            return self.out(jnp.tanh(self.hidden(x)))

    k1, k2 = jax.random.split(jax.random.key(0))
    model = Model(eqx.nn.Linear(3, 4, key=k1), eqx.nn.Linear(4, 1, key=k2))

    def model_loss(model, x):
        return jnp.sum(jax.vmap(model)(x) ** 2)

    names = _names(lambda: jax.grad(model_loss)(model, X))
    expected = ["model.hidden.weight", "model.hidden.bias", "model.out.weight", "model.out.bias"]
    assert names["forward"] == [*expected, "x"] and names["grads"] == expected
    _check_oracle(names, _oracle(model_loss, (model, X), {}))


def test_flax_nnx_state_paths():
    nnx = pytest.importorskip("flax.nnx")

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(3, 4, rngs=rngs)

    graphdef, state = nnx.split(MLP(nnx.Rngs(0)))

    def state_loss(state, x):
        return jnp.sum(nnx.merge(graphdef, state).hidden(x) ** 2)

    names = _names(lambda: jax.grad(state_loss)(state, X))
    oracle = [f"state{jax.tree_util.keystr(p)}" for p, _ in jax.tree_util.tree_flatten_with_path(state)[0]]
    assert names["grads"] == oracle and names["forward"] == [*oracle, "x"]
    assert [n.split("]")[0:2] for n in oracle] == [["state['hidden'", "['bias'"], ["state['hidden'", "['kernel'"]]
    _check_oracle(names, _oracle(state_loss, (state, X), {}))


def _library_entries(run) -> tuple[list[dict], list[str]]:
    with jaxmagic.capture({}, grads=True) as cap:
        run()
    return grad_document(cap)["entries"], list(cap.notes)


def _ports(graph: dict) -> list[str | None]:
    by_id = {v["id"]: v for v in graph["vars"]}
    return [by_id[v].get("path") for v in graph["groups"][0]["invars"]]


def test_eager_nnx_grad_is_split_and_named_by_the_users_module():
    """`nnx.grad(loss_fn)(model)` run eagerly: NNX's function consumes per-call state, so it is
    traced again from a copy (no note, no error); its inputs are the user's `model.hidden.kernel`."""
    nnx = pytest.importorskip("flax.nnx")

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(3, 4, rngs=rngs)

        def __call__(self, x):
            return self.hidden(x)

    model = MLP(nnx.Rngs(0))

    def loss_fn(model):
        return jnp.sum(model(X) ** 2)

    grads = None

    def run():
        nonlocal grads
        grads = nnx.grad(loss_fn)(model)

    entries, notes = _library_entries(run)
    assert notes == []
    [entry] = entries
    assert entry["origin"] == "split" and entry["name"].split(".")[-1] == "loss_fn"
    assert _ports(entry["forward"]) == ["model.hidden.bias", "model.hidden.kernel"]
    reference = nnx.grad(loss_fn)(model)  # the user's result is NNX's own
    assert jnp.array_equal(grads["hidden"]["kernel"].value, reference["hidden"]["kernel"].value)


def test_equinox_filter_grads_are_split_with_non_array_leaves_as_constants():
    """Equinox passes the model's non-array part (activation functions) as an argument it does
    not differentiate; the split treats those leaves as constants, as JAX does, and names the
    rest by the user's function (`loss`, `m.layers[0].weight`), also where Equinox rebinds `*args`."""
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(3, 2, 4, 1, key=jax.random.key(0))

    def loss(m, x, y):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)

    entries, notes = _library_entries(
        lambda: (eqx.filter_grad(loss)(model, X, Y), eqx.filter_value_and_grad(loss)(model, X, Y))
    )
    assert notes == []
    assert [e["name"].split(".")[-1] for e in entries] == ["loss", "loss"]
    weights = ["m.layers[0].weight", "m.layers[0].bias", "m.layers[1].weight", "m.layers[1].bias"]
    for entry in entries:
        assert entry["origin"] == "split"
        assert _ports(entry["forward"])[:4] == weights
        assert entry["forward"]["n_eqns"] > 0 and entry["backward"]["n_eqns"] > 0
