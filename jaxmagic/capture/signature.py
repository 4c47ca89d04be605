"""Readable call signatures: what JAX keys its compilation cache on.

Computed only when needed (a cache miss, or the first calls of a function in a
capture): flattening every argument of every call would cost more than the call.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax

from . import jax_compat
from .record import ArgSpec, Signature

_MAX_STATIC_REPR = 60


def _static_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= _MAX_STATIC_REPR else text[: _MAX_STATIC_REPR - 1] + "…"


def _sharding_text(leaf: Any) -> str | None:
    sharding = getattr(leaf, "sharding", None)
    if sharding is None or type(sharding).__name__ == "SingleDeviceSharding":
        return None
    spec = getattr(sharding, "spec", None)
    if spec is not None:
        return str(spec)
    return type(sharding).__name__


def _leaf_spec(path: str, leaf: Any, donated: bool) -> ArgSpec:
    try:
        aval = jax_compat.aval_of(leaf)
    except Exception:
        return ArgSpec(path=path, aval=f"<{type(leaf).__name__}>", donated=donated)
    return ArgSpec(
        path=path,
        aval=jax_compat.short_aval(aval),
        weak_type=bool(getattr(aval, "weak_type", False)),
        donated=donated,
        sharding=_sharding_text(leaf),
    )


def _parameter_names(info: Any) -> list[str]:
    sig = getattr(info, "fun_signature", None)
    if not isinstance(sig, inspect.Signature):
        return []
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _as_set(values: Any) -> set:
    if values is None:
        return set()
    if isinstance(values, (int, str)):
        return {values}
    return set(values)


def signature_of(fn: Any, args: tuple, kwargs: dict) -> Signature:
    """The signature of one call of jitted `fn`, with static and donated arguments marked."""
    info = jax_compat.jit_info(fn)
    static_nums = _as_set(getattr(info, "static_argnums", ()))
    static_names = _as_set(getattr(info, "static_argnames", ()))
    donate_nums = _as_set(getattr(info, "donate_argnums", ()))
    donate_names = _as_set(getattr(info, "donate_argnames", ()))
    names = _parameter_names(info)

    specs: list[ArgSpec] = []

    def add(path: str, value: Any, static: bool, donated: bool) -> None:
        if static:
            specs.append(ArgSpec(path=path, aval=_static_repr(value), static=True))
            return
        for key_path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            specs.append(_leaf_spec(path + jax.tree_util.keystr(key_path), leaf, donated))

    for i, value in enumerate(args):
        name = names[i] if i < len(names) else f"args[{i}]"
        add(name, value, i in static_nums or name in static_names, i in donate_nums or name in donate_names)
    for name in sorted(kwargs):
        add(name, kwargs[name], name in static_names, name in donate_names)
    return Signature(args=tuple(specs))
