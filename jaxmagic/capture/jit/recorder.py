"""The jit recorder: what every jitted call of a capture reports to (capture/jit/patch.py routes them here).

One row per call, in order. The common case, a cache hit of a hot function (JAX's cache holds
the one program it ran, or it was called a few times already: capture/jit/functions.py), costs
a row appended by the routed call itself (`FastPath`) or, here, a trace check, two clock reads
and three list appends; its signature and artefacts, when known, are its program's. A miss or one
of a function's first calls is recorded in full (`_finish`): its compile events, its signature
(the user's names for its leaves), why it missed, and for each new signature its artefacts
(capture/jit/artifacts.py). The recorder also
receives JAX's monitoring events (`on_duration`, `on_event`), which give each call its phases.

Hot-path code here is written for speed (locals for attributes, positional constructors): see
bench/trace.py before changing it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ... import strict
from .. import jax_compat, prefetch, source, tasks
from ..buffers import remembered_stub
from ..findings.donation import DonationLog
from ..findings.recorder import ProgramFindings
from ..keys.recorder import KeyRecorder
from ..quiet_gc import paused_gc
from ..record import Artifacts, Capture, Event, JitCall, Signature, SourceLocation
from ..sharding.recorder import PlacementRecorder
from ..values.recorder import NanRecorder
from . import cache_log, monitoring, readiness
from . import patch as jit_patch
from .artifacts import CompileFromCache, collect
from .call_signatures import CallSignatures
from .functions import SIGNATURE_BUDGET_PER_FUNCTION, FunctionState, FunctionTable

# A call recorded while another is being recorded is jaxmagic's own work (see `_finish`): with
# the jit recorder off during recording none should arrive; past this depth one is not recorded.
MAX_RECORDING_DEPTH = 1

_jit_disabled = jax_compat.jit_disabled_probe()  # `jax.disable_jit()`: the call runs the Python, no program
_CURRENT_TRACE, _NO_TRACE = jax_compat.current_trace_probe()  # `.value is _NO_TRACE`: the call runs
_clock = time.perf_counter
_thread = threading.get_ident  # a capture records the thread that runs the cell (about 40 ns a check)


def call_plain(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a call when jitted calls are not routed (the namespace-wrapper fallback)."""
    __tracebackhide__ = True
    return fn(*args, **kwargs)


def recording_call(frame: Any) -> int | None:
    """The index of the recorded call `frame` runs inside (a `JitRecorder.record` frame above it)."""
    code = JitRecorder.record.__code__
    while frame is not None:
        if frame.f_code is code:
            return frame.f_locals.get("index")
        frame = frame.f_back
    return None


_UNKNOWN_PROGRAM: tuple = (0, None, None)


def _hit_program(state: FunctionState, index: int) -> tuple:
    """(first index, signature, artefacts) of the program a cache hit recorded as a row at `index`
    ran: the one its function's call cache held then (`FunctionTable.note_program`), else unknown."""
    for entry in reversed(state.hit_programs):
        if entry[0] < index:
            return entry
    return _UNKNOWN_PROGRAM


def _keep_no_buffers(artifacts: Artifacts) -> None:
    """Keep the call's program with its array constants stubbed from now on, once everything that
    reads their values has run (its forward values, its key flow, its findings' matches): a jitted
    closure the cell drops frees the arrays it closed over at once, as without a capture. The copy
    is the one `stop` keeps (`buffers.remembered_stub`, made on the prefetch thread for a big program)."""
    if artifacts.jaxpr is not None:
        artifacts.jaxpr = remembered_stub(artifacts.jaxpr)


