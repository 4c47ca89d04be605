"""Work started while XLA compiles (capture/prefetch.py): it gets the very jaxpr the capture records,
its answers equal what the document builders compute after the cell, and it stays bounded.

Real JAX; the lowering's jaxpr is read from JAX's own frames (`jax_compat.jaxpr_being_lowered`).
"""

from __future__ import annotations

import json
import threading

import jax
import jax.numpy as jnp

from jaxmagic.capture import buffers, prefetch
from jaxmagic.capture.findings import index as index_findings
from jaxmagic.capture.findings import program as program_findings
from jaxmagic.capture.prefetch import PREFETCH
from jaxmagic.capture.record import ConstantStub
from jaxmagic.capture.session import CaptureSession
from jaxmagic.model import graph
from jaxmagic.model.graph import graph_document
from jaxmagic.model.on_demand import OnDemand


def _big(n: int = 130):
    """A program of about 3n eqns with an unrolled Python loop (a finding of its own)."""

    def step(x):
        for i in range(n):
            x = jnp.tanh(x * 1.01 + i)
        return x

    return jax.jit(step)


def _capture(fn, *args, prebuild=None, **options):
    session = CaptureSession({}, prebuild=prebuild, **options)
    session.start()
    try:
        jax.block_until_ready(fn(*args))
    finally:
        cap = session.stop()
    return cap


def _threads_calling(monkeypatch, module, name: str) -> list[str]:
    """The names of the threads that call `module.name` from now on (it still runs)."""
    threads: list[str] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return threads


def _dump(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True, default=str)


def test_the_jaxpr_handed_over_at_lowering_is_the_one_the_capture_records():
    seen: list = []
    fn = _big()
    cap = _capture(fn, jnp.ones(4), prebuild=seen.append)
    assert len(seen) == 1
    assert seen[0] is cap.calls[0].artifacts.jaxpr
    assert seen[0] is jax_trace_jaxpr(fn, jnp.ones(4))


def jax_trace_jaxpr(fn, *args):
    return fn.trace(*args).jaxpr


def test_a_prebuilt_graph_document_equals_the_one_built_after_the_cell(monkeypatch):
    threads = _threads_calling(monkeypatch, graph, "_walk")
    fn = _big()
    cap = _capture(fn, jnp.ones(4), prebuild=graph.prebuild)
    early = graph_document(cap, on_demand=OnDemand())
    assert threads == ["jaxmagic-prefetch"]  # built while XLA compiled, taken after the cell
    PREFETCH.clear()
    late = graph_document(cap, on_demand=OnDemand())
    assert threads[-1] == threading.main_thread().name
    assert _dump(early) == _dump(late)
    fn_doc = early["functions"][0]
    assert fn_doc["deferred"][0] == "jaxpr" and fn_doc["nodes"][0]["cost"] is not None


def test_prefetched_loops_are_the_loops_found_after_the_cell():
    fn = _big()
    cap = _capture(fn, jnp.ones(4))
    early = [f for f in cap.findings if f.kind == "unrolled_loop"]
    assert early
    found = program_findings.unrolled_loops(cap.calls[0].artifacts.jaxpr)
    assert [(f.kind, f.message, f.severity) for f in early] == [(f.kind, f.message, f.severity) for f in found]


TABLE = jnp.linspace(0.0, 1.0, 64)  # a global the step reads: JAX bakes it into the program


def _step_with_findings():
    """A ~400-eqn step with an unrolled loop, a baked global and a write past the end (dropped)."""

    def step(x):
        for i in range(130):
            x = jnp.tanh(x * 1.01 + i)
        x = x.at[10].set(1.0)  # x has 4 elements: JAX drops this write
        return x + TABLE[:4]

    return jax.jit(step)


def _findings(cap, kinds=("unrolled_loop", "global_constant", index_findings.KIND)):
    return sorted((f.kind, f.message, f.severity) for f in cap.findings if f.kind in kinds)


def test_findings_walked_while_xla_compiles_equal_those_walked_after_the_cell(monkeypatch):
    """Baked constants and out-of-bounds indices are walked on the prefetch thread, and say the same."""
    constants = _threads_calling(monkeypatch, program_findings, "_sites")
    indices = _threads_calling(monkeypatch, index_findings, "index_problems")
    early = _findings(_capture(_step_with_findings(), jnp.ones(4)))
    assert {kind for kind, _, _ in early} == {"unrolled_loop", "global_constant", index_findings.KIND}
    assert constants == indices == ["jaxmagic-prefetch"]
    monkeypatch.setattr(prefetch, "MIN_EQNS", 10**9)  # nothing starts early: all walked after the cell
    late = _findings(_capture(_step_with_findings(), jnp.ones(4)))
    assert constants[-1] == indices[-1] == threading.main_thread().name
    assert early == late


