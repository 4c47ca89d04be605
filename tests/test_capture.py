"""The capture session: which calls are recorded, how, and that everything is restored."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import jax
import jax.monitoring
import jax.numpy as jnp
import numpy as np
import pytest
from jax import jit

import jaxmagic
from jaxmagic.capture.jit import patch as jit_patch

ORIGINAL_JIT = jax.jit


@jax.jit
def earlier_cell(x):
    return x + 1


@partial(jax.jit, static_argnums=1, static_argnames="mode")
def with_statics(x, n, mode="sum"):
    return x * n if mode == "sum" else x - n


@partial(jax.jit, donate_argnums=0)
def donating(x):
    return x * 2


@jax.jit
def pytree_fn(params, batch):
    return params["w"] @ batch["x"] + params["b"]


def test_records_functions_bound_before_the_block():
    with jaxmagic.capture() as cap:
        earlier_cell(jnp.ones(3))
        earlier_cell(jnp.ones(3))
    assert [c.name for c in cap.calls] == ["earlier_cell", "earlier_cell"]
    assert cap.calls[1].cache_hit
    assert str(cap.calls[0].signature) == "f32[3]"
    assert cap.calls[0].jaxpr is not None
    assert cap.calls[0].source.line > 0 and cap.calls[0].source.code == "def earlier_cell(x):"
    assert cap.calls[0].call_site.file == __file__


def test_records_jax_jit_inside_the_block_and_from_jax_import_jit():
    with jaxmagic.capture() as cap:
        a = jax.jit(lambda x: x * 3)
        b = jit(lambda x: x - 3)
        a(1.0)
        b(2.0)
    assert [c.name for c in cap.calls] == [
        "test_records_jax_jit_inside_the_block_and_from_jax_import_jit.<locals>.<lambda>"
    ] * 2
    assert not cap.calls[0].cache_hit and not cap.calls[1].cache_hit
    assert cap.calls[0].signature.args[0].weak_type  # a Python scalar is weakly typed


def test_static_args_kwargs_donation_and_pytrees():
    with jaxmagic.capture() as cap:
        with_statics(jnp.ones(2), 3, mode="diff")
        donating(jnp.ones(4))
        pytree_fn({"w": jnp.ones((2, 3)), "b": jnp.zeros(2)}, batch={"x": jnp.ones(3)})
    statics, donated, tree = (c.signature for c in cap.calls)
    assert [(a.path, a.aval, a.static) for a in statics.args] == [
        ("x", "f32[2]", False),
        ("n", "3", True),
        ("mode", "'diff'", True),
    ]
    assert donated.args[0].donated
    assert [a.path for a in tree.args] == ["params['b']", "params['w']", "batch['x']"]
    assert all(c.jaxpr is not None for c in cap.calls)


def test_cache_hit_miss_and_phases_match_monitoring():
    f = None
    with jaxmagic.capture() as cap:
        f = jax.jit(lambda x: jnp.sin(x))
        f(jnp.ones(3))
        f(jnp.ones(3))
        f(jnp.ones(5))
    assert [c.cache_hit for c in cap.calls] == [False, True, False]
    miss = cap.calls[0]
    assert miss.durations["trace"] > 0 and miss.durations["compile"] > 0
    assert cap.calls[1].durations["compile"] == 0
    own = [e for e in cap.events if e.call_index == 0 and e.phase == "compile"]
    assert own and all(miss.start <= e.start and e.end <= miss.end + 1e-3 for e in own)
    assert [str(c.signature) for c in cap.calls] == ["f32[3]", "f32[3]", "f32[5]"]
    assert cap.calls[0].artifacts is cap.calls[1].artifacts  # one set of artefacts per signature
    assert "stablehlo" in cap.calls[0].lowered_text or "func.func" in cap.calls[0].lowered_text
    # A JAX that compiles a program again for `Lowered.compile()` gets no compiled text, and says so.
    assert cap.calls[0].compiled_text or any(
        n.startswith("compiled HLO and XLA's cost figures are left out") for n in cap.notes
    )


def test_calls_under_transformations_and_nested_calls_are_not_separate_calls():
    with jaxmagic.capture() as cap:
        outer = jax.jit(lambda x: earlier_cell(x) * 2)
        outer(jnp.ones(3))
        jax.grad(lambda x: earlier_cell(x).sum())(jnp.ones(3))
        jax.vmap(earlier_cell)(jnp.ones((2, 3)))
    assert [c.name for c in cap.calls] == [cap.calls[0].name]
    assert cap.calls[0].name.endswith("<lambda>")


def test_results_and_exceptions_are_the_plain_ones():
    with jaxmagic.capture():
        out = earlier_cell(np.arange(3.0))
    np.testing.assert_array_equal(out, earlier_cell(np.arange(3.0)))
    with pytest.raises(TypeError) as plain:
        earlier_cell("not an array")
    with pytest.raises(TypeError) as captured:
        with jaxmagic.capture() as cap:
            earlier_cell(jnp.ones(2))
            earlier_cell("not an array")
    assert str(captured.value) == str(plain.value)
    assert cap.error.type == "TypeError" and cap.error.source.file == __file__
    assert cap.calls[-1].error.startswith("TypeError") and cap.calls[0].error is None
    shown = [entry for entry in captured.traceback if not entry.ishidden(captured)]
    package = Path(jaxmagic.__file__).resolve().parent  # the package, wherever the clone lives and whatever its name
    assert not any(Path(str(entry.path)).resolve().is_relative_to(package) for entry in shown), shown


def test_everything_is_restored_even_on_keyboard_interrupt():
    namespace = {"jit": ORIGINAL_JIT, "f": earlier_cell}
    jitted_type = type(earlier_cell)
    own_call, own_flags = jitted_type.__dict__["__call__"], jitted_type.__flags__
    duration_listeners = len(_listeners("_event_duration_secs_listeners"))
    with pytest.raises(KeyboardInterrupt):
        with jaxmagic.capture(namespace):
            assert jitted_type.__dict__["__call__"] is not own_call  # every jitted call comes to the capture
            assert namespace["f"] is earlier_cell and jax.jit is ORIGINAL_JIT  # and no object is replaced
            namespace["g"] = jax.jit(lambda x: x)
            raise KeyboardInterrupt
    assert jax.jit is ORIGINAL_JIT and namespace["jit"] is ORIGINAL_JIT
    assert namespace["f"] is earlier_cell and type(namespace["g"]) is jitted_type
    assert jitted_type.__dict__["__call__"] is own_call and jitted_type.__flags__ == own_flags
    assert jit_patch._recorder is None
    assert len(_listeners("_event_duration_secs_listeners")) == duration_listeners


def _listeners(name):
    from jax._src import monitoring

    return list(getattr(monitoring, name, []))


def test_wrapper_left_in_a_container_passes_through_outside_a_capture():
    keep = []
    with jaxmagic.capture():
        keep.append(jax.jit(lambda x: x + 10))
    assert float(keep[0](1.0)) == 11.0
    assert keep[0].lower(1.0).as_text()  # attributes still reach the jitted function

    class Model:
        with jaxmagic.capture({}):
            method = jax.jit(lambda self, x: x * 2, static_argnums=0)

    assert float(Model().method(2.0)) == 4.0  # binds `self` like the plain jitted function


def test_capture_holds_no_device_buffers():
    import gc
    import weakref

    with jaxmagic.capture() as cap:
        big = jnp.ones((256, 256))
        earlier_cell(big)
    ref = weakref.ref(big)
    del big
    gc.collect()
    assert ref() is None
    assert cap.calls[0].signature.args[0].aval == "f32[256,256]"


def test_nested_captures_record_into_the_inner_one_and_restore():
    with jaxmagic.capture() as outer:
        earlier_cell(jnp.ones(1))
        with jaxmagic.capture() as inner:
            earlier_cell(jnp.ones(2))
        earlier_cell(jnp.ones(3))
    assert [str(c.signature) for c in outer.calls] == ["f32[1]", "f32[3]"]
    assert [str(c.signature) for c in inner.calls] == ["f32[2]"]
    assert jax.jit is ORIGINAL_JIT


def test_where_text_names_cell_lines_by_line_and_files_by_name():
    """Notes and findings point at code as a reader sees it (the widgets' rule: widgets/ui/source-text.js)."""
    from jaxmagic.capture.source import where_text

    assert where_text("/tmp/ipykernel_4242/526010223.py", 5) == "line 5"  # no IPython here: number unknown
    assert (
        where_text("/tmp/ipykernel_4242/526010223.py", 5, {"/tmp/ipykernel_4242/526010223.py": 7}) == "cell [7], line 5"
    )
    assert where_text("<ipython-input-3-abc>", 2) == "cell [3], line 2"  # IPython 7 names files by the count
    assert where_text("/site-packages/flax/linen/stochastic.py", 105) == "stochastic.py:105"
    assert where_text("/home/me/ipykernel_tools.py", 1) == "ipykernel_tools.py:1"
    assert where_text(None, 4) == "line 4"


@pytest.mark.parametrize(
    "options", [{}, {"values": True, "vmap": True}, {"grads": True}, {"shardings": True}, {"keys": True}]
)
def test_calls_under_disable_jit_run_the_python_once_and_are_said_not_recorded(options):
    """Under `jax.disable_jit()` a jitted function's call runs its Python eagerly: no program exists,
    and asking JAX for one would run the user's Python (its side effects) again."""

    def run(effects: list) -> list:
        @jax.jit
        def step(x):
            effects.append(float(x.sum()) if not isinstance(x, jax.core.Tracer) else "traced")
            return x * 2

        with jax.disable_jit():
            outs = [step(jnp.ones(3)), step(jnp.ones(3))]
        outs.append(step(jnp.ones(3)))
        return [np.asarray(o).tolist() for o in outs]

    plain_effects: list = []
    plain = run(plain_effects)
    captured_effects: list = []
    with jaxmagic.capture({}, **options) as cap:
        captured = run(captured_effects)
    assert captured == plain
    assert captured_effects == plain_effects == [3.0, 3.0, "traced"]
    assert len(cap.calls) == 1 and not cap.calls[0].cache_hit
    assert any("2 jitted calls ran under jax.disable_jit()" in note for note in cap.notes), cap.notes


# -- output of other threads while the user's Python is traced again ------------------------------


def test_a_retrace_silences_its_own_thread_only():
    """What the retracing thread prints is dropped; a thread printing meanwhile (JAX's host
    callbacks run on their own threads) reaches the stream; both streams are set back."""
    import contextlib
    import io
    import sys
    import threading

    from jaxmagic.capture.silence import this_thread_silenced

    out, err = io.StringIO(), io.StringIO()
    printed = threading.Event()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with this_thread_silenced():
            print("traced again")
            print("traced again", file=sys.stderr)

            def other() -> None:
                print("from a callback thread")
                print("its warning", file=sys.stderr, flush=True)
                printed.set()

            threading.Thread(target=other).start()
            assert printed.wait(10)
            assert sys.stdout.encoding == out.encoding  # everything else is the stream's own
        assert sys.stdout is out and sys.stderr is err
    assert out.getvalue() == "from a callback thread\n" and err.getvalue() == "its warning\n"


def test_partitioned_debug_prints_all_reach_the_cell_under_a_vmap_capture():
    """JAX's partitioned `debug_print` under `jit(vmap(vmap(f)))` on two devices prints 12 lines from
    its callback threads while `--vmap` traces the program again: every line reaches the cell
    (with `redirect_stdout` around that trace, 1 to 5 of the 12 were lost in most runs)."""
    import contextlib
    import inspect
    import io

    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    if "partitioned" not in inspect.signature(jax.debug.print).parameters:
        pytest.skip(f"jax.debug.print has no partitioned= on JAX {jax.__version__}")

    @jax.vmap
    @jax.vmap
    def show(x):
        jax.debug.print("hello: {}", x, partitioned=True)

    mesh = Mesh(np.array(jax.devices()[:2]).reshape(1, 1, 2), ("x", "y", "z"))
    arr = jax.device_put(np.arange(24).reshape(2, 3, 4), NamedSharding(mesh, PartitionSpec("x", "y", "z")))
    expected = {f"hello: [{i} {i + 1}]" for i in range(0, 24, 2)}
    for _ in range(6):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), jaxmagic.capture({}, vmap=True):
            jax.jit(show)(arr)  # a new function each time: each call is traced again
            jax.effects_barrier()
        assert sorted(out.getvalue().splitlines()) == sorted(expected)


def test_two_threads_silenced_at_once_leave_the_streams_as_they_were():
    """Two threads retracing at once, ending in either order: each one's prints are dropped while
    it is inside, the other's reach the stream after it left, and the streams are the user's at the end."""
    import contextlib
    import io
    import sys
    import threading

    from jaxmagic.capture.silence import this_thread_silenced

    out = io.StringIO()
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with this_thread_silenced():
            print("dropped: the other thread is retracing")
            inside.set()
            assert leave.wait(10)
        print("the other thread, after its retrace")

    with contextlib.redirect_stdout(out):
        with this_thread_silenced():
            worker = threading.Thread(target=other)
            worker.start()
            assert inside.wait(10)
            print("dropped: this thread is retracing")
        print("this thread, after its retrace")  # the other is still inside
        leave.set()
        worker.join(10)
        assert sys.stdout is out
    assert out.getvalue() == "this thread, after its retrace\nthe other thread, after its retrace\n"
