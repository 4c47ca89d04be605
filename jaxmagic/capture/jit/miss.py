"""Why one call missed the cache: JAX's explanation joined with our own signature diff.

JAX explains only its tracing cache, chooses the "closest" earlier entry by severity
rather than recency, and says nothing about changes that only recompile (sharding on
an Auto mesh, committed device, donation). The previous call's signature of the same
function is recorded anyway, so the diff against it is kept beside JAX's text; the
model (`model/reasons.py`) decides which tells the story and puts it in words.

A new `jax.jit` wrapper of a Python function an earlier wrapper compiled (other compiler
options, shardings, donation) is not a function made anew, and JAX, whose trace cache
often serves it, does not explain its compile: `wrapper_changes` names the options that
differ, so the reason says what is known.
"""

from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass
from typing import Any

from .. import jax_compat
from ..record import Change, Signature

MAX_OPTION_TEXT = 200  # characters of one jit option's value in a change (a sharding tree can be long)


@dataclass(frozen=True)
class MissReason:
    """The structured reason of one miss (before it is put in words)."""

    explanation: Any  # explain.Explanation: JAX's own, parsed; None when JAX gave none
    diff: tuple  # record.Change items: our diff against the previous signature of the same function
    first_call: bool  # no earlier call of this function in the capture
    redefined: bool  # the capture saw another function object made from the same `def`/`lambda` (made anew)
    previous: Signature | None = None


def parameter_names(fn: Any) -> list[str] | None:
    """Positional parameter names of the Python function under a jit (maps JAX's `[0][i]` paths)."""
    info = jax_compat.jit_info(fn)
    sig = getattr(info, "fun_signature", None)
    if not isinstance(sig, inspect.Signature):
        return None
    return [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _static_argnums(fn: Any) -> tuple[int, ...]:
    nums = getattr(jax_compat.jit_info(fn), "static_argnums", ()) or ()
    return (nums,) if isinstance(nums, int) else tuple(nums)


def _pick(explanations: tuple[str, ...], name: str, names: list[str] | None, static: tuple[int, ...]) -> Any:
    """The record about this function: inner jits traced inside it log their own records first."""
    from ..jax_compat.explain import parse_explanation

    parsed = [
        e for e in (parse_explanation(text, names, static_argnums=static) for text in explanations) if e is not None
    ]
    if not parsed:
        return None
    short = name.rsplit(".", 1)[-1]
    for e in reversed(parsed):  # the outer function's record is logged last
        if e.function and (e.function == name or e.function.rsplit(".", 1)[-1] == short):
            return e
    return parsed[-1]


# Python function -> [(weak reference to a jitted wrapper of it, that wrapper's jit options by name)], for
# every wrapper that missed the cache under a capture. Weak both ways: it keeps no function alive, and
# a dead wrapper's id can never be taken for a live one.
_WRAPPERS: weakref.WeakKeyDictionary[Any, list[tuple[Any, dict[str, Any]]]] = weakref.WeakKeyDictionary()


def _option_name(field: str) -> str:
    """jit's keyword for one of its recorded fields (`compiler_options_kvs` -> `compiler_options`)."""
    for suffix in ("_treedef", "_leaves", "_kvs"):
        if field.endswith(suffix):
            field = field[: -len(suffix)]
    return "in_shardings" if field == "user_specified_in_shardings" else field


def jit_options_named(fn: Any) -> dict[str, Any] | None:
    """{jit keyword: value} of a jitted function's options (the fields `jax_compat.jit_options` holds,
    several fields of one keyword as a tuple); None where this JAX keeps no such record."""
    options = jax_compat.jit_options(fn)
    fields = getattr(jax_compat.jit_info(fn), "_fields", ())[2:]
    if options is None or len(fields) != len(options):
        return None
    named: dict[str, Any] = {}
    for field, value in zip(fields, options):
        key = _option_name(field)
        named[key] = named[key] + (value,) if key in named else (value,)
    return {k: v[0] if len(v) == 1 else v for k, v in named.items()}


_TREES = ("in_shardings", "out_shardings", "in_layouts", "out_layouts")  # (…, treedef, leaves): leaves shown


def _text(key: str, value: Any) -> str:
    """An option's value as the user would recognise it: compiler options as a dict, a sharding tree by its leaves."""
    if key in _TREES and isinstance(value, tuple) and value:
        value = value[-1]
    if key == "compiler_options" and value in ((), None):
        return "{}"
    try:
        text = (
            repr(dict(value))
            if isinstance(value, tuple) and value and all(isinstance(kv, tuple) and len(kv) == 2 for kv in value)
            else repr(value)
        )
    except Exception:  # boundary: a user's value whose repr raises
        text = f"<{type(value).__name__}>"
    return text if len(text) <= MAX_OPTION_TEXT else text[: MAX_OPTION_TEXT - 1] + "…"


def _same(a: dict, b: dict) -> bool:
    """Two wrappers' options, equal in every key (values that do not compare count as equal)."""
    return a.keys() == b.keys() and not any(_differ(a[key], b[key]) for key in a)


def _differ(a: Any, b: Any) -> bool:
    try:
        return bool(a != b)
    except Exception:  # values that do not compare (arrays in a sharding tree): not said to differ
        return False


def wrapper_changes(fn: Any, first_call: bool) -> tuple[Change, ...] | None:
    """For a new jax.jit wrapper of a Python function an earlier wrapper already compiled (`jax.jit(f,
    compiler_options=...)` next to `jax.jit(f)`): the jit options in which it differs from the latest
    such wrapper, as `new_wrapper` changes (one without a path when the options are equal). None when
    `fn` is not such a wrapper. JAX explains only tracing-cache misses, and such a wrapper's trace is
    often cached, so this is what is known of its compile. Every miss registers its wrapper here."""
    target = jax_compat.python_function(fn)
    options = jit_options_named(fn)
    if target is None or options is None:
        return None
    try:
        earlier = _WRAPPERS.setdefault(target, [])
    except TypeError:  # a callable that takes no weak reference or no hash: not followed
        return None
    # Earlier wrappers count though the cell dropped them (`jax.jit(f)(x)` then `jax.jit(f, ...)(x)`):
    # their options are what is remembered; one dead entry per distinct options is enough.
    others = [(ref, opts) for ref, opts in earlier if ref() is not fn]
    if not any(ref() is fn for ref, _ in earlier):
        try:
            earlier[:] = [(ref, opts) for ref, opts in earlier if ref() is not None or not _same(opts, options)]
            earlier.append((weakref.ref(fn), options))
        except TypeError:
            pass
    if not first_call or not others:
        return None
    _, before = others[-1]
    changes = tuple(
        Change(key, "new_wrapper", _text(key, before.get(key)), _text(key, value))
        for key, value in options.items()
        if _differ(before.get(key), value)
    )
    return changes or (Change("", "new_wrapper", None, None),)


def miss_reason(
    fn: Any, name: str, explanations: tuple[str, ...], previous: Signature | None, signature: Signature, redefined: bool
) -> MissReason:
    """`redefined`: the capture saw another jitted function made from the same definition. A new
    wrapper of the very same Python function is not a function made anew: its changes say so."""
    from .signature import diff_signatures

    names = parameter_names(fn)
    diff = diff_signatures(previous, signature) if previous is not None else ()
    rewrapped = wrapper_changes(fn, previous is None)
    if rewrapped is not None:
        diff, redefined = tuple(diff) + rewrapped, False
    return MissReason(
        explanation=_pick(explanations, name, names, _static_argnums(fn)),
        diff=diff,
        first_call=previous is None,
        redefined=redefined,
        previous=previous,
    )
