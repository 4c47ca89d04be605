"""One capture session: installs every hook on one ExitStack and records into a Capture.

Each patch registers its undo right after it is made, so any exit (an exception, a
KeyboardInterrupt, a failure of our own) restores jax.jit, the user's namespace and the
monitoring listeners.
"""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import jax

from . import jax_compat, jit_patch, monitoring, source
from .record import Artifacts, Capture, Event, JitCall, Signature, SourceLocation
from .signature import signature_of

# Cache hits get a signature (and a graph, for functions compiled before the capture)
# for this many calls per function; after that only misses do. Flattening the
# arguments of every call would cost more than JAX's own dispatch.
SIGNATURE_BUDGET_PER_FUNCTION = 32

_COMPILE_PHASES = ("trace", "lower", "compile")

jax_compat.hide_from_jax(source.PACKAGE_DIR)
_trace_state_clean = jax_compat.trace_state_clean
_clock = time.perf_counter


@dataclass
class _FunctionState:
    """What is known of one jitted function during a capture (computed once, not per call)."""

    name: str
    source: SourceLocation | None
    calls: int = 0
    hot: bool = False  # past the signature budget: hits take the fast path
    artifacts: dict[tuple, Artifacts] = field(default_factory=dict)

    @classmethod
    def of(cls, fn: Any) -> _FunctionState:
        target = getattr(fn, "__wrapped__", fn)
        name = getattr(target, "__qualname__", None) or getattr(fn, "__name__", "<jitted>")
        return cls(name=name, source=source.function_location(fn))


