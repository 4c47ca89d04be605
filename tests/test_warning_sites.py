"""Warnings keep their place under every magic, and a 64-bit dtype JAX truncates is a finding.

JAX's own truncation warning is the oracle: a cell that triggers it (eager `jnp.zeros`, a
`jax.random` sampler, inside a jitted function, inside `jax.grad`, `jnp.arange` under
`jit(grad(...))`, a loop) gives under every magic the same warnings (text, category, file, line)
as the plain cell, the same shown text in a real IPython shell, and one `dtype_truncated` finding
per line JAX warned for. A real IPython shell, real JAX, no mocks.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import jax
import jax.numpy as jnp
import pytest

import jaxmagic

pytestmark = pytest.mark.skipif(jax.config.jax_enable_x64, reason="the warnings are about 64-bit dtypes without x64")

MAGICS = ("%%jaxpr", "%%grad_graph", "%%trace", "%%sharding", "%%prng")
# Each line that warns, by its line in the plain cell (the magic's line shifts them by one there).
CELL = (
    "import jax, jax.numpy as jnp\n"
    "a = jnp.zeros(3, dtype='float64')\n"  # 2: eager
    "b = jax.random.normal(jax.random.key(0), (2,), dtype='float64')\n"  # 3: a jax.random stand-in
    "@jax.jit\n"
    "def step(x):\n"
    "    return x + jnp.ones(3, dtype='float64')\n"  # 6: traced in a jitted call
    "c = step(1.0)\n"
    "def loss(w):\n"
    "    return (w * jnp.ones(3, dtype='float64')).sum()\n"  # 9: inside grad
    "d = jax.grad(loss)(1.0)\n"
    "def loss2(w):\n"
    "    return (w * jnp.arange(3, dtype='float64')).sum()\n"  # 12: JAX names its own line
    "e = jax.jit(jax.grad(loss2))(1.0)\n"
    "for i in range(3):\n"
    "    f = jnp.zeros(2, dtype='float64')\n"  # 15: three times, one place
    "    r = jax.random.uniform(jax.random.key(i), dtype='float64')\n"  # 16: so is a stand-in's
    "g = jnp.zeros(2, dtype='float32')\n"  # silent
)
TRUNCATED_LINES = {2: 1, 3: 1, 6: 1, 9: 1, 12: 1, 15: 3, 16: 3}
_CELL_FILE = re.compile(r"<ipython-input-\d+-[0-9a-f]+>")


def _where(filename: str, lineno: int, offset: int) -> tuple[str, int]:
    """A cell's file and line as in the plain cell: the magic's own line is not counted."""
    if _CELL_FILE.fullmatch(filename):
        return "<cell>", lineno - offset
    return filename, lineno


def _times(message: str) -> int:
    match = re.search(r"JAX warned (\d+) times here", message)
    return int(match.group(1)) if match else 1


def _recorded(ip, magic: str) -> list[tuple]:
    """The cell's warnings, every one ("always"), as (category, text, file, line)."""
    head = magic + " -n warned_cap\n" if magic else ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(io.StringIO()):
            result = ip.run_cell(head + CELL)
    assert result.success, result.error_in_exec
    return [(w.category, str(w.message), *_where(w.filename, w.lineno, 1 if magic else 0)) for w in caught]


def _shown(ip, magic: str) -> list[str]:
    """What a real IPython shell shows of the cell's warnings under the "default" filter (once
    per location), with cell files and lines written as in the plain cell."""
    err = io.StringIO()

    def show(message, category, filename, lineno, file=None, line=None):  # Python's own text (pytest records otherwise)
        err.write(warnings.formatwarning(message, category, filename, lineno, line))

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        with contextlib.redirect_stdout(io.StringIO()):
            result = ip.run_cell((magic + "\n" if magic else "") + CELL)
    assert result.success, result.error_in_exec
    offset = 1 if magic else 0

    def plain_place(match: re.Match) -> str:
        return f"<cell>:{int(match.group(1)) - offset}:"

    text = re.sub(_CELL_FILE.pattern + r":(\d+):", plain_place, err.getvalue())
    return [line for line in text.splitlines() if "Warning" in line or line.startswith("  ")]


