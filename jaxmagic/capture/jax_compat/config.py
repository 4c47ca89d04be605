"""JAX's configuration and runtime state jaxmagic reads or sets: backends, debug checks, the explain flag."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
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


@contextlib.contextmanager
def debug_checks_off() -> Iterator[None]:
    """`jax_debug_nans` and `jax_debug_infs` off for jaxmagic's own replay, and back on after.

    Evaluating a program eqn by eqn (`--values`, the NaN origin search) makes every intermediate an
    eager result, which JAX's debug checks stop at even where the compiled program masks it
    (`where(x > 0, log(x), 0)`); the user's program, run by the user, keeps the user's setting.

    A check that is on is switched off with `jax.config.update` and on again in `finally`, not
    with JAX's thread-local `jax.debug_nans(False)`: on JAX 0.10, entering and leaving that
    context makes every function jitted before it skip the check in that thread for good,
    though the flag reads True (tests/test_nan_findings.py). For the replay's milliseconds other
    threads see the check off too. A check already off is left alone.
    """
    switched = []
    try:
        for name in ("jax_debug_nans", "jax_debug_infs"):
            if getattr(jax.config, name, False) is True:
                try:
                    jax.config.update(name, False)
                    switched.append(name)
                except Exception as exc:  # the replay then stops where the user's check would
                    strict.fallback(f"{name} switched off for jaxmagic's own replay", exc)
        yield
    finally:
        for name in switched:
            jax.config.update(name, True)


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


class LocalExplaining:
    """JAX's cache-miss explanations turned on for this thread until `off()` (idempotent)."""

    def __init__(self, state: Any):
        self._state = state
        self._context: Any = None

    def on(self) -> None:
        if self._context is None:
            context = self._state(True)
            context.__enter__()
            self._context = context

    def off(self) -> bool:
        """True if it was on."""
        context, self._context = self._context, None
        if context is None:
            return False
        context.__exit__(None, None, None)
        return True
