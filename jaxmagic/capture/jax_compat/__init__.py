"""Every private JAX API jaxmagic touches, each behind a feature check.

Keeping them in one module means a JAX release that moves one of them breaks
one function here, and the fallback degrades a feature instead of failing.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

try:  # present in every JAX version we support; C++ PjitFunction type
    PJIT_FUNCTION_TYPE: type | None = type(jax.jit(lambda x: x))
except Exception:  # pragma: no cover - defensive
    PJIT_FUNCTION_TYPE = None


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
    except Exception:
        return None


def jit_options(fn: Any) -> tuple | None:
    """jit's options of a jitted function as one tuple (shardings, layouts, static and donated
    arguments, device, backend, ...), without the fields derived from the function itself: equal
    for `jax.jit(f)` and `jax.jit(f)` made again. None when this JAX keeps no such record."""
    info = jit_info(fn)
    if isinstance(info, tuple) and getattr(info, "_fields", ())[:2] == ("fun_sourceinfo", "fun_signature"):
        return info[2:]
    return None


def _make_trace_state_clean() -> Callable[[], bool]:
    try:
        from jax._src import core

        probe = core.trace_state_clean
        probe()
        return probe
    except Exception:  # unknown: assume no trace is running and let the caller check args
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
    it is right). Elsewhere it falls back to `trace_state_clean`.
    """
    try:
        from jax._src import core

        holder, top = core.trace_state_strong_ref, core.eval_trace
        if (holder.value is top) == trace_state_clean():
            return holder, top
    except Exception:  # older JAX: no such variable
        pass
    probe = _CleanProbe()
    return probe, probe.TOP


def aval_of(x: Any) -> Any:
    """The abstract value JAX would trace `x` as."""
    typeof = getattr(jax, "typeof", None)
    if typeof is not None:
        return typeof(x)
    from jax import api_util  # older JAX

    return api_util.shaped_abstractify(x)


def short_aval(aval: Any) -> str:
    """`f32[3,4]`, as JAX's jaxpr printer writes types."""
    try:
        return aval.str_short(short_dtypes=True)
    except TypeError:
        return aval.str_short()
    except Exception:
        return str(aval)


_SHORT_DTYPES: dict[Any, str] = {}


def short_dtype(dtype: Any) -> str:
    """`f32`, `bf16`, `key<fry>`: a dtype as the jaxpr printer writes it in types.

    Kept per dtype: making the aval goes through `jax.core`'s deprecated-name lookup, ~0.1 ms a
    call, and `%%sharding` asks once per array (0.12 s for a 560-array train step's outputs)."""
    try:
        return _SHORT_DTYPES[dtype]
    except (KeyError, TypeError):  # not seen yet, or an unhashable stand-in
        pass
    try:
        text = short_aval(jax.core.ShapedArray((), dtype))
    except Exception:
        return str(dtype)
    text = text[:-2] if text.endswith("[]") else text
    try:
        _SHORT_DTYPES[dtype] = text
    except TypeError:
        pass
    return text


def user_frame(source_info: Any) -> Any:
    """The innermost user frame of an eqn's source_info (file, function, line, column)."""
    try:
        source_info_util = _source_info_util()  # once: an import statement per eqn costs ~1 µs
    except Exception:
        return None
    try:  # JAX 0.5 and later take the traceback
        return source_info_util.user_frame(source_info.traceback)
    except AttributeError:  # JAX 0.4 takes the SourceInfo itself (and reads its `.traceback`)
        try:
            return source_info_util.user_frame(source_info)
        except Exception:
            return None
    except Exception:
        return None


@functools.cache
def _source_info_util() -> Any:
    from jax._src import source_info_util

    return source_info_util


@functools.lru_cache(maxsize=1 << 16)
def _frame_line(code: Any, lasti: int) -> tuple[str, int, str]:
    from jax._src import source_info_util

    frame = source_info_util.raw_frame_to_frame(code, lasti)
    return frame.file_name, frame.start_line, frame.function_name


@functools.cache
def _is_user_filename() -> Callable[[str], bool]:
    from jax._src import source_info_util

    return source_info_util.is_user_filename


# JAX functions that start tracing a function into a jaxpr. JAX 0.5 and later end an eqn's traceback
# at the traced function; JAX 0.4 keeps the whole Python stack, through these, to the call site.
_TRACE_ENTRIES = frozenset({"trace_to_jaxpr_dynamic", "trace_to_subjaxpr_dynamic"})


