"""Seeing each call of every jitted function, through whatever reference the cell holds.

JAX offers no hook on the C++ fast path of a jitted call. During a capture the call of
JAX's jitted-function type itself goes through `_routed_call` (`call_hook.route_calls`):
every jitted function, wherever it is bound (a dict, an attribute set in an earlier cell, a
library's module global, `nnx.jit`'s or `eqx.filter_jit`'s inner jit), reports its calls,
and no object is replaced. Where this Python cannot route a type's call, the older way is
the fallback: jitted functions in the user's namespace, and every function `jax.jit`
makes, are wrapped by `record_calls` for the capture's duration.
"""

from __future__ import annotations

import functools
import threading
import time
import types
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Protocol

import jax

from .. import aliases, jax_compat, source
from ..patches import replace_attribute
from . import call_hook


class CallRecorder(Protocol):
    """What receives the jitted calls of a capture: every call (`record`); with a `fast_path`, also
    the hot calls due a readiness sample (`sampled`) and those JAX traced or compiled (`fast_missed`)."""

    def record(self, fn: Any, args: tuple, kwargs: dict) -> Any: ...

    def sampled(self, fn: Any, state: Any, args: tuple, kwargs: dict, n_events: int, start: float) -> Any: ...

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
    ) -> None: ...


@dataclass(frozen=True)
class FastPath:
    """What `_routed_call` needs to record a cache hit of a hot function without leaving its frame.

    `hot` maps a jitted function to the recorder's state for the functions whose cache hits
    need nothing but a row, with JAX's call bound to the function (`bound_call`; the recorder adds
    and removes them); `rows` receives the state and
    `times` the call's start and end (two floats: no tuple per call, so the rows of a long loop
    add nothing for Python's garbage collector to walk); a change in `len(events)` during the
    call means JAX traced or compiled (a miss: `recorder.fast_missed` records it);
    `next_sample[0]` is the clock time from which a call goes the recorder's full way instead
    (readiness sampling); only calls on `thread` are taken. `passthrough` holds the jitted
    functions JAX defines itself, which the recorder has seen and left out: they run at once
    (checked by identity: ids are reused).
    """

    hot: dict
    rows: list
    times: list
    events: list
    next_sample: list
    thread: int
    passthrough: dict  # id -> weak reference to a jitted function JAX defines (`jnp.less`): run, never recorded


_recorder: CallRecorder | None = None  # the innermost running capture session
_NO_HOT: dict = {}  # never filled: no function is hot while no recorder with a fast path runs
_hot: dict = _NO_HOT
_passthrough: dict = _NO_HOT
_add_row: Callable[[Any], None] = [].append
_add_time: Callable[[float], None] = [].append
_events: list = []
_next_sample: list = [0.0]
_thread_id = 0


def set_recorder(recorder: CallRecorder | None) -> CallRecorder | None:
    """Make `recorder` receive calls (and its `fast_path`, if it has one, serve hot cache hits);
    returns the previous one for restoring."""
    global _recorder, _hot, _passthrough, _add_row, _add_time, _events, _next_sample, _thread_id
    previous, _recorder = _recorder, recorder
    fast = getattr(recorder, "fast_path", None)
    if fast is None:  # nothing of an ended capture stays referenced (its functions, their executables)
        _hot = _passthrough = _NO_HOT
        _add_row, _add_time, _events, _next_sample = [].append, [].append, [], [0.0]
        _thread_id = getattr(recorder, "thread", 0)
    else:
        _hot, _passthrough, _events, _next_sample, _thread_id = (
            fast.hot,
            fast.passthrough,
            fast.events,
            fast.next_sample,
            fast.thread,
        )
        _add_row, _add_time = fast.rows.append, fast.times.append
    return previous


_JITTED_TYPE = jax_compat.PJIT_FUNCTION_TYPE
# The C++ call of a jitted function, `call_jitted(fn, *args, **kwargs)`: what a recorder runs.
# The same object routes or not, so it also runs a jitted function while its type is routed.
# The fast path's table is keyed by the jitted functions themselves: right only while their type
# hashes and compares by identity (object's own, on every JAX seen).
_IDENTITY_KEYED = (
    _JITTED_TYPE is not None and _JITTED_TYPE.__hash__ is object.__hash__ and _JITTED_TYPE.__eq__ is object.__eq__
)
call_jitted: Callable[..., Any] = (call_hook.original_call(_JITTED_TYPE) if _JITTED_TYPE is not None else None) or (
    lambda fn, *args, **kwargs: fn(*args, **kwargs)
)


