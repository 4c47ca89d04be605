"""Sharp bits as findings, each against JAX's own behaviour in a real run: concretization errors
explained under the cell's unchanged traceback, static out-of-bounds indices JAX clamps or drops,
and an array donated and then read."""

from __future__ import annotations

import json
import re
import traceback
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxmagic
from jaxmagic.model.document import error_json
from jaxmagic.views.html_parts import error_html, error_text

MAGICS = ("jaxpr", "grad_graph", "trace", "sharding", "prng")

DEFINITIONS = """
import jax, jax.numpy as jnp

@jax.jit
def pos(x):
    if x > 0:
        return x
    return -x

@jax.jit
def rep(x, n):
    return sum(x for _ in range(n))

@jax.jit
def keep(x):
    return x[x > 0]

@jax.jit
def scale(x):
    return jnp.ones(3) * float(x)
"""

# (cell, JAX's exception class, the user line that needed a concrete value, what the fixes must name)
CASES = [
    (
        "pos(1.0)",
        jax.errors.TracerBoolConversionError,
        "if x > 0:",
        ("static_argnames=('x',)", "jnp.where", "jax.lax.cond"),
    ),
    (
        "rep(1.0, 3)",
        jax.errors.TracerIntegerConversionError,
        "return sum(x for _ in range(n))",
        ("static_argnames=('n',)", "jax.lax.fori_loop"),
    ),
    (
        "keep(jnp.arange(3.0))",
        jax.errors.NonConcreteBooleanIndexError,
        "return x[x > 0]",
        ("jnp.nonzero(mask, size=N", "jnp.where(mask, x, 0)"),
    ),
    (
        "scale(2.0)",
        jax.errors.ConcretizationTypeError,
        "return jnp.ones(3) * float(x)",
        ("static_argnames=('x',)", "astype"),
    ),
]

_CELL_FILE = re.compile(r"<ipython-input-\d+-[0-9a-f]+>|/tmp/ipykernel_\d+/\d+\.py")


def _norm(text: str) -> str:
    """A cell's file name differs from run to run; everything else must not."""
    return _CELL_FILE.sub("<cell>", text)


def _shown(exc: BaseException) -> tuple:
    """What the user sees of an exception: type, message, and each traceback frame's function and code."""
    frames = [
        (f.name, f.line)
        for f in traceback.extract_tb(exc.__traceback__)
        if "jaxmagic" not in f.filename and "IPython" not in f.filename
    ]
    return type(exc), _norm(str(exc)), frames


def _outputs_text(outputs) -> str:
    """The text of every output shown: plain text, HTML, and the widgets' documents."""
    import ipywidgets

    registry = getattr(ipywidgets.widgets.widget, "_instances", None) or ipywidgets.Widget.widgets
    texts = []
    for o in outputs:
        texts.append(str(o.data.get("text/plain", "")) + str(o.data.get("text/html", "")))
        view = o.data.get("application/vnd.jupyter.widget-view+json")
        if view and view.get("model_id") in registry:
            texts.append(json.dumps(registry[view["model_id"]].get_state().get("doc")))
    return "\n".join(texts)


@pytest.mark.parametrize("cell,error,line,fixes", CASES, ids=[c[1].__name__ for c in CASES])
def test_concretization_errors_are_explained_under_the_unchanged_traceback(magic_shell, cell, error, line, fixes):
    from IPython.utils.capture import capture_output

    magic_shell.run_cell(DEFINITIONS)
    plain = magic_shell.run_cell(cell)
    assert isinstance(plain.error_in_exec, error)  # JAX's own verdict
    for magic in MAGICS:
        with capture_output() as out:
            result = magic_shell.run_cell(f"%%{magic} --name ccap\n{cell}\n")
        assert _shown(result.error_in_exec) == _shown(plain.error_in_exec), magic
        cap = magic_shell.user_ns["ccap"]
        found = [f for f in cap.findings if f.kind == "concretization"]
        assert len(found) == 1, (magic, cap.findings)
        f = found[0]
        assert f.severity == "bug" and f.source is not None and f.source.code == line, (magic, f)
        assert error.__name__ in f.message and all(fix in f.message for fix in fixes), (magic, f.message)
        assert f.function == cell.split("(")[0] and cap.calls[f.call].name == f.function, (magic, f)
        assert f.message in _outputs_text(out.outputs), magic  # shown in the view's error box


