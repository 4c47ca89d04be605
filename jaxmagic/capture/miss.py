"""Why one call missed the cache: JAX's explanation joined with our own signature diff.

JAX explains only its tracing cache, chooses the "closest" earlier entry by severity
rather than recency, and says nothing about changes that only recompile (sharding on
an Auto mesh, committed device, donation). The previous call's signature of the same
function is recorded anyway, so the diff against it is kept beside JAX's text; the
model (`model/reasons.py`) decides which tells the story and puts it in words.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from . import jax_compat
from .record import Signature


@dataclass(frozen=True)
class MissReason:
    """The structured reason of one miss (before it is put in words)."""

    explanation: Any  # explain.Explanation: JAX's own, parsed; None when JAX gave none
    diff: tuple  # record.Change items: our diff against the previous signature of the same function
    first_call: bool  # no earlier call of this function in the capture
    redefined: bool  # a new function object made from a `def`/`lambda` already seen (made anew per call)
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
    from .explain import parse_explanation

    parsed = [e for e in (parse_explanation(text, names, static_argnums=static) for text in explanations)
              if e is not None]
    if not parsed:
        return None
    short = name.rsplit(".", 1)[-1]
    for e in reversed(parsed):  # the outer function's record is logged last
        if e.function and (e.function == name or e.function.rsplit(".", 1)[-1] == short):
            return e
    return parsed[-1]


def miss_reason(fn: Any, name: str, explanations: tuple[str, ...], previous: Signature | None,
                signature: Signature, redefined: bool) -> MissReason:
    from .signature import diff_signatures

    names = parameter_names(fn)
    diff = diff_signatures(previous, signature) if previous is not None else ()
    return MissReason(explanation=_pick(explanations, name, names, _static_argnums(fn)), diff=diff, first_call=previous is None,
                      redefined=redefined, previous=previous)
