"""Readable call signatures: what JAX keys its compilation cache on.

Computed only when needed (a cache miss, or the first calls of a function in a
capture): flattening every argument of every call would cost more than the call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from typing import Any

import jax

from .. import jax_compat
from ..jax_compat.explain import type_change_kind
from ..record import ArgSpec, Change, Signature

_MAX_STATIC_REPR = 60


def _static_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # boundary: a user's value whose repr raises
        text = f"<{type(value).__name__}>"
    return text if len(text) <= _MAX_STATIC_REPR else text[: _MAX_STATIC_REPR - 1] + "…"


def _sharding_text(leaf: Any, aval: Any = None) -> str | None:
    """The placement of an array argument: its PartitionSpec, `device 3` for one array on
    a device other than the default one (moving it there recompiles, and JAX's explanation
    does not say so), or None on the default device.

    A tracer's placement is read from its abstract value only (explicit-sharding mode puts
    the spec there): touching a tracer's `.sharding` raises, and the error message costs
    milliseconds per leaf (a grad inside jit has hundreds of traced leaves).
    """
    if jax_compat.is_tracer(leaf):
        spec = jax_compat.traced_spec(aval if aval is not None else getattr(leaf, "aval", None))
        return None if spec is None else jax_compat.spec_text(spec)
    sharding = getattr(leaf, "sharding", None)
    if sharding is None:
        return None
    if type(sharding).__name__ == "SingleDeviceSharding":
        try:
            [device] = sharding.device_set
            if device == _default_device():
                return None
            return f"device {device.id}"
        except Exception:  # an odd device set: say nothing rather than guess
            return None
    spec = getattr(sharding, "spec", None)
    if spec is not None:
        return jax_compat.spec_text(spec)
    return type(sharding).__name__


_AVAL_TEXT: dict[Any, str] = {}  # aval -> `f32[3,4]`: a train step's leaves share a few avals
_AVAL_TEXT_LIMIT = 4096


def _aval_text(aval: Any) -> str:
    """`jax_compat.short_aval`, remembered per aval (8 us to print, 0.1 us to look up; equal avals
    print alike)."""
    try:
        text = _AVAL_TEXT.get(aval)
    except TypeError:  # an unhashable aval
        return jax_compat.short_aval(aval)
    if text is None:
        text = jax_compat.short_aval(aval)
        if len(_AVAL_TEXT) >= _AVAL_TEXT_LIMIT:
            _AVAL_TEXT.clear()
        _AVAL_TEXT[aval] = text
    return text


def _leaf_spec(path: str, leaf: Any, donated: bool) -> ArgSpec:
    try:
        aval = jax_compat.aval_of(leaf)
    except Exception:  # boundary: a leaf JAX cannot trace (JAX itself says so when the call runs)
        return ArgSpec(path=path, aval=f"<{type(leaf).__name__}>", donated=donated)
    return ArgSpec(
        path=path,
        aval=_aval_text(aval),
        weak_type=bool(getattr(aval, "weak_type", False)),
        donated=donated,
        sharding=_sharding_text(leaf, aval),
    )


def _parameter_names(info: Any) -> list[str]:
    sig = getattr(info, "fun_signature", None)
    if not isinstance(sig, inspect.Signature):
        return []
    return [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _as_set(values: Any) -> set:
    if values is None:
        return set()
    if isinstance(values, (int, str)):
        return {values}
    return set(values)


def _arguments(fn: Any, args: tuple, kwargs: dict) -> Iterator[tuple[str, Any, bool, bool]]:
    """(name, value, static, donated) of each argument, in the order jit flattens them."""
    info = jax_compat.jit_info(fn)
    static_nums = _as_set(getattr(info, "static_argnums", ()))
    static_names = _as_set(getattr(info, "static_argnames", ()))
    donate_nums = _as_set(getattr(info, "donate_argnums", ()))
    donate_names = _as_set(getattr(info, "donate_argnames", ()))
    names = _parameter_names(info)
    for i, value in enumerate(args):
        name = names[i] if i < len(names) else f"args[{i}]"
        yield name, value, i in static_nums or name in static_names, i in donate_nums or name in donate_names
    for name in sorted(kwargs):
        yield name, kwargs[name], name in static_names, name in donate_names


def signature_of(fn: Any, args: tuple, kwargs: dict, leaves: list | None = None) -> Signature:
    """The signature of one call of jitted `fn`, with static and donated arguments marked.

    `leaves`, when given, receives the dynamic argument leaves (as `dynamic_leaves`).
    """
    specs: list[ArgSpec] = []
    for path, value, static, donated in _arguments(fn, args, kwargs):
        if static:
            specs.append(ArgSpec(path=path, aval=_static_repr(value), static=True))
            continue
        for key_path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            specs.append(_leaf_spec(path + jax.tree_util.keystr(key_path), leaf, donated))
            if leaves is not None:
                leaves.append(leaf)
    return Signature(args=tuple(specs))


def concrete_key(fn: Any, args: tuple, kwargs: dict) -> tuple[tuple, list] | None:
    """(key, dynamic leaves) of a call whose arguments are all concrete arrays and none static:
    two calls with equal keys have equal `signature_of` (same jit options and parameter names, same
    pytree, same avals and shardings, same default device), so a capture can reuse the first's.

    About 1 us a leaf where `signature_of` costs 7 (paths, aval texts, placements); None when a leaf
    is a tracer (its `.sharding` must not be read) or not an array, or an argument is static.
    """
    if has_static_arguments(fn):
        return None
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    avals, shardings = [], []
    for leaf in leaves:
        if not isinstance(leaf, jax.Array) or jax_compat.is_tracer(leaf):
            return None
        avals.append(leaf.aval)
        shardings.append(leaf.sharding)
    return (jax_compat.jit_info(fn), treedef, tuple(avals), tuple(shardings), _default_device()), leaves


def dynamic_leaves(fn: Any, args: tuple, kwargs: dict) -> list:
    """The dynamic argument leaves in the order JAX flattens them: leaf i is the program's input i.

    No avals are read (about 1 us a leaf less than a signature): how capture/keys/log.py
    finds the key arguments of every call of a function whose program handles keys.
    """
    if not has_static_arguments(fn):  # jit flattens (args, kwargs), kwargs by sorted name: one C++ call
        return jax.tree_util.tree_leaves((args, kwargs))
    leaves: list = []
    for _, value, static, _ in _arguments(fn, args, kwargs):
        if not static:
            leaves.extend(jax.tree_util.tree_leaves(value))
    return leaves


def has_static_arguments(fn: Any) -> bool:
    info = jax_compat.jit_info(fn)
    return bool(getattr(info, "static_argnums", ()) or getattr(info, "static_argnames", ()))


def _placement(spec: ArgSpec) -> str:
    return spec.sharding or "default device"


def _default_device() -> Any:
    """Where uncommitted arrays live: `jax_default_device` when set to a device, else the first device."""
    configured = getattr(jax.config, "jax_default_device", None)
    return configured if hasattr(configured, "id") else _first_device()


@functools.lru_cache(maxsize=1)
def _first_device() -> Any:
    return jax.devices()[0]


def _arg_changes(b: ArgSpec, a: ArgSpec) -> list[Change]:
    """What differs between two specs of one argument path (several kinds can differ at once)."""
    path = a.path
    if b.static or a.static:
        return [Change(path, "static", b.aval, a.aval)] if (b.static, b.aval) != (a.static, a.aval) else []
    out: list[Change] = []
    sharding_said = False
    if b.aval != a.aval:
        kind = type_change_kind(b.aval, a.aval)
        if kind == "sharding" and b.sharding != a.sharding:  # `f32[8@d]` vs `f32[8]`: say it with the specs
            out.append(Change(path, "sharding", _placement(b), _placement(a)))
            sharding_said = True
        else:
            before, after = b.aval, a.aval
            if b.weak_type != a.weak_type:
                before, after = f"{before}{{weak_type={b.weak_type}}}", f"{after}{{weak_type={a.weak_type}}}"
            out.append(Change(path, kind, before, after))
            sharding_said = kind == "sharding"
    elif b.weak_type != a.weak_type:
        out.append(
            Change(path, "weak_type", f"{b.aval}{{weak_type={b.weak_type}}}", f"{a.aval}{{weak_type={a.weak_type}}}")
        )
    if b.sharding != a.sharding and not sharding_said:
        out.append(Change(path, "sharding", _placement(b), _placement(a)))
    if b.donated != a.donated:
        out.append(
            Change(
                path, "donation", "donated" if b.donated else "not donated", "donated" if a.donated else "not donated"
            )
        )
    return out


def diff_signatures(before: Signature, after: Signature) -> tuple[Change, ...]:
    """What changed from one call's signature to the next call's, per argument path.

    Covers what JAX's own explanation leaves out (sharding on Auto meshes, donation) and
    compares with the *previous* call of the function, where JAX compares with the entry
    it finds closest. Paths only on one side are pytree changes (a dict key, a list item,
    a None, a keyword argument added or removed); `None` stands for "absent". A
    committed device is not part of `Signature` (single-device shardings are left out),
    so moving an argument to another device shows no change here.
    """
    old = {spec.path: spec for spec in before.args}
    new = {spec.path: spec for spec in after.args}
    changes: list[Change] = []
    for spec in after.args:
        prev = old.get(spec.path)
        if prev is None:
            changes.append(Change(spec.path, "pytree", None, spec.aval))
        else:
            changes.extend(_arg_changes(prev, spec))
    changes.extend(Change(spec.path, "pytree", spec.aval, None) for spec in before.args if spec.path not in new)
    return tuple(changes)