def user_stack(source_info: Any) -> tuple[tuple[str, int, str], ...]:
    """(file, line, function) of every user frame of an eqn's traceback, outermost first, within the
    function traced into the eqn's jaxpr (as JAX 0.5 and later record them; not its callers).

    The whole chain, not only the innermost line, tells a helper called from twenty
    lines apart from one called twenty times by a loop. Raw frames are cheap (a few µs
    per eqn); their line lookup is cached per (code, offset). Falls back to the innermost frame.
    """
    try:
        traceback = source_info.traceback
        if traceback is None:
            return ()
        codes, lastis = traceback.raw_frames()
        is_user = _is_user_filename()
        frames = []
        for code, lasti in zip(codes, lastis):  # innermost first
            if is_user(code.co_filename):
                frames.append(_frame_line(code, lasti))
            elif frames and code.co_name in _TRACE_ENTRIES:
                break  # JAX 0.4: the frames outside the traced function (where it was traced from) follow
        return tuple(reversed(frames))
    except Exception:
        frame = user_frame(source_info)
        return () if frame is None else ((frame.file_name, frame.start_line, frame.function_name),)


def name_stack_text(source_info: Any) -> str:
    """An eqn's name stack as text, as JAX 0.5 and later write it.

    JAX 0.4 drops a transform with nothing inside it (an eqn of `grad`'s own body reads '', not
    `jvp()`), which would put it outside the transform's group; the text is rebuilt from the
    entries the same way on every JAX.
    """
    try:
        stack = source_info.name_stack.stack
        if _TRANSFORM is None:
            return str(source_info.name_stack)
        scope: list[str] = []
        for entry in reversed(stack):
            if entry.__class__ is _TRANSFORM:
                if scope:
                    scope[-1] = f"{entry.name}({scope[-1]})"
                else:
                    scope.append(f"{entry.name}()")
            else:
                scope.append(str(entry.name))
        return "/".join(reversed(scope))
    except Exception:
        try:
            return str(source_info.name_stack)
        except Exception:
            return ""


def name_stack_path(source_info: Any) -> list[str]:
    """An eqn's name stack as a path of nested boxes: each transform its own level, `jvp(…)`.

    JAX's text folds a transform into the next name (`jvp(attention)`, `jvp(vmap(BTNH,…))`,
    `jvp()`), which makes the ops of one `grad`'s forward pass siblings in three scopes that
    interleave: a block of a model is then cut across boxes and cannot be folded. Nesting
    (`jvp(…)` › `vmap(…)` › `BTNH,…`) keeps one transform's ops in one box.
    """
    try:
        stack = source_info.name_stack.stack
        if _TRANSFORM is None:
            raise TypeError("no name stack entries on this JAX")
        return [f"{entry.name}(\u2026)" if entry.__class__ is _TRANSFORM else str(entry.name) for entry in stack]
    except Exception:
        text = name_stack_text(source_info)
        return [part for part in text.split("/") if part] if text else []


def lowered_name_stack_text(source_info: Any) -> str:
    """An eqn's name stack as this JAX writes it into the lowering's op names (StableHLO, HLO).

    Equal to `name_stack_text` on JAX 0.5 and later; JAX 0.4 lowers its own spelling (an empty
    transform dropped), and the op names must be matched as written.
    """
    try:
        return str(source_info.name_stack)
    except Exception:
        return name_stack_text(source_info)


def with_vars(closed: Any, invars: list | None = None, outvars: list | None = None) -> Any:
    """`closed` with its jaxpr's inputs or outputs replaced (the same eqns).

    JAX checks a jaxpr's debug info (argument names, result paths) against its inputs and
    outputs; where they no longer match, the debug info is left out.
    """
    jaxpr = closed.jaxpr
    changes = {k: v for k, v in (("invars", invars), ("outvars", outvars)) if v is not None}
    try:
        return closed.replace(jaxpr=jaxpr.replace(**changes))
    except AssertionError:
        return closed.replace(jaxpr=jaxpr.replace(**changes, debug_info=None))


