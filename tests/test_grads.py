"""The forward/backward split of `capture/grads/split.py`, each check against JAX's own answer."""

from __future__ import annotations

import contextlib
import io
from collections import Counter

import jax
import jax.ad_checkpoint
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmagic.capture.grads.split import GradSplit, grad_split
from jaxmagic.capture.grads.split import _open_subs as _sub
from tests.grad_programs import block_args as transformer_args
from tests.grad_programs import block_loss as transformer_loss
from tests.grad_programs import remat_loss, stacked_blocks

# ---------------------------------------------------------------------------------------------
# Oracles


def jax_saved_residuals(f, *args) -> Counter:
    """`jax.ad_checkpoint.print_saved_residuals` as a multiset of (aval text, kind of source)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.ad_checkpoint.print_saved_residuals(f, *args)
    out = Counter()
    for line in buf.getvalue().splitlines():
        aval, src = line.split(" ", 1)
        kind = (
            "input" if "argument" in src else "const" if "constant" in src else "literal" if "literal" in src else "eqn"
        )
        out[(aval, kind)] += 1
    return out


def our_residuals(split: GradSplit) -> Counter:
    """Our residuals, one per distinct forward value (JAX's printer lists each value once)."""
    seen, out = set(), Counter()
    for r in split.residuals:
        atom = split.forward.jaxpr.outvars[split.n_primal_out + r.index]
        if id(atom) in seen:
            continue
        seen.add(id(atom))
        kind = r.producer[0] if isinstance(r.producer, tuple) else "eqn"
        if kind == "input" and r.producer[1] not in split.diff_leaves:
            kind = "const"  # JAX's printer sees non-differentiated arguments as closed-over constants
        out[(r.aval, kind)] += 1
    return out


def run_split(split: GradSplit, leaves: list, cts: list) -> tuple[list, list]:
    """Forward on the inputs, then backward on its residuals and `cts`: (primal outputs, input cotangents)."""
    fwd = jax.core.eval_jaxpr(split.forward.jaxpr, split.forward.consts, *leaves)
    outs, res = fwd[: split.n_primal_out], fwd[split.n_primal_out :]
    assert len(res) == len(split.residuals) == len(split.backward.jaxpr.invars) - len(cts)
    return outs, jax.core.eval_jaxpr(split.backward.jaxpr, split.backward.consts, *res, *cts)


def check_against_grad(f, args: tuple, argnums=0) -> GradSplit:
    split = grad_split(f, args, argnums=argnums)
    leaves = jax.tree_util.tree_leaves((args, {}))
    outs, grads = run_split(split, leaves, [jnp.ones((), jnp.float32)])
    np.testing.assert_allclose(outs[0], f(*args), rtol=1e-5)
    expected = jax.tree_util.tree_leaves(jax.grad(f, argnums=argnums)(*args))
    assert len(grads) == len(expected)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    return split


def user_prim(split: GradSplit, link: int) -> str:
    return split.user.jaxpr.eqns[link].primitive.name


# ---------------------------------------------------------------------------------------------
# Programs


def mlp_loss(params, x):
    h = x
    for name in ("l0", "l1", "l2"):
        h = jnp.tanh(h @ params[name]["w"] + params[name]["b"])
    return jnp.mean(h**2)


def mlp_args():
    ks = jax.random.split(jax.random.key(0), 3)
    params = {f"l{i}": {"w": jax.random.normal(k, (6, 6)) * 0.3, "b": jnp.full(6, 0.1)} for i, k in enumerate(ks)}
    return params, jax.random.normal(jax.random.key(1), (4, 6))


def tanh_chain(x):
    return jnp.sum(jnp.tanh(jnp.tanh(jnp.tanh(x))))


@jax.custom_jvp
def safe_log(x):
    return jnp.log(jnp.maximum(x, 1e-6))


safe_log.defjvp(lambda p, t: (safe_log(p[0]), t[0] / jnp.maximum(p[0], 1e-6)))


@jax.custom_vjp
def clip_gradient(x):
    return jnp.sin(x)


clip_gradient.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (jnp.clip(g * c, -0.5, 0.5),))


# ---------------------------------------------------------------------------------------------
# Residuals and values against JAX