def test_the_error_box_shows_the_explanation_below_the_error():
    with pytest.raises(jax.errors.TracerBoolConversionError):
        with jaxmagic.capture() as cap:
            jax.jit(lambda x: x if x > 0 else -x)(1.0)
    doc = {"error": error_json(cap)}
    explanation = doc["error"]["explanation"]
    assert "TracerBoolConversionError" in explanation and "jnp.where" in explanation
    html = error_html(doc)
    assert html.index("Cell raised") < html.index("jnp.where")
    assert error_text(doc)[1] == explanation


def test_other_errors_and_eager_code_get_no_concretization_finding():
    with pytest.raises(ZeroDivisionError):
        with jaxmagic.capture() as cap:
            1 / 0
    with jaxmagic.capture() as cap2:
        x = jnp.arange(3.0)
        y = x[x > 0]  # eager: concrete, fine
    assert y.shape == (2,)
    assert not [f for f in cap.findings + cap2.findings if f.kind == "concretization"]
    assert "explanation" not in error_json(cap)


# -- static out-of-bounds indices ----------------------------------------------------------------


def _oob(fn, x):
    """JAX's own result of jitted `fn` on `x`, and the index findings of that call."""
    with jaxmagic.capture() as cap:
        out = jax.jit(fn)(x)
    return np.asarray(out), [f for f in cap.findings if f.kind == "index_out_of_bounds"]


X = jnp.arange(5.0) * 10  # each element tells which index was read


def test_a_constant_index_past_the_end_is_clamped_as_jax_does():
    out, found = _oob(lambda x: x[7], X)
    assert out == X[4]  # JAX: clamped, no error
    (f,) = found
    assert "index 7" in f.message and "shape (5,)" in f.message and "clamps it to 4" in f.message
    assert f.severity == "warning" and f.function.endswith("<lambda>") and f.call == 0
    assert f.source is not None and "x[7]" in f.source.code
    out, (f,) = _oob(lambda x: x[-7], X)
    # the index as the program holds it: JAX 0.10 keeps -7; JAX 0.4 to 0.7 add the axis size while tracing
    said = ("index -7 on", "index -2 (as the program holds it: JAX's indexing adds the axis size 5 to a negative")
    assert out == X[0] and any(s in f.message for s in said) and "clamps it to 0" in f.message
    out, (f,) = _oob(lambda x: x.reshape(1, 5)[0, 6], X)
    assert out == X[4] and "index 6 on axis 1" in f.message


def test_a_constant_scatter_index_out_of_bounds_is_dropped_as_jax_does():
    out, (f,) = _oob(lambda x: x.at[7].set(-1.0), X)
    np.testing.assert_array_equal(out, X)  # JAX: the update vanished
    assert "index 7" in f.message and "drops that update" in f.message and "mode=" in f.message
    out, (f,) = _oob(lambda x: x.at[7].set(-1.0, mode="clip"), X)
    assert out[4] == -1.0 and "clamps it to 4" in f.message and "writes element 4" in f.message
    out, (f,) = _oob(lambda x: x.at[7].set(-1.0, mode="promise_in_bounds"), X)
    np.testing.assert_array_equal(out, X)
    assert "drops that update" in f.message


def test_fill_mode_gathers_and_update_slices_say_what_jax_returns():
    out, (f,) = _oob(lambda x: x.at[7].get(mode="fill"), X)
    assert np.isnan(out) and "fill value nan" in f.message
    out, (f,) = _oob(lambda x: jnp.take(x, 9), X)  # jnp.take's default mode fills, inside its own jit
    assert np.isnan(out) and "fill value nan" in f.message and "jnp.take(x, 9)" in f.source.code
    out, (f,) = _oob(lambda x: lax.dynamic_update_slice(x, -jnp.ones(3), (4,)), X)
    np.testing.assert_array_equal(out, [0, 10, -1, -1, -1])  # JAX moved the update to start 2
    assert "slice start 4" in f.message and "lands at 2" in f.message
    out, (f,) = _oob(lambda x: lax.dynamic_slice(x, (4,), (3,)), X)
    np.testing.assert_array_equal(out, X[2:5])
    assert "clamps it to 2" in f.message
    out, (f,) = _oob(lambda x: x[jnp.array([1, 9])], X)
    np.testing.assert_array_equal(out, [X[1], X[4]])
    assert "index 9" in f.message and "1 of 2 indices" in f.message


