"""%%jaxpr in a real IPython shell: the cell runs natively, the capture and view come after."""

from __future__ import annotations

import jax
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython

ORIGINAL_JIT = jax.jit


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()  # the test shell is a process-wide singleton
    shell.run_line_magic("load_ext", "jaxmagic")
    shell.run_cell("import jax, jax.numpy as jnp\n@jax.jit\ndef f(x, y):\n    return jnp.dot(x + 1, y + 1)\n")
    yield shell
    shell.run_line_magic("unload_ext", "jaxmagic")


def run(ip, cell):
    return ip.run_cell(cell, store_history=True)


def test_cell_runs_natively_and_the_capture_is_stored(ip, capsys):
    result = run(ip, "%%jaxpr --name cap\nprint('hello')\nf(jnp.ones((3, 4)), jnp.ones(4))\n")
    assert result.success and result.result.tolist() == [16.0, 16.0, 16.0]
    assert "hello" in capsys.readouterr().out
    cap = ip.user_ns["cap"]
    assert [c.name for c in cap.calls] == ["f"] and cap.calls[0].jaxpr is not None
    assert jax.jit is ORIGINAL_JIT and type(ip.user_ns["f"]).__name__ == "PjitFunction"


def test_traceback_line_numbers_are_the_cells_own(ip):
    result = run(ip, "%%jaxpr -n failed\nx = 1\n\n1 / 0\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    tb = result.error_in_exec.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    assert tb.tb_lineno == 4  # the magic line still counts: line numbers match what the user sees
    assert ip.user_ns["failed"].error.type == "ZeroDivisionError"
    assert ip.user_ns["failed"].error.source.line == 4


def test_bad_options_give_usage_and_do_not_run_the_cell(ip, capsys):
    ip.user_ns["ran"] = False
    result = run(ip, "%%jaxpr --bogus\nran = True\n")
    assert not result.success and "unrecognized arguments: --bogus" in str(result.error_in_exec)
    assert ip.user_ns["ran"] is False
    assert jax.jit is ORIGINAL_JIT


def test_plain_cells_are_untouched(ip):
    assert ip.transform_cell("x = 1\n") == "x = 1\n"
    assert ip.transform_cell("%%jaxpr\nx = 1\n") == "# %%jaxpr\nx = 1\n"
    result = run(ip, "f(jnp.ones((3, 4)), jnp.ones(4)).shape")
    assert result.result == (3,)


def test_static_option_and_line_magic(ip, capsys):
    assert run(ip, "%%jaxpr --static\nf(jnp.ones((2, 4)), jnp.ones(4))\n").success
    ip.run_line_magic("jaxmagic", "")
    out = capsys.readouterr().out
    assert f"JAX {jax.__version__}" in out and "8 device(s)" in out and "%%jaxpr" in out


def test_unload_removes_every_hook(ip):
    shell = ip
    before = len(shell.events.callbacks["pre_run_cell"])
    shell.run_line_magic("unload_ext", "jaxmagic")
    assert len(shell.events.callbacks["pre_run_cell"]) == before - 1
    assert not any(
        getattr(t, "__self__", None).__class__.__name__ == "JaxMagics" for t in shell.input_transformers_cleanup
    )
    assert "jaxpr" not in shell.magics_manager.magics["cell"]
    shell.run_line_magic("load_ext", "jaxmagic")


def test_trace_magic_records_the_timeline_and_stores_the_capture(ip, capsys):
    cell = (
        "%%trace --name tcap --storm 3\n"
        "for n in (6, 7, 8, 9, 9):\n"
        "    out = f(jnp.ones((n, 4)), jnp.ones(4))\n"
        "print('done', out.shape)\n"
    )
    result = run(ip, cell)
    assert result.success
    assert "done (9,)" in capsys.readouterr().out
    cap = ip.user_ns["tcap"]
    assert [c.cache_hit for c in cap.calls] == [False, False, False, False, True]
    doc = jaxmagic_document(cap)
    assert [x["kind"] for x in doc["findings"] if x["kind"] == "recompile_storm"] == ["recompile_storm"]
    assert jax.jit is ORIGINAL_JIT and type(ip.user_ns["f"]).__name__ == "PjitFunction"
    assert not jax.config.jax_explain_cache_misses


def test_trace_magic_rejects_bad_options_without_running(ip):
    ip.user_ns["ran"] = False
    for line in ("%%trace --storm 0", "%%trace --storm many", "%%trace --values"):
        result = run(ip, f"{line}\nran = True\n")
        assert not result.success and ip.user_ns["ran"] is False, line


def test_trace_magic_static_view(ip, capsys):
    assert run(ip, "%%trace --static\nf(jnp.ones((2, 4)), jnp.ones(4))\n").success


def jaxmagic_document(cap):
    import jaxmagic

    return jaxmagic.document(cap, "timeline", storm=3)


def test_unreadable_options_and_bad_names_are_usage_errors_and_the_cell_does_not_run(ip, capsys):
    """An unbalanced quote, a `-n` that is no variable name, or one that would replace something of
    the user's: one usage line, the cell not run, no traceback from jaxmagic's hooks."""
    from IPython.core.error import UsageError

    ip.user_ns.update(ran=False, my_fn=lambda: 1)
    lines = [
        "%%jaxpr -n 'abc",
        "%%trace --storm '",
        "%%jaxpr -n class",
        "%%jaxpr -n 1abc",
        "%%jaxpr -n a.b",
        '%%jaxpr -n "a b"',
        "%%jaxpr -n ''",
        "%%trace -n jax",
        "%%jaxpr -n print",
        "%%sharding -n my_fn",
        "%%prng -n bound_here",
    ]
    for line in lines:
        result = run(ip, f"{line}\nran = True\nbound_here = 1\n")
        assert isinstance(result.error_in_exec, UsageError), (line, result.error_in_exec)
        assert ip.user_ns["ran"] is False, line
        streams = capsys.readouterr()
        assert "Traceback" not in streams.err + streams.out and "callback" not in streams.err, line
    assert ip.user_ns["jax"].__name__ == "jax" and callable(ip.user_ns["my_fn"])


def test_a_name_is_free_for_an_older_capture_and_with_force(ip):
    assert run(ip, "%%jaxpr -n again\nf(jnp.ones((2, 4)), jnp.ones(4))\n").success
    first = ip.user_ns["again"]
    assert run(ip, "%%jaxpr -n again\nf(jnp.ones((2, 4)), jnp.ones(4))\n").success  # the same cell, run again
    assert ip.user_ns["again"] is not first
    ip.user_ns["taken"] = 5
    assert run(ip, "%%jaxpr -n taken --force\nf(jnp.ones((2, 4)), jnp.ones(4))\n").success
    assert type(ip.user_ns["taken"]).__name__ == "Capture"


def test_settings_and_replacements_the_cell_makes_stay_after_it(ip):
    """What the cell itself changes is the user's: a flag turned on in the cell stays on (and its
    explanations show from then on), and the cell's own `jax.jit = …` outlives the cell, as plain."""
    import jax as jax_module

    originals = {name: getattr(jax_module, name) for name in ("jit", "grad")}
    normal = jax_module.random.normal
    try:
        assert run(ip, "%%trace\njax.config.update('jax_explain_cache_misses', True)\n").success
        assert jax_module.config.jax_explain_cache_misses is True
        assert run(ip, "%%trace\njax.config.update('jax_explain_cache_misses', False)\n").success
        assert jax_module.config.jax_explain_cache_misses is False  # and jaxmagic's own is not left on
        cells = {
            "jaxpr": "jax.jit = counting_jit",
            "grad_graph": "jax.grad = my_grad",
            "prng": "jax.random.normal = my_normal",
        }
        ip.user_ns.update(counting_jit=lambda f, **kw: f, my_grad=lambda f, **kw: f, my_normal=lambda *a, **kw: 0)
        for magic, line in cells.items():
            assert run(ip, f"%%{magic}\n{line}\n").success, magic
        assert jax_module.jit is ip.user_ns["counting_jit"] and jax_module.grad is ip.user_ns["my_grad"]
        assert jax_module.random.normal is ip.user_ns["my_normal"]
    finally:
        jax_module.config.update("jax_explain_cache_misses", False)
        for name, value in originals.items():
            setattr(jax_module, name, value)
        jax_module.random.normal = normal
    assert run(ip, "%%jaxpr\nf(jnp.ones((2, 4)), jnp.ones(4))\n").success  # JAX's own again, and still recorded


def test_a_name_the_cell_binds_to_print_is_the_builtin_after_the_cell(ip):
    import builtins

    assert run(ip, "%%jaxpr\np = print\nf(jnp.ones((2, 4)), jnp.ones(4))\n").success
    assert ip.user_ns["p"] is builtins.print