@pytest.mark.parametrize("name", ["mlp", "tanh", "transformer", "remat", "custom_jvp", "custom_vjp"])
def test_residuals_and_gradients_match_jax(name):
    f, args = {
        "mlp": (mlp_loss, mlp_args()),
        "tanh": (tanh_chain, (jnp.linspace(-1, 1, 5),)),
        "transformer": (transformer_loss, transformer_args()),
        "remat": (remat_loss, (jnp.ones((4, 4)) * 0.3, jnp.ones((3, 4)))),
        "custom_jvp": (lambda x: jnp.sum(safe_log(x * x)), (jnp.linspace(0.5, 2, 4),)),
        "custom_vjp": (lambda x: jnp.sum(clip_gradient(3 * x) ** 2), (jnp.linspace(-2, 2, 4),)),
    }[name]
    split = check_against_grad(f, args)
    ours, theirs = our_residuals(split), jax_saved_residuals(lambda a: f(a, *args[1:]), args[0])
    literal = [key for key in (ours | theirs) if key[1] == "literal"]
    # Scalar constants: JAX saves some Python-scalar constants of the user's code as literal
    # residuals; re-evaluated from the jaxpr they stay literals inside the backward (0 bytes).
    assert all(ours[key] <= theirs[key] for key in literal)
    assert {k: n for k, n in ours.items() if k not in literal} == {k: n for k, n in theirs.items() if k not in literal}
    assert split.residual_bytes == sum(r.bytes for r in split.residuals) > 0
    for r in split.residuals:
        assert r.consumers or any(a is split.backward.jaxpr.invars[r.index] for a in split.backward.jaxpr.outvars)
        if isinstance(r.producer, int):
            assert r.source is not None and r.source[0].endswith(
                ("test_grads.py", "grad_programs.py", "bench/programs.py")
            )


def test_custom_rules_are_kept_as_such():
    split = grad_split(lambda x: jnp.sum(safe_log(x * x)), (jnp.ones(3),))
    assert any(e.primitive.name.startswith("custom_jvp") for e in split.user.jaxpr.eqns)
    split = grad_split(lambda x: jnp.sum(clip_gradient(x)), (jnp.ones(3),))
    user = [e.primitive.name for e in split.user.jaxpr.eqns]
    assert any(p.startswith("custom_vjp") for p in user)
    custom = user.index(next(p for p in user if p.startswith("custom_vjp")))
    # The user's bwd rule (clip) is in the backward, linked to the custom_vjp eqn.
    clips = [i for i, e in enumerate(split.backward.jaxpr.eqns) if e.primitive.name in ("clamp", "pjit", "jit")]
    assert clips and all(split.links.backward[i] == custom for i in clips)


def test_argnums_aux_pytrees_integer_inputs_and_nonscalar_outputs():
    def f(params, x, tokens, scale):
        y = jnp.tanh(x @ params["w"]) * scale + tokens[:, None]
        return y, {"mean": y.mean(), "tokens": tokens}

    params, x = {"w": jnp.ones((3, 2)) * 0.2}, jnp.arange(12.0).reshape(4, 3) / 10
    tokens, scale = jnp.arange(4, dtype=jnp.int32), jnp.float32(2.0)
    split = grad_split(f, (params, x, tokens, scale), argnums=(0, 3), has_aux=True)
    assert split.diff_leaves == (0, 3) and split.n_out == 1 and split.n_aux == 2
    assert [jax.core.ShapedArray.str_short(v.aval) for v in split.backward.jaxpr.invars[-1:]] == ["float32[4,2]"]
    ct = jnp.arange(8.0).reshape(4, 2)
    outs, grads = run_split(split, [params["w"], x, tokens, scale], [ct])
    (y, vjp_fn, aux) = jax.vjp(lambda p, s: f(p, x, tokens, s), params, scale, has_aux=True)
    np.testing.assert_allclose(outs[0], y)
    # op by op (eval_jaxpr) against JAX's own run of `mean`: some JAX round float32 one ulp apart (0.7)
    np.testing.assert_array_max_ulp(outs[1], aux["mean"], maxulp=1)
    np.testing.assert_array_equal(outs[2], aux["tokens"])
    want = jax.tree_util.tree_leaves(vjp_fn(ct))
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_closure_over_an_array_and_shape_only_arguments():
    table = jnp.arange(6.0).reshape(2, 3)
    split = grad_split(lambda x: jnp.sum(jnp.sin(table @ x)), (jax.ShapeDtypeStruct((3,), jnp.float32),))
    outs, (g,) = run_split(split, [jnp.ones(3)], [jnp.float32(1)])
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.sum(jnp.sin(table @ x)))(jnp.ones(3)), rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# Links


def test_tanh_chain_links_by_hand():
    split = grad_split(tanh_chain, (jnp.ones(5),))
    assert [e.primitive.name for e in split.user.jaxpr.eqns] == ["tanh", "tanh", "tanh", "reduce_sum"]
    # What JAX's linearization of tanh saves after it: `sub` (1 - y*y, JAX up to 0.11) or `one_minus_square` (0.12).
    tangent = [e.primitive.name for e in jax.make_jaxpr(lambda x: jax.linearize(jnp.tanh, x))(jnp.ones(3)).eqns][1:]
    fwd = [(e.primitive.name, link) for e, link in zip(split.forward.jaxpr.eqns, split.links.forward)]
    assert fwd == [*((op, i) for i in range(3) for op in ["tanh", *tangent]), ("reduce_sum", 3)]
    bwd = [(e.primitive.name, link) for e, link in zip(split.backward.jaxpr.eqns, split.links.backward)]
    # d tanh(x) = ct * (1 - y*y): JAX up to 0.11 writes it as ct*(1-y) + ct*(1-y)*y, two muls and an
    # add_any per tanh; JAX 0.12 saves 1 - y*y itself and multiplies once.
    per_tanh = ["mul"] if tangent == ["one_minus_square"] else ["mul", "mul", "add_any"]
    assert bwd == [("broadcast_in_dim", 3), *((op, i) for i in (2, 1, 0) for op in per_tanh)]
    # Tags never survive into what we keep; the user's source line does.
    for e in (*split.forward.jaxpr.eqns, *split.backward.jaxpr.eqns):
        assert "jm-grad" not in str(e.source_info.name_stack)
    assert {r.link for r in split.residuals} == {0, 1, 2}


