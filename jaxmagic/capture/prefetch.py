"""Work on a program started while XLA compiles it, on one background thread.

A first call spends most of its time in XLA's compile, which releases the GIL: the second core
idles. What a view will need of the program and depends on its jaxpr alone (its unrolled
loops, its graph) can be computed then instead of after the cell. The capture hands over the
jaxpr when JAX's lowering of a call ends (`JitRecorder.on_lowered`); the document builders later
`take` what is ready, waiting for what is still running, and compute it themselves when nothing
was started or it failed. An answer is the same whether it came from here or not: the same
function computes it.

Bounded: programs of at least `MIN_EQNS` eqns, nested ones counted (smaller ones cost little after the
cell) and at most `MAX_PROGRAMS` per capture, so a cell that jits thousands of lambdas starts
nothing extra. Answers are kept per live jaxpr (held weakly) until taken or until the next
capture starts (`clear`): what no view asked for is not kept.
"""

from __future__ import annotations

import gc
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

from . import jax_compat

MIN_EQNS = 300
MAX_PROGRAMS = 8
MAX_WAIT_S = 60.0  # a job still running after this is left to run; the taker computes the answer itself
_WAIT_SLICE_S = 0.05


class _Collector:
    """The cyclic collector paused for the worker's jobs while, and only while, the main thread is
    inside XLA's compile (C++, no Python of the user's runs meanwhile).

    A job builds a document of tens of thousands of dicts and lists that live until a view takes
    it; with the collector running, the young collections the job triggers promote them all to the
    oldest generation, and the next full collection of the kernel's heap (65-80 ms at 4k eqns)
    comes one cell early: measured, a `%%jaxpr` cell then had two full collections to the plain
    cell's one. The main thread says when a compile starts and ends (`compile_started`,
    `compile_ended`, also on the call's return and at the capture's stop); the collector is on
    again at that moment even if a job still runs, and never turned on if the user had it off.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._compiling = False
        self._paused = False

    def compile_started(self) -> None:
        with self._lock:
            self._compiling = True

    def compile_ended(self) -> None:
        with self._lock:
            self._compiling = False
            self._resume()

    def job_started(self) -> None:
        with self._lock:
            if self._compiling and not self._paused and gc.isenabled():
                gc.disable()
                self._paused = True

    def job_ended(self) -> None:
        with self._lock:
            self._resume()

    def _resume(self) -> None:
        if self._paused:
            self._paused = False
            gc.enable()


COLLECTOR = _Collector()


class _Job:
    """One computation on one jaxpr: its answer, or that it failed, once done."""

    __slots__ = ("compute", "done", "dropped", "failed", "jaxpr", "result")

    def __init__(self, jaxpr: Any, compute: Callable[[Any], Any]) -> None:
        self.jaxpr = weakref.ref(jaxpr)
        self.compute = compute
        self.done = threading.Event()
        self.result: Any = None
        self.failed = False
        self.dropped = False  # no view will take it: not run when its turn comes

    def run(self) -> None:
        try:
            jaxpr = self.jaxpr()
            if jaxpr is None:
                self.failed = True
            else:
                self.result = self.compute(jaxpr)
        except Exception:  # boundary: the taker computes it again and meets the error itself
            self.failed = True
        finally:
            self.done.set()


class Prefetch:
    """{(what, live jaxpr): job}; one daemon worker thread, started on the first job."""

    def __init__(self) -> None:
        self._jobs: dict[tuple[str, int], _Job] = {}
        self._queue: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self.started = 0  # programs started since the last `clear`

    def submit(self, what: str, jaxpr: Any, compute: Callable[[Any], Any]) -> None:
        """Start `compute(jaxpr)` in the background, keyed by `what` and the jaxpr's identity."""
        key = (what, id(jaxpr))
        job = self._jobs.get(key)
        if job is not None and job.jaxpr() is jaxpr:
            return
        try:
            job = _Job(jaxpr, compute)
        except TypeError:  # a jaxpr that cannot be held weakly: nothing starts early
            return
        self._jobs[key] = job
        self._queue.put(job)
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._work, name="jaxmagic-prefetch", daemon=True)
            self._worker.start()

    def take(self, what: str, jaxpr: Any) -> tuple[bool, Any]:
        """(True, answer) of the job started for `what` on this very jaxpr, waiting for it to end;
        (False, None) when none was started or it failed. A job is taken once."""
        job = self._jobs.pop((what, id(jaxpr)), None)
        if job is None or job.jaxpr() is not jaxpr:
            return False, None
        waited = 0.0
        while not job.done.wait(_WAIT_SLICE_S):  # never hang on a worker that is gone (a forked child has none)
            waited += _WAIT_SLICE_S
            if self._worker is None or not self._worker.is_alive() or waited >= MAX_WAIT_S:
                return False, None
        return (not job.failed), job.result

    def clear(self) -> None:
        """Forget every answer not taken (a new capture starts: no view will ask for them); jobs
        still queued are not run."""
        for job in self._jobs.values():
            job.dropped = True
        self._jobs.clear()
        self.started = 0

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job.dropped:  # cleared (a new capture started) before its turn: nobody will take it
                job.failed = True
                job.done.set()
            else:
                COLLECTOR.job_started()
                try:
                    job.run()
                finally:
                    COLLECTOR.job_ended()


PREFETCH = Prefetch()


def worth_starting(jaxpr: Any) -> bool:
    """A program big enough to gain from early work, within this capture's budget of programs."""
    return PREFETCH.started < MAX_PROGRAMS and _eqns_at_least(jaxpr, MIN_EQNS)


def _eqns_at_least(closed_jaxpr: Any, count: int) -> bool:
    """Whether the program holds `count` eqns, nested ones included (a model's step is often a few
    calls of jitted layers); stops counting there."""
    todo, seen = [closed_jaxpr], 0
    while todo and seen < count:
        item = todo.pop()
        eqns = getattr(item, "jaxpr", item).eqns
        seen += len(eqns)
        if seen >= count:  # a 4k-eqn step: no sub-jaxpr is looked for (9 ms of a first call before)
            break
        for eqn in eqns:
            todo.extend(sub for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False))
    return seen >= count
