"""JAX's configuration and runtime state jaxmagic reads or sets: backends, debug checks, the explain flag."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax

from ... import strict


def backends_are_initialized() -> bool:
    """Whether JAX has started a backend yet (asking never starts one). True where this JAX cannot
    say, so that callers read device facts as before."""
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError) as exc:
        strict.fallback("devices left unasked before a backend starts", exc)
        return True


def _global_value(name: str) -> Any:
    """The process-wide value of JAX flag `name`, leaving out a thread's override (`with
    jax.debug_nans(True):`, or JAX's test harness). The value as read where this JAX cannot tell
    them apart."""
    try:
        from jax._src import config as jax_config

        return getattr(jax_config, name.removeprefix("jax_")).get_global()
    except (ImportError, AttributeError) as exc:
        strict.fallback(f"{name}'s global value read apart from the thread's", exc)
        return getattr(jax.config, name, False)


@contextlib.contextmanager
def debug_checks_off() -> Iterator[None]:
    """`jax_debug_nans` and `jax_debug_infs` off for jaxmagic's own replay, and back on after.

    Evaluating a program eqn by eqn (`--values`, the NaN origin search) makes every intermediate an
    eager result, which JAX's debug checks stop at even where the compiled program masks it
    (`where(x > 0, log(x), 0)`); the user's program, run by the user, keeps the user's setting.

    A check that is on process-wide is switched off with `jax.config.update` and on again in
    `finally`, not with JAX's thread-local `jax.debug_nans(False)`: on JAX 0.10, entering and leaving
    that context makes every function jitted before it skip the check in that thread for good,
    though the flag reads True (tests/test_nan_findings.py). For the replay's milliseconds other
    threads see the check off too. A check off process-wide is left alone, even where this thread
    turned it on for itself (`with jax.debug_nans(True):`): setting the global value would outlive
    the user's context; the replay then stops where the user's check would, and says so.
    """
    switched = []
    try:
        for name in ("jax_debug_nans", "jax_debug_infs"):
            if _global_value(name) is True:
                try:
                    jax.config.update(name, False)
                    switched.append(name)
                except Exception as exc:  # the replay then stops where the user's check would
                    strict.fallback(f"{name} switched off for jaxmagic's own replay", exc)
        yield
    finally:
        for name in switched:
            jax.config.update(name, True)


@contextlib.contextmanager
def compile_logs_off() -> Iterator[None]:
    """JAX's compile log (`jax_log_compiles`) off on this thread for jaxmagic's own replay.

    Evaluating a program eqn by eqn (`--values`, the NaN origin search) compiles each op once, and
    under the user's `jax_log_compiles` the cell's output listed "Compiling jit(cos)" for ops the
    cell never compiled. JAX's thread-local context of the flag: the user's global value is never
    written, and another thread's compiles are logged as before."""
    state = None
    try:
        from jax._src import config as jax_config

        state = jax_config.log_compiles if bool(jax_config.log_compiles.value) else None
    except (ImportError, AttributeError, TypeError) as exc:
        strict.fallback("jax_log_compiles read for jaxmagic's own replay", exc)
    if state is None:
        yield
        return
    with state(False):
        yield


def jit_disabled_probe() -> Callable[[], bool]:
    """A check, cheap enough for every recorded call (~50 ns), of whether jit is off on this thread now.

    Under `jax.disable_jit()` (or `jax_disable_jit`) a jitted function's call runs its Python eagerly:
    nothing is traced or compiled, so there is no program to record, and asking JAX for one
    (`fn.trace`) would run the user's Python, and its side effects, a second time.
    """
    try:
        from jax._src import config as jax_config

        state = jax_config.disable_jit
        bool(state.value)
    except (ImportError, AttributeError, TypeError) as exc:
        strict.fallback("jax.disable_jit() read from the config's public name", exc)
        return lambda: bool(getattr(jax.config, "jax_disable_jit", False))
    return lambda: bool(state.value)


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


_OWN_MARK = 1  # jaxmagic's own thread-local value of the explain flag: true to JAX, never `True` itself


class LocalExplaining:
    """JAX's cache-miss explanations turned on for this thread until `off()` (idempotent).

    Where the setting can be swapped directly (JAX's C++ config: `swap_local`), jaxmagic's value is
    `_OWN_MARK`, so a `with jax.explain_cache_misses(True):` the user enters in the cell reads
    `True` (`asked_by_user`) and their explanations reach them; elsewhere it is JAX's own context
    with `True`, and the user's own thread-local setting cannot be told from it (`marked` False).
    """

    def __init__(self, state: Any):
        self._state = state
        self._context: Any = None
        self.marked = callable(getattr(state, "swap_local", None)) and callable(getattr(state, "set_local", None))

    @property
    def active(self) -> bool:
        return self._context is not None

    def on(self) -> None:
        if self._context is not None:
            return
        if self.marked:
            self._context = ("swapped", self._state.swap_local(_OWN_MARK))
            return
        context = self._state(True)
        context.__enter__()
        self._context = context

    def off(self) -> bool:
        """True if it was on. A user's context still open on top of it is left to close itself."""
        context, self._context = self._context, None
        if context is None:
            return False
        if isinstance(context, tuple):
            if self._state.value is _OWN_MARK:
                self._state.set_local(context[1])
        else:
            context.__exit__(None, None, None)
        return True

    def seen_by_user(self) -> Any:
        """The setting as reading it gives without jaxmagic: under jaxmagic's own mark, the thread's
        earlier value (a `with jax.explain_cache_misses(...)` entered before the cell) or the global one.

        A cell that saves and restores the setting (`old = jax.config.jax_explain_cache_misses`, ...,
        `jax.config.update('jax_explain_cache_misses', old)`, as test harnesses do) would otherwise
        read the mark and leave explanations on for every later cell.
        """
        value = self._state.value
        if value is not _OWN_MARK or not isinstance(self._context, tuple):
            return value
        earlier = self._context[1]
        return earlier if isinstance(earlier, bool) else self._state.get_global()

    def public_reading(self) -> tuple[Any, str, Any] | None:
        """`(owner, name, stand_in)`: `jax.config.jax_explain_cache_misses` read as `seen_by_user`, for
        as long as this is on; None where the reading is not JAX's plain property or the mark is not ours."""
        owner = type(jax.config)
        if not self.marked or not isinstance(owner.__dict__.get("jax_explain_cache_misses"), property):
            return None
        return owner, "jax_explain_cache_misses", property(lambda _config: self.seen_by_user())


def asked_by_user(state: Any, own: LocalExplaining | None) -> bool:
    """Whether the user turned explanations on: globally, or for this thread with JAX's context
    (`True`; jaxmagic's own local value is `_OWN_MARK`). Unknowable while jaxmagic's own context,
    unmarked, is on: then only the global setting counts."""
    if state.get_global():
        return True
    if own is not None and own.active and not own.marked:
        return False
    return state.value is True