def _closing_over_an_array():
    """A ~400-eqn step whose inner jitted function closes over a device array (a const to stub)."""
    weights = jnp.arange(4.0) + 1.0  # computed: a device array, closed over

    @jax.jit
    def inner(x):
        return x * weights

    def step(x):
        for i in range(130):
            x = jnp.tanh(x * 1.01 + i)
        return inner(x)

    return jax.jit(step)


def _consts(closed) -> list:
    found = list(getattr(closed, "consts", ()))
    for eqn in getattr(closed, "jaxpr", closed).eqns:
        for value in eqn.params.values():
            if hasattr(value, "consts") and hasattr(value, "jaxpr"):
                found.extend(_consts(value))
    return found


def test_without_a_prebuilding_view_the_kept_program_is_stubbed_while_xla_compiles(monkeypatch):
    """`%%trace`'s capture keeps the program stubbed as `stop` would stub it, made on the prefetch thread."""
    threads = _threads_calling(monkeypatch, buffers, "_stubbed_jaxpr")
    early = _capture(_closing_over_an_array(), jnp.ones(4)).calls[0].artifacts.jaxpr
    assert threads and set(threads) == {"jaxmagic-prefetch"}
    monkeypatch.setattr(prefetch, "MIN_EQNS", 10**9)
    late = _capture(_closing_over_an_array(), jnp.ones(4)).calls[0].artifacts.jaxpr
    assert threads[-1] == threading.main_thread().name
    assert str(early) == str(late)
    stubs = _consts(early)
    assert stubs and all(isinstance(c, ConstantStub) for c in stubs)  # no device array kept


def test_small_programs_start_nothing_and_a_capture_starts_at_most_its_budget():
    seen: list = []
    _capture(jax.jit(lambda x: x + 1), jnp.ones(3), prebuild=seen.append)
    assert seen == []
    programs = [_big(110 + i) for i in range(prefetch.MAX_PROGRAMS + 3)]
    session = CaptureSession({}, prebuild=seen.append)
    session.start()
    try:
        for fn in programs:
            fn(jnp.ones(2))
    finally:
        session.stop()
    assert len(seen) == prefetch.MAX_PROGRAMS


def test_a_failing_prebuild_leaves_the_cell_and_the_document_as_without_it(monkeypatch):
    monkeypatch.setattr(graph, "_walk", _fail_in_worker(graph._walk))
    fn = _big()
    cap = _capture(fn, jnp.ones(4), prebuild=graph.prebuild)
    doc = graph_document(cap, on_demand=OnDemand())  # computed again on this thread, as without a prebuild
    assert doc["functions"][0]["n_eqns"] == len(cap.calls[0].artifacts.jaxpr.jaxpr.eqns)
    assert _dump(doc) == _dump(graph_document(cap, on_demand=OnDemand()))


def _fail_in_worker(real):
    def walk(*args, **kwargs):
        if threading.current_thread().name == "jaxmagic-prefetch":
            raise RuntimeError("boom")
        return real(*args, **kwargs)

    return walk


def test_answers_no_view_took_are_dropped_when_the_next_capture_starts():
    fn = _big()
    cap = _capture(fn, jnp.ones(4), prebuild=graph.prebuild)
    jaxpr = cap.calls[0].artifacts.jaxpr
    _capture(jax.jit(lambda x: x * 2), jnp.ones(3))
    assert PREFETCH.take("graph", jaxpr) == (False, None)


def test_a_jaxpr_cell_draws_the_graph_built_while_xla_compiled(magic_shell, monkeypatch):
    threads = _threads_calling(monkeypatch, graph, "_walk")
    magic_shell.user_ns.update(big=_big(), jnp=jnp)
    result = magic_shell.run_cell("%%jaxpr\nout = big(jnp.ones(4))\n")
    assert result.success
    assert threads == ["jaxmagic-prefetch"]


def test_a_grad_graph_document_takes_the_regions_and_graph_found_while_xla_compiled(monkeypatch):
    from jaxmagic.model import grad
    from jaxmagic.model.grad import grad_document

    threads = _threads_calling(monkeypatch, grad, "grad_regions")

    def loss(w, x):
        for _ in range(60):
            x = jnp.tanh(x @ w)
        return jnp.sum(x)

    cap = _capture(jax.jit(jax.grad(loss)), jnp.eye(3) * 0.5, jnp.ones(3), prebuild=grad.prebuild, grads=True)
    early = grad_document(cap, on_demand=OnDemand())
    assert threads == ["jaxmagic-prefetch"]
    PREFETCH.clear()
    late = grad_document(cap, on_demand=OnDemand())
    assert threads[-1] == threading.main_thread().name
    assert _dump(early) == _dump(late)
    assert early["entries"][0]["regions"]