@pytest.mark.parametrize("magic", MAGICS)
def test_every_warning_keeps_its_text_category_file_and_line(magic_shell, magic):
    plain = _recorded(magic_shell, "")
    assert [w[3] for w in plain if w[2] == "<cell>"] == [2, 3, 6, 9, 15, 16, 15, 16, 15, 16]  # JAX's own places
    assert len(plain) == 11  # and `jnp.arange`'s under jit(grad): a line of JAX's lax_numpy.py
    assert _recorded(magic_shell, magic) == plain
    found = [f for f in magic_shell.user_ns["warned_cap"].findings if f.kind == "dtype_truncated"]
    assert {f.source.line - 1: _times(f.message) for f in found} == TRUNCATED_LINES  # one per line, repeats counted


@pytest.mark.parametrize("magic", MAGICS)
def test_the_shown_warnings_are_the_plain_cells_once_per_location(magic_shell, magic):
    plain = _shown(magic_shell, "")
    assert sum("UserWarning" in line for line in plain) == 7  # each of the loop's lines once
    assert _shown(magic_shell, magic) == plain


def test_the_finding_names_requested_given_line_function_and_fix():
    with warnings.catch_warnings(record=True) as caught, jaxmagic.capture() as cap:
        warnings.simplefilter("always")

        @jax.jit
        def scale(x):
            return x * jnp.ones(2, dtype=jnp.int64)

        scale(2)
    assert [w.lineno for w in caught] == [scale.__wrapped__.__code__.co_firstlineno + 2]  # JAX's verdict
    [found] = [f for f in cap.findings if f.kind == "dtype_truncated"]
    assert found.severity == "warning" and found.call == 0
    assert found.function == cap.calls[0].name and found.function.endswith("scale")
    assert found.source.file == __file__ and found.source.code == "return x * jnp.ones(2, dtype=jnp.int64)"
    for words in (
        "int64 was requested in ones",
        "JAX gives int32",
        'jax.config.update("jax_enable_x64", True)',
        "request int32",
        f"(traced in {found.function})",
    ):
        assert words in found.message, found.message


def _enable_x64(on: bool):
    """JAX's x64 context: `jax.enable_x64` (JAX 0.8+), `jax.experimental.enable_x64` before."""
    context = getattr(jax, "enable_x64", None)
    if context is None:
        from jax.experimental import enable_x64 as context
    return context(on)


def test_no_finding_where_jax_does_not_truncate_or_the_user_silenced_it():
    with warnings.catch_warnings(record=True) as caught, jaxmagic.capture() as cap:
        warnings.simplefilter("always")
        with _enable_x64(True):
            jnp.zeros(2, dtype="float64")  # x64 on: JAX gives float64, no warning
        jnp.zeros(2, dtype="float32")
        jax.random.normal(jax.random.key(0), (2,))
    assert not caught and not [f for f in cap.findings if f.kind == "dtype_truncated"]
    with warnings.catch_warnings(record=True) as caught, jaxmagic.capture() as cap:
        warnings.simplefilter("ignore")
        jnp.zeros(2, dtype="float64")
    assert not caught and not [f for f in cap.findings if f.kind == "dtype_truncated"]


def test_warnings_as_errors_raise_from_the_users_line_under_trace(magic_shell):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = magic_shell.run_cell(
            "%%trace\nimport jax, jax.numpy as jnp\n"
            "@jax.jit\ndef h(x):\n    return x + jnp.ones(2, dtype='float64')\nh(1.0)\n"
        )
    assert isinstance(result.error_in_exec, UserWarning)
    assert "float64" in str(result.error_in_exec)


def test_warnings_warn_is_pythons_own_after_a_capture_and_a_cells_own_stays():
    original = warnings.warn
    with jaxmagic.capture():
        assert warnings.warn is not original  # the capture's, for its duration
    assert warnings.warn is original

    def mine(*args, **kwargs):
        return None

    with jaxmagic.capture():
        warnings.warn = mine
    try:
        assert warnings.warn is mine  # the cell's replacement is kept, as without the capture
    finally:
        warnings.warn = original
