"""Run inside a kernel: JSON-able snapshots of the global state jaxmagic touches, and of the user namespace.

A magic cell patches process-wide objects for its duration (`jax.jit`, `jax.grad` & co.,
`jax.random`, `builtins.print`, `EvalTrace.process_primitive`, `jax.vmap` while batch dims
are probed), adds `jax.monitoring` listeners, logging filters and a handler, flips
`jax_explain_cache_misses` and wraps the jitted functions of the user namespace. Each undo
sits on an ExitStack; these snapshots are how the tests prove that every undo ran after
every kind of cell end (a raise, KeyboardInterrupt, SystemExit, a syntax error).

Objects are identified by `id()`: a snapshot is only compared with another taken in the
same kernel. Nothing here imports jaxmagic: in a kernel without the extension (the plain
baseline) its module state is reported as absent, so the baseline stays a pure IPython run.

Used by tests/test_same_result.py through `user_expressions` of silent executions, which
neither bind names nor count as cells.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import logging
import os
import resource
import signal
import sys
import threading
import time
from typing import Any

# Everything `grad_patch` replaces, plus what users reach next to it: a leaked stand-in of any shows.
JAX_TRANSFORMS = (
    "jit",
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "linearize",
    "jacrev",
    "jacfwd",
    "hessian",
    "vmap",
    "pmap",
    "checkpoint",
    "eval_shape",
    "make_jaxpr",
)
# Module globals of jaxmagic's patch modules that must be back to their idle value after a cell.
RECORDER_MODULES = ("jaxmagic.capture.jit.patch", "jaxmagic.capture.grads.patch", "jaxmagic.capture.keys.patch")
HIDDEN = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})
MAX_ITEMS = 64  # items of a container summarised; the rest are counted
MAX_DEPTH = 4
FUNCTION_TYPES = frozenset({"function", "PjitFunction", "builtin_function_or_method", "method"})


def _ident(obj: Any) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return f"{getattr(obj, '__module__', '?')}.{name}@{id(obj):x}"


def _shell() -> Any:
    from IPython import get_ipython

    return get_ipython()


def _listener_counts() -> dict[str, int]:
    """Every listener registry of `jax._src.monitoring` (found by name, so a new kind counts too)."""
    from jax._src import monitoring

    return {
        name: len(value)
        for name, value in sorted(vars(monitoring).items())
        if name.endswith("_listeners") and isinstance(value, list)
    }


def _loggers() -> dict[str, Any]:
    """Level, handlers, filters and propagation of each `jax` logger whose state is not the default.

    JAX creates loggers as its modules are imported (a first shard_map imports new ones), so
    loggers in their default state are left out: a new default logger is not state we changed.
    """
    manager = logging.Logger.manager
    out: dict[str, Any] = {}
    for name in sorted(["jax", *(n for n in manager.loggerDict if n.startswith("jax."))]):
        logger = logging.getLogger(name)
        state = {
            "level": logger.level,
            "propagate": logger.propagate,
            "disabled": logger.disabled,
            "handlers": [_ident(h) for h in logger.handlers],
            "filters": [_ident(f) for f in logger.filters],
        }
        if (
            state["level"] != logging.NOTSET
            or not state["propagate"]
            or state["disabled"]
            or state["handlers"]
            or state["filters"]
        ):
            out[name] = state
    return out


def _config_flags() -> dict[str, str]:
    """Every JAX config flag: `jax_explain_cache_misses`, `jax_debug_key_reuse`, `jax_log_compiles`
    and any other one a capture might set (capture/jit/cache_log.py sets the first)."""
    import jax

    return {name: repr(value) for name, value in sorted(jax.config.values.items())}


def _random_functions() -> dict[str, str]:
    import jax

    return {
        name: _ident(getattr(jax.random, name))
        for name in sorted(dir(jax.random))
        if not name.startswith("_")
        and callable(getattr(jax.random, name))
        and not isinstance(getattr(jax.random, name), type)
    }


def _recorders() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in RECORDER_MODULES:
        module = sys.modules.get(name)
        if module is None:
            out[name] = "not imported"
            continue
        out[name] = {"_recorder": None if module._recorder is None else _ident(module._recorder)}
        if hasattr(module, "_inside"):
            out[name]["_inside"] = module._inside.n  # this thread's depth inside the stand-ins
    magics = sys.modules.get("jaxmagic.magics")
    if magics is not None:
        installed = magics._installed.get(id(_shell()))
        out["jaxmagic.magics"] = {
            "installed": installed is not None,
            "_pending": None if installed is None or installed._pending is None else repr(installed._pending.magic),
        }
    return out


def _stand_ins(namespace: dict) -> dict[str, list[str]]:
    """Names bound to jaxmagic objects that must not outlive a capture, and those that may.

    `recorded_jit`: a `record_calls` wrapper (capture/jit/patch.py) still in the namespace;
    `patched_alias`: `from jax import grad` or `from jax.random import split` still bound to a
    stand-in. `grad_stand_in` (a function `jax.grad` made during a capture) stays bound by design
    (capture/grads/patch.py: it only forwards outside a capture); it is listed, not a leak.
    """
    out: dict[str, list[str]] = {"recorded_jit": [], "patched_alias": [], "grad_stand_in": []}
    for name, value in sorted(namespace.items(), key=lambda item: item[0]):
        if not callable(value) or isinstance(value, type):
            continue
        try:
            attrs = vars(value)
        except TypeError:
            continue
        if "_jaxmagic_jitted" in attrs:
            out["recorded_jit"].append(name)
        elif "_jaxmagic_original" in attrs:
            out["patched_alias"].append(name)
        elif "_jaxmagic_made" in attrs:
            out["grad_stand_in"].append(name)
    return out


def snapshot() -> dict[str, Any]:
    """The global state jaxmagic may touch; equal before and after any cell of any kind."""
    import jax
    from jax._src import core

    shell = _shell()
    stand_ins = _stand_ins(shell.user_ns)
    stand_ins.pop("grad_stand_in")
    return {
        "jax": {name: _ident(getattr(jax, name)) for name in JAX_TRANSFORMS if hasattr(jax, name)},
        "jax.random": _random_functions(),
        "builtins.print": _ident(builtins.print),
        "sys.stdout": _ident(sys.stdout),
        "sys.stderr": _ident(sys.stderr),
        "EvalTrace.process_primitive": _ident(core.EvalTrace.__dict__["process_primitive"]),
        "jitted type": _jitted_type(),
        "namespace_stand_ins": stand_ins,
        "monitoring_listeners": _listener_counts(),
        "loggers": _loggers(),
        "config": _config_flags(),
        "events": {event: len(callbacks) for event, callbacks in sorted(shell.events.callbacks.items())},
        "input_transformers_cleanup": len(shell.input_transformers_cleanup),
        "input_transformers_post": len(shell.input_transformers_post),
        "ast_transformers": len(shell.ast_transformers),
        "recorders": _recorders(),
    }


def _jitted_type() -> dict[str, Any]:
    """The call and flags of JAX's jitted-function type: routed through the capture during a cell
    (jaxmagic/capture/jit/call_hook.py), JAX's own C slot and vectorcall flag outside one."""
    import jax

    cls = type(jax.jit(lambda x: x))
    call = cls.__dict__.get("__call__")
    return {"__call__": type(call).__name__, "__flags__": cls.__flags__}