@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_every_backward_eqn_links_to_a_plausible_primal(name):
    f, args = {"mlp": (mlp_loss, mlp_args()), "transformer": (transformer_loss, transformer_args())}[name]
    split = grad_split(f, args)
    assert len(split.links.backward) == len(split.backward.jaxpr.eqns) > 20
    assert all(link is not None for link in split.links.backward)
    assert all(link is not None for link in split.links.forward)
    for eqn, link in zip(split.backward.jaxpr.eqns, split.links.backward):
        prim, primal = eqn.primitive.name, user_prim(split, link)
        if prim == "dot_general":
            assert primal == "dot_general"
        if prim == "transpose":
            assert primal in ("dot_general", "transpose")
        if primal == "tanh":
            assert prim in ("mul", "add_any", "sub", "neg")
    # Each user dot_general is differentiated by at least one backward dot_general.
    dots = {i for i, e in enumerate(split.user.jaxpr.eqns) if e.primitive.name == "dot_general"}
    linked = {
        link for e, link in zip(split.backward.jaxpr.eqns, split.links.backward) if e.primitive.name == "dot_general"
    }
    assert dots == linked


def test_links_reach_inside_jitted_bodies():
    @jax.jit
    def inner(v):
        return jnp.sin(v) * 2.0

    split = grad_split(lambda x: jnp.sum(inner(jnp.tanh(x))), (jnp.ones(3),))
    jit_index = next(i for i, e in enumerate(split.user.jaxpr.eqns) if "jaxpr" in e.params)
    body = split.user.jaxpr.eqns[jit_index].params["jaxpr"].jaxpr
    assert [e.primitive.name for e in body.eqns] == ["sin", "mul"]
    inner_links = {path: user for (side, path), user in split.links.nested.items() if side == "backward"}
    assert inner_links and all(user[0] == jit_index and len(user) == 2 for user in inner_links.values())
    fwd_inner = {
        (split.forward.jaxpr.eqns[p[0]].params["jaxpr"].jaxpr.eqns[p[2]].primitive.name, u)
        for (side, p), u in split.links.nested.items()
        if side == "forward"
    }
    assert ("sin", (jit_index, 0)) in fwd_inner and ("cos", (jit_index, 0)) in fwd_inner


def test_remat_recomputed_eqns_are_unsaved_forward_work():
    w, x = jnp.ones((4, 4)) * 0.3, jnp.ones((3, 4))
    split = grad_split(remat_loss, (w, x))
    assert split.recomputed and split.recomputed_paths
    saved_users = set()
    for r in split.residuals:
        if isinstance(r.producer, int):
            producer = split.forward.jaxpr.eqns[r.producer]
            saved_users.add((split.links.forward_paths[r.producer], producer.primitive.name))
    remat_index = next(i for i, e in enumerate(split.user.jaxpr.eqns) if e.primitive.name == "remat2")
    body = split.user.jaxpr.eqns[remat_index].params["jaxpr"]
    for path in split.recomputed_paths:
        user = split.links.nested.get(("backward", path)) if len(path) > 1 else split.links.backward_paths[path[0]]
        assert user is not None and user[0] == remat_index and len(user) == 2
        eqn = split.backward.jaxpr.eqns[path[0]]
        for level in range(1, len(path), 2):
            eqn = list(_sub(eqn))[path[level]].eqns[path[level + 1]]
        # The forward eqn it redoes saved nothing: "a" (the sin) is saved, so no sin is redone.
        assert (user, eqn.primitive.name) not in saved_users
        assert eqn.primitive.name != "sin" or body.eqns[user[1]].primitive.name != "sin"
    saved_avals = {r.aval for r in split.residuals}
    assert "f32[3,4]" in saved_avals  # the named value "a"


def test_no_recomputation_without_checkpoint():
    assert grad_split(mlp_loss, mlp_args()).recomputed == []


# ---------------------------------------------------------------------------------------------
# Size


def test_twelve_layer_transformer_split_links_every_backward_eqn():
    """Scale as correctness (bench/grad.py times it against make_jaxpr(grad))."""
    split = grad_split(*stacked_blocks(12))
    assert all(link is not None for link in split.links.backward)