def jaxpr_pretty_printer() -> Callable[[Any], tuple[str, dict]] | None:
    """A printer returning (text, {Var: printed name}) or None if the private API moved.

    The names let the graph label variables exactly as the jaxpr text does, and let
    us find the text line of each eqn.
    """
    try:
        from jax._src import core

        core.JaxprPpContext, core.JaxprPpSettings, core.pp_jaxpr  # noqa: B018 - feature check
    except Exception:
        return None

    def print_jaxpr(jaxpr: Any) -> tuple[str, dict]:
        context = core.JaxprPpContext()
        doc = core.pp_jaxpr(jaxpr, context, core.JaxprPpSettings())
        try:  # inside a kernel JAX would colour the text with ANSI codes
            text = doc.format(use_color=False)
        except TypeError:
            text = _ANSI.sub("", doc.format())
        return text, dict(context.var_names)

    return print_jaxpr


_WRAPPED_CONSTANTS = ("TypedNdArray", "LiteralArray")  # JAX 0.8's wrapper; JAX 0.7's (jax._src.literals)


def constant_value(value: Any) -> Any:
    """A jaxpr constant as the array it holds.

    JAX 0.8 wraps numpy constants in a `TypedNdArray` (JAX 0.7 in a `LiteralArray`) that is
    not an ndarray and keeps the array in `.val`; later versions made it an ndarray subclass (a view of the
    user's array). Either way the user's array is what comes back.
    """
    if type(value).__name__ in _WRAPPED_CONSTANTS and not isinstance(value, np.ndarray):
        inner = getattr(value, "val", None)
        if isinstance(inner, np.ndarray):
            return inner
    return value


def literal_value(atom: Any) -> Any:
    """The Python value of a jaxpr Literal, or None for a Var."""
    return constant_value(getattr(atom, "val", None)) if type(atom).__name__ == "Literal" else None


def is_literal(atom: Any) -> bool:
    return type(atom).__name__ == "Literal"


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
    except Exception:
        return False
    return bool(seen) and seen[0] is not None and any(v is seen[0] for v in closed.jaxpr.outvars)


def is_dropvar(var: Any) -> bool:
    return type(var).__name__ == "DropVar"


_jaxpr_types: tuple[type, type] | None = None


def argument_paths(jaxpr: Any) -> tuple[str, ...] | None:
    """The pytree path of each input of a traced function's jaxpr (`params['layers'][0]['w']`), as
    JAX's own debug info names them; None when this JAX keeps none, or they do not line up (a jaxpr
    built by hand, or one whose inputs were pruned after tracing)."""
    names = getattr(getattr(jaxpr, "debug_info", None), "arg_names", None)
    if not names or len(names) != len(jaxpr.invars) or not all(isinstance(n, str) for n in names):
        return None
    return tuple(names)


def jaxpr_types() -> tuple[type, type]:
    """(ClosedJaxpr, Jaxpr) classes, wherever this JAX keeps them.

    `jax._src.core` is loaded with jax; `jax.extend` (the public home) costs ~16 ms to import.
    """
    global _jaxpr_types
    if _jaxpr_types is None:
        try:
            from jax._src import core

            _jaxpr_types = (core.ClosedJaxpr, core.Jaxpr)
        except Exception:
            from jax import extend

            _jaxpr_types = (extend.core.ClosedJaxpr, extend.core.Jaxpr)
    return _jaxpr_types


def hide_from_jax(path: str) -> None:
    """Keep our frames out of JAX's filtered tracebacks and out of eqn source lines."""
    for module_name in ("traceback_util", "source_info_util"):
        try:
            module = __import__(f"jax._src.{module_name}", fromlist=["register_exclusion"])
            module.register_exclusion(path)
        except Exception:
            pass  # frames of ours may show in tracebacks; nothing else changes


def primitive_names() -> frozenset[str]:
    """Names of JAX's primitives: an eager op compiles as `jit(<primitive>)`."""
    try:
        from jax.extend.core import primitives

        return frozenset(getattr(primitives, n).name for n in dir(primitives) if n.endswith("_p"))
    except Exception:
        return frozenset()


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
    manager = getattr(getattr(eqn, "ctx", None), "manager", None)
    with manager if manager is not None else contextlib.nullcontext():
        out = eqn.primitive.bind(*subfuns, *invals, **params)
    return list(out) if eqn.primitive.multiple_results else [out]


def _transform_type() -> type | None:
    try:
        from jax._src.source_info_util import Transform

        return Transform
    except Exception:
        return None


_TRANSFORM = _transform_type()


