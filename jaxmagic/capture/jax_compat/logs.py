"""JAX's cache log records: the loggers that emit them, the first words that mark each kind,
whether this JAX can explain cache misses without breaking a program, and its key differ guarded.

The records' text is parsed by `explain.py`; the loggers and wording differ between versions (JAX's
internal pjit module up to 0.8, its partial_eval interpreter from 0.9), so records are recognised
by content and every emitter of any supported version is listed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from .config import LocalExplaining, explain_misses_state
from .tracing import trace_state_clean

# Modules that emit the records, across JAX 0.4.30–0.10 (see docs/design.md, "Recompiles").
EMITTERS = (
    "jax._src.interpreters.partial_eval",
    "jax._src.pjit",
    "jax._src.compiler",
    "jax._src.compilation_cache",
    "jax._src.dispatch",
)
MISS_PREFIX = "TRACING CACHE MISS"
_PERSISTENT = ("PERSISTENT COMPILATION CACHE MISS", "Persistent compilation cache hit")


def kind_of(message: str) -> str | None:
    """ "miss" (a tracing cache miss explained), "persistent_miss" or "persistent_hit" for JAX's cache
    records, None for any other log message."""
    if message.startswith(MISS_PREFIX):
        return "miss"
    if message.startswith(_PERSISTENT[0]):
        return "persistent_miss"
    if message.startswith(_PERSISTENT[1]):
        return "persistent_hit"
    return None


_explain_safe: bool | None = None


def explaining_is_safe() -> bool | None:
    """Whether turning on `jax_explain_cache_misses` leaves programs running (asked of JAX once, not a version).

    JAX 0.9 explains a second trace of a `cond` branch or a loop body with a key it cannot unpack
    (`ValueError: not enough values to unpack`), so with the flag on a correct program fails; jaxmagic
    must then leave the flag as the user set it. The probe traces one function as a `cond` branch at two
    shapes (make_jaxpr: nothing compiles, ~5 ms once), with logging silenced (its explanation is nobody's).
    None when it cannot ask: a JAX trace is running (the probe's ops would join it) or the flag does not exist.
    """
    global _explain_safe
    if _explain_safe is not None:
        return _explain_safe
    import logging

    state = explain_misses_state()
    if state is None or not trace_state_clean():
        return None
    silenced = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    explaining = LocalExplaining(state)
    explaining.on()  # this thread only: the user's own setting is never touched
    try:

        def branch(x: Any) -> Any:
            return x + 1

        # JAX explains only functions from user files, and jaxmagic's own files are hidden from it
        branch.__code__ = branch.__code__.replace(co_filename="<jaxmagic probe>")

        def twice(a: Any, b: Any) -> Any:
            return jax.lax.cond(True, branch, branch, a), jax.lax.cond(True, branch, branch, b)

        jax.make_jaxpr(twice)(np.zeros(1, np.float32), np.zeros(2, np.float32))  # traced only: nothing compiles
        _explain_safe = True
    except Exception:  # the probe's purpose: whatever JAX raises here, explaining breaks programs
        _explain_safe = False
    finally:
        explaining.off()
        logging.disable(silenced)
    return _explain_safe


# What a guarded diff gives for a cache key JAX failed to compare: last in `min`, JAX's own words.
_UNCOMPARED = (float("inf"), 0, "explanation unavailable")


def guarded_key_diff(user_asked: Callable[[], bool]) -> tuple[Any, str, Callable] | None:
    """`(module, name, stand_in)` for JAX's cache-key differ while jaxmagic has explanations on; None
    where this JAX has no such function (before 0.9 it lives elsewhere, with another contract).

    JAX 0.12 fails while explaining a miss when the earlier key's argument tree came from its default
    pytree registry (`jax.experimental.key_reuse.check_key_reuse(f, key)`, then `jax.jit(f)`): its
    `diff_tracing_cache_keys` raises "PyTree registries of PyTreeDefs passed to Tuple() must match",
    so a correct program fails under a magic that turned explanations on. The stand-in gives that key
    JAX's own "explanation unavailable" (the reason then comes from jaxmagic's signatures), and raises
    exactly as JAX does when the user asked for explanations (`user_asked`): the program fails then
    without jaxmagic too.
    """
    try:
        from jax._src.interpreters import partial_eval as pe
    except ImportError:
        return None
    original = getattr(pe, "diff_tracing_cache_keys", None)
    if not callable(original) or not _reads_global(getattr(pe, "explain", None), "diff_tracing_cache_keys"):
        return None

    def diff_tracing_cache_keys(new_key: Any, old_key: Any) -> Any:
        try:
            return original(new_key, old_key)
        except Exception:
            if user_asked():
                raise
            return _UNCOMPARED

    diff_tracing_cache_keys.__wrapped__ = original  # type: ignore[attr-defined]
    return pe, "diff_tracing_cache_keys", diff_tracing_cache_keys


def _reads_global(function: Any, name: str) -> bool:
    """Whether `function`'s code (or a comprehension inside it) looks `name` up when it runs."""
    codes = [getattr(function, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is None:
            continue
        if name in code.co_names:
            return True
        codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return False
