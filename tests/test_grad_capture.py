"""Every differentiation of a capture is recorded, and the user's program runs exactly as without one.

Results are compared with the same calls outside a capture, residual counts with JAX's own
`jax.ad_checkpoint.saved_residuals`, patches with the objects JAX had before.
"""

from __future__ import annotations

import gc

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmagic
from tests.test_grads import jax_saved_residuals, our_residuals

NAMES = ("grad", "value_and_grad", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian")
ORIGINALS = {name: getattr(jax, name) for name in NAMES}


def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def loss_aux(w, x):
    h = jnp.tanh(x @ w)
    return jnp.sum(h**2), {"mean": jnp.mean(h)}


def layer(w, x):
    return jnp.tanh(x @ w)


W = jnp.linspace(-1.0, 1.0, 6).reshape(3, 2)
X = jnp.linspace(0.0, 2.0, 12).reshape(4, 3)


def _assert_same(a, b) -> None:
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert ta == tb
    for u, v in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))


def _assert_originals() -> None:
    for name, original in ORIGINALS.items():
        assert getattr(jax, name) is original, name


# Each case: the kind, a call returning the user's result, and the expected (name, argnums, has_aux, avals).
CASES = {
    "grad": (lambda: jax.grad(loss)(W, X), "loss", (0,), False),
    "grad_argnums_tuple": (lambda: jax.grad(loss, argnums=(0, 1))(W, X), "loss", (0, 1), False),
    "grad_argnums_int": (lambda: jax.grad(loss, 1)(W, X), "loss", (1,), False),
    "grad_has_aux": (lambda: jax.grad(loss_aux, has_aux=True)(W, X), "loss_aux", (0,), True),
    "value_and_grad": (lambda: jax.value_and_grad(loss, argnums=1)(W, X), "loss", (1,), False),
    "value_and_grad_aux": (lambda: jax.value_and_grad(loss_aux, (0, 1), True)(W, X), "loss_aux", (0, 1), True),
    "vjp": (lambda: jax.vjp(loss, W, X)[0], "loss", (0, 1), False),
    "vjp_aux": (lambda: jax.vjp(loss_aux, W, X, has_aux=True)[::2], "loss_aux", (0, 1), True),
    "jvp": (lambda: jax.jvp(loss, (W, X), (W, X)), "loss", (0, 1), False),
    "jvp_aux": (lambda: jax.jvp(loss_aux, [W, X], [W, X], has_aux=True), "loss_aux", (0, 1), True),
    "linearize": (lambda: jax.linearize(loss, W, X)[0], "loss", (0, 1), False),
    "jacrev": (lambda: jax.jacrev(layer)(W, X), "layer", (0,), False),
    "jacfwd": (lambda: jax.jacfwd(layer, argnums=(0, 1))(W, X), "layer", (0, 1), False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_kind_recorded_with_identical_results(case):
    call, name, argnums, has_aux = CASES[case]
    expected = call()
    with jaxmagic.capture({}, grads=True) as cap:
        result = call()
    _assert_same(result, expected)
    _assert_originals()
    [rec] = cap.grads
    kind = case.split("_argnums")[0].removesuffix("_aux").removesuffix("_has")
    assert (rec.kind, rec.name, rec.argnums, rec.has_aux) == (kind, name, argnums, has_aux)
    assert [(a.path, a.aval) for a in rec.args] == [("w", "f32[3,2]"), ("x", "f32[4,3]")]
    assert rec.call_site is not None and rec.call_site.line == call.__code__.co_firstlineno  # the lambda's line
    assert rec.call_site.file == __file__
    assert rec.source is not None and rec.source.function == name
    assert rec.traced is False and rec.call is None and rec.batch is None
    assert 0 < rec.start <= rec.end
    if kind in ("grad", "value_and_grad", "vjp", "jacrev"):  # reverse mode: JAX's split
        assert rec.error is None and rec.split is not None and rec.tangent is None
        assert rec.split.n_aux == (1 if has_aux else 0)
        assert len(rec.split.diff_leaves) == len(argnums)
    else:  # forward mode: no backward pass, one program pushing tangents
        assert rec.split is None and rec.error is None and rec.tangent is not None
        assert len(rec.tangent.diff_leaves) == len(argnums)
        tangent_avals = [v.aval.str_short() for v in rec.tangent.program.jaxpr.invars[rec.tangent.n_inputs :]]
        assert tangent_avals == [["float32[3,2]", "float32[4,3]"][n] for n in argnums]
    assert not [n for n in cap.notes if "jax_explain_cache_misses" not in n]  # that one is about this JAX


def test_keywords_of_the_originals_pass_through():
    f = lambda z: jnp.abs(z) ** 2
    z = jnp.array(1.0 + 2.0j)
    expected = jax.grad(f, holomorphic=False, allow_int=False)(z)
    with jaxmagic.capture({}, grads=True) as cap:
        got = jax.grad(f, holomorphic=False, allow_int=False)(z)
        ints = jax.grad(lambda n, y: y * 2.0, argnums=(0, 1), allow_int=True)(3, 1.0)
    _assert_same(got, expected)
    assert ints[0].dtype == jax.dtypes.float0 and float(ints[1]) == 2.0
    assert [r.argnums for r in cap.grads] == [(0,), (0, 1)]


def test_eager_split_matches_jax_saved_residuals():
    def f(w, x):
        return jnp.sum(jnp.sin(x @ w) * jnp.cos(x @ w))

    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(f)(W, X)
    [rec] = cap.grads
    theirs = jax_saved_residuals(lambda w: f(w, X), W)  # `jax.ad_checkpoint.print_saved_residuals`
    assert rec.traced is False and our_residuals(rec.split) == theirs
    assert len(rec.split.residuals) == sum(theirs.values()) > 0


def test_split_shared_per_function_and_avals():
    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(loss)(W, X)
        jax.grad(loss)(W + 1.0, X)  # a new grad function, the same differentiated function and avals
        g = jax.grad(loss)
        g(W, X)
        g(jnp.ones((3, 5)), X)  # new shape
        jax.grad(loss, argnums=1)(W, X)  # other argnums: another split
    splits = [r.split for r in cap.grads]
    assert all(s is not None for s in splits)
    assert splits[0] is splits[1] is splits[2]
    assert splits[3] is not splits[0] and splits[4] is not splits[0] and splits[4] is not splits[3]
    assert splits[3].backward.out_avals[0].str_short().endswith("[3,5]")


def test_split_traced_once_per_function_and_avals():
    runs = []

    def counted(w, x):
        runs.append(1)
        return loss(w, x)

    with jaxmagic.capture({}, grads=True) as cap:
        for _ in range(3):
            jax.grad(counted)(W, X)
    # JAX runs the function once per grad call; the split runs it once more, for the first call only.
    assert len(runs) == 3 + 1
    assert len(cap.grads) == 3 and len({id(r.split) for r in cap.grads}) == 1


def test_split_output_is_not_the_users(capsys):
    def loud(w, x):
        print("in loud")
        return loss(w, x)

    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(loud)(W, X)
    assert capsys.readouterr().out == "in loud\n"  # once, as without a capture
    assert cap.grads[0].split is not None


def _make_step():
    """A new train step function each time: JAX's trace cache is per Python function, so one
    traced before the capture would not be traced (and its grad not called) inside it."""

    def step(w, x):
        g = jax.grad(loss)(w, x)
        return w - 0.1 * g

    return step


def test_grad_inside_jitted_step_is_traced_and_tied_to_its_call():
    def warmup(x):
        return x + 1

    expected = jax.jit(_make_step())(W, X)
    with jaxmagic.capture({}, grads=True) as cap:
        jax.jit(warmup)(X)  # call 0
        step = jax.jit(_make_step())
        got = step(W, X)
        step(W, X)  # a cache hit: JAX does not run the Python again, so no second record
    _assert_same(got, expected)
    [rec] = cap.grads
    assert rec.traced is True and rec.split is None and rec.error is None
    assert [c.name.rsplit(".", 1)[-1] for c in cap.calls] == ["warmup", "step", "step"]
    assert rec.call == 1 == cap.calls[1].index
    assert [(a.path, a.aval) for a in rec.args] == [("w", "f32[3,2]"), ("x", "f32[4,3]")]
    assert rec.call_site is not None and rec.call_site.function == "step"


def test_per_example_gradients_under_vmap():
    xs = jnp.linspace(0.0, 1.0, 7 * 4 * 3).reshape(7, 4, 3)
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0))
    expected = per_example(W, xs)
    with jaxmagic.capture({}, grads=True) as cap:
        got = jax.vmap(jax.grad(loss), in_axes=(None, 0))(W, xs)
        nested = jax.vmap(jax.vmap(jax.grad(loss), in_axes=(None, 0)), in_axes=(None, 0))(W, xs.reshape(7, 1, 4, 3))
        jitted = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0)))(W, xs)
    _assert_same(got, expected)
    assert nested.shape == (7, 1, 3, 2) and jitted.shape == (7, 3, 2)
    first, second, third = cap.grads
    assert first.traced and first.batch == "vmap over 7"
    assert [a.aval for a in first.args] == ["f32[3,2]", "f32[4,3]"]  # per-example avals
    # Under vmap alone the per-example function gets its own exact split, on per-example avals.
    assert [v.aval.str_short() for v in first.split.forward.jaxpr.invars] == ["float32[3,2]", "float32[4,3]"]
    assert second.batch == "vmap over 7 × 1" and second.split is first.split  # same function and avals
    # Inside a recorded jit, the jitted program is the record (its jaxpr has the roles): no split.
    assert third.traced and third.batch == "vmap over 7" and third.call == 0 and third.split is None