def test_in_bounds_and_traced_indices_stay_silent():
    for fn in (
        lambda x: x[3],
        lambda x: x[-1],
        lambda x: x[2:9],
        lambda x: x[jnp.array([0, 4, -5])],
        lambda x: x[x.astype(int)[0] + 7],
        lambda x: jnp.roll(x, 2),
        lambda x: jnp.diff(x),
        lambda x: jnp.pad(x, 2, mode="reflect"),
        lambda x: x.at[4].add(1.0),
        lambda x: lax.dynamic_update_slice(x, jnp.ones(2), (3,)),
    ):
        _, found = _oob(fn, X)
        assert found == [], found
    from bench.programs import mlp_grad

    step, args = mlp_grad(4)
    with jaxmagic.capture() as cap:
        step(*args)
    assert not [f for f in cap.findings if f.kind == "index_out_of_bounds"]


# -- an argument donated and then read --------------------------------------------------------

DONATING = """
import jax, jax.numpy as jnp

@jax.jit
def double(x):
    return x * 2

step = jax.jit(lambda state, lr: state - lr, donate_argnums=0)
total = jax.jit(lambda x: x.sum(), donate_argnums=0)
"""


def test_an_array_donated_then_read_names_the_call_that_donated_it(magic_shell):
    magic_shell.run_cell(DONATING)
    cell = "state = jnp.arange(4.0)\nnew = step(state, 0.1)\nprint(state + 1)\n"
    plain = magic_shell.run_cell(cell)
    # JAX's verdict: RuntimeError "Array has been deleted", or, where `+` reaches the runtime through
    # JAX's C++ dispatch (it does once earlier cells have warmed it), its INVALID_ARGUMENT ValueError
    assert isinstance(plain.error_in_exec, (RuntimeError, ValueError)) and "deleted" in str(plain.error_in_exec)
    for magic in MAGICS:
        result = magic_shell.run_cell(f"%%{magic} --name dcap\n{cell}")
        assert _shown(result.error_in_exec) == _shown(plain.error_in_exec), magic
        (f,) = [f for f in magic_shell.user_ns["dcap"].findings if f.kind == "donated_then_read"]
        assert f.severity == "bug" and f.source.code == "print(state + 1)", (magic, f)
        assert f.call is not None and magic_shell.user_ns["dcap"].calls[f.call].name == f.function, magic
        assert "`new = step(state, 0.1)`" in f.message and "argument state donated" in f.message, f.message
        assert "Use the value the call returned" in f.message and "donate_argnums" in f.message


def test_a_donated_array_passed_to_a_later_call_after_a_hot_loop(magic_shell):
    magic_shell.run_cell(DONATING)
    cell = (
        "s = jnp.arange(4.0)\nfor _ in range(12):\n    t = step(jnp.ones(4), 0.1)\n"
        "u = step(s, 0.1)\nv = double(s)\n"
    )  # the donating call is a cache hit of a hot function
    plain = magic_shell.run_cell(cell)
    assert "has been deleted" in str(plain.error_in_exec)  # JAX refuses the deleted buffer
    result = magic_shell.run_cell("%%trace --name dcap\n" + cell)
    assert _shown(result.error_in_exec) == _shown(plain.error_in_exec)
    (f,) = [f for f in magic_shell.user_ns["dcap"].findings if f.kind == "donated_then_read"]
    assert "`u = step(s, 0.1)`" in f.message and f.source.code == "v = double(s)" and f.call == 12


def test_no_donation_finding_where_jax_kept_the_array_or_another_call_deleted_it(magic_shell):
    magic_shell.run_cell(DONATING)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX: "Some donated buffers were not usable"
        result = magic_shell.run_cell("%%trace --name dcap\na = jnp.arange(4.0)\nb = total(a)\nc = a + 1\n")
    assert result.success and not magic_shell.user_ns["a"].is_deleted()  # JAX kept it: nothing to report
    assert not [f for f in magic_shell.user_ns["dcap"].findings if f.kind == "donated_then_read"]
    result = magic_shell.run_cell("%%trace --name dcap\na = jnp.arange(4.0)\na.delete()\nprint(a)\n")
    assert isinstance(result.error_in_exec, RuntimeError)
    assert not [f for f in magic_shell.user_ns["dcap"].findings if f.kind == "donated_then_read"]