class CaptureSession:
    """Records the jitted calls and JAX compile events of one block of user code."""

    def __init__(self, namespace: dict | None, values: bool = False, vmap: bool = False):
        self.namespace = namespace if namespace is not None else {}
        self.values = values  # evaluate each new signature's jaxpr again for forward values
        self.vmap = vmap  # trace vmapped programs again with one more element for batch dimensions
        self.capture = Capture(jax_version=jax.__version__)
        self._stack = ExitStack()
        self._functions: dict[int, _FunctionState] = {}
        self._collecting = False  # our own artefact tracing: its events are not the user's
        self._running = False
        # One row per call, in order: a JitCall, or (state, start, end) for a fast-path cache
        # hit, turned into a JitCall when the capture stops (saves ~0.5 us per call).
        self._rows: list[Any] = []

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> Capture:
        try:
            self.capture.backend = jax.default_backend()
        except Exception as exc:  # no backend is the user's problem, shown when their code runs
            self.capture.notes.append(f"no JAX backend: {exc}")
        stack = self._stack
        try:
            previous = jit_patch.set_recorder(self)
            stack.callback(jit_patch.set_recorder, previous)
            if previous is None:  # an outer capture already patched everything
                jit_patch.patch_jit(stack, self.namespace)
                jit_patch.wrap_namespace(stack, self.namespace)
            self.capture.notes.extend(monitoring.listen(stack, self._on_duration, self._on_event))
        except BaseException:
            stack.close()
            raise
        self._running = True
        self.capture.start = time.perf_counter()
        return self.capture

    def stop(self, error: BaseException | None = None) -> Capture:
        """Undo every hook (always), then note the error. Safe to call twice."""
        if self._running:
            self._running = False
            self.capture.end = time.perf_counter()
        self._stack.close()
        self._materialize_calls()
        if error is not None and self.capture.error is None:
            self.capture.error = source.cell_error(error)
        return self.capture

    # -- monitoring ------------------------------------------------------------------
    def _on_duration(self, name: str, duration: float, kwargs: dict) -> None:
        if self._collecting or not self._running:
            return
        end = time.perf_counter()
        self.capture.events.append(Event(
            name=name, phase=monitoring.phase_of(name), fun_name=kwargs.get("fun_name"),
            start=end - duration, end=end, call_index=None))

    def _on_event(self, name: str, kwargs: dict) -> None:
        if self._collecting or not self._running:
            return
        now = time.perf_counter()
        self.capture.events.append(Event(
            name=name, phase=monitoring.phase_of(name), fun_name=kwargs.get("fun_name"),
            start=now, end=now, call_index=None))

    # -- calls -------------------------------------------------------------------------
    def record(self, fn: Any, args: tuple, kwargs: dict) -> Any:
        """Run one call of jitted `fn` and record it. Called by RecordedJit.

        The common case, a cache hit of a function already seen many times, costs two
        clock reads and one tuple; signatures and artefacts are taken only on misses
        and on the first calls of each function.
        """
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        if not _trace_state_clean():
            # Under a JAX trace: a call nested in a recorded call's tracing, a call under
            # grad/vmap, or our own artefact tracing. It is part of that computation.
            return fn(*args, **kwargs)
        rows = self._rows
        events = self.capture.events
        n_events = len(events)
        index = len(rows)
        start = _clock()
        try:
            out = fn(*args, **kwargs)
        except BaseException as exc:
            end = _clock()
            self._finish(fn, args, kwargs, index, n_events, start, end, exc)
            raise
        end = _clock()
        state = self._functions.get(id(fn))
        if state is not None and state.hot and len(events) == n_events:
            rows.append((state, id(fn), start, end))
            return out
        self._finish(fn, args, kwargs, index, n_events, start, end, None)
        return out

    def _materialize_calls(self) -> None:
        calls = self.capture.calls
        for index in range(len(calls), len(self._rows)):
            row = self._rows[index]
            if type(row) is tuple:
                state, fid, start, end = row
                row = JitCall(index, state.name, fid, state.source, None, None, True, start, end,
                              {"trace": 0.0, "lower": 0.0, "compile": 0.0, "execute": end - start})
            calls.append(row)

    def _finish(self, fn: Any, args: tuple, kwargs: dict, index: int, n_events: int,
                start: float, end: float, error: BaseException | None) -> None:
        try:
            self._append_call(fn, args, kwargs, index, n_events, start, end, error)
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"jaxmagic could not record call {index}: {type(exc).__name__}: {exc}")

    def _append_call(self, fn: Any, args: tuple, kwargs: dict, index: int, n_events: int,
                     start: float, end: float, error: BaseException | None) -> None:
        state = self._functions.get(id(fn))
        if state is None:
            state = self._functions[id(fn)] = _FunctionState.of(fn)
        state.calls += 1
        state.hot = state.calls >= SIGNATURE_BUDGET_PER_FUNCTION

        durations = {phase: 0.0 for phase in _COMPILE_PHASES}
        for event in self.capture.events[n_events:]:  # calls are synchronous: these fired during it
            event.call_index = index
            if event.phase in durations:
                durations[event.phase] += event.end - event.start
        # JAX reports every trace, lowering and compile; nothing fires on a cache hit.
        cache_hit = error is None and not any(durations.values())
        durations["execute"] = max(0.0, (end - start) - sum(durations.values()))

        signature: Signature | None = None
        artifacts: Artifacts | None = None
        call_site = None
        if not cache_hit or state.calls <= SIGNATURE_BUDGET_PER_FUNCTION:
            signature = signature_of(fn, args, kwargs)
            call_site = source.caller_location(sys._getframe())
            if error is None:
                artifacts = state.artifacts.get(signature.key)
                if artifacts is None:
                    artifacts = state.artifacts[signature.key] = self._artifacts(
                        fn, args, kwargs, durations["execute"])

        self._rows.append(JitCall(
            index=index, name=state.name, function_id=id(fn), source=state.source, call_site=call_site,
            signature=signature, cache_hit=cache_hit, start=start, end=end, durations=durations,
            artifacts=artifacts, error=None if error is None else f"{type(error).__name__}: {error}"))

    def _artifacts(self, fn: Any, args: tuple, kwargs: dict, execute_s: float) -> Artifacts:
        """The jaxpr, Lowered and Compiled for this call's signature, via JAX's AOT API.

        Right after the call these hit the caches the call filled (well under 1 ms). Then,
        only when asked for: vmap batch dimensions (programs with vmap are traced once more,
        so the user's Python inside them runs again: opt-in) and forward values (the jaxpr
        evaluated again on this call's arguments). JAX events these fire are ours.
        """
        from . import batching, values  # imported on first use: `%load_ext` stays as fast

        artifacts = Artifacts()
        traced = None
        self._collecting = True
        try:
            try:
                traced = fn.trace(*args, **kwargs)
                artifacts.jaxpr = traced.jaxpr
                artifacts.lowered = traced.lower()
                artifacts.compiled = artifacts.lowered.compile()
            except Exception as exc:
                artifacts.error = f"{type(exc).__name__}: {exc}"
            if artifacts.jaxpr is not None and self.vmap:
                batch = batching.batch_info(fn, args, kwargs, artifacts.jaxpr, self.namespace)
                if batch is not None:
                    artifacts.batch_dims, artifacts.batch_size, artifacts.batch_note = batch.dims, batch.size, batch.note
            if artifacts.jaxpr is not None and self.values:
                artifacts.values, artifacts.values_note = values.call_values(fn, traced, args, kwargs, execute_s)
        finally:
            self._collecting = False
        return artifacts


class CaptureContext:
    """`with jaxmagic.capture() as cap:` — records the block into `cap` (a Capture)."""

    def __init__(self, namespace: dict | None, values: bool = False, vmap: bool = False):
        self._session = CaptureSession(namespace, values=values, vmap=vmap)

    def __enter__(self) -> Capture:
        return self._session.start()

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        self._session.stop(exc)
        return False


def capture(namespace: dict | None = None, values: bool = False, vmap: bool = False) -> CaptureContext:
    """Record what JAX does inside a `with` block.

    `namespace` is where jitted functions are looked up and wrapped for per-call
    recording; by default the caller's module globals, as a notebook uses its user
    namespace. Functions jitted inside the block are always recorded.

    `values=True` also records forward values: a summary (shape, dtype, min, max, mean,
    NaN/Inf counts, tiny values printed) of every variable of the first call of each
    function and signature, in `Artifacts.values` (costs a second evaluation; see
    capture/values.py for its guards).

    `vmap=True` also records, for programs that use `jax.vmap`, the position of the batch
    dimension in every variable (`Artifacts.batch_dims`): the program is traced once more
    with one more element per vmap, so Python side effects inside it run again
    (capture/batching.py).
    """
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    return CaptureContext(namespace, values=values, vmap=vmap)