def test_user_exception_unchanged_and_no_split():
    class Boom(ValueError):
        pass

    def bad(w):
        raise Boom("from the user")

    with pytest.raises(Boom) as info:
        with jaxmagic.capture({}, grads=True) as cap:
            jax.grad(bad)(W)
    assert str(info.value) == "from the user"
    _assert_originals()
    [rec] = cap.grads
    assert rec.split is None and rec.error == "the call raised Boom: from the user"
    assert cap.error is not None and cap.error.type == "Boom"


def test_failed_split_is_a_note_not_the_users_error():
    def uses_python_int(w, n):
        return jnp.sum(w) * sum(range(n))  # `n` must be concrete: our abstract trace of it fails

    expected = jax.grad(uses_python_int)(W, 3)
    with jaxmagic.capture({}, grads=True) as cap:
        got = jax.grad(uses_python_int)(W, 3)
    _assert_same(got, expected)
    [rec] = cap.grads
    assert rec.split is None and rec.error is not None
    assert any(note.startswith("no graph of grad of") for note in cap.notes)


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
def test_patches_restored_on_exception(exc_type):
    namespace = {"grad": ORIGINALS["grad"], "vjp": ORIGINALS["vjp"], "other": 1}
    with pytest.raises(exc_type):
        with jaxmagic.capture(namespace, grads=True):
            assert jax.grad is not ORIGINALS["grad"] and namespace["grad"] is jax.grad
            assert namespace["vjp"] is jax.vjp is not ORIGINALS["vjp"]
            raise exc_type("stop")
    _assert_originals()
    assert namespace == {"grad": ORIGINALS["grad"], "vjp": ORIGINALS["vjp"], "other": 1}


