"""A capture holds no device buffer: arrays a program closed over, and eager samples, are freed
when the user drops them, with the capture still kept (issue 22, item 3).

Real JAX, real arrays; the measure is JAX's own `jax.live_arrays()` and a weak reference to
the closed-over array. Arrays are 4 MiB: big enough to tell apart from anything else alive.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import io
import sys
import types
import weakref

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.capture.buffers import drop_device_buffers
from jaxmagic.capture.record import ConstantStub

session_module = importlib.import_module("jaxmagic.capture.session")
jit_recorder_module = importlib.import_module("jaxmagic.capture.jit.recorder")
grad_recorder_module = importlib.import_module("jaxmagic.capture.grads.recorder")
N = 1024 * 1024  # f32 elements: 4 MiB


def _live_bytes() -> int:
    gc.collect()
    return sum(a.nbytes for a in jax.live_arrays())


def _reachable_arrays(root: object) -> list:
    """Every jax.Array reachable from `root` through Python references, modules' globals (JAX's
    own caches, which hold what JAX holds without a capture) left out."""
    modules = {id(vars(m)) for m in list(sys.modules.values()) if m is not None and hasattr(m, "__dict__")}
    seen, todo, found = {id(root)}, [root], []
    while todo:
        for ref in gc.get_referents(todo.pop()):
            if id(ref) in seen or isinstance(ref, (type, types.ModuleType)) or id(ref) in modules:
                continue
            seen.add(id(ref))
            if isinstance(ref, jax.Array):
                found.append(ref)
            else:
                todo.append(ref)
    return found


@pytest.mark.parametrize(
    "magic, body",
    [
        ("jaxpr", "y = f(jnp.ones(3))"),
        ("trace", "y = f(jnp.ones(3))\ny = f(jnp.ones(4))"),
        ("grad_graph", "y = jax.grad(lambda x: (x * big[:3]).sum() + f(x).sum())(jnp.ones(3))"),
    ],
)
def test_a_kept_capture_does_not_keep_the_closed_over_array(magic_shell, magic, body):
    ip = magic_shell
    baseline = _live_bytes()
    ip.run_cell(
        "import jax, jax.numpy as jnp, weakref\n"
        f"big = jnp.ones(({N},), jnp.float32)\nbig_ref = weakref.ref(big)\n"
        "@jax.jit\ndef f(x):\n    return x + big.sum()\n"
    )
    with contextlib.redirect_stdout(io.StringIO()):
        result = ip.run_cell(f"%%{magic} -n kept\n{body}\n")
    assert result.success, result.error_in_exec
    cap = ip.user_ns["kept"]
    assert isinstance(cap, jaxmagic.Capture) and (cap.calls or cap.grads)
    ip.run_cell("del big, f, y")
    assert ip.user_ns["big_ref"]() is None, "the capture keeps the array the jitted function closed over"
    assert _live_bytes() - baseline < N, "device memory the user freed is still held"
    assert _reachable_arrays(cap) == []
    # the capture still gives its documents, with the constant's type and size
    view = {"jaxpr": "graph", "trace": "timeline", "grad_graph": "grad"}[magic]
    assert jaxmagic.document(cap, view)["kind"] in ("graph", "timeline", "grad")
    stubs = [c for call in cap.calls if call.jaxpr is not None for c in call.jaxpr.consts]
    if magic != "grad_graph":
        assert {(s.shape, str(s.dtype), s.nbytes) for s in stubs} == {((N,), "float32", 4 * N)}
        assert all(isinstance(s, ConstantStub) for s in stubs)
    ip.run_cell("del kept, big_ref")


def _program(big: jax.Array, small: jax.Array):
    """A jitted step closing over a big array, calling a jitted helper that closes over another."""

    @jax.jit
    def helper(x):
        return jnp.tanh(x) * small.sum()

    @jax.jit
    def step(x):
        return (helper(x) + big[:3]).sum()

    return step


def _documents(cap: jaxmagic.Capture) -> dict:
    return {view: jaxmagic.document(cap, view) for view in ("graph", "timeline", "grad")}


def test_documents_are_the_same_before_and_after_the_buffers_are_dropped(monkeypatch):
    big, small = jnp.arange(N, dtype=jnp.float32), jnp.ones((N // 4,), jnp.float32)
    step = _program(big, small)
    monkeypatch.setattr(session_module, "drop_device_buffers", lambda cap: None)
    for recorder in (jit_recorder_module, grad_recorder_module):  # nor stubbed right after each call
        monkeypatch.setattr(recorder, "_keep_no_buffers", lambda record: None)
    with jaxmagic.capture(values=True, grads=True) as cap:
        step(jnp.ones(3))
        jax.grad(step)(jnp.ones(3))
        jax.grad(lambda x: (x * big[:3]).sum())(jnp.ones(3))
    monkeypatch.undo()
    assert any(a is big for a in _reachable_arrays(cap))  # the test can fail: JAX keeps it in the jaxprs
    before = _documents(cap)
    drop_device_buffers(cap)
    assert _reachable_arrays(cap) == []
    assert _documents(cap) == before
    ref = weakref.ref(big)
    del big, small, step
    gc.collect()
    assert ref() is None


def test_with_capture_drops_them_too_and_findings_about_baked_constants_stay():
    table = jnp.ones((N,), jnp.float32)
    ref = weakref.ref(table)

    @jax.jit
    def g(x):
        return x + table[:3]

    with jaxmagic.capture(values=True) as cap:
        g(jnp.ones(3))
    assert cap.calls[0].artifacts.values  # forward values were read before the constants went
    assert _reachable_arrays(cap) == []
    del table, g
    gc.collect()
    assert ref() is None


def test_a_dropped_capture_is_freed_with_its_programs():
    """Nothing of jaxmagic keeps an ended capture's calls (their jaxprs, lowered and compiled
    programs) once the user drops it: the next capture would otherwise free them on its start."""
    step = jax.jit(lambda x: x * 2)
    with jaxmagic.capture() as cap:
        for i in range(20):  # hits too: they go through the fast path's rows
            step(jnp.full(3, float(i)))
    artifacts = cap.calls[0].artifacts
    programs = [
        weakref.ref(p) for p in (artifacts.lowered, artifacts.compiled) if p is not None
    ]  # JAX 0.4: no compiled
    assert programs
    del cap, step, artifacts
    gc.collect()
    assert [p() for p in programs] == [None] * len(programs)


def test_prng_cell_does_not_keep_eager_samples(magic_shell):
    ip = magic_shell
    with contextlib.redirect_stdout(io.StringIO()):
        result = ip.run_cell(
            "%%prng -n keys_cap\nimport jax, gc, weakref\nk = jax.random.key(0)\nrefs = []\n"
            f"for i in range(4):\n    x = jax.random.normal(jax.random.fold_in(k, i), ({N},))\n"
            "    refs.append(weakref.ref(x))\n    del x\ngc.collect()\nalive_in_cell = [r() is not None for r in refs]\n"
        )
    assert result.success, result.error_in_exec
    assert ip.user_ns["alive_in_cell"] == [False] * 4  # as without the magic: each sample freed when deleted
    cap = ip.user_ns["keys_cap"]
    uses = [u for record in cap.keys for u in record.uses if u.kind == "sampler"]
    assert [(u.name, u.shape, u.dtype) for u in uses] == [("normal", (N,), "f32")] * 4
    assert _reachable_arrays(cap) == []
    ip.run_cell("del keys_cap, refs, k")


def _own_cyclic_garbage(run) -> list[str]:
    """What of jaxmagic's `run()` left only Python's cyclic collector to free: its objects, named.

    A reference cycle (a recorder holding a bound method of its session, a recursive closure)
    keeps a whole capture, its calls and a big program's walk alive until a full collection,
    which then pauses the user's own code later (a training loop's step, say)."""
    run()  # first compiles and JAX's own first-time caches: not what is measured
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        own = [
            f"{type(o).__qualname__} {getattr(o, '__qualname__', '')}".strip()
            for o in gc.garbage
            if (getattr(type(o), "__module__", "") or "").startswith("jaxmagic")
            or (callable(o) and (getattr(o, "__module__", "") or "").startswith("jaxmagic"))
        ]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    return own


_CYCLES_SETUP = (
    "import jax, jax.numpy as jnp, numpy as np\n"
    "from jax.sharding import Mesh, PartitionSpec as P, NamedSharding\n"
    "mesh = Mesh(np.array(jax.devices()[:4]), ('d',))\n"
    "@jax.jit\n"
    "def step(w, x, k):\n"
    "    h = jax.lax.with_sharding_constraint(jnp.tanh(x @ w), NamedSharding(mesh, P('d')))\n"
    "    h = jax.lax.fori_loop(0, 3, lambda i, a: a * 0.5, h)\n"
    "    h = jax.lax.cond(h.sum() > 0, jnp.sin, jnp.cos, h)\n"
    "    return (h + jax.random.normal(k, h.shape)).sum()\n"
    "w, x, k = jnp.ones((8, 8)), jnp.ones((8, 8)), jax.random.key(0)\n"
)
_CYCLES_BODY = (
    "for i in range(12):\n    k, sub = jax.random.split(k)\n    loss = step(w, x, sub)\ng = jax.grad(step)(w, x, k)\n"
)


@pytest.mark.parametrize("magic", ["jaxpr", "trace", "grad_graph", "sharding", "prng"])
def test_a_magic_cell_leaves_no_reference_cycle_of_its_own(magic_shell, magic):
    ip = magic_shell
    assert ip.run_cell(_CYCLES_SETUP).success

    def run() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            result = ip.run_cell(f"%%{magic}\n{_CYCLES_BODY}")
        assert result.success, result.error_in_exec

    assert _own_cyclic_garbage(run) == []


@pytest.mark.parametrize(
    "options", [{}, {"keys": False}, {"values": True, "grads": True}, {"shardings": True, "vmap": True}, {"sync": True}]
)
def test_a_dropped_capture_and_its_exports_leave_no_reference_cycle(options):
    namespace: dict = {}
    exec(_CYCLES_SETUP, namespace)

    def run() -> None:
        with jaxmagic.capture(namespace, **options) as cap:
            exec(_CYCLES_BODY, namespace)
        for view in ("graph", "timeline", "grad", "sharding", "keys"):
            jaxmagic.static_html(cap, view)
        if importlib.util.find_spec("graphviz") is not None:  # the `dot` extra (installed for the tests)
            jaxmagic.to_dot(cap)

    assert _own_cyclic_garbage(run) == []


# -- while the cell runs ------------------------------------------------------------------------
# Each magic's capture options (jaxmagic.kinds), as a `with jaxmagic.capture()` block takes them.
_MAGIC_OPTIONS = {
    "jaxpr": {"vmap": True},
    "grad_graph": {"grads": True, "values": True},
    "trace": {"keys": False},
    "sharding": {"shardings": True},
    "prng": {},
}


@pytest.mark.parametrize("magic", sorted(_MAGIC_OPTIONS))
def test_a_dropped_jitted_closure_frees_its_array_inside_the_cell(magic):
    """JAX's own `test_jit_reference_dropping`, inside a capture: the array a jitted closure holds is
    freed the moment the cell drops the function, as without a capture, and the finding about the
    constant it baked in is still there when the capture ends."""
    with jaxmagic.capture({}, **_MAGIC_OPTIONS[magic]) as cap:
        x = jnp.ones(10)
        f = (lambda x: lambda: x)(x)
        g = jax.jit(f)
        x = weakref.ref(x)
        assert x() is not None
        f()
        g()
        g()
        del f
        assert x() is not None
        g()
        del g
        freed_in_cell = x() is None
    assert freed_in_cell, "the capture kept the closed-over array while the cell ran"
    assert [c.cache_hit for c in cap.calls] == [False, True, True]
    [constant] = [f for f in cap.findings if f.kind == "global_constant"]
    assert constant.message.startswith("`x` (closure variable, f32[10]")
    assert _reachable_arrays(cap) == []


@pytest.mark.parametrize("magic", sorted(_MAGIC_OPTIONS))
def test_a_loop_of_fresh_jitted_closures_holds_no_earlier_step_s_array(magic):
    """A train loop that jits a new closure over each step's parameters (a few calls each) keeps at
    most the current step's parameters alive under a capture, as without one (4 MiB each)."""
    baseline = _live_bytes()
    peaks = []
    with jaxmagic.capture({}, **_MAGIC_OPTIONS[magic]) as cap:
        params = jnp.zeros((N,), jnp.float32)
        for step in range(6):
            loss = jax.jit(lambda x, params=params: (params[:3] * x).sum())  # a default: a closure too
            for _ in range(3):
                loss(jnp.ones(3)).block_until_ready()
            params = params + 1.0
            del loss
            peaks.append(_live_bytes() - baseline)
        del params
    assert max(peaks) < 3 * N * 4, f"live bytes after each step: {peaks}"
    assert len(cap.calls) == 18 and sum(not c.cache_hit for c in cap.calls) == 6