def has_transform(source_info: Any, name: str) -> bool:
    """True if an eqn was traced under transform `name` (e.g. "vmap"): `vmap(...)` in its name stack.

    Called once per eqn of every recorded program: a loop over the stack's few entries.
    """
    try:
        for entry in source_info.name_stack.stack:  # noqa: SIM110
            if entry.__class__ is _TRANSFORM and entry.name == name:
                return True
        return False
    except Exception:
        return f"{name}(" in name_stack_text(source_info)


def _without_replayed_prefix(stack: list) -> list:
    """The name stack with what a `transpose` entry replays of the stack above it dropped.

    JAX 0.4 names a backward-pass eqn under vmap `vmap(transpose(vmap(jvp(...))))`: the part after
    `transpose` repeats the forward eqn's stack, whose start is the same vmap. Counting it twice
    would call one vmap nested.
    """
    keys = [(entry.__class__ is _TRANSFORM, getattr(entry, "name", entry)) for entry in stack]
    out, i = [], 0
    while i < len(stack):
        out.append(stack[i])
        if keys[i] == (True, "transpose"):
            prefix = keys[:i]
            if prefix and keys[i + 1 : i + 1 + len(prefix)] == prefix:
                del stack[i + 1 : i + 1 + len(prefix)]
                del keys[i + 1 : i + 1 + len(prefix)]
        i += 1
    return out


def transform_depth(source_info: Any, name: str) -> int:
    """How many times transform `name` appears in an eqn's name stack (2 = nested vmaps)."""
    try:
        stack = _without_replayed_prefix(list(source_info.name_stack.stack))
        return sum(entry.__class__ is _TRANSFORM and entry.name == name for entry in stack)
    except Exception:
        return name_stack_text(source_info).count(f"{name}(")


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
    except Exception:
        return None
    return None


def _no_axis_name() -> Any:
    try:
        from jax._src import core

        return core.no_axis_name
    except Exception:
        return None


def dce_jaxpr(jaxpr: Any) -> Any:
    """`jaxpr` after the dead-code elimination `jit` applies before lowering, or None if unavailable.

    Eqns whose outputs are unused lower to nothing; knowing them keeps a dead eqn from taking
    the ops of a live twin when eqns are linked to StableHLO lines (model/levels.py).
    """
    try:
        from jax._src.interpreters import partial_eval as pe

        return pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))[0]
    except Exception:
        return None


def scoped_user_context(source_info: Any, scope: str) -> Any:
    """A context that binds ops with an eqn's traceback and name stack, plus one more scope.

    Re-evaluating a user's eqn under it gives the new eqns (and every eqn JAX derives from
    them: `jvp(...)`, `transpose(jvp(...))`) the user's source line and scopes, with `scope`
    innermost, as `core.eval_jaxpr` does plus the scope. Falls back to `jax.named_scope`.
    """
    try:
        from jax._src import source_info_util

        stack = source_info_util.current_name_stack() + source_info.name_stack.extend(scope)
        return source_info_util.user_context(source_info.traceback, name_stack=stack)
    except Exception:
        return jax.named_scope(scope)


def name_stack_entries(source_info: Any) -> tuple[tuple[bool, str], ...]:
    """(is_transform, name) for each entry of an eqn's name stack, outermost first."""
    try:
        return tuple((entry.__class__ is _TRANSFORM, entry.name) for entry in source_info.name_stack.stack)
    except Exception:
        return ()


def drop_scopes(source_info: Any, drop: Callable[[str], bool]) -> Any:
    """`source_info` with the name-stack scopes for which `drop(name)` is true removed (None: unchanged)."""
    try:
        stack = source_info.name_stack
        kept = tuple(e for e in stack.stack if e.__class__ is _TRANSFORM or not drop(e.name))
        if len(kept) == len(stack.stack):
            return source_info
        return source_info.replace(name_stack=type(stack)(kept))
    except Exception:
        return source_info


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


def source_info_now() -> Any:
    """JAX's source info (traceback, name stack) for the current Python stack, or None."""
    try:
        from jax._src import source_info_util

        return source_info_util.current()
    except Exception:
        return None


def context_meshes() -> list[Any]:
    """The meshes in context now: the concrete one `jax.set_mesh` / `use_mesh` set (as a global or a
    `with` block), then the abstract one (`use_abstract_mesh`, or the concrete one's). Empty where
    none is set or this JAX has no such context (older versions: `with mesh:` only)."""
    out = []
    for getter in ("get_mesh", "get_abstract_mesh"):
        try:
            mesh = getattr(jax.sharding, getter)()
        except Exception:
            continue
        if mesh is not None and getattr(mesh, "axis_names", None):  # the empty mesh means none is set
            out.append(mesh)
    return out