def bound_call(fn: Any) -> Callable[..., Any] | None:
    """JAX's C++ call bound to jitted `fn` (a method-wrapper), or None where there is none.

    The routed call's fast path calls it with the arguments alone: the slot wrapper
    `call_jitted(fn, *args)` checks `fn`'s type and copies the arguments without it on every
    call, about 3% of a tiny jitted call (bench/trace.py). It holds `fn`: only for functions the
    capture keeps alive anyway (`FunctionTable.settle_fast`). None also where the type does not
    hash by identity (the fast path's table is keyed by the function): those calls take the
    recorder's way.
    """
    bind = getattr(call_jitted, "__get__", None)
    if not _IDENTITY_KEYED or bind is None or type(fn) is not _JITTED_TYPE:
        return None
    return bind(fn)


def _gone() -> None:
    """What a `passthrough` entry gives for an id it does not hold: no function."""
    return None


_CURRENT_TRACE, _NO_TRACE = jax_compat.current_trace_probe()  # `.value is _NO_TRACE`: the call runs
_clock = time.perf_counter
_thread = threading.get_ident


def _routed_call(self: Any, *args: Any, **kwargs: Any) -> Any:
    """The jitted-function type's call during a capture: through the running recorder if any.

    A cache hit of a hot function (called a few times already, nothing else to record per
    call) is recorded here, in this frame: a row (the state; start and end on a list of floats),
    about 0.3 us where the recorder's own path costs 1.4 (bench/trace.py). A hot call due a
    readiness sample goes to the recorder's `sampled`. A call under a JAX trace on the cell's
    thread runs at once (it is part of the computation traced; `record` would only run it).
    Anything else (JAX traced or compiled during the call, an error, a call from another
    thread) goes to the recorder's `record`.
    """
    __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
    entry = _hot.get(self)
    if entry is not None and _CURRENT_TRACE.value is _NO_TRACE and _thread() == _thread_id:
        state, call = entry
        events = _events
        n_events = len(events)
        start = _clock()
        if start < _next_sample[0]:
            try:  # an empty `**kwargs` passed on costs the C call a dict (about 1% of a tiny call)
                out = call(*args, **kwargs) if kwargs else call(*args)
            except BaseException as exc:
                _fast_missed(self, args, kwargs, None, n_events, start, exc)
                raise exc.with_traceback(source.past_own_frames(exc.__traceback__))
            end = _clock()
            if len(events) == n_events:
                _add_row(state)
                _add_time(start)
                _add_time(end)
                return out
            return _fast_missed(self, args, kwargs, out, n_events, start, None, end)
        recorder = _recorder
        if recorder is not None:  # due a readiness sample: the recorder polls, runs and watches
            try:
                return recorder.sampled(self, state, args, kwargs, n_events, start)
            except BaseException as exc:
                raise exc.with_traceback(source.past_own_frames(exc.__traceback__))
    elif entry is None and _passthrough.get(id(self), _gone)() is self and _thread() == _thread_id:
        # JAX's own op (`jnp.less`), seen before: never recorded (another thread's goes on to be counted)
        try:
            return call_jitted(self, *args, **kwargs)
        except BaseException as exc:
            raise exc.with_traceback(source.past_own_frames(exc.__traceback__))
    recorder = _recorder
    if recorder is None:
        return call_jitted(self, *args, **kwargs)
    if _CURRENT_TRACE.value is not _NO_TRACE and _thread() == _thread_id:
        # Part of what JAX is tracing on the cell's thread (an optimizer's jitted helpers while its
        # update is traced: 13.5k calls for Optax's Adam over 1,000 parameters): JAX's call at once,
        # as `record` would run it, without its frame.
        try:
            return call_jitted(self, *args, **kwargs)
        except BaseException as exc:
            raise exc.with_traceback(source.past_own_frames(exc.__traceback__))
    try:
        return recorder.record(self, args, kwargs)
    except BaseException as exc:  # the recorder's frames are not the user's to read
        raise exc.with_traceback(source.past_own_frames(exc.__traceback__))