def test_a_function_called_often_is_kept_until_the_cell_ends_and_then_freed():
    """The fast path holds a function whose cache hits took the short path FAST_AFTER_HITS times
    (its table is keyed by the function); the capture lets go of it when it stops."""
    from jaxmagic.capture.jit.functions import FAST_AFTER_HITS, SIGNATURE_BUDGET_PER_FUNCTION

    calls = SIGNATURE_BUDGET_PER_FUNCTION + FAST_AFTER_HITS

    big = jnp.ones((N,), jnp.float32)
    ref = weakref.ref(big)
    with jaxmagic.capture({}) as cap:
        step = jax.jit(lambda x, big=big: x + big[:3])
        for _ in range(calls):
            step(jnp.ones(3))
        del big, step
        gc.collect()
        kept_in_cell = ref() is not None
    gc.collect()
    assert kept_in_cell
    assert ref() is None
    assert len(cap.calls) == calls


@pytest.mark.parametrize("magic", ["grad_graph", "jaxpr"])
def test_eager_grads_of_fresh_closures_hold_no_earlier_batch(magic):
    """`jax.grad(lambda w: loss(w, batch))(w)` each step: under `%%grad_graph` each differentiation
    gets JAX's forward/backward split, whose program holds the batch the lambda closed over; the
    records keep it stubbed and the split cache forgets it with the lambda, so no earlier batch lives."""
    refs = []
    with jaxmagic.capture({}, **_MAGIC_OPTIONS[magic]) as cap:
        w = jnp.ones(3)
        for step in range(4):
            batch = jnp.full((N,), float(step))
            refs.append(weakref.ref(batch))
            jax.grad(lambda w, batch=batch: (w * batch[:3]).sum())(w)
            del batch
        gc.collect()
        alive_in_cell = [r() is not None for r in refs]
    assert alive_in_cell == [False] * 4
    assert len(cap.grads) == 4
    if magic == "grad_graph":
        assert all(g.split is not None for g in cap.grads)
        consts = [c for g in cap.grads for c in g.split.forward.consts]
        assert consts and all(isinstance(c, ConstantStub) for c in consts)
    assert _reachable_arrays(cap) == []


@pytest.mark.parametrize("magic", sorted(_MAGIC_OPTIONS))
def test_jitted_closures_run_under_eager_grad_and_vmap_hold_no_earlier_batch(magic):
    """A jitted closure differentiated or vmapped eagerly runs through JAX's eager dispatch of its
    program (`_pjit_call_impl` makes a jitted callable holding the program): the capture passes such
    JAX-made callables through by a weak reference, so the batch goes with the closure."""
    refs = []
    with jaxmagic.capture({}, **_MAGIC_OPTIONS[magic]):
        w = jnp.ones(3)
        for step in range(3):
            batch = jnp.full((N,), float(step))
            refs.append(weakref.ref(batch))
            jax.grad(jax.jit(lambda w, batch=batch: (w * batch[:3]).sum()))(w)
            jax.vmap(jax.jit(lambda w, batch=batch: (w * batch[:3]).sum()))(jnp.ones((2, 3)))
            del batch
        gc.collect()
        alive_in_cell = [r() is not None for r in refs]
    assert alive_in_cell == [False] * 3