# -- the user namespace -------------------------------------------------------------------


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:16]


def _array(value: Any) -> dict[str, Any]:
    import jax
    import numpy as np

    if isinstance(value, jax.Array):
        if value.is_deleted():
            return {"array": "deleted"}
        sharding = value.sharding
        spec = getattr(sharding, "spec", None)
        out = {
            "type": "jax.Array",
            "shape": list(value.shape),
            "dtype": str(value.dtype),
            "sharding": type(sharding).__name__,
            "spec": None if spec is None else str(spec),
            "devices": sorted(d.id for d in sharding.device_set),
            "weak_type": bool(getattr(value, "weak_type", False)),
        }
        data = jax.random.key_data(value) if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key) else value
        out["values"] = _digest(np.asarray(data).tobytes())
        return out
    array = np.asarray(value)
    return {
        "type": type(value).__name__,
        "shape": list(array.shape),
        "dtype": str(array.dtype),
        "values": _digest(array.tobytes()) if array.dtype != object else repr(array.tolist()),
    }


def describe(value: Any, depth: int = 0) -> Any:
    """A deterministic, address-free summary of one value (type, and for arrays shape/dtype/values hash)."""
    import numpy as np

    kind = type(value)
    if value is None or kind in (bool, int, float, complex):
        return repr(value)
    if kind in (str, bytes):
        return (
            repr(value)
            if len(value) <= 80
            else {"type": kind.__name__, "len": len(value), "hash": _digest(value if kind is bytes else value.encode())}
        )
    if kind.__module__.startswith(("jax", "jaxlib")) and hasattr(value, "shape") and hasattr(value, "dtype"):
        return _array(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return _array(value)
    if isinstance(value, type):
        return f"class {value.__module__}.{value.__qualname__}"
    if kind.__name__ == "module":
        return f"module {value.__name__}"
    # Functions by type and name: a jitted function left wrapped shows as `function f`, not `PjitFunction f`.
    if kind.__name__ in FUNCTION_TYPES or (callable(value) and not hasattr(value, "__dict__")):
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
        return f"{kind.__name__} {name}"
    if depth >= MAX_DEPTH:
        return f"{kind.__module__}.{kind.__qualname__} (deeper)"
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else list(value)
        return {"type": kind.__name__, "len": len(items), "items": [describe(v, depth + 1) for v in items[:MAX_ITEMS]]}
    if isinstance(value, dict):
        keys = list(value)[:MAX_ITEMS]
        return {
            "type": kind.__name__,
            "len": len(value),
            "items": [[repr(k), describe(value[k], depth + 1)] for k in keys],
        }
    if kind.__name__ == "Mesh":
        return {
            "type": "Mesh",
            "axes": list(value.axis_names),
            "shape": list(value.devices.shape),
            "devices": [int(d.id) for d in value.devices.flat],
        }
    out: dict[str, Any] = {"type": f"{kind.__module__}.{kind.__qualname__}"}
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        out["attrs"] = {k: describe(v, depth + 1) for k, v in sorted(attrs.items())[:MAX_ITEMS]}
    elif callable(value):
        out["callable"] = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return out


def namespace() -> dict[str, Any]:
    """Every user name (not IPython's `_`, `_i3`, `Out`, ...) with a summary of its value."""
    shell = _shell()
    hidden = set(shell.user_ns_hidden) | HIDDEN
    return {
        name: _safe_describe(value)
        for name, value in sorted(shell.user_ns.items())
        if not name.startswith("_") and name not in hidden
    }


def _safe_describe(value: Any) -> Any:
    """A value the summary cannot read is reported as such (the same way in every mode), not fatal."""
    try:
        return describe(value)
    except Exception as exc:
        return f"unreadable {type(value).__qualname__}: {type(exc).__name__}: {exc}"


def probe() -> str:
    """What the tests read after each cell: the global state and the namespace, as compact JSON."""
    return json.dumps({"state": snapshot(), "namespace": namespace()}, sort_keys=True, separators=(",", ":"))


# -- when XLA compiled, for the interrupted-compile cell ----------------------------------

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"  # JAX's event for one XLA compile
_COMPILES: list[tuple[float, float, str]] = []  # (start, end, fun_name) of each backend compile, time.time()
_WATCHERS: list[threading.Thread] = []  # JAX without a compile-start event: the threads watching the stack
_ARMED: dict[str, str] = {}  # {"fun_name": ..., "path": ...}: touch `path` when XLA starts compiling it


def record_compiles() -> None:
    """Note every XLA backend compile of the kernel from now on (listeners registered once, at setup).

    JAX 0.5 and later report a compile's start time as a scalar event when it begins and its span
    when it ends (both naming the function). While armed (`arm_interrupt`), the start of the named
    function's compile writes a file the test polls, so its SIGINT is sent while XLA compiles,
    however loaded the machine is. Registered before the first snapshot, so they are part of every
    baseline count. JAX 0.4 reports only the compile's duration, when it ends, without the name:
    `_on_duration` reads the start time and the name from JAX's own timing frame instead.
    """
    import jax.monitoring

    def on_scalar(event: str, value: float, **kwargs: Any) -> None:
        armed = dict(_ARMED)
        if event == BACKEND_COMPILE and armed and armed["fun_name"] in str(kwargs.get("fun_name", "")):
            _ARMED.clear()
            threading.Thread(
                target=_interrupt_inside_compile, args=(threading.get_ident(), value, armed["path"]), daemon=True
            ).start()

    def on_span(event: str, start: float, end: float, **kwargs: Any) -> None:
        if event == BACKEND_COMPILE:
            _COMPILES.append((start, end, str(kwargs.get("fun_name", ""))))

    if hasattr(jax.monitoring, "register_scalar_listener") and hasattr(
        jax.monitoring, "register_event_time_span_listener"
    ):
        jax.monitoring.register_scalar_listener(on_scalar)
        jax.monitoring.register_event_time_span_listener(on_span)
    else:
        jax.monitoring.register_event_duration_secs_listener(_on_duration)


def _on_duration(event: str, duration: float, **kwargs: Any) -> None:
    """JAX without compile spans: a compile's span from its duration event and JAX's timing frame.

    The event is recorded from inside JAX's `log_elapsed_time`, whose frame holds the compile's
    `start_time` and `fun_name`.
    """
    if event != BACKEND_COMPILE:
        return
    frame = _frame_named(sys._getframe(1), "log_elapsed_time", "start_time")
    if frame is None:
        end = time.time()
        _COMPILES.append((end - duration, end, str(kwargs.get("fun_name", ""))))
        return
    start = float(frame.f_locals["start_time"])
    _COMPILES.append((start, start + duration, str(frame.f_locals.get("fun_name", ""))))


def _frame_named(frame: Any, code_name: str, local: str) -> Any:
    """The innermost frame from `frame` outwards running `code_name` with local `local`, or None."""
    while frame is not None:
        if frame.f_code.co_name == code_name and local in frame.f_locals:
            return frame
        frame = frame.f_back
    return None


def _watch_for_compile(main: int, fun_name: str, path: str) -> None:
    """JAX without a compile-start event: wait until the main thread compiles `fun_name`, then interrupt.

    Polls the main thread's stack (every 0.2 ms, releasing the GIL) for JAX's `_cached_compilation`
    of a function named `fun_name` that is inside XLA's compile; sends nothing once disarmed or
    after 120 s without one. JAX 0.4 records no compile event when the compile raises, so the span
    seen on the stack (from the first sight inside the compile to the first sight outside it) is
    noted instead: the interrupt landed inside it only if the stack showed the compile when it went.
    """
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _ARMED.get("fun_name") == fun_name:
        frame = sys._current_frames().get(main)
        compiling = _frame_named(frame, "_cached_compilation", "name")
        if compiling is not None and fun_name in str(compiling.f_locals["name"]) and _inside_compile(frame):
            name, seen = str(compiling.f_locals["name"]), time.time()
            _ARMED.clear()
            del frame, compiling
            _interrupt_inside_compile(main, seen, path)
            while time.monotonic() < deadline and _inside_compile(sys._current_frames().get(main)):
                time.sleep(0.0002)
            _COMPILES.append((seen, time.time(), name))
            return
        time.sleep(0.0002)


# JAX's Python functions that run inside the compile's timed span (jax/_src/interpreters/pxla.py
# `_cached_compilation`: `log_elapsed_time(...)` around `compiler.compile_or_get_cached`).
_INSIDE_COMPILE = frozenset({"compile_or_get_cached", "backend_compile_and_load"})


def _inside_compile(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code.co_name in _INSIDE_COMPILE:
            return True
        frame = frame.f_back
    return False


def _interrupt_inside_compile(main: int, started: float, path: str) -> None:
    """SIGINT the kernel once its main thread is inside XLA's compile, then write when to `path`.

    Sent from inside the kernel rather than by the test after polling a file: the test's poll,
    the kernel manager and a loaded machine could take longer than a short compile (10-30 ms on
    CPU; a SIGINT that lands after it misses). The thread starts in the span's start event, so the
    signal is sent after the span began; it is sent only while the main thread's stack is inside
    the span (`compile_or_get_cached`), and the main thread cannot move on while this thread holds
    the GIL, so its KeyboardInterrupt is raised inside the span, and the span's end comes after,
    every time. (XLA's CPU compile holds the GIL, so in practice the signal goes as XLA returns,
    still inside JAX's compile step.)
    """
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _inside_compile(sys._current_frames().get(main)):
        time.sleep(0.0002)
    sent = time.time()
    os.kill(os.getpid(), signal.SIGINT)
    with open(path + ".tmp", "w") as out:
        out.write(json.dumps({"started": started, "sent": sent}))
    os.replace(path + ".tmp", path)  # whole or absent: the test never reads half of it


def arm_interrupt(fun_name: str, path: str) -> None:
    """Before the interrupted-compile cell: SIGINT the kernel from inside XLA's compile of `fun_name`
    and write `{"started", "sent"}` (time.time()) to `path`.

    Garbage collection is paused until `disarm`: with it on, CPython 3.11 may run a collection
    while the compile returns to Python, and a KeyboardInterrupt raised inside JAX's gc callback
    (`_xla_gc_callback`) is printed as "Exception ignored" and lost, so the cell completes. That
    race is CPython's and JAX's, seen with and without jaxmagic (1 in 12 plain runs), and would
    make the comparison flaky; it is not what this cell tests.
    """
    import gc

    import jax.monitoring

    _ARMED.update(fun_name=fun_name, path=path)
    gc.disable()
    if not hasattr(jax.monitoring, "register_scalar_listener"):  # no compile-start event: watch the stack
        watcher = threading.Thread(target=_watch_for_compile, args=(threading.get_ident(), fun_name, path), daemon=True)
        _WATCHERS.append(watcher)
        watcher.start()


def disarm() -> None:
    import gc

    _ARMED.clear()
    gc.enable()


def compiles_since(start: float) -> list[tuple[float, float, str]]:
    """The compiles that ended after `start` (once a stack watcher, if any, has noted its span)."""
    while _WATCHERS:
        _WATCHERS.pop().join(timeout=10)
    return [c for c in _COMPILES if c[1] >= start]


# -- memory, for the 1,000-cell test ------------------------------------------------------


def rss_kb() -> int:
    """The kernel's resident set size now (VmRSS from /proc/self/status), in KiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _registered_widgets() -> dict:
    """ipywidgets' registry of live widgets: `widget._instances` (ipywidgets 8), `Widget.widgets` (7)."""
    from ipywidgets.widgets import widget

    registry = getattr(widget, "_instances", None)
    return registry if isinstance(registry, dict) else widget.Widget.widgets


def memory() -> str:
    """RSS and Python blocks after a full collection, widgets (registered, and alive at all), live
    Capture objects, and the listener, logger and hook counts."""
    import gc

    gc.collect()
    registered = list(_registered_widgets().values())
    views = sys.modules.get("jaxmagic.views.widget")
    alive = [obj for obj in gc.get_objects() if views is not None and isinstance(obj, views.JaxmagicWidget)]
    captures = sum(
        1
        for obj in gc.get_objects()
        if type(obj).__name__ == "Capture" and type(obj).__module__ == "jaxmagic.capture.record"
    )
    doc_bytes = sum(len(json.dumps(w.doc, separators=(",", ":"))) for w in alive)
    shell = _shell()
    return json.dumps(
        {
            "rss_kb": rss_kb(),
            "blocks": sys.getallocatedblocks(),
            "widgets": len(registered),
            "jaxmagic_widgets": len(alive),
            "doc_bytes": doc_bytes,
            "captures": captures,
            "listeners": _listener_counts(),
            "loggers": _loggers(),
            "events": {e: len(c) for e, c in sorted(shell.events.callbacks.items())},
        }
    )


def close_widgets(limit: int = 200) -> int:
    """Close up to `limit` live widgets (what a front end does when the outputs are cleared); how many.

    Each close is one iopub message: a burst of 2,000 could overrun ZeroMQ's queues (1,000 messages
    each way) while a busy client reads, and the dropped messages would include the request's
    `idle`. The caller repeats until none is left."""
    live = list(_registered_widgets().values())[:limit]
    for w in live:
        w.close()
    return len(live)
