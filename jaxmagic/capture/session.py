"""One capture session: installs every hook on one ExitStack and records into a Capture.

Each patch registers its undo right after it is made, so any exit (an exception, a
KeyboardInterrupt, a failure of our own) restores jax.jit, the user's namespace and the
monitoring listeners.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import jax

from . import jax_compat, source, tasks
from .buffers import drop_device_buffers
from .findings import trace_prints, warning_site
from .findings.donation import DonationLog
from .findings.dtype import TruncationLog
from .grads import patch as grad_patch
from .jit import cache_log, miss, monitoring, readiness, user_names
from .jit import patch as jit_patch
from .jit.signature import concrete_key, signature_of
from .keys import log as key_log
from .keys import patch as key_patch
from .quiet_gc import paused_gc
from .record import Artifacts, Capture, Event, Finding, JitCall, Signature, SourceLocation

# Cache hits get a signature (and a graph, for functions compiled before the capture)
# for this many calls per function; after that only misses do. Flattening the
# arguments of every call would cost more than JAX's own dispatch.
SIGNATURE_BUDGET_PER_FUNCTION = 8

# A call recorded while another is being recorded is jaxmagic's own work (see `_finish`): with
# the jit recorder off during recording none should arrive; past this depth one is not recorded.
MAX_RECORDING_DEPTH = 1
_COMPILE_PHASES = ("trace", "lower", "compile")
# Whether `Lowered.compile()` after a call compiles again (JAX 0.4) or hits the call's
# cache (0.5+): None until the first artefact compile in this process shows it.
_AOT_COMPILE_RECOMPILES: bool | None = None

jax_compat.hide_from_jax(source.PACKAGE_DIR)
_trace_state_clean = jax_compat.trace_state_clean
_CURRENT_TRACE, _NO_TRACE = jax_compat.current_trace_probe()  # `.value is _NO_TRACE`: the call runs
_clock = time.perf_counter
_thread = threading.get_ident  # a capture records the thread that runs the cell (about 40 ns a check)


def _in_user_code(where: SourceLocation | None) -> bool:
    return where is not None and source.is_user_file(where.file)


def _call_plain(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a call when jitted calls are not routed (the namespace-wrapper fallback)."""
    __tracebackhide__ = True
    return fn(*args, **kwargs)


def _recording_call(frame: Any) -> int | None:
    """The index of the recorded call `frame` runs inside (a `CaptureSession.record` frame above it)."""
    code = CaptureSession.record.__code__
    while frame is not None:
        if frame.f_code is code:
            return frame.f_locals.get("index")
        frame = frame.f_back
    return None


@dataclass
class _FunctionState:
    """What is known of one jitted function during a capture (computed once, not per call)."""

    name: str
    source: SourceLocation | None
    calls: int = 0
    misses: int = 0
    function_id: int = 0  # id() of the jitted function, as JitCall.function_id
    artifacts: dict[tuple, Artifacts] = field(default_factory=dict)
    last_signature: Signature | None = None  # of the latest call with one: what a miss is compared with
    key_program: Any = None  # key_flow.ProgramKeys of its latest program that handles PRNG keys
    wrappers: int = 1  # jitted functions JAX treats as this one (`jax.jit(f)` made anew for the same `f`)

    @classmethod
    def of(cls, fn: Any) -> _FunctionState:
        return cls(name=_function_name(fn), source=source.function_location(fn), function_id=id(fn))


