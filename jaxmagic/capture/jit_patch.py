"""Seeing each call of a jitted function: a thin pass-through wrapper and the `jax.jit` patch.

JAX offers no hook on the C++ fast path of a jitted call, so during a capture the
jitted functions in the user's namespace, and every function `jax.jit` makes, are
wrapped in `RecordedJit`. With no capture running the wrapper only forwards the call
(one global read); after a capture the namespace gets the original objects back.
"""

from __future__ import annotations

import functools
import types
from contextlib import ExitStack
from typing import Any, Callable, Protocol

import jax

from . import jax_compat


class CallRecorder(Protocol):
    def record(self, fn: Any, args: tuple, kwargs: dict) -> Any: ...


_recorder: CallRecorder | None = None  # the innermost running capture session


def set_recorder(recorder: CallRecorder | None) -> CallRecorder | None:
    """Make `recorder` receive calls; returns the previous one for restoring."""
    global _recorder
    previous, _recorder = _recorder, recorder
    return previous


class RecordedJit:
    """Stands in for a jitted function; forwards every call and attribute to it."""

    __slots__ = ("_jm_fn", "__dict__", "__weakref__")

    def __init__(self, fn: Any):
        object.__setattr__(self, "_jm_fn", fn)
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                self.__dict__[attr] = getattr(fn, attr)
            except AttributeError:
                pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        recorder = _recorder
        if recorder is None:
            return self._jm_fn(*args, **kwargs)
        return recorder.record(self._jm_fn, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jm_fn, name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Jitted functions used as methods bind `self` like plain functions do.
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self) -> str:
        return repr(self._jm_fn)


def unwrap(obj: Any) -> Any:
    return obj._jm_fn if type(obj) is RecordedJit else obj


def _wrap_jit_result(result: Any) -> Any:
    if jax_compat.is_jitted_function(result):
        return RecordedJit(result)
    if callable(result):  # `jax.jit(static_argnums=...)` used as a decorator factory
        @functools.wraps(result)
        def decorator(*args: Any, **kwargs: Any) -> Any:
            return _wrap_jit_result(result(*args, **kwargs))

        return decorator
    return result


def recording_jit(original: Callable) -> Callable:
    """A `jax.jit` that returns `RecordedJit` wrappers; otherwise identical."""

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
    jax.jit = patched
    stack.callback(setattr, jax, "jit", original)

    aliases = [name for name, value in list(namespace.items()) if value is original]
    for name in aliases:
        namespace[name] = patched

    def restore_aliases() -> None:
        for name in aliases:
            if namespace.get(name) is patched:
                namespace[name] = original

    stack.callback(restore_aliases)


def wrap_namespace(stack: ExitStack, namespace: dict) -> None:
    """Wrap the jitted functions bound in `namespace`; give originals back afterwards.

    On exit every `RecordedJit` bound in the namespace (including those the cell made
    with the patched `jax.jit`) is replaced by the jitted function it wraps, so code
    outside a capture runs on JAX's own objects.
    """
    for name, value in list(namespace.items()):
        if type(value) is not RecordedJit and jax_compat.is_jitted_function(value):
            namespace[name] = RecordedJit(value)

    def restore() -> None:
        for name, value in list(namespace.items()):
            if type(value) is RecordedJit:
                namespace[name] = value._jm_fn

    stack.callback(restore)