class JitRecorder:
    """Records the jitted calls and JAX compile events of one capture into `capture`.

    The other recorders it feeds per call are the session's: `keys` (programs that handle PRNG
    keys), `placement` (`%%sharding`), `nans` (outputs checked at `stop`), `donations` (arrays
    handed to donating calls). `values`, `vmap` and `grads` say which artefacts a new signature
    gets; `sync` waits for each sampled call's outputs. `_collecting` is set while jaxmagic
    traces for itself (artefacts here, grad splits in capture/grads/patch.py `GradLog`): JAX
    events and differentiations meanwhile are not the user's.
    """

    def __init__(
        self,
        capture: Capture,
        namespace: dict,
        *,
        values: bool,
        vmap: bool,
        sync: bool,
        grads: bool,
        keys: KeyRecorder | None,
        placement: PlacementRecorder | None,
        nans: NanRecorder,
        donations: DonationLog,
    ):
        self.capture = capture
        self.namespace = namespace
        self.values, self.vmap, self.sync, self.grads = values, vmap, sync, grads
        self.keys, self.placement, self.nans, self.donations = keys, placement, nans, donations
        self.table = FunctionTable(jit_patch.bound_call)
        self.findings = ProgramFindings(capture, self.table.name_of)
        self._hot = self.table.hot  # functions past the signature budget, by id
        self._young = self.table.young  # hot functions not yet on the fast path (`FunctionTable.note_hit`)
        self._fast = self.table.fast  # hot functions whose cache hits `jit_patch._routed_call` records itself
        self.fast_path: jit_patch.FastPath | None = None
        self.running = False
        self.run_jitted: Any = call_plain  # how `record` runs a jitted call (the session picks it)
        # Called with each ClosedJaxpr JAX lowers for the cell, before XLA compiles it (the session's).
        self.on_lowered: Callable[[Any], None] | None = None
        self._calls_running = 0  # calls `record` is running now (their lowering is followed by a compile)
        self._collecting = False  # our own artefact tracing: its events are not the user's
        self._finishing = 0  # depth of `_finish`: above 0, jaxmagic is recording a call (its own JAX work)
        self._nested_noted = False
        self._compile = CompileFromCache(capture.notes)
        # One row per call, in order: a JitCall, or the function's state for a fast-path cache
        # hit, turned into a JitCall when the capture stops (saves ~0.5 us per call); the hits'
        # start and end times go, in the same order, to `_times` (floats, which Python's garbage
        # collector does not track: a tuple per call made it walk every row of a long loop).
        self._rows: list[Any] = []
        self._times: list[float] = []
        self._times_used = 0  # floats of `_times` already turned into JitCalls
        self._events = capture.events
        self._logs: list[cache_log.LogRecord] = []  # JAX's cache records, in order
        self.cache_log = cache_log.CacheLog(self._logs.append)
        self._ready = readiness.ReadyWatch(_clock)
        self._next_sample = [0.0]  # clock time of the next call whose readiness is sampled (shared with jit_patch)
        self._next_watch = 0.0  # clock time of the next sampled call that also watches its outputs
        self._last_sample_s = float("inf")  # what the previous watch cost (poll and watch), seconds
        self.signatures = CallSignatures(self.table, self.cache_log, capture.notes)
        self._key_call: tuple | None = None  # the keyed call `_append_call` just recorded, for `record`
        self._thread = _thread()  # the cell's thread; calls and compiles from others are not recorded
        self._other_threads = 0
        self._earlier_tasks: frozenset = frozenset()  # asyncio tasks an earlier cell left running (tasks.py)
        self._other_tasks = 0
        self._jit_disabled_calls = 0

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Take the cell's thread and the tasks earlier cells left running; make the fast path."""
        self._thread = _thread()
        self._earlier_tasks = tasks.earlier_tasks()
        if self.placement is None and not self._earlier_tasks:  # those read every call's arguments or task
            self.fast_path = jit_patch.FastPath(
                hot=self._fast,
                rows=self._rows,
                times=self._times,
                events=self._events,
                next_sample=self._next_sample,
                thread=self._thread,
                passthrough=self.table.jax_own,
            )

    @property
    def thread(self) -> int:
        """The cell's thread (`start`): calls and events from any other are not recorded."""
        return self._thread

    def own_work(self) -> bool:
        """True while jaxmagic traces or records for itself: the user's code or JAX runs again."""
        return self._collecting or self._finishing > 0

    def poll(self) -> None:
        """Device times of the calls whose outputs are ready by now."""
        self._ready.poll()

    def copy_logs(self) -> None:
        self.capture.logs = [(r.kind, r.text, r.time) for r in self._logs]

    def note_strays(self) -> None:
        """Say how many calls came from other threads or earlier cells' tasks (not recorded)."""
        if self._other_threads:
            self.capture.notes.append(
                f"{self._other_threads} jitted calls and compile events came from other threads while the cell ran; "
                "only the cell's own thread is recorded"
            )
            self._other_threads = 0
        if self._other_tasks:
            self.capture.notes.append(
                f"{self._other_tasks} jitted calls came from asyncio tasks that earlier cells started; "
                "only the cell's own code (and tasks it starts) is recorded"
            )
            self._other_tasks = 0
        if self._jit_disabled_calls:
            self.capture.notes.append(
                f"{self._jit_disabled_calls} jitted calls ran under jax.disable_jit(): JAX ran their Python "
                "eagerly, with no program traced or compiled, so they are not recorded"
            )
            self._jit_disabled_calls = 0

    def release(self) -> None:
        """After `stop`: the capture keeps no jitted function, option or array a program closed over."""
        self.capture.wrappers.update(self.table.wrapper_counts())
        self.table.release()
        self.signatures.release()

    # -- monitoring ------------------------------------------------------------------------
    def on_duration(self, name: str, duration: float, kwargs: dict) -> None:
        """A JAX phase (trace, lower, compile) ended: an event of the cell's, unless it is ours."""
        if _thread() != self._thread:  # another thread's compile is not this cell's
            self._other_threads += 1
            return
        if self._earlier_tasks and tasks.current_task() in self._earlier_tasks:  # nor an earlier cell's task's
            return
        if self._collecting:
            self._compile.own_compiles += monitoring.phase_of(name) == "compile"
            return
        if not self.running:
            return
        end = time.perf_counter()
        phase = monitoring.phase_of(name)
        self.capture.events.append(
            Event(
                name=name,
                phase=phase,
                fun_name=kwargs.get("fun_name"),
                start=end - duration,
                end=end,
                call_index=None,
            )
        )
        if phase == "lower" and self.on_lowered is not None:
            self._lowered(self.on_lowered)
        elif phase == "compile":
            prefetch.COLLECTOR.compile_ended()

    def _lowered(self, on_lowered: Callable[[Any], None]) -> None:
        """JAX lowered a program of the cell's and compiles it next: `on_lowered` gets its jaxpr
        (capture/prefetch.py starts work on it). Never the cell's failure."""
        try:
            jaxpr = jax_compat.jaxpr_being_lowered()
            if jaxpr is not None:
                if self._calls_running:  # a call compiles next (an AOT `.lower()` of the user's need not)
                    prefetch.COLLECTOR.compile_started()
                on_lowered(jaxpr)
        except Exception as exc:  # boundary: nothing starts early; the work is done after the cell
            strict.fallback("work on a program started while XLA compiles it", exc)

    def on_event(self, name: str, kwargs: dict) -> None:
        """A JAX event without a duration (a cache hit or miss of the persistent cache, ...)."""
        if self._collecting or not self.running or _thread() != self._thread:
            return
        if self._earlier_tasks and tasks.current_task() in self._earlier_tasks:
            return
        now = time.perf_counter()
        self.capture.events.append(
            Event(
                name=name,
                phase=monitoring.phase_of(name),
                fun_name=kwargs.get("fun_name"),
                start=now,
                end=now,
                call_index=None,
            )
        )

    # -- calls -------------------------------------------------------------------------------
    def record(self, fn: Any, args: tuple, kwargs: dict) -> Any:
        """Run one call of jitted `fn` and record it. Called for every jitted call during the capture
        (`jit_patch`: the jitted type's routed call, or the namespace wrappers where it cannot be routed).

        The common case, a cache hit of a function already seen a few times, is recorded before
        it gets here, in `jit_patch._routed_call` (`fast_path`); here it costs a trace check, two
        clock reads and three list appends (about 1.2 us in all, bench/trace.py): calls due a readiness
        sample, and hot functions whose programs handle keys or whose inputs `%%sharding` notes.
        Signatures and artefacts are taken only on misses and on the first calls of each function.
        """
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        if _CURRENT_TRACE.value is not _NO_TRACE or _thread() != self._thread:
            # Under a JAX trace: a call nested in a recorded call's tracing, a call under
            # grad/vmap, or our own artefact tracing; it is part of that computation. Or a
            # call from another thread (a data loader, a server): not this cell's, passed on.
            if _thread() != self._thread:
                self._other_threads += 1
            return self.run_jitted(fn, *args, **kwargs)
        if self._earlier_tasks and tasks.current_task() in self._earlier_tasks:  # an earlier cell's task
            self._other_tasks += 1
            return self.run_jitted(fn, *args, **kwargs)
        state = self._hot.get(id(fn))
        if state is None and self.table.is_jax_own(fn):  # `jnp.where`, `jax.random.normal`: JAX's ops, not programs
            return self.run_jitted(fn, *args, **kwargs)
        if _jit_disabled():  # no program to record; asking JAX for one would run the user's Python again
            self._jit_disabled_calls += 1
            return self.run_jitted(fn, *args, **kwargs)
        if state is None:
            state = self.table.hot_definition(fn)
        events = self._events
        n_events = len(events)
        n_logs = len(self._logs)
        rows = self._rows
        index = len(rows)
        start = _clock()
        sampled = start >= self._next_sample[0]  # readiness is polled and watched once per SAMPLE_S
        polled = start
        if sampled:
            self._ready.poll(start)
            polled = _clock()
        self._calls_running += 1
        try:
            out = self.run_jitted(fn, *args, **kwargs)
        except BaseException as exc:
            end = _clock()
            self._calls_running -= 1
            if self._finishing < MAX_RECORDING_DEPTH:
                self._finish(fn, args, kwargs, index, n_events, n_logs, start, end, exc)
            raise
        end = _clock()
        self._calls_running -= 1
        if sampled:
            self._watch(index, out, start, end, state, polled - start)
        if state is not None and len(events) == n_events:
            rows.append(state)
            self._times.extend((start, end))
            if self.placement is not None:
                self.placement.note_inputs(args, kwargs)
            if self.donations.donating and self.donations.donating.get(id(state)):
                self.donations.note(id(state), args, kwargs, index, state.name)
            if state.watched_hits:
                self._watch_hit(fn, state, index, args, kwargs, out)
            if self._young:  # hot functions not yet on the fast path count their hits towards it
                self.table.note_hit(fn, state)
            if state.key_program is not None and self.keys is not None:
                self._key_call = (index, state.name, state.key_program, (fn, args, kwargs), None)
                self._record_key_call(out)
            return out
        if self._finishing >= MAX_RECORDING_DEPTH:  # the backstop of `_finish`: jaxmagic's own call
            self._note_nested(index)
            return out
        self._finish(fn, args, kwargs, index, n_events, n_logs, start, end, None)
        self._note_nans(index, fn, args, kwargs, out)
        if self.placement is not None:
            self.placement.note_inputs(args, kwargs)
            self.placement.record_outputs(index, rows, out)
        if self._key_call is not None:
            self._record_key_call(out)
        return out

    def sampled(self, fn: Any, state: FunctionState, args: tuple, kwargs: dict, n_events: int, start: float) -> Any:
        """A fast-path call (`jit_patch._routed_call`: hot, no trace, this thread) due a readiness sample:
        poll, run, watch its outputs (unless it is the poll right after a watch), add its row. What
        `record` does for it, without the checks the routed call made already."""
        __tracebackhide__ = True
        self._ready.poll(start)
        polled = _clock()
        try:
            out = self.run_jitted(fn, *args, **kwargs)
        except BaseException as exc:
            self.fast_missed(fn, args, kwargs, None, n_events, start, _clock(), exc)
            raise
        end = _clock()
        if len(self._events) != n_events:  # JAX traced or compiled: a miss, recorded in full
            self.fast_missed(fn, args, kwargs, out, n_events, start, end, None)
            return out
        self._watch(len(self._rows), out, start, end, state, polled - start)
        self._rows.append(state)
        times = self._times
        times.append(start)
        times.append(end)
        return out

    def fast_missed(
        self,
        fn: Any,
        args: tuple,
        kwargs: dict,
        out: Any,
        n_events: int,
        start: float,
        end: float,
        error: BaseException | None,
    ) -> None:
        """Record a call of a hot function that `jit_patch._routed_call` ran itself and saw JAX trace or
        compile (a miss), or raise. Its log records are those JAX kept from `start` on (no count was
        taken before the call: the fast path reads as little as it can)."""
        __tracebackhide__ = True
        logs = self._logs
        n_logs = len(logs)
        while n_logs and logs[n_logs - 1].time >= start:
            n_logs -= 1
        index = len(self._rows)
        self._finish(fn, args, kwargs, index, n_events, n_logs, start, end, error)
        if error is None:
            self._note_nans(index, fn, args, kwargs, out)
        if error is None and self._key_call is not None:
            self._record_key_call(out)

    def _watch_hit(self, fn: Any, state: FunctionState, index: int, args: tuple, kwargs: dict, out: Any) -> None:
        """A hot hit within the signature budget of a function hot at once (`FunctionTable.note_program`):
        its outputs go to the NaN check as a fully recorded call's would, its arguments not kept
        (they would keep a loop's every early step alive to be read at stop)."""
        state.watched_hits -= 1
        self.nans.note_call(index, self._rows, fn, args, kwargs, out, keep_arguments=False)
        if not state.watched_hits:
            self.table.settle_fast(fn, state)

    def _record_key_call(self, out: Any) -> None:
        key_call, self._key_call = self._key_call, None
        if key_call is not None and self.keys is not None:
            self.keys.on_call(key_call, out)

    def _note_nans(self, index: int, fn: Any, args: tuple, kwargs: dict, out: Any) -> None:
        """Hold a fully recorded call's float outputs and arguments weakly, to check them at `stop`."""
        self.nans.note_call(index, self._rows, fn, args, kwargs, out)

    def _watch(
        self, index: int, out: Any, start: float, end: float, state: FunctionState | None = None, poll_s: float = 0.0
    ) -> None:
        """Wait for this call's outputs (`sync`), or keep a weak reference to poll later. The
        latest sampled cache hit of each function leaves its watched outputs to the NaN check.

        The next watch waits at least COST_FACTOR times what this one cost (`poll_s`, the poll
        before the call, and the watch here): readiness.py. The cost is the smaller of this
        watch's and the previous one's: a thread switch or a page fault inside one watch (ms)
        says nothing about what watching costs, and would leave the next 20 ms unwatched. The call
        right after a watch only polls: a loop's `loss = step(...)` still holds the watched output
        then, and frees it when the call returns, long before the next watch's poll could see it ready."""
        if self.sync:
            self._ready.wait(index, out)  # next_sample stays 0: every call is waited for
        elif start < self._next_watch:  # the poll after a watch: no watch until the interval is over
            self._next_sample[0] = self._next_watch
        elif self._ready.watch(index, out, end - start):
            if state is not None:
                self.nans.watch().note_sampled(id(state), index, state.name, self._ready.pending[-1][1])
            cost = poll_s + _clock() - end
            self._next_watch = start + self._ready.interval(min(cost, self._last_sample_s))
            self._last_sample_s = cost
            self._next_sample[0] = 0.0  # the next call polls

    def materialize_calls(self) -> None:
        """Turn every row into its `JitCall` (a fast-path hit's row is only its function's state)."""
        calls = self.capture.calls
        ready = self._ready.ready.get
        rows, times, used = self._rows, self._times, self._times_used
        made = []
        for index in range(len(calls), len(rows)):
            row = rows[index]
            if type(row) is FunctionState:  # a fast-path hit: every field positional (the cheapest call)
                programs = row.hit_programs  # what it ran: one entry, or one more per later miss
                hit = programs[-1] if programs and programs[-1][0] < index else _hit_program(row, index)
                made.append(
                    JitCall(
                        index,
                        row.name,
                        row.function_id,
                        row.source,
                        None,
                        hit[1],
                        True,
                        times[used],
                        times[used + 1],
                        None,
                        None,
                        hit[2],
                        None,
                        (),
                        ready(index),
                    )
                )
                used += 2
            else:
                row.ready = ready(index)
                made.append(row)
        calls.extend(made)
        self._times_used = used

    # -- one call recorded in full -------------------------------------------------------------
    def _finish(
        self,
        fn: Any,
        args: tuple,
        kwargs: dict,
        index: int,
        n_events: int,
        n_logs: int,
        start: float,
        end: float,
        error: BaseException | None,
    ) -> None:
        """Record one call, with every jitted call jaxmagic itself makes meanwhile passed straight through.

        Recording a call runs JAX again (tracing, lowering, the `--values` evaluation). Some of
        JAX's own primitives make and call jitted helpers when bound eagerly (`shard_map` on JAX
        0.4 to 0.6), and those would be recorded as the user's calls, each evaluated again for
        values, without end. So the jit recorder is off while a call is recorded (no per-call
        cost: only this slow path changes it), and, as a backstop, a call recorded while another
        is being recorded is run and not recorded (`record`, MAX_RECORDING_DEPTH).
        """
        prefetch.COLLECTOR.compile_ended()  # the call returned: no compile runs now, whatever JAX reported
        self._finishing += 1
        previous = jit_patch.set_recorder(None)
        try:
            with paused_gc():  # a first call's signature and artefacts: a burst of short-lived objects
                self._append_call(fn, args, kwargs, index, n_events, n_logs, start, end, error)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"jaxmagic could not record call {index}: {type(exc).__name__}: {exc}")
        finally:
            jit_patch.set_recorder(previous)
            self._finishing -= 1

    def _note_nested(self, index: int) -> None:
        """A jitted call made while jaxmagic recorded another is jaxmagic's own: noted once, not recorded."""
        if not self._nested_noted:
            self._nested_noted = True
            self.capture.notes.append(
                f"call {index} was made by jaxmagic itself while it recorded another call and is not recorded"
            )

    def _append_call(
        self,
        fn: Any,
        args: tuple,
        kwargs: dict,
        index: int,
        n_events: int,
        n_logs: int,
        start: float,
        end: float,
        error: BaseException | None,
    ) -> None:
        """The call's row: its events and phases, and (a miss, or within the signature budget) its
        signature, why it missed and its artefacts."""
        state = self.table.functions.get(id(fn))
        new_function = False
        if state is None:
            state, new_function = self.table.state_of(fn)
        self.table.count_call(fn, state)
        events = self.capture.events[n_events:]  # calls are synchronous: these fired during it
        for event in events:
            event.call_index = index
        durations = monitoring.phase_durations(events)
        # JAX reports every trace, lowering and compile; nothing fires on a cache hit.
        cache_hit = error is None and not any(durations.values())
        durations["execute"] = max(0.0, (end - start) - sum(durations.values()))
        explanations = tuple(r.text for r in self._logs[n_logs:] if r.kind == "miss")
        signature: Signature | None = None
        artifacts: Artifacts | None = None
        call_site = None
        miss_reason = None
        if not cache_hit or state.calls <= SIGNATURE_BUDGET_PER_FUNCTION:
            signature, leaves, renames = self.signatures.of_call(fn, args, kwargs, state)
            call_site = source.caller_location(sys._getframe())
            if not cache_hit:
                miss_reason = self.signatures.miss_reason(
                    fn, state, explanations, signature, renames, call_site, new_function
                )
            state.last_signature = signature
            # A call JAX's jax_debug_nans/infs stopped was traced and compiled: its program is still shown.
            if error is None or isinstance(error, FloatingPointError):
                artifacts = self._artifacts(fn, args, kwargs, index, state, signature, renames, durations["execute"])
                self._note_key_program(fn, state, artifacts, index, leaves, call_site)
                _keep_no_buffers(artifacts)
            if error is None:
                self.table.note_program(fn, state, index, signature, artifacts)  # what its later hits run
        self._rows.append(
            JitCall(
                index=index,
                name=state.name,
                function_id=state.function_id,
                source=state.source,
                call_site=call_site,
                signature=signature,
                cache_hit=cache_hit,
                start=start,
                end=end,
                phases=durations,
                miss_reason=miss_reason,
                artifacts=artifacts,
                error=None if error is None else f"{type(error).__name__}: {error}",
                explanations=explanations,
            )
        )
        if error is None and self.donations.donates(id(state), fn):  # its calls' donated arrays are noted,
            state.donates = True  # cache hits included (`record`'s way, not the fast path)
            self.donations.note(id(state), args, kwargs, index, state.name)
        self.table.settle_fast(fn, state)

    def _artifacts(
        self,
        fn: Any,
        args: tuple,
        kwargs: dict,
        index: int,
        state: FunctionState,
        signature: Signature,
        renames: dict[str, str],
        execute_s: float,
    ) -> Artifacts:
        """The artefacts of the call's signature: taken on its first call, shared by the later ones."""
        artifacts = state.artifacts.get(signature.key)
        if artifacts is not None:
            return artifacts
        self._collecting = True
        try:
            artifacts = collect(
                fn,
                args,
                kwargs,
                execute_s,
                compile=self._compile,
                on_jaxpr=lambda jaxpr: self.findings.note(fn, jaxpr, index),
                vmap_namespace=self.namespace if self.vmap else None,
                values=self.values,
                grads=self.grads,
            )
        finally:
            self._collecting = False
        state.artifacts[signature.key] = artifacts
        if renames:
            artifacts.input_names = tuple(a.path for a in signature.args if not a.static)
        return artifacts

    def _note_key_program(
        self,
        fn: Any,
        state: FunctionState,
        artifacts: Artifacts,
        index: int,
        leaves: list,
        call_site: SourceLocation | None,
    ) -> None:
        """The key flow of the call's program, when it handles PRNG keys: each of its calls is then
        recorded for the key tree (`record`'s way, not the fast path)."""
        if self.keys is None:
            return
        program = self.keys.program(artifacts)
        state.key_program = program  # cache hits past the budget reuse it (`record`), not the fast path
        if program is not None:
            self._key_call = (index, state.name, program, leaves, call_site)
