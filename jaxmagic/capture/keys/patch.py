"""Seeing eager `jax.random` calls: the module's public functions replaced for a capture.

Every public function of `jax.random` that takes a key (samplers, `split`, `fold_in`,
`clone`, `key_data`) or makes one (`key`, `PRNGKey`, `wrap_key_data`) is replaced by a
stand-in that calls JAX's own function exactly once, with the user's arguments untouched,
and then reports the call to the running capture. Calls made while JAX traces (inside a
jitted function, a vmap, a scan body) pass straight through: their program's jaxpr tells
the story (capture/keys/flow.py). Only `jax.random` attributes and the namespace's aliases
of them (`from jax.random import split`) are patched; libraries that call `jax.random.x`
at call time (Flax, Equinox, Optax) are seen, JAX's internals are not.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, Protocol

import jax

from ... import strict
from .. import aliases, jax_compat, source
from ..jax_compat import random as jax_random
from ..patches import replace_attribute

MAKERS = {"key": "seed", "PRNGKey": "seed", "wrap_key_data": "wrap"}  # make a key from a seed or data
DERIVATIONS = {"split": "split", "fold_in": "fold_in", "clone": "clone", "key_data": "data"}
_SKIP = frozenset({"key_impl", "key_dtype", "default_prng_impl"})  # read a key's type, not its value

_CURRENT_TRACE, _NO_TRACE = jax_compat.current_trace_probe()


# Primitives that, applied outside any jit, may carry keys through a program: what eager
# vmap, grad, scan, fori_loop and cond of key-handling code bind (samplers are jitted, so an
# eager vmap of `normal` binds a batched `jit`).
WATCHED = frozenset(
    {
        "jit",
        "pjit",
        "scan",
        "while",
        "cond",
        "closed_call",
        "remat",
        "checkpoint",
        "custom_jvp_call",
        "custom_vjp_call",
        "random_split",
        "random_bits",
        "random_fold_in",
    }
)


class _Depth(threading.local):
    """How deep this thread is inside one of our stand-ins: per thread, since another thread's
    key operation in flight must not hide the cell's (a shared count did, now and then)."""

    n = 0


_inside = _Depth()  # >0 while one of our stand-ins runs JAX's function: its binds are that call's


class KeyRecorder(Protocol):
    def on_random(self, name: str, kind: str, args: tuple, kwargs: dict, out: Any, frame: Any) -> None: ...

    def on_eval(self, primitive: Any, args: tuple, params: dict, out: Any) -> None: ...


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


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Key operations inside this block are jaxmagic's own (evaluating a program again for
    values), not the user's: neither the stand-ins nor the eager-transform hook record them."""
    _inside.n += 1
    try:
        yield
    finally:
        _inside.n -= 1


@functools.lru_cache(maxsize=256)
def _patched(name: str, kind: str, original: Callable) -> Callable:
    """The stand-in for `jax.random.<name>`: made once per original and reused by every capture (it
    reads the running recorder when called; making ~40 of them cost 0.06 ms of each capture's start)."""

    @functools.wraps(original)
    def random_call(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        recorder = _recorder
        if recorder is None or _inside.n or _CURRENT_TRACE.value is not _NO_TRACE:
            # Under a trace (jit, vmap, grad, scan): the program that trace binds tells the story.
            return original(*args, **kwargs)  # its warnings keep their place (capture/findings/warning_site.py)
        _inside.n += 1
        try:
            # bad arguments raise from JAX itself, as without a capture
            out = original(*args, **kwargs)
        except BaseException as exc:  # the relay's frame is not the user's to read
            raise exc.with_traceback(source.past_own_frames(exc.__traceback__))
        finally:
            _inside.n -= 1
        try:
            recorder.on_random(name, kind, args, kwargs, out, sys._getframe(1))
        except Exception as exc:  # our failure never becomes the user's: the operation goes unrecorded
            strict.fallback("a key operation in the keys view", exc)
        return out

    random_call._jaxmagic_original = original  # type: ignore[attr-defined]
    if getattr(original, "__qualname__", None) == name:
        # pickle saves a function by its module and name and checks that the name finds it again:
        # `jax.random.<name>` finds the stand-in while it is patched, the original after.
        random_call.__module__ = jax.random.__name__
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
        replace_attribute(stack, module, name, patched)
        patched_of[original] = patched
    aliases.rebind_aliases(stack, namespace, patched_of)


def patch_eager_transforms(stack: ExitStack) -> None:
    """See key operations that eager transforms run: `EvalTrace.process_primitive`, wrapped.

    An eager `jax.vmap(normal)(keys)` or `lax.scan` over a key binds one program (a batched
    sampler jit, the scan) with concrete key arguments; that bind is recorded as a one-eqn
    program (capture/keys/flow.py). Binds made by our own stand-ins are theirs, and jitted
    functions called from Python (a `cache_miss` of the C++ dispatch) are recorded per call
    by the session, or not at all, never here. JAX's internals (`jax_compat.random`), behind a
    feature check: without them eager transforms go unseen, as before.
    """
    eval_trace = jax_random.eval_trace_class()
    if eval_trace is None:
        return
    original = eval_trace.__dict__["process_primitive"]
    if getattr(original, "_jaxmagic_original", None) is not None:
        return

    def process_primitive(self: Any, primitive: Any, args: Any, params: Any, /) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        recorder = _recorder
        if recorder is not None and not _inside.n and params.get("differentiated") is True:
            # A checkpoint's backward recomputation redraws what its forward pass drew (JAX's checker
            # skips it too): its binds are not new uses.
            _inside.n += 1
            try:
                return original(self, primitive, args, params)
            finally:
                _inside.n -= 1
        if recorder is None or _inside.n or primitive.name not in WATCHED or _from_jit_dispatch():
            return original(self, primitive, args, params)
        _inside.n += 1
        try:
            out = original(self, primitive, args, params)
        finally:
            _inside.n -= 1
        try:
            recorder.on_eval(primitive, tuple(args), params, out)
        except Exception as exc:  # our failure never becomes the user's: the operation goes unrecorded
            strict.fallback("a key operation in the keys view", exc)
        return out

    process_primitive._jaxmagic_original = original  # type: ignore[attr-defined]
    replace_attribute(stack, eval_trace, "process_primitive", process_primitive)


def _from_jit_dispatch() -> bool:
    """True when the bind comes straight from a jitted function's own dispatch: such calls are the
    session's to record, on a JAX version that binds them here (0.10 calls the program directly).
    False when a transformation (a vmap, jvp or partial-eval trace) bound it on its way down."""
    return jax_random.from_jit_dispatch(sys._getframe(2))  # above this function and the stand-in