def axis_types(mesh: Any) -> tuple[Any, ...]:
    """The mesh's axis types (`AxisType.Auto`, `Explicit`, `Manual`), one per axis; () on a JAX without them.

    JAX 0.4 to 0.5 keep them as {type: axis name or names}: read per axis name, so a 2-axis mesh
    never reads as having one type.
    """
    try:
        types = getattr(mesh, "axis_types", None) or ()
        if isinstance(types, dict):
            by_name = {
                name: kind
                for kind, names in types.items()
                for name in (names if isinstance(names, tuple) else (names,))
            }
            return tuple(by_name[name] for name in mesh.axis_names if name in by_name)
        return tuple(types)
    except Exception:
        return ()


def stablehlo_with_locations(lowered: Any) -> str:
    """The StableHLO of `lowered` with its source locations (`loc(...)`): what links its lines to eqns.

    `Lowered.as_text(debug_info=True)` where JAX has it (0.5 and later); before that, `as_text()`
    leaves the locations out, and the lowered MLIR module prints them itself. Raises TypeError
    when neither is available (the caller says the text cannot be linked).
    """
    try:
        return lowered.as_text(debug_info=True)
    except TypeError:
        pass
    module = lowered.compiler_ir("stablehlo")
    printer = getattr(getattr(module, "operation", None), "get_asm", None)
    if printer is None:
        raise TypeError("this JAX prints StableHLO without locations")
    return printer(enable_debug_info=True)


_TRACER_TYPE: type = getattr(jax.core, "Tracer", ())  # `isinstance(x, ())` is False: no tracer type known


def is_tracer(x: Any) -> bool:
    """True for a value JAX is tracing (no device data: its `.sharding` raises, slowly)."""
    return isinstance(x, _TRACER_TYPE)


def traced_spec(aval: Any) -> Any:
    """The PartitionSpec a traced value's abstract value carries, or None where it says nothing.

    Only explicit-sharding mode puts a meaningful spec in the aval (`jax.typeof(x).sharding`
    on a mesh with Explicit axes); elsewhere the mesh is empty or the spec all None. Reading
    a tracer's own `.sharding` instead raises an AttributeError whose message walks the
    trace's provenance (about 12 ms per leaf of a grad inside jit).
    """
    sharding = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    spec = getattr(sharding, "spec", None)
    if mesh is None or spec is None or getattr(mesh, "empty", True):
        return None
    try:
        return spec if any(entry is not None for entry in spec) else None
    except TypeError:
        return None


def spec_text(spec: Any) -> str:
    """A PartitionSpec as JAX 0.5 and later print it, `P(None, 'd')`, on every JAX (older ones print
    `PartitionSpec(None, 'd')`: the same entries under the class's long name)."""
    text = str(spec)
    long_name = "PartitionSpec("
    return "P(" + text[len(long_name) :] if text.startswith(long_name) else text