def _definition_key(fn: Any) -> tuple | None:
    """(Python function, jit's options): equal for two jitted functions JAX's call cache treats as one
    (it keys on the function and the options; the key here takes every option, so it is if anything
    stricter); None when either is unknown or unhashable (the function then stands alone)."""
    target = jax_compat.python_function(fn)
    options = jax_compat.jit_options(fn)
    if target is None or options is None:
        return None
    key = (target, options)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _definition_site(fn: Any) -> tuple | None:
    """Where the jitted Python function's code is: functions made anew from one `lambda` share it."""
    code = getattr(jax_compat.python_function(fn), "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno, code.co_name)


def _function_name(fn: Any) -> str:
    """The jitted function's name; a jitted bound method by its object's class (`MLP.apply` for
    `jax.jit(model.apply)`, where the method's own name says `Module.apply`)."""
    target = getattr(fn, "__wrapped__", fn)
    owner = getattr(target, "__self__", None)
    name = getattr(target, "__name__", None)
    if owner is not None and name and not isinstance(owner, (type, types.ModuleType)):
        return f"{type(owner).__name__}.{name}"
    return getattr(target, "__qualname__", None) or getattr(fn, "__name__", "<jitted>")


class CaptureSession:
    """Records the jitted calls and JAX compile events of one block of user code."""

    def __init__(
        self,
        namespace: dict | None,
        values: bool = False,
        vmap: bool = False,
        sync: bool = False,
        grads: bool = False,
        shardings: bool = False,
        keys: bool = True,
        finish: Callable[[Capture], None] | None = None,
    ):
        """`finish`: run once on the capture when it stops, after everything was recorded: the
        model's findings over the whole capture (model/findings.py `complete`), handed in
        because the capture layer never imports the model."""
        self.namespace = namespace if namespace is not None else {}
        self._on_stop = finish
        self._keys = key_log.KeyLog() if keys else None  # PRNG key lineage (%%prng)
        self._key_call: tuple | None = None  # the keyed call `_append_call` just recorded, for `record`
        self._truncations: TruncationLog | None = None  # JAX's dtype truncation warnings (`start`)
        self.shardings = shardings  # record where arrays live: namespace arrays at stop, jitted outputs
        self._outputs_seen: set[int] = set()  # artifacts whose call's outputs were recorded
        self.grads = grads  # trace each differentiated function again for JAX's forward/backward split
        self.values = values  # evaluate each new signature's jaxpr again for forward values
        self.vmap = vmap  # trace vmapped programs again with one more element for batch dimensions
        self.sync = sync  # wait for each call's outputs (exact device time; changes the program's timing)
        self.capture = Capture(jax_version=jax.__version__)
        self._stack = ExitStack()
        self._functions: dict[int, _FunctionState] = {}
        self._collecting = False  # our own artefact tracing: its events are not the user's
        self._own_compiles = 0  # backend compiles our artefact collection caused
        self._aot_noted = False
        self._finishing = 0  # depth of `_finish`: above 0, jaxmagic is recording a call (its own JAX work)
        self._nested_noted = False
        self._running = False
        self._call: Any = _call_plain  # how `record` runs a jitted call (`start` picks it)
        self._jax_own: dict[int, Any] = {}  # jitted functions defined in JAX itself, by id: not recorded
        # One row per call, in order: a JitCall, or the function's state for a fast-path cache
        # hit, turned into a JitCall when the capture stops (saves ~0.5 us per call); the hits'
        # start and end times go, in the same order, to `_times` (floats, which Python's garbage
        # collector does not track: a tuple per call made it walk every row of a long loop).
        self._rows: list[Any] = []
        self._times: list[float] = []
        self._times_used = 0  # floats of `_times` already turned into JitCalls
        self._logs: list[cache_log.LogRecord] = []  # JAX's cache records, in order
        self._cache_log = cache_log.CacheLog(self._logs.append)
        self._ready = readiness.ReadyWatch(_clock)
        self._nans: Any = None  # nan_check.NanWatch, made at the first call it notes
        self._next_sample = [0.0]  # clock time of the next call whose readiness is sampled (shared with jit_patch)
        self._hot: dict[int, _FunctionState] = {}  # functions past the signature budget, by id
        # Hot functions whose cache hits need only a row: `jit_patch._routed_call` records those itself.
        self._fast: dict[int, _FunctionState] = {}
        self.fast_path: jit_patch.FastPath | None = None
        self._events = self.capture.events
        self._definitions: dict[tuple, set[int]] = {}  # definition site -> ids of jitted functions made there
        self._explain_stopped = False
        self._site_misses: dict[Any, int] = {}  # misses of jitted functions by their code's definition site
        self._analysed: set = set()  # definitions whose jaxpr findings were looked for
        # One state per definition as JAX's own call cache keys it (the Python function and jit's
        # options): a `jax.jit(f)` made anew each iteration is one function called many times.
        self._by_definition: dict[tuple, _FunctionState] = {}
        self._alive: list = []  # every recorded jitted function, until `stop`: their ids stay theirs
        # ... except the further wrappers of a hot definition (`_hot_definition`): those are forgotten
        # by id when they die (a weak reference each), so a loop of `jax.jit(f)(x)` keeps none alive.
        self._wrapper_refs: dict[int, weakref.ref] = {}
        self._user_targets: dict[int, Any] = {}  # the user's Python functions behind jitted ones, by id
        # id(state) -> (concrete_key, Signature) of its latest signature taken (`_raw_signature`); the
        # key holds jit's options of the user's function: dropped at `stop`.
        self._raw_signatures: dict[int, tuple[tuple, Signature]] = {}
        self._deferred_findings: list[tuple[Any, Any, int, Any]] = []  # (fn, jaxpr, call, reach) for `stop`
        self._donations = (
            DonationLog()
        )  # arrays handed to donating calls, for a read after (capture/findings/donation.py)
        self._thread = _thread()  # the cell's thread; calls and compiles from others are not recorded
        self._other_threads = 0
        self._earlier_tasks: frozenset = frozenset()  # asyncio tasks an earlier cell left running (tasks.py)
        self._other_tasks = 0

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> Capture:
        self._thread = _thread()
        self._earlier_tasks = tasks.earlier_tasks()
        # The backend is read at the end, and only if the cell's code made one: starting JAX's
        # backend here would refuse the cell's own `jax.config.update('jax_num_cpu_devices', 8)`.
        self._stack.callback(self._note_backend)
        self.capture.settings = {
            "sync": self.sync,
            "persistent_cache_dir": getattr(jax.config, "jax_compilation_cache_dir", None),
        }
        stack = self._stack
        if not (self.shardings or self._earlier_tasks):  # those read every call's arguments or task
            self.fast_path = jit_patch.FastPath(
                hot=self._fast,
                rows=self._rows,
                times=self._times,
                events=self._events,
                next_sample=self._next_sample,
                thread=self._thread,
                passthrough=self._jax_own,
            )
        try:
            previous = jit_patch.set_recorder(self)
            stack.callback(jit_patch.set_recorder, previous)
            if previous is not None:  # an outer capture routed or wrapped everything already
                self._call = getattr(previous, "_call", _call_plain)
            elif jit_patch.route_jitted_calls(stack):
                self._call = jit_patch.call_jitted  # JAX's own C++ call: the type's call now comes to us
            else:
                self.capture.notes.append(
                    "this Python cannot route jitted calls: calls are seen only for jitted functions bound "
                    "in the namespace or made in the cell; others only through their compile events"
                )
                jit_patch.patch_jit(stack, self.namespace)
                jit_patch.wrap_namespace(stack, self.namespace)
            self._grads = grad_patch.GradLog(self, _recording_call)
            previous_grads = grad_patch.set_recorder(self)
            stack.callback(grad_patch.set_recorder, previous_grads)
            grad_patch.patch_grads(stack, self.namespace)  # patches nothing when an outer capture did
            if self._keys is not None:
                self._keys.note_names(self.namespace, before=True)
                stack.callback(key_patch.set_recorder, key_patch.set_recorder(self._keys))
                key_patch.patch_random(stack, self.namespace)  # patches nothing when an outer capture did
                key_patch.patch_eager_transforms(stack)
            self._truncations = TruncationLog(self._own_work, _recording_call)
            warning_site.install(stack, self._truncations, self._thread)  # warnings keep the user's line
            self.capture.notes.extend(monitoring.listen(stack, self._on_duration, self._on_event))
            self.capture.notes.extend(self._cache_log.install(stack))
            trace_prints.patch_print(
                stack, _trace_state_clean, _recording_call, self._on_trace_print, source.caller_location, self.namespace
            )
        except BaseException:
            stack.close()
            raise
        if self.shardings:  # which names the cell binds anew: their arrays are listed first
            self._bound_before = {name: id(value) for name, value in self.namespace.items()}
            self._inputs_seen: set[int] = set()
            self._context_meshes: list = []  # meshes set with jax.set_mesh / use_mesh at the cell's calls
        # Names bound before the cell (by identity): arrays the cell binds are checked for NaN/Inf at `stop`.
        self._names_before = self._snapshot_names()
        self._running = True
        self.capture.start = time.perf_counter()
        return self.capture

    def stop(self, error: BaseException | None = None) -> Capture:
        """Undo every hook (always), then note the error. Safe to call twice. No cyclic garbage
        collection meanwhile (`quiet_gc`): stopping builds every call's record at once."""
        with paused_gc():
            return self._stop(error)

    def _stop(self, error: BaseException | None) -> Capture:
        if self._running:
            self._running = False
            self.capture.end = time.perf_counter()
        self._stack.close()
        for what, step in (
            ("device times", self._ready.poll),
            ("the calls", self._materialize_calls),
            ("JAX's cache log", self._copy_logs),
            ("the cell's error", lambda: self._note_error(error)),
            ("NaN and Inf in the outputs", self._check_nans),
        ):
            try:
                step()
            except Exception as exc:  # our failure never becomes the user's: the rest is still recorded
                self.capture.notes.append(
                    f"jaxmagic could not record {what}: {type(exc).__name__}: {exc} "
                    "(please open an issue with this message)"
                )
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
        if self.shardings:
            self._record_placement()
        if self._keys is not None:
            self._record_keys()
        self._record_truncations()
        try:
            self._run_deferred_findings()  # last: everything above is complete even if this is interrupted
            self._run_finish()
        finally:  # the values were read: the capture keeps no array a program closed over
            self.capture.wrappers.update(
                {state.function_id: state.wrappers for state in self._by_definition.values() if state.wrappers > 1}
            )
            self._alive.clear()  # the cell's jitted functions live as long as the cell keeps them
            self._wrapper_refs.clear()
            self._raw_signatures.clear()
            self._by_definition.clear()
            self._user_targets.clear()
            self._jax_own.clear()  # JAX's own jitted helpers (`_pjit_call_impl`'s) hold programs with constants
            self._grads = grad_patch.GradLog(self, _recording_call)  # so does its cache of splits
            try:
                drop_device_buffers(self.capture)
            except Exception as exc:  # our failure never becomes the user's
                self.capture.notes.append(f"closed-over arrays kept by the capture: {type(exc).__name__}: {exc}")
        return self.capture

    def _run_finish(self) -> None:
        finish, self._on_stop = self._on_stop, None  # once, though `stop` may run twice
        if finish is None:
            return
        try:
            finish(self.capture)
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(
                f"jaxmagic could not look for findings over the whole cell: "
                f"{type(exc).__name__}: {exc} (please open an issue with this message)"
            )

    def _note_backend(self) -> None:
        """The default backend's name, where one exists by now; never starts one."""
        if not jax_compat.backends_are_initialized():
            return
        try:
            self.capture.backend = jax.default_backend()
        except Exception as exc:
            self.capture.notes.append(f"no JAX backend: {exc}")

    def close(self) -> None:
        """Undo every hook, and nothing else: the last resort when `stop` itself failed."""
        self._running = False
        self._stack.close()

    def _copy_logs(self) -> None:
        self.capture.logs = [(r.kind, r.text, r.time) for r in self._logs]

    def _note_error(self, error: BaseException | None) -> None:
        if error is not None and self.capture.error is None:
            self.capture.error = source.cell_error(error)
            from .findings import concretization

            found = concretization.explain(error, self.capture)  # JAX's concretization errors, explained
            if found is None:
                found = self._donations.explain(error, self.capture)  # a donated array read after its call
            if found is not None:
                self.capture.findings.append(found)

    def _record_placement(self) -> None:
        """Arrays bound in the namespace and the meshes in use, as the cell left them."""
        if getattr(self, "_placed", False):
            return
        self._placed = True
        try:
            from .sharding import arrays as sharding

            named: dict = {}  # meshes, named by the same walk as the arrays
            arrays, extra = sharding.namespace_arrays(
                self.namespace,
                getattr(self, "_bound_before", {}),
                getattr(self, "_inputs_seen", set()),
                meshes=named,
                notes=self.capture.notes,
            )
            self.capture.arrays[:] = sharding.merge_outputs(self.capture.arrays, arrays, self.namespace)
            if extra:
                self.capture.notes.append(
                    f"{extra} more arrays in the namespace were not recorded (the first {sharding.MAX_ARRAYS} were)"
                )
            self.capture.meshes.extend(
                sharding.namespace_meshes(self.namespace, named, getattr(self, "_context_meshes", ()))
            )
            if jax_compat.backends_are_initialized():  # asking for devices would start a backend
                self.capture.devices.extend(
                    (int(d.id), str(d.platform), str(getattr(d, "device_kind", ""))) for d in jax.devices()
                )
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"array placement not recorded: {type(exc).__name__}: {exc}")

    def _own_work(self) -> bool:
        """True while jaxmagic traces or records for itself: the user's code or JAX runs again."""
        return self._collecting or self._finishing > 0

    def _record_truncations(self) -> None:
        """64-bit dtypes JAX truncated, from its own warnings (capture/findings/dtype.py)."""
        log, self._truncations = self._truncations, None
        try:
            if log is not None:
                self.capture.findings.extend(log.findings(self.capture.calls))
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"dtype truncations not recorded: {type(exc).__name__}: {exc}")

    def _record_keys(self) -> None:
        """The PRNG key lineage: key data is read now, once, not while the cell ran."""
        log, self._keys = self._keys, None
        try:
            log.note_names(self.namespace, before=False)
            records, found, notes = log.finish()
            self.capture.keys[:] = records
            self.capture.findings.extend(found)
            self.capture.notes.extend(notes)
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"PRNG key lineage not recorded: {type(exc).__name__}: {exc}")

    def _run_deferred_findings(self) -> None:
        deferred, self._deferred_findings = self._deferred_findings, []
        if not deferred:
            return
        from .findings import program as findings

        for fn, closed_jaxpr, index, reach in deferred:
            kinds = (findings.CONSTANTS, findings.LOOPS) if reach is not None else (findings.LOOPS,)
            try:
                self._add_findings(fn, closed_jaxpr, index, kinds, reach)
            except Exception as exc:  # our failure never becomes the user's
                self.capture.notes.append(
                    f"baked constants and unrolled loops not checked: {type(exc).__name__}: {exc}"
                )
            self._add_index_findings(fn, closed_jaxpr, index)

    def _add_index_findings(self, fn: Any, closed_jaxpr: Any, index: int) -> None:
        """Constant indices outside the array, which JAX clamps or drops (capture/findings/index.py)."""
        from .findings import index as index_findings

        try:
            found = index_findings.index_findings(closed_jaxpr, self._name_of(fn))
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"out-of-bounds indices not checked: {type(exc).__name__}: {exc}")
            return
        self.capture.findings.extend(dataclasses.replace(f, call=index) for f in found)

    # -- monitoring ------------------------------------------------------------------
    def _on_duration(self, name: str, duration: float, kwargs: dict) -> None:
        if _thread() != self._thread:  # another thread's compile is not this cell's
            self._other_threads += 1
            return
        if self._earlier_tasks and tasks.current_task() in self._earlier_tasks:  # nor an earlier cell's task's
            return
        if self._collecting:
            self._own_compiles += monitoring.phase_of(name) == "compile"
            return
        if not self._running:
            return
        end = time.perf_counter()
        self.capture.events.append(
            Event(
                name=name,
                phase=monitoring.phase_of(name),
                fun_name=kwargs.get("fun_name"),
                start=end - duration,
                end=end,
                call_index=None,
            )
        )

    def _on_event(self, name: str, kwargs: dict) -> None:
        if self._collecting or not self._running or _thread() != self._thread:
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

    # -- calls -------------------------------------------------------------------------
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
            return self._call(fn, *args, **kwargs)
        if self._earlier_tasks and tasks.current_task() in self._earlier_tasks:  # an earlier cell's task
            self._other_tasks += 1
            return self._call(fn, *args, **kwargs)
        state = self._hot.get(id(fn))
        if state is None:
            if self._is_jax_own(fn):  # `jnp.where`, `jax.random.normal`: JAX's ops, not programs
                return self._call(fn, *args, **kwargs)
            state = self._hot_definition(fn)
        events = self._events
        n_events = len(events)
        n_logs = len(self._logs)
        rows = self._rows
        index = len(rows)
        start = _clock()
        sampled = start >= self._next_sample[0]  # readiness is polled and watched once per SAMPLE_S
        if sampled:
            self._ready.poll(start)
        try:
            out = self._call(fn, *args, **kwargs)
        except BaseException as exc:
            end = _clock()
            if self._finishing < MAX_RECORDING_DEPTH:
                self._finish(fn, args, kwargs, index, n_events, n_logs, start, end, exc)
            raise
        end = _clock()
        if sampled:
            self._watch(index, out, start, end, state)
        if state is not None and len(events) == n_events:
            rows.append(state)
            times = self._times
            times.append(start)
            times.append(end)
            if self.shardings:
                self._note_inputs(args, kwargs)
            if self._donations.donating and self._donations.donating.get(id(state)):
                self._donations.note(id(state), args, kwargs, index, state.name)
            if state.key_program is not None and self._keys is not None:
                self._key_call = (index, state.name, state.key_program, (fn, args, kwargs), None)
                self._record_key_call(out)
            return out
        if self._finishing >= MAX_RECORDING_DEPTH:  # the backstop of `_finish`: jaxmagic's own call
            self._note_nested(index)
            return out
        self._finish(fn, args, kwargs, index, n_events, n_logs, start, end, None)
        self._note_nans(index, fn, args, kwargs, out)
        if self.shardings:
            self._note_inputs(args, kwargs)
            self._record_outputs(index, out)
        if self._key_call is not None:
            self._record_key_call(out)
        return out

    def sampled(self, fn: Any, state: _FunctionState, args: tuple, kwargs: dict, n_events: int, start: float) -> Any:
        """A fast-path call (`jit_patch._routed_call`: hot, no trace, this thread) due a readiness sample:
        poll, run, watch its outputs, add its row. What `record` does for it, without the checks the
        routed call made already (a train step of 0.5 ms is sampled about every other call)."""
        __tracebackhide__ = True
        self._ready.poll(start)
        try:
            out = self._call(fn, *args, **kwargs)
        except BaseException as exc:
            self.fast_missed(fn, args, kwargs, None, n_events, start, _clock(), exc)
            raise
        end = _clock()
        if len(self._events) != n_events:  # JAX traced or compiled: a miss, recorded in full
            self.fast_missed(fn, args, kwargs, out, n_events, start, end, None)
            return out
        self._watch(len(self._rows), out, start, end, state)
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

    def _hot_definition(self, fn: Any) -> _FunctionState | None:
        """The state of a hot function when `fn`, seen for the first time, is another jitted function
        of its definition (`jax.jit(f)` made anew each iteration): `fn` is then hot too."""
        if id(fn) in self._functions or not self._by_definition:
            return None
        state = self._by_definition.get(_definition_key(fn))
        if state is None or state.calls < SIGNATURE_BUDGET_PER_FUNCTION:
            return None
        state.wrappers += 1
        self._functions[id(fn)] = self._hot[id(fn)] = state
        self._keep_id(fn)
        if state.key_program is None:
            self._fast[id(fn)] = state
        return state

    def _keep_id(self, fn: Any) -> None:
        """Make sure `fn`'s id means `fn` for the rest of the capture, without keeping `fn` alive.

        A `jax.jit(f)` made anew each iteration is called once and dropped: kept alive until the
        capture stops, thousands of them (and JAX's objects behind each) made Python's garbage
        collector walk them again and again (+30% on each call). A weak reference drops its id from
        the tables when it dies, before another object can take that id; where JAX's type takes
        no weak reference, the function stays alive as any other recorded one.
        """
        key = id(fn)
        try:
            self._wrapper_refs[key] = weakref.ref(fn, functools.partial(self._forget_wrapper, key))
        except TypeError:
            self._alive.append(fn)

    def _forget_wrapper(self, key: int, ref: weakref.ref) -> None:
        """A wrapper registered by `_keep_id` died: its id no longer names it (weakref callback)."""
        if self._wrapper_refs.get(key) is ref:
            del self._wrapper_refs[key]
            self._functions.pop(key, None)
            self._hot.pop(key, None)
            self._fast.pop(key, None)

    def _is_jax_own(self, fn: Any) -> bool:
        """True for a jitted function JAX itself defines; remembered by identity (ids are reused)."""
        known = self._jax_own.get(id(fn))
        if known is not None:
            if known is fn:
                return True
            del self._jax_own[id(fn)]  # that function is gone and its id taken by another
        traced = jax_compat.python_function(fn)
        if traced is not None and self._user_targets.get(id(traced)) is traced:
            return False  # `jax.jit(f)` made anew for an `f` already known to be the user's
        # No Python function at all: JAX's eager dispatch of a primitive or a `jit_p` bind
        # (`_pjit_call_impl` makes such C++ jitted callables itself).
        if traced is not None and not source.is_jax_function(traced):
            self._user_targets[id(traced)] = traced
            return False
        self._jax_own[id(fn)] = fn  # JAX's own, module-level and alive anyway
        return True

    def _record_key_call(self, out: Any) -> None:
        key_call, self._key_call = self._key_call, None
        try:
            self._keys.on_call(*key_call, out)
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"keys of call {key_call[0]} not recorded: {type(exc).__name__}: {exc}")

    def _note_inputs(self, args: tuple, kwargs: dict) -> None:
        """Which arrays the cell's jitted calls read (by identity, `%%sharding`): an array an earlier
        cell placed is part of this cell's story when the cell passes it to a call."""
        try:
            for leaf in jax.tree_util.tree_leaves((args, kwargs)):
                if isinstance(leaf, jax.Array):
                    self._inputs_seen.add(id(leaf))
        except Exception:  # an odd pytree: the arrays stay "earlier", nothing else changes
            pass

    def _record_outputs(self, index: int, out: Any) -> None:
        """Where the outputs of the first call of each signature live (`%%sharding`)."""
        try:
            artifacts = self._rows[index].artifacts
            if artifacts is None or id(artifacts) in self._outputs_seen:
                return
            self._outputs_seen.add(id(artifacts))
            from .sharding import arrays as sharding

            with paused_gc():  # a record per output: a train step's grads are a thousand
                self.capture.arrays.extend(sharding.output_arrays(out, index, self._rows[index].name))
                self._context_meshes.extend(sharding.context_mesh_records())  # `with jax.set_mesh(m): f(x)`
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"outputs of call {index} not placed: {type(exc).__name__}: {exc}")

    def record_grad(
        self, what: grad_patch.Differentiation, run: Any, args: tuple, kwargs: dict, primals: tuple, primal_kwargs: dict
    ) -> Any:
        """Run one differentiation (`run(*args, **kwargs)`, exactly once) and record it in `capture.grads`.

        Called by the `grad_patch` stand-ins of `jax.grad` & co.; `primals` are the
        differentiated function's arguments. Off the jitted-call path: costs nothing per jitted call.
        """
        __tracebackhide__ = True
        grads = self.capture.grads
        first = len(grads)
        out = self._grads.record(what, run, args, kwargs, primals, primal_kwargs)
        if first < len(grads) and not grads[first].traced and grads[first].kind in ("grad", "value_and_grad"):
            self._note_grad_nans(grads[first], out, primals, primal_kwargs)
        return out

    def _nan_watch(self) -> Any:
        if self._nans is None:
            from .values import nan_check

            self._nans = nan_check.NanWatch()
        return self._nans

    def _note_nans(self, index: int, fn: Any, args: tuple, kwargs: dict, out: Any) -> None:
        """Hold a fully recorded call's float outputs and arguments weakly, to check them at `stop`."""
        try:
            row = self._rows[index]
            with paused_gc():  # a weak reference per leaf: a train step's thousand would start a collection
                self._nan_watch().note_call(index, row.name, fn, args, kwargs, out)
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"outputs of call {index} not checked for NaN/Inf: {type(exc).__name__}: {exc}")

    def _note_grad_nans(self, rec: Any, out: Any, primals: tuple, primal_kwargs: dict) -> None:
        """An eager grad's gradients, checked at `stop`; with its split (%%grad_graph) the origin is searched."""
        try:
            why = (
                None
                if rec.split is not None
                else (
                    "its forward/backward split is traced only under %%grad_graph (jaxmagic.capture(grads=True))"
                    if not self.grads
                    else f"it has no forward/backward split ({rec.error or 'not traced'})"
                )
            )
            self._nan_watch().note_grad(rec.index, rec.name, rec.kind, out, rec.split, primals, primal_kwargs, why)
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"gradients of {rec.name} not checked for NaN/Inf: {type(exc).__name__}: {exc}")

    def _snapshot_names(self) -> dict[str, Any] | None:
        try:
            from .values import nan_check

            return nan_check.names_before(self.namespace)
        except Exception as exc:  # our failure never becomes the user's
            self.capture.notes.append(f"the cell's arrays not checked for NaN/Inf: {type(exc).__name__}: {exc}")
            return None

    def _check_nans(self) -> None:
        """NaN/Inf in the outputs still alive and ready (nan_check.py), and what the user's
        jax_debug_nans/infs stopped at; the weak references are dropped."""
        nans, self._nans = self._nans, None
        before, self._names_before = getattr(self, "_names_before", None), None
        if nans is None and not self.capture.calls and not self.capture.grads:
            return  # no jitted call and no grad: the cell's arrays are an earlier story
        from .values import nan_check

        bound = nan_check.bound_arrays(self.namespace, before) if before is not None else []
        (nans or nan_check.NanWatch()).check(self.capture, bound)
        del bound
        known = {(f.kind, f.message) for f in self.capture.findings}
        self.capture.findings.extend(
            f for f in nan_check.debug_findings(self.capture) if (f.kind, f.message) not in known
        )

    def _watch(self, index: int, out: Any, start: float, end: float, state: _FunctionState | None = None) -> None:
        """Wait for this call's outputs (`sync`), or keep a weak reference to poll later. The
        latest sampled cache hit of each function leaves its watched outputs to the NaN check."""
        if self.sync:
            self._ready.wait(index, out)  # next_sample stays 0: every call is waited for
        elif self._ready.watch(index, out, end - start):
            self._next_sample[0] = start + self._ready.interval()
            if state is not None:
                self._nan_watch().note_sampled(id(state), index, state.name, self._ready.pending[-1][1])

    def _materialize_calls(self) -> None:
        calls = self.capture.calls
        ready = self._ready.ready.get
        rows, times, used = self._rows, self._times, self._times_used
        made = []
        for index in range(len(calls), len(rows)):
            row = rows[index]
            if type(row) is _FunctionState:  # a fast-path hit: every field positional (the cheapest call)
                made.append(
                    JitCall(
                        index,
                        row.name,
                        row.function_id,
                        row.source,
                        None,
                        None,
                        True,
                        times[used],
                        times[used + 1],
                        None,
                        None,
                        None,
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
        self._finishing += 1
        previous = jit_patch.set_recorder(None)
        try:
            with paused_gc():  # a first call's signature and artefacts: a burst of short-lived objects
                self._append_call(fn, args, kwargs, index, n_events, n_logs, start, end, error)
        except Exception as exc:  # our failure never becomes the user's
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
        state = self._functions.get(id(fn))
        new_function = state is None
        if new_function:
            state, new_function = self._state_of(fn)
        state.calls += 1
        if state.calls >= SIGNATURE_BUDGET_PER_FUNCTION:
            self._hot[id(fn)] = state  # later cache hits take the fast path in `record`
            if state.key_program is None:  # ... or in `jit_patch._routed_call` (not when a program handles keys)
                self._fast[id(fn)] = state

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
            signature, leaves, renames = self._signature(fn, args, kwargs, state)
            call_site = source.caller_location(sys._getframe())
            if not cache_hit:
                state.misses += 1
                miss_reason = user_names.reason_in_user_terms(
                    miss.miss_reason(
                        fn,
                        state.name,
                        explanations,
                        state.last_signature,
                        signature,
                        redefined=new_function and self._seen_definition_before(fn),
                    ),
                    renames,
                    call_site,
                )
                self._guard_explain_cost(state, fn)
            state.last_signature = signature
            # A call JAX's jax_debug_nans/infs stopped was traced and compiled: its program is still shown.
            if error is None or isinstance(error, FloatingPointError):
                artifacts = state.artifacts.get(signature.key)
                if artifacts is None:
                    artifacts = state.artifacts[signature.key] = self._artifacts(
                        fn, args, kwargs, durations["execute"], index
                    )
                    if renames:
                        artifacts.input_names = tuple(a.path for a in signature.args if not a.static)
                if self._keys is not None:
                    program = self._keys.program(artifacts)
                    state.key_program = program  # cache hits past the budget reuse it (`record`)
                    if program is not None:
                        self._fast.pop(id(fn), None)  # each call's keys are recorded: `record`'s way
                    if program is not None:
                        self._key_call = (index, state.name, program, leaves, call_site)

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
        if error is None and self._donations.donates(id(state), fn):  # its calls' donated arrays are noted,
            self._fast.pop(id(fn), None)  # cache hits included (`record`'s way, not the fast path)
            self._donations.note(id(state), args, kwargs, index, state.name)

    def _state_of(self, fn: Any) -> tuple[_FunctionState, bool]:
        """The state of a jitted function seen for the first time, and whether it is new: shared with
        an earlier jitted function of the same Python function and jit options (what JAX's own call
        cache keys on, so the earlier one's compiled program serves both), counted in `wrappers`."""
        key = _definition_key(fn)
        state = self._by_definition.get(key) if key is not None else None
        if state is not None:
            state.wrappers += 1
        else:
            state = _FunctionState.of(fn)
            if key is not None:
                self._by_definition[key] = state
        self._functions[id(fn)] = state
        self._alive.append(fn)
        return state, state.wrappers == 1

    def _signature(
        self, fn: Any, args: tuple, kwargs: dict, state: _FunctionState
    ) -> tuple[Signature, list, dict[str, str]]:
        """The call's signature and dynamic leaves, its leaves named as the user wrote them
        (and {library's path: user's name} for those renamed: the graph and JAX's miss
        explanation then use the same names).

        When a library's wrapper (`nnx.jit`, `eqx.filter_jit`) made the jitted call, the user's
        own call a few frames up names the arrays (`user_names`), and the function the user wrote
        behind the wrapper gives the definition shown, where the traced function is the library's.
        """
        signature, leaves = self._raw_signature(fn, args, kwargs, state)
        entry = user_names.user_entry(sys._getframe())
        if entry is None:
            return signature, leaves, {}
        if entry.function is not None and state.calls == 1 and not _in_user_code(state.source):
            state.source = source.function_location(entry.function)
            state.name = getattr(entry.function, "__qualname__", None) or state.name
        named = user_names.renamed(signature, user_names.leaf_names(entry, leaves))
        renames = {a.path: b.path for a, b in zip(signature.args, named.args) if a.path != b.path}
        return named, leaves, renames

    def _raw_signature(self, fn: Any, args: tuple, kwargs: dict, state: _FunctionState) -> tuple[Signature, list]:
        """`signature_of` and the dynamic leaves; the function's previous signature again when this
        call's `concrete_key` equals the previous one's (a loop's first calls: 8 leaves, 56 us -> 12)."""
        quick = concrete_key(fn, args, kwargs)
        if quick is not None:
            known = self._raw_signatures.get(id(state))
            if known is not None and known[0] == quick[0]:
                return known[1], quick[1]
        leaves: list = []
        signature = signature_of(fn, args, kwargs, leaves)
        if quick is not None:
            self._raw_signatures[id(state)] = (quick[0], signature)
        return signature, leaves

    def _seen_definition_before(self, fn: Any) -> bool:
        """True when another jitted function made from the same `def`/`lambda` was called before."""
        code = getattr(jax_compat.python_function(fn), "__code__", None)
        if code is None:
            return False
        ids = self._definitions.setdefault((code.co_filename, code.co_firstlineno, code.co_name), set())
        seen = bool(ids - {id(fn)})
        ids.add(id(fn))
        return seen

    def _guard_explain_cost(self, state: _FunctionState, fn: Any) -> None:
        """JAX's explanation looks through its cached entries on each miss (~37 us each): quadratic in
        a storm of one function's shapes, or of functions made anew from one `lambda` (each one new
        to JAX, each compiled). Past `EXPLAIN_LIMIT` misses of either, explanations go off."""
        if self._explain_stopped:
            return
        site = _definition_site(fn)
        site_misses = self._site_misses[site] = self._site_misses.get(site, 0) + 1
        if state.misses > cache_log.EXPLAIN_LIMIT:
            why = f"{state.name} missed the cache more than {cache_log.EXPLAIN_LIMIT} times"
        elif site is not None and site_misses > cache_log.EXPLAIN_LIMIT:
            why = (
                f"more than {cache_log.EXPLAIN_LIMIT} jitted functions made from the code at "
                f"{site[0]}:{site[1]} were compiled"
            )
        else:
            return
        self._explain_stopped = True
        if self._cache_log.explain_off():
            self.capture.notes.append(
                f"{why}: JAX's own explanations were turned off for the rest of the cell (their cost grows "
                "with every cached entry); later reasons come from jaxmagic's comparison of signatures"
            )

    def _jaxpr_findings(self, fn: Any, closed_jaxpr: Any, index: int) -> None:
        """Globals frozen in as constants now; Python loops unrolled when the capture stops.

        Once per definition (a `lambda` jitted anew each iteration reads the same globals):
        what the function can reach (globals, closures) is read right after the call, about 0.1 ms;
        the program's constants are matched against that snapshot when the capture stops, with
        the loop analysis, so the walk over the jaxpr stays out of the cell (tens of ms at 4k eqns). its globals and loops rarely differ between signatures, and the
        analysis costs about a tenth of a trace (0.5 s at 50k eqns), so a storm would pay it
        each time. Constants are matched against the globals as they are right after the
        call (a global reassigned later in the cell is exactly the stale-constant bug); the
        loop analysis reads only the jaxpr, so it waits for `stop` and stays out of the
        user's loop (70% of the cost).
        """
        key = _definition_site(fn) or id(fn)  # jitted functions made anew from one `lambda`: once
        if key in self._analysed:
            return
        self._analysed.add(key)
        from .findings import program as findings

        try:
            reach = findings.constants_reach(fn)
        except Exception as exc:  # our failure never becomes the user's: that analysis is left out
            self.capture.notes.append(f"{self._name_of(fn)}: constants not checked: {type(exc).__name__}: {exc}")
            reach = None
        self._deferred_findings.append((fn, closed_jaxpr, index, reach))

    def _name_of(self, fn: Any) -> str | None:
        state = self._functions.get(id(fn))
        return state.name if state is not None else None

    def _add_findings(self, fn: Any, closed_jaxpr: Any, index: int, kinds: tuple[str, ...], reach: Any) -> None:
        from .findings import program as findings

        found, notes = findings.jaxpr_findings(fn, closed_jaxpr, kinds, reach=reach)
        name = self._name_of(fn)
        known = {(f.kind, f.message) for f in self.capture.findings}
        for f in found:
            if (f.kind, f.message) not in known:  # the same global seen again by a later signature
                self.capture.findings.append(dataclasses.replace(f, call=index, function=name))
        self.capture.notes.extend(notes)

    def _on_trace_print(self, index: int, where: SourceLocation | None) -> None:
        key = (where.file, where.line) if where else None
        if any(
            f.kind == "trace_time_print" and (f.source.file, f.source.line) == key
            for f in self.capture.findings
            if f.source is not None
        ):
            return
        self.capture.findings.append(
            Finding(
                kind="trace_time_print",
                severity="warning",
                source=where,
                call=index,
                message="print() inside a jitted function runs only while JAX traces it: on the first call and "
                "on every recompile, never on cache hits, and it prints tracers, not values. Use "
                "jax.debug.print to print values on every call.",
            )
        )

    def _artifacts(self, fn: Any, args: tuple, kwargs: dict, execute_s: float, index: int) -> Artifacts:
        """The jaxpr, Lowered and Compiled for this call's signature, via JAX's AOT API.

        Right after the call these hit the caches the call filled (well under 1 ms). Then,
        only when asked for: vmap batch dimensions (programs with vmap are traced once more,
        so the user's Python inside them runs again: opt-in) and forward values (the jaxpr
        evaluated again on this call's arguments). JAX events these fire are ours.
        """
        from .values import batching
        from .values import forward as values

        artifacts = Artifacts()
        traced = None
        self._collecting = True
        try:
            try:
                traced = fn.trace(*args, **kwargs)
                artifacts.jaxpr = traced.jaxpr
                artifacts.lowered = traced.lower()
                artifacts.compiled = self._compiled(artifacts.lowered)
            except Exception as exc:
                artifacts.error = f"{type(exc).__name__}: {exc}"
            if artifacts.jaxpr is not None:
                self._jaxpr_findings(fn, artifacts.jaxpr, index)
            if artifacts.jaxpr is not None and self.vmap:
                batch = batching.batch_info(fn, args, kwargs, artifacts.jaxpr, self.namespace)
                if batch is not None:
                    artifacts.batch_dims, artifacts.batch_size, artifacts.batch_note = (
                        batch.dims,
                        batch.size,
                        batch.note,
                    )
            if artifacts.jaxpr is not None and self.values:
                artifacts.values, artifacts.values_note = values.call_values(
                    fn, traced, args, kwargs, execute_s, values.GRAD_TIME_BUDGET_S if self.grads else None
                )
        finally:
            self._collecting = False
        return artifacts

    def _compiled(self, lowered: Any) -> Any:
        """`lowered.compile()` when JAX answers it from the cache the call filled, else None.

        JAX 0.5 and later do (0.01 ms); 0.4 compiles the program a second time, which would
        double the cell's compile time. The first compile jaxmagic asks for in a process
        tells which (no version check); after that, on such a JAX, compiled text and cost
        are left out with a note.
        """
        global _AOT_COMPILE_RECOMPILES
        if _AOT_COMPILE_RECOMPILES:
            if not self._aot_noted:
                self._aot_noted = True
                self.capture.notes.append(
                    "compiled HLO and XLA's cost figures are left out: this JAX version compiles a program "
                    "a second time to give them"
                )
            return None
        before = self._own_compiles
        compiled = lowered.compile()
        if _AOT_COMPILE_RECOMPILES is None:
            _AOT_COMPILE_RECOMPILES = self._own_compiles > before
        return compiled


class CaptureContext:
    """`with jaxmagic.capture() as cap:` — records the block into `cap` (a Capture)."""

    def __init__(
        self,
        namespace: dict | None,
        values: bool = False,
        vmap: bool = False,
        sync: bool = False,
        grads: bool = False,
        shardings: bool = False,
        keys: bool = True,
        finish: Callable[[Capture], None] | None = None,
    ):
        self._session = CaptureSession(
            namespace, values=values, vmap=vmap, sync=sync, grads=grads, shardings=shardings, keys=keys, finish=finish
        )

    def __enter__(self) -> Capture:
        return self._session.start()

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        self._session.stop(exc)
        return False


def capture(
    namespace: dict | None = None,
    values: bool = False,
    vmap: bool = False,
    sync: bool = False,
    grads: bool = False,
    shardings: bool = False,
    keys: bool = True,
    finish: Callable[[Capture], None] | None = None,
) -> CaptureContext:
    """Record what JAX does inside a `with` block.

    `namespace` is where jitted functions are looked up and wrapped for per-call
    recording; by default the caller's module globals, as a notebook uses its user
    namespace. Functions jitted inside the block are always recorded.

    Every differentiation in the block is recorded in `cap.grads` (one `GradCall` each):
    calls of the functions `jax.grad`, `value_and_grad`, `jacrev` and `jacfwd` return, and
    calls of `jax.vjp`, `jvp` and `linearize`, eager or inside a jitted function or a vmap.
    With `grads=True` (what %%grad_graph uses) eager reverse-mode ones also get JAX's
    forward/backward split, traced once per function and avals right after the call: the
    user's Python in the function runs once more (its printing discarded), which is why it
    is opt-in like `values` and `vmap`. Grad functions made before the block by the unpatched
    `jax.grad` are not seen (capture/grads/patch.py).

    `values=True` also records forward values: a summary (shape, dtype, min, max, mean,
    NaN/Inf counts, tiny values printed) of every variable of the first call of each
    function and signature, in `Artifacts.values` (costs a second evaluation; see
    capture/values/forward.py for its guards).

    `vmap=True` also records, for programs that use `jax.vmap`, the position of the batch
    dimension in every variable (`Artifacts.batch_dims`): the program is traced once more
    with one more element per vmap, so Python side effects inside it run again
    (capture/values/batching.py).

    `shardings=True` (what %%sharding uses) also records where arrays live: every `jax.Array`
    bound in the namespace when the block ends (inside dicts, lists and tuples too) and the
    outputs of the first call of each jitted function and signature, as `ArrayRecord`s in
    `cap.arrays` (mesh, PartitionSpec, shards: metadata only), and the meshes in `cap.meshes`.

    `keys=True` (the default) records the lineage of every PRNG key the block touches in
    `cap.keys` (one `KeyRecord` per key or key array, parents first) and key reuse in
    `cap.findings`: eager `jax.random` calls (the module's functions are replaced for the
    block, capture/keys/patch.py) and the key flow inside recorded jitted programs, read from
    their jaxprs (capture/keys/flow.py). Key data is read once when the block ends; calls of a
    jitted function that handles keys each get a signature (about 5 us). `keys=False` turns
    it off.

    `sync=True` waits for each call's outputs right after the call (`block_until_ready`),
    so `JitCall.ready` is the exact time the device finished; this changes the program's
    timing. By default outputs are polled without blocking and `ready` is an upper bound.
    """
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    return CaptureContext(
        namespace, values=values, vmap=vmap, sync=sync, grads=grads, shardings=shardings, keys=keys, finish=finish
    )
