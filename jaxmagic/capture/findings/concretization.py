"""A concretization error the cell raised, explained: which argument is traced, where, and the fixes.

JAX raises `ConcretizationTypeError` (and its kin `TracerBoolConversionError`,
`TracerIntegerConversionError`, `NonConcreteBooleanIndexError`) when Python needs a concrete value
(an `if`, a `range`, a shape, a boolean mask) from a traced one. The cell's own traceback stays as
JAX made it; this adds one finding (kind "concretization", severity "bug") that the views show
under the error: the jitted function, the argument JAX's message says the value depends on, the
user's line that needed it, and the fixes that fit the error and the line. The exception is
matched by class (capture/jax_compat/), and what its message says about the origin is parsed
there too; nothing is claimed that JAX did not say.
"""

from __future__ import annotations

import re

from .. import jax_compat, source
from ..record import Capture, Finding, SourceLocation

KIND = "concretization"
_NAME = re.compile(r"^[A-Za-z_]\w*$")  # an argument JAX names plainly (`n`), not a pytree leaf (`params['w']`)

_WHAT = {
    "TracerBoolConversionError": "Python's truth test (`if`, `while`, `and`, `or`, `bool()`) needs a concrete "
    "True or False",
    "TracerIntegerConversionError": "Python needs a concrete integer here (`range()`, indexing a list or tuple, "
    "`int()`)",
    "NonConcreteBooleanIndexError": "indexing with a boolean mask makes an array whose shape depends on the "
    "mask's values",
    "ConcretizationTypeError": "Python needs a concrete value here (a shape, a size, a Python number)",
}


def explain(exc: BaseException | None, capture: Capture) -> Finding | None:
    """The finding for `exc` when it is one of JAX's concretization errors, else None."""
    if exc is None:
        return None
    kind = jax_compat.concretization_kind(exc)
    if kind is None:
        return None
    origin = jax_compat.concretization_origin(str(exc)) or {}
    where = source.exception_location(exc)
    call = _raising_call(capture, exc)
    function = origin.get("function") or (capture.calls[call].name if call is not None else None)
    traced_for = (
        origin.get("traced_for") or jax_compat.tracer_transform(str(exc)) or ("jit" if call is not None else None)
    )
    message = _message(kind, function, traced_for, origin.get("args") or [], where, capture)
    return Finding(kind=KIND, message=message, source=where, severity="bug", call=call, function=function)


def _raising_call(capture: Capture, exc: BaseException) -> int | None:
    """The recorded jitted call that raised `exc` (the last one with its text), if any."""
    text = f"{type(exc).__name__}: {exc}"
    for call in reversed(capture.calls):
        if call.error == text:
            return call.index
    return None


def _message(
    kind: str,
    function: str | None,
    traced_for: str | None,
    args: list[str],
    where: SourceLocation | None,
    capture: Capture,
) -> str:
    """One paragraph: what, where, which argument, the fixes."""
    under = f"jax.{traced_for}" if traced_for else "a JAX transformation"
    subject = f"{function} (traced for {under})" if function else f"A function traced for {under}"
    line = _line_text(where)
    text = f"{subject} raised {kind}{line}: {_WHAT[kind]}, but under {under} the value is an abstract tracer"
    if args:
        text += f" (JAX: it depends on the argument{'s' if len(args) > 1 else ''} {_names(args)})"
    text += ". Fixes: " + "; ".join(_fixes(kind, traced_for, args, where, function)) + "."
    return text


def _line_text(where: SourceLocation | None) -> str:
    if where is None:
        return ""
    code = (where.code or "").strip()
    return f" at `{code}`" if code else ""  # the view names the line itself (the finding's source)


def _names(args: list[str]) -> str:
    return ", ".join(args[:-1]) + " and " + args[-1] if len(args) > 1 else args[0]


def _fixes(
    kind: str, traced_for: str | None, args: list[str], where: SourceLocation | None, function: str | None
) -> list[str]:
    """The fixes that fit the error, the line's code and the transformation."""
    code = (where.code or "").strip() if where is not None else ""
    fixes = []
    plain = [a for a in args if _NAME.match(a)]
    if traced_for in ("jit", "pjit") and plain and kind != "NonConcreteBooleanIndexError":
        quoted = ", ".join(repr(a) for a in plain) + ("," if len(plain) == 1 else "")
        target = function if function and not function.startswith("<") else "f"
        settings = f"{_names(plain)} is a setting" if len(plain) == 1 else f"{_names(plain)} are settings"
        fixes.append(
            f"if {settings} rather than data, mark {'it' if len(plain) == 1 else 'them'} static: "
            f"jax.jit({target}, static_argnames=({quoted})) (or static_argnums; each new "
            "value then compiles anew and must be hashable)"
        )
    if kind == "TracerBoolConversionError":
        if code.startswith("while"):
            fixes.append("loop on a traced condition with jax.lax.while_loop(cond_fun, body_fun, init)")
        else:
            fixes.append(
                "choose between values with jnp.where(cond, a, b), or between computations with "
                "jax.lax.cond(cond, true_fun, false_fun, *operands)"
            )
    elif kind == "TracerIntegerConversionError":
        if "range(" in code:
            fixes.append(
                "loop a traced number of times with jax.lax.fori_loop(0, n, body, init) (or jax.lax.while_loop)"
            )
        else:
            fixes.append(
                "index with a JAX array instead of a Python list (jnp.asarray(values)[i]), or slice "
                "with jax.lax.dynamic_slice"
            )
    elif kind == "NonConcreteBooleanIndexError":
        fixes.append(
            "keep the shape with jnp.where(mask, x, 0), or take a fixed number of indices with "
            "jnp.nonzero(mask, size=N, fill_value=0) (x[jnp.nonzero(mask, size=N)]); reductions take "
            "where= (jnp.sum(x, where=mask))"
        )
    elif re.search(r"\b(float|int|bool|complex)\(", code):
        fixes.append("convert with x.astype(dtype) or jnp.asarray(x, dtype), which stay traced")
    else:
        fixes.append(
            "compute with jnp / jax.lax functions that take traced values (jnp.where or jax.lax.cond "
            "for choices, jax.lax.fori_loop for loops); shapes must come from static values"
        )
    return fixes
