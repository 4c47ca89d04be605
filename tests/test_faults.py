"""Our failure is never the user's: a failure injected into each stage of a magic cell (starting
to record, recording a call, finishing, building the document, drawing the widget) leaves the
cell's output, result and exception exactly as without the magic, undoes every patch, and shows
what could be built, or a short box with the message to report. Nothing of ours appears in the
user's traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import jax
import pytest

import jaxmagic
from jaxmagic.capture import session
from jaxmagic.capture.grads import patch as grad_patch
from jaxmagic.capture.jit import call_signatures
from jaxmagic.capture.jit import patch as jit_patch
from jaxmagic.capture.jit import recorder as jit_recorder
from jaxmagic.capture.keys import patch as key_patch

ORIGINAL_JIT, ORIGINAL_GRAD, ORIGINAL_NORMAL = jax.jit, jax.grad, jax.random.normal
CELL = (
    "%%jaxpr --name fcap\n"
    "import jax, jax.numpy as jnp\n"
    "print('ran')\n"
    "g = jax.jit(lambda x: jnp.sin(x) * 2)\n"
    "float(g(jnp.ones(3)).sum())\n"
)
EXPECTED = float(jax.numpy.sum(jax.numpy.sin(jax.numpy.ones(3)) * 2))


class Injected(RuntimeError):
    pass


def _boom(*args, **kwargs):
    raise Injected("injected failure <b>x</b>")


@pytest.fixture
def shown(monkeypatch):
    """Everything displayed (widgets and boxes), in order."""
    import IPython.display

    out: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: out.extend(objs))
    return out


def _assert_clean() -> None:
    assert jax.jit is ORIGINAL_JIT and jax.grad is ORIGINAL_GRAD and jax.random.normal is ORIGINAL_NORMAL
    assert jit_patch._recorder is None and grad_patch._recorder is None and key_patch._recorder is None


def _run(shell, cell=CELL):
    return shell.run_cell(cell, store_history=True)


def _box(shown) -> str:
    boxes = [o for o in shown if isinstance(o, dict) and "text/plain" in o]
    assert len(boxes) == 1, shown
    assert "<b>x</b>" not in boxes[0]["text/html"]  # escaped
    return boxes[0]["text/plain"]


STAGES = [  # (what is broken, where, what the box says; None: the view is drawn with a note)
    ("routing jitted calls", (jit_patch, "route_jitted_calls"), "start recording"),
    ("listening to jax.monitoring", (session.monitoring, "listen"), "start recording"),
    ("the random stand-ins", (key_patch, "patch_random"), "start recording"),
    ("stopping", (session.CaptureSession, "stop"), "finish recording"),
    ("every document builder", (None, "graph"), "build the view"),
    ("the widget", (None, "widget"), "build the view"),
]


@pytest.mark.parametrize("stage,where,says", STAGES, ids=[s[0] for s in STAGES])
def test_a_failure_in_a_stage_is_a_box_and_the_cell_is_untouched(
    magic_shell, capsys, monkeypatch, shown, stage, where, says
):
    owner, name = where
    if owner is None and name == "graph":
        from jaxmagic import model

        monkeypatch.setitem(model.DOCUMENT_BUILDERS, "graph", _boom)
    elif owner is None:
        from jaxmagic.views import widget

        monkeypatch.setattr(widget.JaxmagicWidget, "__init__", _boom)
    else:
        monkeypatch.setattr(owner, name, _boom)
    result = _run(magic_shell, CELL.replace("%%jaxpr", "%%prng") if name == "patch_random" else CELL)
    assert result.success and result.result == EXPECTED
    captured = capsys.readouterr()
    assert captured.out.startswith("ran") and captured.err == ""
    text = _box(shown)
    assert says in text and "Injected: injected failure" in text and "open an issue" in text
    monkeypatch.undo()
    _assert_clean()


def test_failures_inside_recording_are_notes_and_the_view_is_drawn(magic_shell, monkeypatch, shown):
    monkeypatch.setattr(call_signatures, "signature_of", _boom)  # every call's signature
    monkeypatch.setattr(jit_recorder.JitRecorder, "materialize_calls", _boom)  # finishing the calls
    result = _run(magic_shell)
    assert result.success and result.result == EXPECTED
    [widget] = shown
    assert type(widget).__name__.endswith("Widget")
    notes = " ".join(magic_shell.user_ns["fcap"].notes)
    assert "could not record call" in notes and "could not record the calls" in notes
    monkeypatch.undo()
    _assert_clean()


def test_a_part_that_cannot_be_drawn_costs_that_part(magic_shell, monkeypatch, shown):
    from jaxmagic.model import graph

    real = graph.function_graph
    monkeypatch.setattr(
        graph,
        "function_graph",
        lambda fid, name, *a, **k: _boom() if name.endswith("bad") else real(fid, name, *a, **k),
    )
    cell = (
        "%%jaxpr --name pcap\nimport jax, jax.numpy as jnp\n"
        "def bad(x):\n    return x + 1\n"
        "jax.jit(bad)(1.0)\njax.jit(jnp.cos)(1.0)\n"
    )
    assert _run(magic_shell, cell).success
    doc = jaxmagic.document(magic_shell.user_ns["pcap"], "graph")
    assert [f["name"] for f in doc["functions"]] == ["cos"]
    assert any("could not draw bad" in n and "open an issue" in n for n in doc["notes"])


def test_the_users_exception_survives_our_failure(magic_shell, monkeypatch, shown):
    monkeypatch.setattr(session.CaptureSession, "stop", _boom)
    result = _run(magic_shell, "%%trace\nx = 1\n1 / 0\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "finish recording" in _box(shown)
    monkeypatch.undo()
    _assert_clean()


def test_nothing_of_ours_in_the_users_traceback(magic_shell, shown):
    cell = (
        "%%prng\nimport jax, jax.numpy as jnp\n"
        "k = jax.random.key(0)\n"
        "h = jax.jit(lambda a, b: a @ b)\n"
        "h(jax.random.normal(k, (2, 3)), jnp.ones((4, 5)))\n"
    )
    result = _run(magic_shell, cell)
    error = result.error_in_exec
    assert isinstance(error, TypeError)
    text = "".join(magic_shell.InteractiveTB.structured_traceback(type(error), error, error.__traceback__))
    assert "dot_general" in text
    package = Path(jaxmagic.__file__).resolve().parent
    # the clone's and the environment's own folders may be called `jaxmagic` (a plain `git clone`):
    # they are taken out before looking for our name
    for folder in sorted({str(package.parent), sys.prefix, os.path.realpath(sys.prefix)}, key=len, reverse=True):
        text = text.replace(folder, "")
    assert "jaxmagic" not in text, text
    _assert_clean()


def test_without_jax_load_ext_says_so_and_registers_nothing(tmp_path):
    import subprocess
    import sys

    script = (
        "import sys\nsys.modules['jax'] = None  # import jax raises ImportError\n"
        "import jaxmagic\n"
        "class Shell:\n    def register_magics(self, m):\n        raise AssertionError('registered')\n"
        "jaxmagic.load_ipython_extension(Shell())\n"
        "print(jaxmagic.Capture.__name__, jaxmagic.to_html.__name__)\n"
        "try:\n    jaxmagic.capture()\nexcept ImportError as exc:\n    print('capture:', exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "jaxmagic needs JAX" in run.stderr and "pip install jax" in run.stderr
    assert "Traceback" not in run.stderr
    out = run.stdout.splitlines()
    assert out[0] == "Capture to_html" and out[1].startswith("capture: jaxmagic needs JAX")


def test_too_old_jax_is_named(monkeypatch):
    monkeypatch.setattr(jax, "__version__", "0.4.20")
    problem = jaxmagic.jax_problem()
    assert "0.4.38 or newer" in problem and "0.4.20" in problem
    monkeypatch.setattr(jax, "__version__", "0.10.2.dev20261121")
    assert jaxmagic.jax_problem() is None


@pytest.mark.parametrize("magic", ["jaxpr", "trace", "grad_graph", "sharding", "prng"])
def test_bad_input_gets_a_clear_message_and_the_cell_does_not_run(magic_shell, magic, shown):
    magic_shell.user_ns["ran"] = False
    result = _run(magic_shell, f"%%{magic} --bogus\nran = True\n")
    assert "unrecognized arguments: --bogus" in str(result.error_in_exec) and magic_shell.user_ns["ran"] is False
    result = _run(magic_shell, f"%%{magic}\n%%trace\nran = True\n")
    assert f"%%{magic} and %%trace cannot be combined" in str(result.error_in_exec)
    assert magic_shell.user_ns["ran"] is False and not shown
    _assert_clean()


@pytest.mark.parametrize(
    "magic,says",
    [
        ("jaxpr", "nothing was recorded"),
        ("trace", "0 calls"),
        ("grad_graph", "nothing was differentiated"),
        ("sharding", ("0 jitted functions", "no arrays and no jitted calls")),
        ("prng", "no PRNG keys"),
    ],
)
def test_a_cell_without_jax_gets_a_friendly_view(magic_shell, magic, says, shown):
    # (%%sharding also lists the arrays earlier cells of this shared shell left bound)
    assert _run(magic_shell, f"%%{magic}\nz = 2 + 2\n").success
    [widget] = shown
    says = (says,) if isinstance(says, str) else says
    assert any(s in widget.document["title"] for s in says)
    plain = widget._repr_mimebundle_()[0]["text/plain"]  # what a front end without widgets shows
    assert any(s in plain for s in says)


def test_a_capture_nested_in_a_magic_cell_records_and_restores(magic_shell, shown):
    cell = "%%jaxpr\nimport jaxmagic, jax\nwith jaxmagic.capture() as inner:\n    jax.jit(lambda x: x * 3)(2.0)\n"
    assert _run(magic_shell, cell).success
    assert len(magic_shell.user_ns["inner"].calls) == 1  # the innermost capture records the call
    _assert_clean()


def test_calls_from_other_threads_pass_through_and_the_capture_stays_whole(magic_shell, shown):
    import threading

    import jax.numpy as jnp

    worker = jax.jit(lambda x: jnp.tanh(x) * 2)
    magic_shell.user_ns["worker"] = worker  # a namespace name: its calls would be recorded from the cell
    stop, results, errors = threading.Event(), [], []

    def background() -> None:
        key, square = jax.random.key(1), jax.grad(lambda x: (x**2).sum())
        try:
            while not stop.is_set():
                call = magic_shell.user_ns["worker"]  # the recorded stand-in while a cell runs
                results.append(float(call(jnp.ones(4)).sum()))
                if len(results) % 10 == 0:
                    key, sub = jax.random.split(key)
                    square(jax.random.normal(sub, (2,)))
        except Exception as exc:
            errors.append(exc)

    thread = threading.Thread(target=background, daemon=True)
    thread.start()
    try:
        cell = (
            "%%trace --name tcap\nimport time, jax.numpy as jnp\n"
            "for n in range(20):\n    worker(jnp.arange(4.0) + n)\n    time.sleep(0.005)  # the worker runs meanwhile\n"
        )
        assert _run(magic_shell, cell).success
        cell = "%%prng --name kcap\nimport jax, time\njax.random.normal(jax.random.key(7))\ntime.sleep(0.1)\n"
        assert _run(magic_shell, cell).success
    finally:
        stop.set()
        thread.join(30)
    assert not errors and len(results) > 0, errors
    tcap, kcap = magic_shell.user_ns["tcap"], magic_shell.user_ns["kcap"]
    assert any("other threads" in n for n in tcap.notes)  # the worker did run while the cell ran
    assert [c.index for c in tcap.calls] == list(range(20))  # the cell's 20 calls, in order, and no others
    assert len(kcap.keys) == 1 and [u.name for u in kcap.keys[0].uses] == ["normal"]
    _assert_clean()


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize("where", ["stopping", "building the view"])
def test_ctrl_c_after_the_cell_finished_is_one_line_and_the_cell_stays_finished(
    magic_shell, capsys, monkeypatch, shown, where
):
    """Ctrl-C while the view is built (the cell's code has finished): the cell's result stands, no
    traceback, one line where the view would be, every hook undone."""
    if where == "stopping":
        original_stop = session.CaptureSession.stop

        def stop_then_interrupt(self, *args, **kwargs):
            original_stop(self, *args, **kwargs)  # the hooks are undone, then the interrupt lands
            raise KeyboardInterrupt

        monkeypatch.setattr(session.CaptureSession, "stop", stop_then_interrupt)
    else:
        from jaxmagic import model

        monkeypatch.setitem(model.DOCUMENT_BUILDERS, "graph", _interrupt)
    result = _run(magic_shell)
    assert result.success and result.result == EXPECTED and result.error_in_exec is None
    captured = capsys.readouterr()
    assert captured.out.startswith("ran") and "Traceback" not in captured.err + captured.out
    lines = [o for o in shown if isinstance(o, dict) and "text/plain" in o]
    assert [o["text/plain"] for o in lines] == [
        "%%jaxpr: view interrupted (Ctrl-C while it was being built); the cell itself finished."
    ]
    monkeypatch.undo()
    _assert_clean()


def test_a_printed_traceback_shows_at_most_one_frame_of_jaxmagic():
    """`traceback.print_exc()` does not honour `__tracebackhide__`: the stand-ins re-raise past their
    own frames, so one frame of jaxmagic's is left (Python adds one for every function left)."""
    import traceback

    import jax.numpy as jnp

    import jaxmagic

    @jax.jit
    def square(x):
        return x @ x

    def own_frames(run) -> list[str]:
        try:
            run()
        except Exception:
            text = traceback.format_exc()
        else:
            raise AssertionError("the program was meant to raise")
        package = os.path.dirname(jaxmagic.__file__) + os.sep
        return [line for line in text.splitlines() if line.strip().startswith(f'File "{package}')]

    for attempt in range(2):  # JAX's own jitted ops (jnp.matmul) are routed too, traced or cached
        with jaxmagic.capture({}, grads=True, keys=True):
            jitted = own_frames(lambda: square(jnp.ones((3, 1))))
            sampled = own_frames(lambda: jax.random.normal(jax.random.key(0), (2,), dtype="int32"))
            graded = own_frames(lambda: jax.grad(lambda x: x @ x)(jnp.ones((3, 1))))
            matmul = own_frames(lambda: jnp.matmul(jnp.ones((3, 1)), jnp.ones((3, 1))))
        assert [len(jitted), len(sampled), len(graded), len(matmul)] == [1, 1, 1, 1], (attempt, jitted, graded, matmul)