def _fast_missed(
    fn: Any,
    args: tuple,
    kwargs: dict,
    out: Any,
    n_events: int,
    start: float,
    error: BaseException | None,
    end: float | None = None,
) -> Any:
    """Hand a fast-path call that JAX traced or compiled (or that raised) to the recorder."""
    end = _clock() if end is None else end
    recorder = _recorder
    if recorder is not None:
        recorder.fast_missed(fn, args, kwargs, out, n_events, start, end, error)
    return out


def route_jitted_calls(stack: ExitStack) -> bool:
    """Route every jitted function's call through the recorder until `stack` closes.

    False when this Python cannot (`call_hook`): the caller falls back on namespace wrappers.
    """
    if _JITTED_TYPE is None:
        return False
    undo = call_hook.route_calls(_JITTED_TYPE, _routed_call)
    if undo is None:
        return False
    stack.callback(undo)
    return True


def _recording_call(fn: Any) -> Callable:
    """A plain function that forwards to jitted `fn`, through the running capture if any.

    A closure, not a class with `__call__`: calling a Python function is the cheapest
    call CPython has, and this one sits on the hot path of every jitted call in a
    capture (a class's `__call__` costs about 0.25 us more, 5% of a tiny jitted call).
    """

    def recorded_call(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        recorder = _recorder
        if recorder is None:
            return fn(*args, **kwargs)
        return recorder.record(fn, args, kwargs)

    return recorded_call


_RECORDED_CODE = _recording_call(None).__code__


def is_recorded(obj: Any) -> bool:
    """True for a wrapper made by `record_calls` (an exact code-object test, no attribute reads)."""
    return type(obj) is types.FunctionType and obj.__code__ is _RECORDED_CODE


def record_calls(fn: Any) -> Callable:
    """Stand-in for jitted `fn` that reports each call; `fn`'s API (`lower`, `trace`,
    `eval_shape`, `clear_cache`, `__wrapped__`, ...) is reachable on it unchanged."""
    call = _recording_call(fn)
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(call, attr, getattr(fn, attr))
        except (AttributeError, TypeError):
            pass
    for attr in dir(fn):
        if attr.startswith("__") and attr != "__wrapped__":
            continue
        try:
            setattr(call, attr, getattr(fn, attr))
        except (AttributeError, TypeError):
            pass
    call._jaxmagic_jitted = fn  # type: ignore[attr-defined]
    return call


def _wrap_jit_result(result: Any) -> Any:
    if jax_compat.is_jitted_function(result):
        return record_calls(result)
    if callable(result):  # `jax.jit(static_argnums=...)` used as a decorator factory

        @functools.wraps(result)
        def decorator(*args: Any, **kwargs: Any) -> Any:
            return _wrap_jit_result(result(*args, **kwargs))

        return decorator
    return result


def recording_jit(original: Callable) -> Callable:
    """A `jax.jit` that returns `record_calls` wrappers; otherwise identical."""

    @functools.wraps(original)
    def jit(*args: Any, **kwargs: Any) -> Any:
        return _wrap_jit_result(original(*args, **kwargs))

    jit._jaxmagic_original = original  # type: ignore[attr-defined]
    return jit


def patch_jit(stack: ExitStack, namespace: dict) -> None:
    """Replace `jax.jit` and `from jax import jit` bindings for the capture's duration."""
    original = jax.jit
    if getattr(original, "_jaxmagic_original", None) is not None:  # nested capture: already patched
        return
    patched = recording_jit(original)
    replace_attribute(stack, jax, "jit", patched)
    aliases.rebind_aliases(stack, namespace, {original: patched})


def wrap_namespace(stack: ExitStack, namespace: dict) -> None:
    """Wrap the jitted functions bound in `namespace`; give originals back afterwards.

    On exit every `record_calls` wrapper bound in the namespace (including those the cell made
    with the patched `jax.jit`) is replaced by the jitted function it wraps, so code
    outside a capture runs on JAX's own objects.
    """
    for name, value in list(namespace.items()):
        if not is_recorded(value) and jax_compat.is_jitted_function(value):
            namespace[name] = record_calls(value)

    def restore() -> None:
        for name, value in list(namespace.items()):
            if is_recorded(value):
                namespace[name] = value._jaxmagic_jitted

    stack.callback(restore)
