"""Every way IPython runs a cell gets its view or one line saying why not (a real IPython shell).

Nested `get_ipython().run_cell` inside a magic cell, `%%time` / `%%timeit` / `%%capture` /
`%%prun` above a magic, `%run` of an `.ipy` script and of a notebook (IPython runs their cells
silently: no `pre_run_cell` / `post_run_cell`), and the extension loaded twice. What is checked
is what the shell displays (IPython's own `capture_output`, as `%%capture` uses) and that the
cell's result, output and exception are those of the same cell without the magic.
"""

from __future__ import annotations

import jax
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

import jaxmagic

ORIGINAL_JIT = jax.jit
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()  # the test shell is a process-wide singleton
    shell.run_line_magic("load_ext", "jaxmagic")
    shell.run_cell("import jax, jax.numpy as jnp\n@jax.jit\ndef f(x):\n    return x * 2 + 1\nx = jnp.ones(3)\n")
    yield shell
    shell.run_line_magic("unload_ext", "jaxmagic")


def run(ip, cell):
    """Run `cell`; its result, and the views (widget titles) and notes it displayed, in order."""
    with capture_output() as io:
        result = ip.run_cell(cell, store_history=True)
    shown = []
    for out in io.outputs:
        if WIDGET in out.data:
            shown.append("widget")
        elif "not recorded" in out.data.get("text/plain", "") or "no view" in out.data.get("text/plain", ""):
            shown.append("note: " + out.data["text/plain"])
    return result, shown, io.stdout


def _magics(ip):
    return ip.magics_manager.registry["JaxMagics"]


def _left_clean(ip):
    assert jax.jit is ORIGINAL_JIT and type(ip.user_ns["f"]).__name__ == "PjitFunction"
    assert _magics(ip)._running == []


def test_a_plain_cell_run_inside_a_magic_cell_keeps_the_outer_view(ip):
    body = "f(x)\nget_ipython().run_cell('y = f(x + 1)')\nint(y.sum())\n"
    plain, _, _ = run(ip, body)
    result, shown, _ = run(ip, "%%jaxpr -n outer\n" + body)
    assert result.success and ip.user_ns["y"].tolist() == [5.0] * 3
    assert result.result is plain.result is None  # IPython's own: a nested run_cell ends the Out of its cell
    assert shown == ["widget"]
    assert [c.name for c in ip.user_ns["outer"].calls] == ["f", "f"]  # the nested cell's call is the cell's
    _left_clean(ip)


def test_a_magic_cell_run_inside_a_magic_cell_gets_its_own_view_and_the_outer_keeps_its(ip):
    cell = (
        "%%jaxpr -n outer2\nf(x)\n"
        "get_ipython().run_cell('%%trace -n inner2\\nf(jnp.ones(4))\\nf(jnp.ones(5))')\n"
        "print(f(x).shape)\n"
    )
    result, shown, out = run(ip, cell)
    assert result.success and "(3,)" in out
    assert shown == ["widget", "widget"]  # the inner view first (its cell ended first), then the outer's
    outer, inner = ip.user_ns["outer2"], ip.user_ns["inner2"]
    assert len(inner.calls) == 2 and len(outer.calls) == 2
    assert any("recorded their own calls" in note for note in outer.notes)
    _left_clean(ip)


def test_a_direct_run_cell_magic_inside_a_magic_cell_gets_its_own_view(ip):
    cell = "%%jaxpr -n outer4\nf(x)\nget_ipython().run_cell_magic('trace', '-n inner4', 'f(jnp.ones(6))')\n"
    result, shown, _ = run(ip, cell)
    assert result.success and shown == ["widget", "widget"]
    assert len(ip.user_ns["inner4"].calls) == 1 and len(ip.user_ns["outer4"].calls) == 1
    assert any("recorded their own calls" in note for note in ip.user_ns["outer4"].notes)
    _left_clean(ip)


def test_an_error_in_a_nested_cell_is_its_own_and_the_outer_view_stays(ip):
    cell = "%%jaxpr -n outer3\nr = get_ipython().run_cell('%%trace\\n1/0')\nf(x)\n"
    result, shown, _ = run(ip, cell)
    assert result.success and isinstance(ip.user_ns["r"].error_in_exec, ZeroDivisionError)
    assert shown == ["widget", "widget"]
    assert len(ip.user_ns["outer3"].calls) == 1 and ip.user_ns["outer3"].error is None
    _left_clean(ip)


def test_time_above_a_magic_records_the_body_as_the_plain_cell_runs(ip):
    plain, plain_shown, plain_out = run(ip, "%%time\nf(x).tolist()\n")
    result, shown, out = run(ip, "%%time\n%%jaxpr -n timed\nf(x).tolist()\n")
    assert result.success and result.result == plain.result == [3.0, 3.0, 3.0]
    assert "Wall time" in out and "Wall time" in plain_out
    assert plain_shown == [] and shown == ["widget"]
    assert [c.name for c in ip.user_ns["timed"].calls] == ["f"]
    plain, _, _ = run(ip, "%%time\n1/0\n")
    result, shown, _ = run(ip, "%%time\n%%trace -n timed_error\n1/0\n")
    assert type(result.error_in_exec) is type(plain.error_in_exec)  # ZeroDivisionError (IPython 7's %%time prints it)
    error = ip.user_ns["timed_error"].error
    assert shown == ["widget"] and (error.type == "ZeroDivisionError" if plain.error_in_exec else error is None)
    _left_clean(ip)


