"""Under %%prng, JAX's warnings name the user's line and jax.random's functions pickle, as
without the magic (issue 22, item 11). A real IPython shell, real JAX."""

from __future__ import annotations

import pickle
import warnings

import jax
import pytest

import jaxmagic

F64 = "x = jax.random.normal(jax.random.key(0), (3,), dtype='float64')\n"


def _run_warning_cells(ip, magic: str) -> list:
    """Two cells that each draw a float64 sample (without x64), warnings shown once per location."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):
            result = ip.run_cell(magic + "import jax\n" + F64)
            assert result.success, result.error_in_exec
    return [w for w in caught if "float64" in str(w.message)]


@pytest.mark.skipif(jax.config.jax_enable_x64, reason="the warning is about float64 without x64")
def test_a_samplers_warning_names_the_users_line_in_every_cell(magic_shell):
    plain = _run_warning_cells(magic_shell, "")
    under = _run_warning_cells(magic_shell, "%%prng\n")
    assert len(plain) == 2  # each cell is its own location: each warns
    assert len(under) == len(plain)
    for w in plain:
        assert w.lineno == 2  # the sampler's line
    for w in under:  # the same line, counted in the cell as written (`%%prng` is its line 1)
        assert "jaxmagic" not in w.filename and w.lineno == 3, (w.filename, w.lineno)
    assert [type(w.message) for w in under] == [type(w.message) for w in plain]


@pytest.mark.skipif(jax.config.jax_enable_x64, reason="the warning is about float64 without x64")
def test_warnings_as_errors_still_raise_from_the_sampler(magic_shell):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = magic_shell.run_cell("%%prng\nimport jax\n" + F64)
    assert isinstance(result.error_in_exec, UserWarning)
    assert "float64" in str(result.error_in_exec)


@pytest.mark.skipif(jax.config.jax_enable_x64, reason="the warning is about float64 without x64")
def test_a_warning_inside_a_jitted_function_names_its_line(magic_shell):
    cell = (
        "%%prng\nimport jax\n@jax.jit\ndef draw(k):\n"
        "    return jax.random.uniform(k, (2,), dtype='float64')\ny = draw(jax.random.key(1))\n"
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert magic_shell.run_cell(cell).success
    lines = {w.lineno for w in caught if "float64" in str(w.message)}
    files = {w.filename for w in caught if "float64" in str(w.message)}
    assert lines == {5} and not any("jaxmagic" in f for f in files), (lines, files)


def test_jax_random_functions_pickle_inside_a_prng_cell(magic_shell):
    ip = magic_shell
    result = ip.run_cell(
        "%%prng -n pickled_cap\nimport jax, pickle\n"
        "same = [pickle.loads(pickle.dumps(f)) is f for f in "
        "(jax.random.normal, jax.random.split, jax.random.key, jax.random.PRNGKey)]\n"
        "k = jax.random.key(0)\nx = jax.random.normal(k, (2,))\n"
    )
    assert result.success, result.error_in_exec
    assert ip.user_ns["same"] == [True] * 4
    assert ip.user_ns["pickled_cap"].keys  # the stand-ins were in place and recorded
    # after the cell, the bytes pickled there still load: to JAX's own function
    data = pickle.dumps(jax.random.normal)
    assert pickle.loads(data) is jax.random.normal
    with jaxmagic.capture() as cap:
        inside = pickle.dumps(jax.random.normal)
    assert pickle.loads(inside) is jax.random.normal and cap is not None