def test_from_jax_import_alias_recorded_and_restored():
    namespace = {"grad": ORIGINALS["grad"]}
    with jaxmagic.capture(namespace, grads=True) as cap:
        namespace["grad"](loss)(W, X)
    assert namespace["grad"] is ORIGINALS["grad"]
    assert [r.kind for r in cap.grads] == ["grad"]


def test_nested_captures_patch_once_and_record_innermost():
    with jaxmagic.capture({}, grads=True) as outer:
        patched = jax.grad
        jax.grad(loss)(W, X)
        with jaxmagic.capture({}, grads=True) as inner:
            assert jax.grad is patched  # not wrapped twice
            jax.vjp(loss, W, X)
        assert jax.grad is patched
        jax.value_and_grad(loss)(W, X)
    _assert_originals()
    assert [r.kind for r in outer.grads] == ["grad", "value_and_grad"]
    assert [r.kind for r in inner.grads] == ["vjp"]


def test_grad_function_kept_after_capture_only_forwards():
    with jaxmagic.capture({}, grads=True) as cap:
        g = jax.grad(loss)
    _assert_same(g(W, X), ORIGINALS["grad"](loss)(W, X))  # outside: forwards, records nothing
    assert cap.grads == []
    with jaxmagic.capture({}, grads=True) as later:
        g(W, X)
    assert [r.kind for r in later.grads] == ["grad"]


def test_capture_holds_no_device_buffers():
    big = jnp.ones((300, 400))
    x = jnp.ones((5, 300))

    def f(w, x):
        return jnp.sum(jnp.tanh(x @ w))

    with jaxmagic.capture({}, grads=True) as cap:
        out = jax.grad(f)(big, x)
        out2 = jax.vjp(f, big, x)
    del out, out2
    gc.collect()
    live = [a for a in jax.live_arrays() if a.shape == (300, 400)]
    assert len(live) == 1  # only `big`
    assert cap.grads[0].split is not None


def test_without_grads_the_function_runs_once_and_the_record_says_why_there_is_no_split():
    runs = []

    def loss(w):
        runs.append(1)  # a Python side effect: must happen exactly as often as without a capture
        return jnp.sum(jnp.sin(w) ** 2)

    with jaxmagic.capture({}) as cap:
        g = jax.grad(loss)(jnp.ones(3))
    assert len(runs) == 1
    np.testing.assert_allclose(g, jax.grad(loss)(jnp.ones(3)))
    [rec] = cap.grads
    assert rec.kind == "grad" and rec.split is None and "jaxmagic.capture(grads=True)" in rec.error

    runs.clear()
    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(loss)(jnp.ones(3))
    assert len(runs) == 2 and cap.grads[0].split is not None  # traced once more, as documented


def test_grad_of_grad_records_the_inner_call_as_part_of_the_outer():
    second = jax.grad(jax.grad(jnp.sin))
    expected = second(1.0)
    with jaxmagic.capture({}, grads=True) as cap:
        got = jax.grad(jax.grad(jnp.sin))(1.0)
    assert float(got) == float(expected)
    outer, inner = cap.grads
    assert outer.inside is None and outer.split is not None and not outer.traced
    assert inner.inside == outer.index and inner.traced and inner.split is None
    doc = jaxmagic.document(cap, "grad")
    assert len(doc["entries"]) == 1
    assert any("ran inside grad of sin" in note for note in doc["notes"])
    assert not any("traced something other" in note for note in doc["notes"])
