"""JAX's exceptions and warnings, read: concretization errors, deleted buffers, dtype truncation,
the debug-NaN stop. Matched by class where JAX gives one, by its message's wording otherwise."""

from __future__ import annotations

import re
from typing import Any

import jax

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
# In lower case: the runtime's INVALID_ARGUMENT writes "Buffer has been deleted or donated" when
# the op is compiled on the spot and "Invalid buffer passed: buffer has been ..." on JAX 0.4's C++
# fast path (an eager op whose program is cached already).
_DELETED = ("array has been deleted", "buffer has been deleted or donated")


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


# JAX 0.12 names the vmap tracer `VmapTracer` (before: `BatchTracer`)
_TRACER_TRANSFORMS = {"BatchTracer": "vmap", "VmapTracer": "vmap", "JVPTracer": "jvp", "LinearizeTracer": "linearize"}
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
    if not isinstance(exc, (RuntimeError, ValueError)):
        return False
    text = str(exc).lower()
    return any(s in text for s in _DELETED)


def is_deleted(x: Any) -> bool:
    """True for a jax.Array whose buffers are gone (donated or deleted)."""
    try:
        return isinstance(x, jax.Array) and bool(x.is_deleted())
    except Exception:  # boundary: `x` is any value of the user's
        return False


# JAX's warning when a dtype is requested that the x64 setting does not allow (`dtypes.py`,
# `check_user_dtype_supported`): "Explicitly requested dtype float64 [requested in zeros] is not
# available, and will be truncated to dtype float32. ..." (JAX 0.4 writes a dtype class as
# `<class 'jax.numpy.float64'>`: read as its last name; JAX 0.5 to 0.7 leave two spaces where no
# function is named: "dtype float64  is not available").
_TRUNCATED = re.compile(
    r"Explicitly requested dtype (?:<class '(?:[\w]+\.)*(?P<class>\w+)'>|(?P<requested>\S+?))"
    r"(?: requested in (?P<where>\S+?))? +"
    r"is not available, and will be truncated to dtype (?P<given>[\w.]+?)\.(?:\s|$)"
)


def dtype_truncation(message: str) -> dict | None:
    """What JAX's truncation warning says: {requested, given, where} (`where`: the function JAX
    names, or None), or None for any other warning text."""
    match = _TRUNCATED.match(message)
    if match is None:
        return None
    requested = match.group("requested") or match.group("class")
    return {"requested": requested, "given": match.group("given"), "where": match.group("where")}


# What JAX's `jax_debug_nans` / `jax_debug_infs` check raises (a FloatingPointError) when it stops a
# program: "invalid value (nan) encountered in log" (the primitive's name; "jit(f)" for a compiled
# call; JAX 0.4 ends the sentence with a full stop, which is not part of the name).
_DEBUG_STOP = re.compile(r"invalid value \((nan|inf)\) encountered in (\S+?)\.?(?:\s|$)", re.IGNORECASE)


def debug_check_stop(message: str) -> tuple[str, str] | None:
    """(kind, primitive) JAX's debug-NaN/Inf FloatingPointError names ("nan", "log"), or None for
    any other text."""
    match = _DEBUG_STOP.search(message)
    return None if match is None else (match.group(1).lower(), match.group(2))
