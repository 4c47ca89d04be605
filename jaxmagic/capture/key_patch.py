"""Seeing eager `jax.random` calls: the module's public functions replaced for a capture.

Every public function of `jax.random` that takes a key (samplers, `split`, `fold_in`,
`clone`, `key_data`) or makes one (`key`, `PRNGKey`, `wrap_key_data`) is replaced by a
stand-in that calls JAX's own function exactly once, with the user's arguments untouched,
and then reports the call to the running capture. Calls made while JAX traces (inside a
jitted function, a vmap, a scan body) pass straight through: their program's jaxpr tells
the story (capture/key_flow.py). Only `jax.random` attributes and the namespace's aliases
of them (`from jax.random import split`) are patched; libraries that call `jax.random.x`
at call time (Flax, Equinox, Optax) are seen, JAX's internals are not.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from contextlib import ExitStack
from typing import Any, Callable, Protocol

import jax

from . import jax_compat

MAKERS = {"key": "seed", "PRNGKey": "seed", "wrap_key_data": "wrap"}  # make a key from a seed or data
DERIVATIONS = {"split": "split", "fold_in": "fold_in", "clone": "clone", "key_data": "data"}
_SKIP = frozenset({"key_impl", "key_dtype", "default_prng_impl"})  # read a key's type, not its value

_CURRENT_TRACE, _NO_TRACE = jax_compat.current_trace_probe()


class KeyRecorder(Protocol):
    def on_random(self, name: str, kind: str, args: tuple, kwargs: dict, out: Any, frame: Any) -> None: ...


_recorder: KeyRecorder | None = None


def set_recorder(recorder: KeyRecorder | None) -> KeyRecorder | None:
    """Make `recorder` receive eager random calls; returns the previous one for restoring."""
    global _recorder
    previous, _recorder = _recorder, recorder
    return previous


@functools.lru_cache(maxsize=128)
def _kind_of(name: str, original: Callable) -> str | None:
    """`seed`, `wrap`, `split`, ... or `sampler` (first parameter `key`); None for the rest."""
    if name in MAKERS:
        return MAKERS[name]
    if name in DERIVATIONS:
        return DERIVATIONS[name]
    if name in _SKIP or name.startswith("_"):
        return None
    try:
        params = list(inspect.signature(original).parameters)
    except (TypeError, ValueError):
        return None
    return "sampler" if params[:1] == ["key"] else None


def _patched(name: str, kind: str, original: Callable) -> Callable:
    @functools.wraps(original)
    def random_call(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        out = original(*args, **kwargs)  # bad arguments raise from JAX itself, as without a capture
        recorder = _recorder
        if recorder is not None and _CURRENT_TRACE.value is _NO_TRACE:
            try:
                recorder.on_random(name, kind, args, kwargs, out, sys._getframe(1))
            except Exception:  # our failure never becomes the user's
                pass
        return out

    random_call._jaxmagic_original = original  # type: ignore[attr-defined]
    return random_call


def patch_random(stack: ExitStack, namespace: dict) -> None:
    """Replace `jax.random`'s key functions and their namespace aliases for the capture.

    Each undo is registered right after its patch; a nested capture finds them patched
    and patches nothing.
    """
    module = jax.random
    patched_of: dict[Any, Any] = {}
    for name in dir(module):
        original = getattr(module, name, None)
        if not callable(original) or isinstance(original, type):
            continue
        if getattr(original, "_jaxmagic_original", None) is not None:
            return  # an outer capture's patch
        kind = _kind_of(name, original)
        if kind is None:
            continue
        patched = _patched(name, kind, original)
        setattr(module, name, patched)
        stack.callback(setattr, module, name, original)
        patched_of[original] = patched
    aliases: list[tuple[str, Any, Any]] = []
    stack.callback(_restore_aliases, namespace, aliases)
    function = types.FunctionType
    for name, value in list(namespace.items()):
        if type(value) is function and value in patched_of:
            aliases.append((name, value, patched_of[value]))
            namespace[name] = patched_of[value]


def _restore_aliases(namespace: dict, aliases: list[tuple[str, Any, Any]]) -> None:
    for name, original, patched in aliases:
        if namespace.get(name) is patched:
            namespace[name] = original