def shard_map_specs(eqn: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(in_specs, out_specs) of a shard_map eqn as PartitionSpecs, on every JAX.

    JAX 0.6 and later keep the specs as written; older ones keep `in_names`/`out_names`, one
    `{dimension: (mesh axes...)}` per operand, from which the same spec is rebuilt (trailing
    unsplit dimensions left out, as `P('d')` means `P('d', None)`).
    """
    params = eqn.params
    if "in_specs" in params or "out_specs" in params:
        return tuple(params.get("in_specs", ())), tuple(params.get("out_specs", ()))

    def specs(names: Any, atoms: Any) -> tuple[Any, ...]:
        out = []
        for dims, atom in zip(names or (), atoms):
            rank = len(getattr(getattr(atom, "aval", None), "shape", ()))
            entries = [None] * max(rank, max(dims, default=-1) + 1)
            for dim, axes in dict(dims).items():
                axes = tuple(axes)
                entries[dim] = axes[0] if len(axes) == 1 else axes
            while entries and entries[-1] is None:
                entries.pop()
            out.append(jax.sharding.PartitionSpec(*entries))
        return tuple(out)

    return specs(params.get("in_names"), eqn.invars), specs(params.get("out_names"), eqn.outvars)


_explain_safe: bool | None = None


def backends_are_initialized() -> bool:
    """Whether JAX has started a backend yet (asking never starts one). True where this JAX cannot
    say, so that callers read device facts as before."""
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except Exception:
        return True


@contextlib.contextmanager
def debug_checks_off() -> Iterator[None]:
    """`jax_debug_nans` and `jax_debug_infs` off for jaxmagic's own replay, and back on after.

    Evaluating a program eqn by eqn (`--values`, the NaN origin search) makes every intermediate an
    eager result, which JAX's debug checks stop at even where the compiled program masks it
    (`where(x > 0, log(x), 0)`); the user's program, run by the user, keeps the user's setting.

    A check that is on is switched off with `jax.config.update` and on again in `finally`, not
    with JAX's thread-local `jax.debug_nans(False)`: on JAX 0.10, entering and leaving that
    context makes every function jitted before it skip the check in that thread for good,
    though the flag reads True (tests/test_nan_findings.py). For the replay's milliseconds other
    threads see the check off too. A check already off is left alone.
    """
    switched = []
    try:
        for name in ("jax_debug_nans", "jax_debug_infs"):
            if getattr(jax.config, name, False) is True:
                try:
                    jax.config.update(name, False)
                    switched.append(name)
                except Exception:
                    pass
        yield
    finally:
        for name in switched:
            jax.config.update(name, True)


def explain_misses_state() -> Any:
    """JAX's `jax_explain_cache_misses` setting object, or None where this JAX has none.

    It is a context manager too (`with state(True):`), which sets the value for this thread only:
    the user's own `jax.config.update('jax_explain_cache_misses', ...)` then stays theirs,
    readable with `get_global()`, whatever jaxmagic turns on for the capture.
    """
    try:
        from jax._src import config as jax_config

        state = jax_config.explain_cache_misses
    except (ImportError, AttributeError):
        return None
    return state if hasattr(state, "get_global") and callable(state) else None


class LocalExplaining:
    """JAX's cache-miss explanations turned on for this thread until `off()` (idempotent)."""

    def __init__(self, state: Any):
        self._state = state
        self._context: Any = None

    def on(self) -> None:
        if self._context is None:
            context = self._state(True)
            context.__enter__()
            self._context = context

    def off(self) -> bool:
        """True if it was on."""
        context, self._context = self._context, None
        if context is None:
            return False
        context.__exit__(None, None, None)
        return True


def explaining_is_safe() -> bool | None:
    """Whether turning on `jax_explain_cache_misses` leaves programs running (asked of JAX once, not a version).

    JAX 0.9 explains a second trace of a `cond` branch or a loop body with a key it cannot unpack
    (`ValueError: not enough values to unpack`), so with the flag on a correct program fails; jaxmagic
    must then leave the flag as the user set it. The probe traces one function as a `cond` branch at two
    shapes (make_jaxpr: nothing compiles, ~5 ms once), with logging silenced (its explanation is nobody's).
    None when it cannot ask: a JAX trace is running (the probe's ops would join it) or the flag does not exist.
    """
    global _explain_safe
    if _explain_safe is not None:
        return _explain_safe
    import logging

    state = explain_misses_state()
    if state is None or not trace_state_clean():
        return None
    silenced = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    explaining = LocalExplaining(state)
    explaining.on()  # this thread only: the user's own setting is never touched
    try:

        def branch(x: Any) -> Any:
            return x + 1

        # JAX explains only functions from user files, and jaxmagic's own files are hidden from it
        branch.__code__ = branch.__code__.replace(co_filename="<jaxmagic probe>")

        def twice(a: Any, b: Any) -> Any:
            return jax.lax.cond(True, branch, branch, a), jax.lax.cond(True, branch, branch, b)

        jax.make_jaxpr(twice)(np.zeros(1, np.float32), np.zeros(2, np.float32))  # traced only: nothing compiles
        _explain_safe = True
    except Exception:
        _explain_safe = False
    finally:
        explaining.off()
        logging.disable(silenced)
    return _explain_safe


# -- rebuilding jaxprs (capture/buffers.py) ---------------------------------------------------


def closed_jaxpr_with(closed: Any, jaxpr: Any, consts: list) -> Any:
    """A new ClosedJaxpr of `closed`'s type around `jaxpr` and `consts`."""
    return type(closed)(jaxpr, consts)


def jaxpr_with_eqns(jaxpr: Any, eqns: list) -> Any:
    """`jaxpr` with other eqns (same invars, outvars, effects and debug info)."""
    return jaxpr.replace(eqns=eqns)


def eqn_with_params(eqn: Any, params: dict) -> Any:
    """`eqn` with other params (same vars, primitive and source info)."""
    return eqn.replace(params=params)


# -- JAX's exceptions, matched (capture/findings/concretization.py, capture/findings/donation.py) -----------------

_CONCRETIZATION_TYPES = (
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "NonConcreteBooleanIndexError",
    "ConcretizationTypeError",
)  # most specific first
# JAX's note on where a tracer came from (`DynamicJaxprTracer._origin_msg`): the traced function and
# the arguments the value depends on.
_ORIGIN = re.compile(
    r"The error occurred while tracing the function (?P<function>.+?) at (?P<file>.+?):(?P<line>\d+)"
    r" for (?P<traced_for>[\w.]+)\."
)
_DEPENDS = re.compile(r"depends on the values? of the arguments? (?P<args>.+?)\.(?:\n|$)")
_DELETED = ("Array has been deleted", "Buffer has been deleted or donated")


def concretization_kind(exc: BaseException) -> str | None:
    """The name of JAX's concretization error class `exc` is an instance of (the most specific of
    `TracerBoolConversionError`, `TracerIntegerConversionError`, `NonConcreteBooleanIndexError`,
    `ConcretizationTypeError`), or None: matched by class, never by message."""
    errors = getattr(jax, "errors", None)
    for name in _CONCRETIZATION_TYPES:
        cls = getattr(errors, name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return name
    return None


def concretization_origin(message: str) -> dict | None:
    """What JAX's message says about the tracer's origin: {function, file, line, traced_for, args}
    (`args`: the argument names it depends on, possibly empty), or None when it says nothing."""
    match = _ORIGIN.search(message)
    if match is None:
        return None
    depends = _DEPENDS.search(message, match.end())
    args: list[str] = []
    if depends is not None:
        text = depends.group("args").replace(", and ", ", ").replace(" and ", ", ")
        args = [a.strip() for a in text.split(", ") if a.strip()]
    return {
        "function": match.group("function"),
        "file": match.group("file"),
        "line": int(match.group("line")),
        "traced_for": match.group("traced_for"),
        "args": args,
    }


_TRACER_TRANSFORMS = {"BatchTracer": "vmap", "JVPTracer": "jvp", "LinearizeTracer": "linearize"}
_TRACER_NAMED = re.compile(r"This (\w+Tracer) with object id")


def tracer_transform(message: str) -> str | None:
    """The transformation a concretization error's tracer belongs to where JAX's message names the
    tracer's type ("This BatchTracer with object id ..." under vmap), else None."""
    match = _TRACER_NAMED.search(message)
    return _TRACER_TRANSFORMS.get(match.group(1)) if match else None


def is_deleted_array_error(exc: BaseException) -> bool:
    """True for JAX's errors on reading an array whose buffer was deleted or donated: the
    RuntimeError of `Array._check_if_deleted` and the runtime's INVALID_ARGUMENT when one is passed
    to a compiled call."""
    return isinstance(exc, (RuntimeError, ValueError)) and any(s in str(exc) for s in _DELETED)


def is_deleted(x: Any) -> bool:
    """True for a jax.Array whose buffers are gone (donated or deleted)."""
    try:
        return isinstance(x, jax.Array) and bool(x.is_deleted())
    except Exception:
        return False


# JAX's warning when a dtype is requested that the x64 setting does not allow (`dtypes.py`,
# `check_user_dtype_supported`): "Explicitly requested dtype float64 [requested in zeros] is not
# available, and will be truncated to dtype float32. ..."
_TRUNCATED = re.compile(
    r"Explicitly requested dtype (?P<requested>\S+?)(?: requested in (?P<where>\S+?))? "
    r"is not available, and will be truncated to dtype (?P<given>[\w.]+?)\.(?:\s|$)"
)


def dtype_truncation(message: str) -> dict | None:
    """What JAX's truncation warning says: {requested, given, where} (`where`: the function JAX
    names, or None), or None for any other warning text."""
    match = _TRUNCATED.match(message)
    if match is None:
        return None
    return {"requested": match.group("requested"), "given": match.group("given"), "where": match.group("where")}
