"""JAX's tracing machinery: jitted functions and their options, the trace state, tracers, one eqn evaluated.

Each private name is reached behind a feature check; where it is missing the function says what
the caller gets instead (tests/test_jax_probes.py checks each on the installed JAX).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any, cast

import jax
import jax.core
import numpy as np

from ... import strict

# The C++ PjitFunction type, in every JAX version we support.
PJIT_FUNCTION_TYPE: type | None = type(jax.jit(lambda x: x))


def is_jitted_function(obj: Any) -> bool:
    """True for the callable `jax.jit` returns (not for our own wrapper)."""
    if PJIT_FUNCTION_TYPE is not None and type(obj) is PJIT_FUNCTION_TYPE:
        return True
    return callable(obj) and hasattr(obj, "lower") and hasattr(obj, "_cache_size") and hasattr(obj, "trace")


def jit_info(fn: Any) -> Any:
    """The PjitInfo record of a jitted function: static and donated argnums/argnames.

    `_jit_info` on JAX 0.5 and later; on 0.4 it is only a closure variable of the
    function's Python fallback path (`_cache_miss`). None when neither is there: static
    arguments then show as values and argument names as positions.
    """
    info = getattr(fn, "_jit_info", None)
    if info is not None:
        return info
    try:
        fallback = inspect.unwrap(fn._cache_miss)
        cells = dict(zip(fallback.__code__.co_freevars, fallback.__closure__ or ()))
        return cells["jit_info"].cell_contents
    except AttributeError:  # not a jitted function (no `_cache_miss`)
        return None
    except (KeyError, TypeError, ValueError) as exc:
        strict.fallback("static and donated arguments of jitted functions", exc)
        return None


def jit_options(fn: Any) -> tuple | None:
    """jit's options of a jitted function as one tuple (shardings, layouts, static and donated
    arguments, device, backend, ...), without the fields derived from the function itself: equal
    for `jax.jit(f)` and `jax.jit(f)` made again. None when this JAX keeps no such record."""
    info = jit_info(fn)
    if isinstance(info, tuple) and getattr(info, "_fields", ())[:2] == ("fun_sourceinfo", "fun_signature"):
        return info[2:]
    return None


def cached_programs(fn: Any) -> int | None:
    """How many compiled programs JAX's call cache holds for jitted `fn` (`_cache_size()`: the C++
    fast path's entries, shared by every jitted function JAX treats as `fn`); None when unknown.

    A cache hit runs one of these programs; when there is only one, which one is known.
    """
    size = getattr(fn, "_cache_size", None)
    if size is None:
        return None
    try:
        count = size()
    except Exception as exc:  # boundary: an unknown count only means the caller records more
        strict.fallback("the number of programs in a jitted function's call cache", exc)
        return None
    return count if type(count) is int else None


def _make_trace_state_clean() -> Callable[[], bool]:
    try:
        from jax._src import core

        probe = core.trace_state_clean
        probe()
        return probe
    except (ImportError, AttributeError) as exc:  # unknown: assume no trace is running and let the caller check args
        strict.fallback("knowing whether a JAX trace is running", exc)
        return lambda: True


trace_state_clean: Callable[[], bool] = _make_trace_state_clean()


class _CleanProbe:
    """`.value is TOP` exactly when no JAX trace is running (the portable, slower form)."""

    TOP = object()

    @property
    def value(self) -> object:
        return self.TOP if trace_state_clean() else None


def current_trace_probe() -> tuple[Any, Any]:
    """`(holder, top)` such that `holder.value is top` when a jitted call would run, not be traced.

    On the JAX versions with a current-trace context variable this reads it directly
    (0.06 us against 0.3 us for `trace_state_clean()`, which also compares the named-axis
    environment: a call under a named axis but no trace still executes, so recording
    it is right). JAX 0.5 to 0.7 have a thread-local trace context instead, read through a property
    (`_TraceContextProbe`, 0.1 us). Elsewhere (JAX 0.4) it falls back to `trace_state_clean`.
    """
    try:
        from jax._src import core

        holder, top = core.trace_state_strong_ref, core.eval_trace
        if (holder.value is top) == trace_state_clean():
            return holder, top
    except (ImportError, AttributeError):  # older JAX: no such variable
        pass
    try:
        from jax._src import core

        context, top = core.trace_ctx, core.eval_trace
        if (context.trace is top) == trace_state_clean():
            return _TraceContextProbe(context), top
    except (ImportError, AttributeError):  # JAX 0.4: no thread-local trace context
        pass
    probe = _CleanProbe()
    return probe, probe.TOP


class _TraceContextProbe:
    """`.value`: the current trace of JAX's thread-local trace context (JAX 0.5 to 0.7, before the
    context variable): one attribute read more than the variable, a third of `trace_state_clean()`."""

    __slots__ = ("_context",)

    def __init__(self, context: Any):
        self._context = context

    @property
    def value(self) -> Any:
        return self._context.trace


def aval_of(x: Any) -> Any:
    """The abstract value JAX would trace `x` as."""
    typeof = getattr(jax, "typeof", None)
    if typeof is not None:
        return typeof(x)
    from jax import api_util  # older JAX

    return api_util.shaped_abstractify(x)


def tracer_var(tracer: Any) -> Any:
    """The jaxpr Var a tracer of a jaxpr-building trace (jit, make_jaxpr) stands for, or None.

    On JAX 0.10 `DynamicJaxprTracer.val` is that Var, the same object the finished jaxpr binds;
    elsewhere (other tracers, other versions) None, and callers go without.
    """
    var = getattr(tracer, "val", None)
    return var if type(var).__name__ == "Var" and hasattr(var, "aval") else None


@functools.cache
def tracer_vars() -> bool:
    """Whether `tracer_var` finds the Var a finished jaxpr binds for a traced value (asked of a tiny trace).

    JAX 0.4 renames every Var when it finishes a jaxpr (inlining literals), so a value seen while
    tracing cannot be found in the jaxpr afterwards.
    """
    seen: list = []

    def double(x: Any) -> Any:
        y = x * 2
        seen.append(tracer_var(y))
        return y

    make_jaxpr = getattr(jax.make_jaxpr, "_jaxmagic_original", jax.make_jaxpr)
    try:
        closed = make_jaxpr(double)(np.float32(1.0))
    except Exception as exc:  # JAX failing a one-op trace: a moved internal, not the user's program
        strict.fallback("gradient leaves linked to the jaxpr's Vars", exc)
        return False
    return bool(seen) and seen[0] is not None and any(v is seen[0] for v in closed.jaxpr.outvars)


_PRIMITIVES: tuple[int, frozenset[str]] = (0, frozenset())  # (modules loaded when read, names)


def primitive_names() -> frozenset[str]:
    """Names of JAX's primitives: an eager op compiles as `jit(<primitive>)`.

    Read from JAX's modules already loaded (an eager op the cell ran is bound by one of them), read
    again only when more are loaded. Not from `jax.extend.core.primitives`: importing `jax.extend`
    adds config values to JAX 0.12's tracing context, and every function compiled before then
    misses its cache and compiles again on its next call (tests/test_trace_context.py).
    """
    global _PRIMITIVES
    modules = sys.modules
    if _PRIMITIVES[0] == len(modules):
        return _PRIMITIVES[1]
    try:
        from jax._src.core import Primitive
    except ImportError as exc:
        strict.fallback("eager ops' compiles told from the user's functions", exc)
        return frozenset()
    names = set()
    for name, module in list(modules.items()):
        if name.startswith("jax._src.") and module is not None:
            names.update(v.name for v in list(vars(module).values()) if isinstance(v, Primitive))
    _PRIMITIVES = (len(modules), frozenset(names))
    return _PRIMITIVES[1]


def bind_eqn(eqn: Any, invals: list) -> list:
    """Evaluate one eqn on concrete operands, as `jax.core.eval_jaxpr` does; returns its outputs.

    `get_bind_params` turns stored params into bind params (shard_map and other
    primitives with sub-jaxprs need it); older JAX returned `(subfuns, params)`.
    `eqn.ctx.manager` restores the eqn's context (compute type, remat tags...).
    """
    params: Any = eqn.params
    subfuns: tuple = ()
    get_bind_params = getattr(eqn.primitive, "get_bind_params", None)
    if get_bind_params is not None:
        params = get_bind_params(eqn.params)
        if isinstance(params, tuple) and len(params) == 2 and isinstance(params[1], dict):
            subfuns, params = params
    bind_params = cast("dict[str, Any]", params)  # a dict by now, on every JAX
    manager = getattr(getattr(eqn, "ctx", None), "manager", None)
    with manager if manager is not None else contextlib.nullcontext():
        out = eqn.primitive.bind(*subfuns, *invals, **bind_params)
    return list(out) if eqn.primitive.multiple_results else [out]


def traced_consts(traced: Any) -> tuple:
    """Constants a `jax.stages.Traced` passes as the leading inputs of its jaxpr (often none)."""
    return tuple(getattr(traced, "_consts", ()) or ())


def python_function(jitted: Any) -> Any:
    """The Python callable a jitted function traces (`jax.jit` keeps it as `__wrapped__`)."""
    return getattr(jitted, "__wrapped__", None)


_VMAP_FIELDS = ("fun", "in_axes", "out_axes", "axis_name", "axis_size", "spmd_axis_name")


def vmap_spec(fn: Any) -> dict | None:
    """{fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name} if `fn` is what `jax.vmap` returned.

    `jax.vmap` keeps its arguments in the closure of its inner `vmap_f` (under one
    `api_boundary` wrapper); None when `fn` is anything else or JAX changed that shape.
    """
    try:
        for _ in range(3):  # vmap_f itself, or up to two wrappers around it
            code = getattr(fn, "__code__", None)
            if code is None or not fn.__closure__:
                return None
            cells = dict(zip(code.co_freevars, (c.cell_contents for c in fn.__closure__)))
            if code.co_name == "vmap_f" and all(k in cells for k in _VMAP_FIELDS):
                spec = {k: cells[k] for k in _VMAP_FIELDS}
                if cells.get("sum_match"):
                    spec["sum_match"] = True
                if spec["axis_name"] is _no_axis_name():
                    spec["axis_name"] = None
                return spec
            inner = [v for v in cells.values() if callable(v) and getattr(v, "__code__", None) is not None]
            if len(inner) != 1:
                return None
            fn = inner[0]
    except Exception:  # boundary: `fn` is any object of the user's (a cell may be empty, a closure odd)
        return None
    return None


def _no_axis_name() -> Any:
    try:
        from jax._src import core

        return core.no_axis_name
    except (ImportError, AttributeError) as exc:
        strict.fallback("vmap's axis name read as unnamed", exc)
        return None


def vmap_sizes(value: Any) -> list[int]:
    """Axis sizes of the vmaps `value` is batched by, innermost first ([] when not batched).

    Read from JAX's private batching tracer (`_trace.axis_data.size`, `batch_dim`, `val`),
    duck-typed: another JAX gives [], not an error.
    """
    sizes: list[int] = []
    tracer = value
    for _ in range(32):  # nested vmaps
        axis = getattr(getattr(tracer, "_trace", None), "axis_data", None)
        if axis is None or not isinstance(getattr(axis, "size", None), int):
            break
        try:
            if tracer.batch_dim is not None:
                sizes.append(axis.size)
            tracer = tracer.val
        except AttributeError:
            break
    return sizes


_TRACER_TYPE: type | tuple[()] = getattr(jax.core, "Tracer", ())  # `isinstance(x, ())` is False: no tracer type known


def is_tracer(x: Any) -> bool:
    """True for a value JAX is tracing (no device data: its `.sharding` raises, slowly)."""
    return isinstance(x, _TRACER_TYPE)