def test_timeit_above_a_magic_runs_unrecorded_with_one_note(ip):
    ip.user_ns["runs"] = []
    result, shown, out = run(ip, "%%timeit -n 3 -r 2\n%%jaxpr\nruns.append(1)\nf(x)\n")
    assert result.success and len(ip.user_ns["runs"]) == 6 and "per loop" in out
    assert len(shown) == 1 and shown[0].startswith("note: %%jaxpr under %%timeit: not recorded")
    _left_clean(ip)


def test_capture_above_a_magic_keeps_the_view_in_the_captured_outputs(ip):
    result, shown, _ = run(ip, "%%capture kept\n%%jaxpr -n captured\nf(x)\n")
    assert result.success and shown == []  # %%capture took it, as it takes any output
    assert sum(WIDGET in out.data for out in ip.user_ns["kept"].outputs) == 1
    assert len(ip.user_ns["captured"].calls) == 1
    _left_clean(ip)
    ip.run_cell("del kept, captured")  # the shell is shared: later tests bind these names with -n


def test_a_magic_that_runs_the_body_its_own_way_gets_a_note(ip):
    result, shown, _ = run(ip, "%%prun -q\n%%jaxpr\nf(x)\n")
    assert result.success
    assert len(shown) == 1 and shown[0].startswith("note: %%jaxpr under %%prun: no view")
    _left_clean(ip)


def test_run_of_a_script_and_of_a_notebook_shows_their_views(ip, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    script = tmp_path / "script.ipy"
    script.write_text("%%jaxpr -n from_script\nscript_out = f(x)\nprint('script ran')\n")
    result, shown, out = run(ip, f"%run -i {script}\n")
    assert result.success and "script ran" in out and shown == ["widget"]
    assert len(ip.user_ns["from_script"].calls) == 1 and float(ip.user_ns["script_out"][0]) == 3.0
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import jax, jax.numpy as jnp\ng = jax.jit(lambda v: v - 1)"),
            nbformat.v4.new_code_cell("%%jaxpr -n from_nb\nnb_out = g(jnp.ones(2))"),
            nbformat.v4.new_code_cell("plain = g(jnp.ones(2))"),
            nbformat.v4.new_code_cell("%%trace -n from_nb_trace\ng(jnp.ones(7))"),
        ]
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    result, shown, _ = run(ip, f"%run -i {path}\n")
    assert result.success and shown == ["widget", "widget"]
    assert len(ip.user_ns["from_nb"].calls) == 1 and len(ip.user_ns["from_nb_trace"].calls) == 1
    _left_clean(ip)


def test_a_failing_script_cell_keeps_its_error_and_its_view(ip, tmp_path):
    script = tmp_path / "bad.ipy"
    script.write_text("%%jaxpr -n from_bad\nf(x)\n1/0\n")
    result, shown, _ = run(ip, f"%run -i {script}\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError)  # .ipy errors are raised by %run
    assert shown == ["widget"] and ip.user_ns["from_bad"].error.type == "ZeroDivisionError"
    _left_clean(ip)


def _hooks(ip):
    counts = {
        event: sum(getattr(cb, "__self__", None).__class__.__name__ == "JaxMagics" for cb in ip.events.callbacks[event])
        for event in ("pre_execute", "pre_run_cell", "post_execute", "post_run_cell")
    }
    counts["transform"] = sum(
        getattr(t, "__self__", None).__class__.__name__ == "JaxMagics" for t in ip.input_transformers_cleanup
    )
    return counts


def test_loading_again_changes_nothing_and_unload_removes_every_hook(ip):
    once = {"pre_execute": 1, "pre_run_cell": 1, "post_execute": 1, "post_run_cell": 1, "transform": 1}
    assert _hooks(ip) == once
    jaxmagic.load_ipython_extension(ip)
    ip.run_line_magic("load_ext", "jaxmagic")
    jaxmagic.load_ipython_extension(ip)
    assert _hooks(ip) == once
    result, shown, _ = run(ip, "%%jaxpr\nf(x)\n")
    assert result.success and shown == ["widget"]
    ip.run_line_magic("unload_ext", "jaxmagic")
    assert set(_hooks(ip).values()) == {0} and "jaxpr" not in ip.magics_manager.magics["cell"]
    jaxmagic.load_ipython_extension(ip)  # loaded directly only: %unload_ext still removes it all
    assert _hooks(ip) == once
    ip.run_line_magic("unload_ext", "jaxmagic")
    assert set(_hooks(ip).values()) == {0}
    ip.run_line_magic("load_ext", "jaxmagic")
    assert _hooks(ip) == once
    result, shown, _ = run(ip, "%%jaxpr\nf(x)\n")
    assert shown == ["widget"]