def test_a_program_closing_over_an_array_is_prebuilt_without_keeping_the_array(magic_shell, monkeypatch):
    import gc
    import weakref

    threads = _threads_calling(monkeypatch, graph, "_walk")
    table = jnp.ones((1024, 1024), jnp.float32)  # 4 MiB, closed over: a const of the jaxpr
    ref = weakref.ref(table)
    magic_shell.user_ns.update(step=_closing_over(table), jnp=jnp)
    assert magic_shell.run_cell("%%jaxpr\nout = step(jnp.ones(4))\n").success
    assert threads == ["jaxmagic-prefetch"]  # the stubbed program was walked early and found again
    del table
    magic_shell.user_ns.pop("step")
    gc.collect()
    assert ref() is None  # the view, its deferred text and the prefetch keep no device buffer


def _closing_over(table):
    def step(x):
        for i in range(130):
            x = jnp.tanh(x * 1.01 + table[i, :4])
        return x

    return jax.jit(step)


def test_sharding_walks_of_the_kept_program_are_found_while_xla_compiled():
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from jaxmagic.model import sharding

    mesh = jax.sharding.Mesh(jax.devices(), ("x",))  # Auto axes on every JAX: constraints allowed

    def step(x):
        for i in range(110):
            x = jax.lax.with_sharding_constraint(jnp.tanh(x * 1.01 + i), NamedSharding(mesh, P("x")))
        return x

    cap = _capture(jax.jit(step), jnp.ones(16), prebuild=sharding.prebuild, shardings=True)
    jaxpr = cap.calls[0].artifacts.jaxpr
    for what, walk in sharding._JAXPR_WALKS.items():
        ready, answer = PREFETCH.take(what, jaxpr)
        assert ready
        assert answer == walk(jaxpr)
    assert sharding._JAXPR_WALKS["intermediate shardings"](jaxpr)[0]  # the constraints were found


def test_taking_from_a_worker_that_is_gone_does_not_wait():
    """A forked child inherits the jobs but not the thread: its builders compute the answer themselves."""
    from jaxmagic.capture.prefetch import Prefetch

    jaxpr = jax_trace_jaxpr(_big(), jnp.ones(2))
    pending = Prefetch()
    started = threading.Event()
    pending.submit("slow", jaxpr, lambda j: started.wait(5) or "late")
    pending._worker = threading.Thread(target=lambda: None)  # as in a forked child: a thread object, not running
    assert pending.take("slow", jaxpr) == (False, None)
    started.set()


def test_jobs_cleared_before_their_turn_are_not_run():
    from jaxmagic.capture.prefetch import Prefetch

    jaxpr = jax_trace_jaxpr(_big(), jnp.ones(2))
    other = jax_trace_jaxpr(_big(120), jnp.ones(2))
    pending = Prefetch()
    gate, ran = threading.Event(), []
    pending.submit("first", jaxpr, lambda j: gate.wait(5))
    pending.submit("second", other, lambda j: ran.append(j))
    pending.clear()  # a new capture starts while the first job runs and the second waits
    gate.set()
    pending.submit("third", jaxpr, lambda j: "done")
    assert pending.take("third", jaxpr) == (True, "done")
    assert ran == []


def test_the_collector_is_paused_for_jobs_only_while_xla_compiles_and_left_as_the_user_had_it():
    import gc

    from jaxmagic.capture.prefetch import _Collector

    collector = _Collector()
    assert gc.isenabled()
    collector.job_started()  # no compile running: the user's Python may run, the collector stays on
    assert gc.isenabled()
    collector.compile_started()
    collector.job_started()
    assert not gc.isenabled()
    collector.compile_ended()  # back to the user's code: on again though the job still runs
    assert gc.isenabled()
    collector.job_ended()
    assert gc.isenabled()
    gc.disable()  # the user's choice is kept
    try:
        collector.compile_started()
        collector.job_started()
        collector.compile_ended()
        collector.job_ended()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_capture_with_early_work_leaves_the_collector_on(monkeypatch):
    import gc

    threads = _threads_calling(monkeypatch, graph, "_walk")
    cap = _capture(_big(), jnp.ones(4), prebuild=graph.prebuild)
    graph_document(cap, on_demand=OnDemand())
    assert threads == ["jaxmagic-prefetch"]
    assert gc.isenabled()


def test_an_aot_lowering_in_a_capture_never_pauses_the_collector():
    """`.lower()` of the user's is not followed by a compile: the user's next lines must run with the collector on."""
    import gc

    from jaxmagic.capture import prefetch as prefetch_module

    session = CaptureSession({}, prebuild=graph.prebuild)
    session.start()
    try:
        _big().lower(jnp.ones(4))
        assert not prefetch_module.COLLECTOR._compiling
        assert gc.isenabled()
    finally:
        session.stop()
