"""Scope paths and call arguments read the way the user wrote them.

`jax_compat.name_stack_path` nests each transform as its own level, checked against JAX's own
spelling of the same stack; `user_names._written_arguments` reads a call's arguments from the
call expression at the frame's current instruction, checked against the values passed.
"""

from __future__ import annotations

import contextlib
import sys
import warnings

import jax
import jax.numpy as jnp

from jaxmagic.capture import jax_compat
from jaxmagic.capture.jit import user_names


def _stacks(fn, *args) -> list[tuple[list[str], str]]:
    eqns = jax.make_jaxpr(fn)(*args).jaxpr.eqns
    return [(jax_compat.name_stack_path(e.source_info), jax_compat.name_stack_text(e.source_info)) for e in eqns]


def _unnested(path: list[str]) -> str:
    """JAX's spelling rebuilt from a nested path: a transform wraps the next name."""
    out: list[str] = []
    for part in reversed(path):
        if part.endswith("(…)"):
            name = part[: -len("(…)")]
            if out:
                out[-1] = f"{name}({out[-1]})"
            else:
                out.append(f"{name}()")
        else:
            out.append(part)
    return "/".join(reversed(out))


def test_each_transform_is_its_own_level_and_nothing_else_changes():
    def f(x):
        with jax.named_scope("block"):
            y = jnp.einsum("bi,bi->b", x, x)  # einsum runs under a vmap-free dot; the jvp wraps it
            return jnp.sum(jax.vmap(jnp.sin)(y))

    stacks = _stacks(jax.grad(f), jnp.ones((2, 3)))
    assert stacks and all(_unnested(path) == text for path, text in stacks)
    paths = {tuple(path) for path, _ in stacks}
    assert ("jvp(…)", "block") in paths and ("transpose(…)", "jvp(…)", "block") in paths
    assert any(path[:3] == ("jvp(…)", "block", "vmap(…)") for path in paths)


def test_written_arguments_are_read_from_the_call_as_written():
    seen = {}

    def callee(*args, **kwargs):
        seen["frame"] = sys._getframe(1)
        seen["written"] = user_names._written_arguments(sys._getframe(1))

    model, x = object(), jnp.ones(2)
    callee(model, x, scale=x)
    positional, keywords = seen["written"]
    assert positional[0] is model and positional[1] is x and keywords == {"scale": x}


def test_written_arguments_give_up_on_anything_but_plain_names():
    seen = {}

    def callee(*args):
        seen["written"] = user_names._written_arguments(sys._getframe(1))

    items = [1, 2]
    callee(items[0], len(items))  # evaluating these could run code: not read
    assert seen["written"] is None


def test_a_static_argument_is_shown_without_its_memory_address():
    from jaxmagic.capture.record import ArgSpec, Signature

    spec = ArgSpec(path="activation", aval="<function relu at 0x7f3a2c1d0e50>", static=True)
    other = ArgSpec(path="activation", aval="<function relu at 0x7f3a2c1d0f70>", static=True)
    assert str(Signature(args=(spec,))) == "activation=<function relu>"
    assert Signature(args=(spec,)).key != Signature(args=(other,)).key  # a new function object is still new


def _graph_only_net(nnx):
    """An NNX model JAX sees as one leaf, as every NNX module is on Flax 0.10 (modules became pytrees in
    0.11; from then `pytree=False` keeps the older kind)."""
    try:

        class Net(nnx.Module, pytree=False):
            def __init__(self, rngs):
                self.hidden = nnx.Linear(3, 4, rngs=rngs)
                self.blocks = [nnx.Linear(4, 4, rngs=rngs)]

            def __call__(self, x):
                return self.blocks[0](self.hidden(x)).sum()

    except TypeError:  # Flax 0.10: no `pytree` option, and no module is a pytree

        class Net(nnx.Module):  # type: ignore[no-redef]
            def __init__(self, rngs):
                self.hidden = nnx.Linear(3, 4, rngs=rngs)
                self.blocks = [nnx.Linear(4, 4, rngs=rngs)]

            def __call__(self, x):
                return self.blocks[0](self.hidden(x)).sum()

    return Net


def test_an_nnx_model_jax_sees_as_one_leaf_is_named_by_its_graph():
    """`nnx.jit` and `nnx.grad` hand JAX the model's graph state; where the user's model is no pytree
    (Flax 0.10, or `pytree=False`) each array is found in NNX's own graph of it: the jitted step's
    and the gradient's inputs read `model.hidden.kernel`, `model.blocks[0].bias`, as with pytree modules."""
    import pytest

    nnx = pytest.importorskip("flax.nnx")
    import jaxmagic

    net = _graph_only_net(nnx)(nnx.Rngs(0))
    assert jax.tree_util.tree_leaves(net) == [net]  # JAX sees one leaf

    def loss(model, x):
        return model(x)

    def run(capturing: bool):
        @nnx.jit
        def step(model, x):
            return model(x)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with jaxmagic.capture({}, grads=True) if capturing else contextlib.nullcontext() as cap:
                step(net, jnp.ones(3))
                nnx.grad(loss)(net, jnp.ones(3))
        return cap, sorted((w.category.__name__, str(w.message)) for w in caught)

    _, plain_warnings = run(False)
    cap, warned = run(True)
    assert warned == plain_warnings  # reading the variables adds no warning (Flax 0.12 deprecates `.value`)
    expected = {"model.hidden.kernel", "model.hidden.bias", "model.blocks[0].kernel", "model.blocks[0].bias"}
    [call] = cap.calls
    assert {a.path for a in call.signature.args} == expected | {"x"}
    [grad] = cap.grads
    assert {a.path for a in grad.args} == expected | {"x"}