def test_the_donation_log_forgets_arrays_that_died(monkeypatch):
    """A loop that donates a new state each step and drops the one before: the log holds about twice
    the live references, and an argument with one array still alive keeps its call named."""
    from jaxmagic.capture.findings import donation

    monkeypatch.setattr(donation, "PRUNE_FROM", 100)
    step = jax.jit(lambda s: s, donate_argnums=0)
    log = donation.DonationLog()
    assert log.donates(1, step)
    kept = {"w": jnp.zeros(3), "b": jnp.zeros(2)}
    log.note(1, (kept,), {}, 7, "step")
    survivor = kept["w"]
    del kept  # the argument dies but one of its arrays lives on
    for i in range(3 * donation.PRUNE_FROM):
        log.note(1, ({"w": jnp.zeros(1), "b": jnp.zeros(1)},), {}, 8 + i, "step")
        assert log._refs <= 2 * donation.PRUNE_FROM + 2
    assert len(log._notes) < donation.PRUNE_FROM
    assert log.donor_of(survivor)[1] == 7
    assert log.donor_of(jnp.zeros(3)) is None


def _read_after_donation(size: int) -> tuple[Any, Any]:
    """Donates an array of shape (size,) beside a Python scalar, then reads the array."""
    step = jax.jit(lambda s: s["x"] * s["lr"], donate_argnums=0)
    x = jnp.arange(float(size))
    y = step({"x": x, "lr": 0.5})
    return x + y, y


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
@pytest.mark.parametrize(("size", "warm"), [(37, False), (41, True)])
def test_a_python_scalar_beside_a_donated_array_is_left_out_and_the_array_named(size: int, warm: bool):
    # JAX's own answer is the oracle: which error reading a donated array raises depends on the
    # version and on whether `x + y` already runs from its C++ fast path (RuntimeError from
    # Python, or the runtime's ValueError INVALID_ARGUMENT on 0.10 once warm)
    if warm:
        jnp.arange(float(size)) + jnp.arange(float(size))
    with pytest.raises(Exception, match="deleted") as plain:
        _read_after_donation(size)
    with pytest.raises(type(plain.value), match="deleted"):
        with jaxmagic.capture({}) as cap:
            _read_after_donation(size)
    (f,) = [f for f in cap.findings if f.kind == "donated_then_read"]
    assert f.call == 0 and "an array of its argument s donated" in f.message, f.message
    assert f"raised {type(plain.value).__name__}" in f.message, f.message


def test_an_index_read_under_grad_is_one_finding_and_vmap_rows_are_checked():
    out, found = _oob(jax.grad(lambda v: v[7] * 2), X)
    # JAX's own answer: 0.10 sends the read and its gradient to element 4; 0.7 drops the gradient
    np.testing.assert_array_equal(out, jax.jit(jax.grad(lambda v: v[7] * 2))(X))
    assert len(found) == 1 and "clamps it to 4" in found[0].message
    rows = X.reshape(1, 5).repeat(3, axis=0)
    out, (f,) = _oob(jax.vmap(lambda r: r[6]), rows)
    np.testing.assert_array_equal(out, rows[:, 4])
    assert "index 6 on axis 1 of an array of shape (3, 5)" in f.message


def test_concretization_under_vmap_and_with_two_arguments_says_what_jax_said():
    with pytest.raises(jax.errors.TracerBoolConversionError) as raised:
        with jaxmagic.capture() as cap:
            jax.vmap(lambda x: x if x > 0 else -x)(jnp.arange(3.0))
    assert re.search(
        r"This (Batch|Vmap)Tracer", str(raised.value)
    )  # JAX names the vmap's tracer (0.12: VmapTracer), no argument
    (f,) = [f for f in cap.findings if f.kind == "concretization"]
    assert "jax.vmap" in f.message and "static_argnames" not in f.message and "jnp.where" in f.message
    with pytest.raises(jax.errors.TracerBoolConversionError) as raised:
        with jaxmagic.capture() as cap:
            jax.jit(lambda x, y: x if x + y > 0 else y)(1.0, 2.0)
    assert "depends on the values of the arguments x and y" in str(raised.value)
    (f,) = [f for f in cap.findings if f.kind == "concretization"]
    assert "arguments x and y" in f.message and "static_argnames=('x', 'y')" in f.message
