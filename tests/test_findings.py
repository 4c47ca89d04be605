"""Findings from the jaxpr (capture/findings/program.py), on programs traced by real JAX.

Each function under test is traced with `jitted.trace(*args).jaxpr`, as the capture
session does, and the findings are checked for their name, count and source line.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from bench.programs import eqn_count, mlp_grad
from jaxmagic.capture.findings import program as findings
from jaxmagic.capture.findings.program import baked_constants, jaxpr_findings, unrolled_loops

HERE = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    """The line of this file that carries `# <marker>` (so the tests survive edits above them)."""
    hits = [i + 1 for i, text in enumerate(HERE) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


def jaxpr_of(jitted, *args):
    return jitted.trace(*args).jaxpr


def by_kind(found, kind):
    return [f for f in found if f.kind == kind]


# -- module globals the functions below read ------------------------------------------------

TABLE = jnp.arange(12.0).reshape(3, 4)
NP_TABLE = np.arange(12, dtype=np.float32).reshape(3, 4)
NP_TABLE64 = np.linspace(0.0, 1.0, 12).reshape(3, 4)  # float64: JAX stores a float32 copy
SCALE = 2.5
PARAMS = {"w": jnp.ones((4, 4)), "b": jnp.zeros(4)}
BIAS = jnp.full((3,), 0.5)
ZERO_D = jnp.float32(3.0)


def uses_bias(x):
    return x + BIAS  # bias-use


@jax.jit
def jnp_global(x):
    return TABLE @ x  # jnp-global-use


@jax.jit
def numpy_global(x):
    return NP_TABLE @ x  # numpy-global-use


@jax.jit
def numpy64_global(x):
    return NP_TABLE64 @ x


@jax.jit
def scalar_global(x):
    return jnp.sin(x) * SCALE  # scalar-use


@jax.jit
def pytree_and_helper(x):
    h = PARAMS["w"] @ x + PARAMS["b"]  # pytree-use
    return uses_bias(h[:3])


def closure_fn():
    inside = jnp.linspace(0.0, 1.0, 4)

    @jax.jit
    def f(x):
        return x * inside  # closure-use

    return f


@jax.jit
def no_globals(x, y):
    return jnp.tanh(x @ y) + 1.0


@jax.jit
def made_inside(x):
    return x + jnp.ones(4) + jnp.zeros((4,)) * 3.0 + jnp.arange(4.0)


# -- baked constants ------------------------------------------------------------------------


def test_jnp_global_is_named_with_shape_size_and_line():
    [found] = baked_constants(jnp_global, jaxpr_of(jnp_global, jnp.ones(4)))
    assert found.kind == "global_constant" and found.severity == "warning"
    assert found.message.startswith("`TABLE` (global, f32[3,4], 48 bytes) is baked into the compiled program")
    assert "Pass it as an argument" in found.message
    assert found.source.line == line_of("jnp-global-use")
    assert found.source.code == "return TABLE @ x  # jnp-global-use"


def test_numpy_global_is_matched_by_memory_and_converted_copy_by_value():
    [found] = baked_constants(numpy_global, jaxpr_of(numpy_global, jnp.ones(4)))
    assert found.message.startswith("`NP_TABLE` (global, f32[3,4]")
    assert found.source.line == line_of("numpy-global-use")
    [found64] = baked_constants(numpy64_global, jaxpr_of(numpy64_global, jnp.ones(4)))
    assert found64.message.startswith("`NP_TABLE64` (global, f32[3,4]")


def test_closure_array_is_named():
    f = closure_fn()
    [found] = baked_constants(f, jaxpr_of(f, jnp.ones(4)))
    assert found.message.startswith("`inside` (closure variable, f32[4], 16 bytes)")
    assert found.source.line == line_of("closure-use")


def test_python_float_global_is_probably_a_literal():
    [found] = baked_constants(scalar_global, jaxpr_of(scalar_global, jnp.ones(3)))
    assert found.severity == "info"
    assert found.message.startswith("`SCALE` (global, = 2.5) was probably baked into the program as the literal 2.5")
    assert found.source.line == line_of("scalar-use")


def test_pytree_leaves_and_helper_globals_are_named():
    found = baked_constants(pytree_and_helper, jaxpr_of(pytree_and_helper, jnp.ones(4)))
    messages = {f.message.split(" is baked")[0]: f for f in found}
    assert set(messages) == {
        "`PARAMS['w']` (global, f32[4,4], 64 bytes)",
        "`PARAMS['b']` (global, f32[4], 16 bytes)",
        "`BIAS` (global read by uses_bias, f32[3], 12 bytes)",
    }
    assert messages["`PARAMS['w']` (global, f32[4,4], 64 bytes)"].source.line == line_of("pytree-use")
    assert messages["`BIAS` (global read by uses_bias, f32[3], 12 bytes)"].source.line == line_of("bias-use")


def test_global_read_inside_a_nested_jit_is_named_at_its_line():
    inner = jax.jit(uses_bias)

    @jax.jit
    def outer(x):
        return inner(x) * 2.0

    [found] = baked_constants(outer, jaxpr_of(outer, jnp.ones(3)))
    assert found.message.startswith("`BIAS` (global read by uses_bias")
    assert found.source.line == line_of("bias-use")


def test_partial_argument_is_named():
    def scale(w, x):
        return w * x

    f = jax.jit(functools.partial(scale, jnp.arange(3.0)))
    [found] = baked_constants(f, jaxpr_of(f, jnp.ones(3)))
    assert found.message.startswith("`partial argument 0` (bound with functools.partial, f32[3]")


@pytest.mark.parametrize("simplified", [False, True])
def test_arrays_and_0d_arrays_are_named_in_both_constant_modes(simplified):
    """With jax_use_simplified_jaxpr_constants, constants are Literals inside eqns, not constvars."""
    if not hasattr(jax.config, "jax_use_simplified_jaxpr_constants"):  # JAX before 0.7: constvars only
        pytest.skip("this JAX has only one constant mode")
    previous = jax.config.jax_use_simplified_jaxpr_constants
    jax.config.update("jax_use_simplified_jaxpr_constants", simplified)
    try:

        @jax.jit
        def f(x):
            return (TABLE @ x) * ZERO_D

        closed = jaxpr_of(f, jnp.ones(4))
        # Without the flag constants are constvars; with it, JAX versions that support it inline
        # them as Literals (0.8 keeps array constants as constvars): the findings are the same.
        assert simplified or closed.consts
        found = baked_constants(f, closed)
        assert [x.message.split(" is baked")[0] for x in found] == [
            "`TABLE` (global, f32[3,4], 48 bytes)",
            "`ZERO_D` (global, f32[], 4 bytes)",
        ]
    finally:
        jax.config.update("jax_use_simplified_jaxpr_constants", previous)


class Scaler:
    def __init__(self) -> None:
        self.table = jnp.arange(3.0)
        self.unused = jnp.ones(1000)

    def apply(self, x):
        return x * self.table  # method-use


def test_attribute_of_a_bound_method_self_is_named():
    f = jax.jit(Scaler().apply)
    [found] = baked_constants(f, jaxpr_of(f, jnp.ones(3)))
    assert found.message.startswith("`self.table` (attribute, f32[3], 12 bytes)")
    assert found.source.line == line_of("method-use")


def test_no_globals_and_arrays_made_inside_give_nothing():
    assert jaxpr_findings(no_globals, jaxpr_of(no_globals, jnp.ones((2, 2)), jnp.ones((2, 2)))) == ([], [])
    assert jaxpr_findings(made_inside, jaxpr_of(made_inside, jnp.ones(4))) == ([], [])


def test_small_internal_constants_are_ignored_and_big_unnamed_ones_reported():
    @jax.jit
    def small(x):
        return x + jnp.array([1.0, 2.0, 3.0, 4.0]) + np.arange(4.0)

    closed = jaxpr_of(small, jnp.ones(4))
    assert closed.consts  # JAX made constants of them...
    assert baked_constants(small, closed) == []  # ...that are not the user's globals

    @jax.jit
    def big(x):
        return x + np.ones((600, 600), np.float32)  # big-inside

    [found] = baked_constants(big, jaxpr_of(big, jnp.ones((600, 600))))
    assert found.severity == "info"
    assert found.message.startswith("An array constant (f32[600,600], 1.4 MB) is baked into the compiled program")
    assert found.source.line == line_of("big-inside")


def test_unused_scalar_globals_and_trivial_values_are_not_reported():
    @jax.jit
    def f(x):
        return x * 3.7 + 1.0  # 3.7 is not any global's value; 1.0 is trivial

    assert baked_constants(f, jaxpr_of(f, jnp.ones(3))) == []


# -- unrolled loops -------------------------------------------------------------------------


def python_loop(x):
    for i in range(100):  # loop-header
        x = jnp.sin(x) * 1.01
    return x


def fori_version(x):
    return jax.lax.fori_loop(0, 100, lambda i, x: jnp.sin(x) * 1.01, x)


def multi_line_body(x):
    for i in range(30):  # multi-header
        y = jnp.cos(x)
        x = y + 1.0
        x = x * 0.5
    return x


def straight_line(x):
    a = jnp.sin(x)
    b = jnp.cos(a) + x
    c = jnp.exp(-b) * 2.0
    d = jnp.tanh(c) - a
    e = jnp.log1p(jnp.abs(d))
    f = jnp.sqrt(jnp.abs(e) + 1.0)
    g = jnp.maximum(f, b) / (1.0 + jnp.abs(c))
    h = jnp.sum(g * x) + jnp.linalg.norm(d)
    i = jnp.cumsum(x * h)
    j = jnp.sort(i) + jnp.flip(i)
    k = jnp.where(j > 0, j, -j) ** 3
    m = jnp.mean(k) + jnp.std(k) + jnp.max(k) + jnp.min(k)
    return jnp.clip(k / m, -1.0, 1.0).sum() + jnp.arctan2(a, b).sum()


def test_python_loop_is_found_with_its_count_and_loop_line():
    [found] = unrolled_loops(jaxpr_of(jax.jit(python_loop), jnp.ones(3)))
    assert found.kind == "unrolled_loop" and found.severity == "info"
    assert found.source.line == line_of("loop-header")
    assert found.source.code == "for i in range(100):  # loop-header"
    assert " ran 100 times while JAX traced it, making 200 eqns (about 2 per iteration: " in found.message
    assert f"(test_findings.py:{line_of('loop-header')}, in `python_loop`) was unrolled" in found.message
    assert "jax.lax.fori_loop" in found.message and "jax.lax.scan" in found.message


def test_gradient_of_a_loop_counts_iterations_not_eqns():
    [found] = unrolled_loops(jaxpr_of(jax.jit(jax.grad(lambda x: python_loop(x).sum())), jnp.ones(3)))
    assert " ran 100 times" in found.message
    assert found.source.line == line_of("loop-header")


def test_lines_of_one_loop_body_are_one_finding():
    body = f"lines {line_of('multi-header') + 1}–{line_of('multi-header') + 3} ran 30 times"
    [found] = unrolled_loops(jaxpr_of(jax.jit(jax.grad(multi_line_body)), 1.0))
    assert found.source.line == line_of("multi-header")
    assert body in found.message
    # Without the gradient each line makes 30 eqns, under the threshold; the loop makes 90.
    [found] = unrolled_loops(jaxpr_of(jax.jit(multi_line_body), 1.0))
    assert body in found.message and "making 90 eqns (about 3 per iteration: " in found.message


def test_fori_loop_and_straight_line_code_are_not_loops():
    assert unrolled_loops(jaxpr_of(jax.jit(fori_version), jnp.ones(3))) == []
    closed = jaxpr_of(jax.jit(straight_line), jnp.ones(8))
    assert len(closed.jaxpr.eqns) > 40
    assert unrolled_loops(closed, min_eqns=10) == []
    assert unrolled_loops(jaxpr_of(jax.jit(jax.grad(straight_line)), jnp.ones(8)), min_eqns=10) == []


def test_min_repeats_is_the_threshold():
    closed = jaxpr_of(jax.jit(python_loop), jnp.ones(3))
    assert unrolled_loops(closed, min_repeats=101) == []
    assert len(unrolled_loops(closed, min_repeats=100)) == 1


def dense(x, w):
    return jnp.tanh(x @ w)  # dense-line


def twenty_calls(x, w):
    """A helper called from twenty different lines: repeated eqns, but no loop."""
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    x = dense(x, w)
    return x


def test_helper_called_from_many_lines_is_not_a_loop():
    closed = jaxpr_of(jax.jit(jax.grad(lambda x, w: twenty_calls(x, w).sum())), jnp.ones((2, 4)), jnp.ones((4, 4)))
    assert unrolled_loops(closed, min_eqns=10) == []


def test_tree_map_over_many_parameters_is_not_a_loop():
    """Twenty independent updates on one line repeat, but do not feed each other: not a loop."""
    params = {f"w{i}": jnp.ones((4, 4)) for i in range(20)}

    @jax.jit
    def update(params, grads):
        return jax.tree.map(lambda p, g: p - 0.1 * jnp.sign(g) * jnp.abs(g), params, grads)

    closed = jaxpr_of(update, params, params)
    assert len(closed.jaxpr.eqns) >= 80
    assert unrolled_loops(closed) == []


def test_comprehension_of_independent_iterations_suggests_vmap():
    def spectrum(x):
        return jnp.stack([jnp.sum(jnp.cos(x * k)) for k in range(40)])  # comprehension

    [found] = unrolled_loops(jaxpr_of(jax.jit(spectrum), jnp.ones(3)))
    assert found.source.line == line_of("comprehension")
    assert " ran 40 times" in found.message
    assert "do not depend on each other: jax.vmap" in found.message and "fori_loop" not in found.message


def layer(p, h):
    h = jnp.tanh(h @ p["w"] + p["b"])  # layer-body
    return h * 0.9 + 0.1 * jnp.mean(h)


def layered_loss(params, x):
    for p in params:  # layers-loop
        x = layer(p, x)
    return jnp.mean(x**2)


def test_loop_over_layers_is_reported_at_the_loop_once():
    params = [{"w": jnp.eye(8), "b": jnp.zeros(8)} for _ in range(12)]
    [found] = unrolled_loops(jaxpr_of(jax.jit(jax.grad(layered_loss)), params, jnp.ones((2, 8))))
    assert found.source.line == line_of("layers-loop")
    assert " ran 12 times" in found.message


def test_loop_inside_a_scan_body_is_found_there():
    def body(carry, _):
        for _ in range(16):  # scan-inner-loop
            carry = jnp.sin(carry) * 1.01
        return carry, None

    [found] = unrolled_loops(
        jaxpr_of(jax.jit(lambda x: jax.lax.scan(body, x, None, length=5)[0]), jnp.ones(3)), min_eqns=20
    )
    assert found.source.line == line_of("scan-inner-loop")
    assert " ran 16 times" in found.message


def looping_helper(x):
    for _ in range(30):  # helper-loop
        x = jnp.cos(x) + 0.5
    return x


def three_call_sites(x):
    a = looping_helper(x)
    b = looping_helper(x * 2.0)
    return looping_helper(a + b)


def test_loop_in_a_helper_reached_from_several_lines_is_one_finding():
    [found] = unrolled_loops(jaxpr_of(jax.jit(three_call_sites), jnp.ones(3)))
    assert found.source.line == line_of("helper-loop")
    assert "(reached from 3 call sites; counts are per call site)" in found.message
    assert " ran 30 times" in found.message and "making 180 eqns (about 2 per iteration: " in found.message


def test_large_unrolled_loop_is_a_warning():
    def long_loop(x):
        for _ in range(600):
            x = jnp.sin(x) * 1.01
        return x

    [found] = unrolled_loops(jaxpr_of(jax.jit(long_loop), jnp.ones(3)))
    assert found.severity == "warning" and "making 1,200 eqns" in found.message


# -- a model written the recommended way -------------------------------------------------


def init_mlp(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        {"w": jax.random.normal(k, (m, n)) * 0.1, "b": jnp.zeros(n)} for k, m, n in zip(keys, sizes[:-1], sizes[1:])
    ]


def mlp_apply(params, x):
    for p in params[:-1]:
        x = jax.nn.relu(x @ p["w"] + p["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


@jax.jit
def mlp_train_step(params, x, y):
    def loss(params):
        return jnp.mean((mlp_apply(params, x) - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return value, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)


def test_module_less_mlp_with_params_passed_in_gives_nothing():
    params = init_mlp(jax.random.key(0), [8, 32, 32, 32, 4])
    closed = jaxpr_of(mlp_train_step, params, jnp.ones((16, 8)), jnp.ones((16, 4)))
    assert jaxpr_findings(mlp_train_step, closed) == ([], [])


def test_failures_become_notes_not_exceptions(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("moved")

    monkeypatch.setattr(findings, "_walk", broken)
    for memo in ("_CONSTANT_SITES", "_SCALAR_LITERALS", "_LOOPS_SEEN"):  # earlier tests' answers for this jaxpr
        monkeypatch.setattr(findings, memo, findings.JaxprMemo())
    found, notes = jaxpr_findings(jnp_global, jaxpr_of(jnp_global, jnp.ones(4)))
    assert found == []
    assert notes == [
        "jnp_global: baked constants not checked: RuntimeError: moved",
        "jnp_global: unrolled loops not checked: RuntimeError: moved",
    ]


def test_real_10k_eqn_program_gives_one_loop_finding():
    fn, args = mlp_grad(714)  # bench/programs.py: jit(grad) of a 714-layer MLP written as a Python loop
    closed = jaxpr_of(fn, *args)
    assert eqn_count(closed) > 8_500  # about 10k eqns (8,575 on JAX 0.12, whose tangent of tanh is one eqn)
    found, notes = jaxpr_findings(fn, closed)
    assert notes == []
    [loop] = found
    assert loop.severity == "warning" and " ran 714 times" in loop.message


def test_loop_findings_are_remembered_per_jaxpr_for_cells_run_again(monkeypatch):
    fn, args = mlp_grad(12)
    closed = jaxpr_of(fn, *args)
    first, _ = jaxpr_findings(fn, closed, (findings.LOOPS,))
    assert [f.kind for f in first] == ["unrolled_loop"]

    def broken(*a, **k):
        raise AssertionError("analysed again")

    monkeypatch.setattr(findings, "unrolled_loops", broken)
    again, notes = jaxpr_findings(fn, jaxpr_of(fn, *args), (findings.LOOPS,))  # JAX hands back the same jaxpr
    assert again == first and notes == []
