"""`jax.monitoring`'s event names, removing a listener on a JAX without a public way to, and whether
one is still registered.

JAX fires a duration event at the end of every trace, MLIR lowering and backend compile, and plain
events for the persistent compilation cache; their names differ between versions
(`/jax/core/compile/backend_compile_duration`, ...), so they are read by the words in them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import jax.monitoring as monitoring

_JIT_NAME = re.compile(r"^(?:jit|pjit)\((.*)\)$")  # how JAX names a jitted function's lowering and compile


def phase_of(event_name: str) -> str:
    """Map JAX's event names (which differ between versions) to our phases."""
    name = event_name.lower()
    if "compilation_cache" in name:
        return "cache"
    if "trace" in name or "tracing" in name:
        return "trace"
    if "mlir" in name or "lower" in name:
        return "lower"
    if "backend_compile" in name or name.endswith("compile_duration"):
        return "compile"
    return "other"


def event_function(name: str | None) -> str:
    """The function an event is about: JAX names lowering and compile `jit(f)` (`pjit(f)` on older
    versions) and tracing `f`, so all three read `f`."""
    if not name:
        return "(unnamed compile)"
    m = _JIT_NAME.match(name)
    return m.group(1) if m else name


def jit_event_name(function_name: str) -> str:
    """The name JAX gives the compile of a jitted `function_name` (the newest wording)."""
    return f"jit({function_name})"


def unregister(kind: str) -> Callable[[Callable], None] | None:
    """JAX's `unregister_{kind}_listener` (`kind`: "event", "event_duration"), or its private
    form on versions without a public one (0.4); None when neither exists."""
    public = getattr(monitoring, f"unregister_{kind}_listener", None)
    if public is not None:
        return public
    try:
        from jax._src import monitoring as private

        return getattr(private, f"_unregister_{kind}_listener_by_callback")
    except (ImportError, AttributeError):
        return None


def is_registered(kind: str, listener: Callable) -> bool | None:
    """Whether `listener` is among JAX's `kind` listeners ("event", "event_duration") now; None where
    this JAX has no way to list them.

    A cell may have removed it: `jax.monitoring.clear_event_listeners()` (JAX's own tests call it in
    their tearDown) empties every list, and JAX's unregister then fails an `assert`.
    """
    try:
        from jax._src import monitoring as private

        current = getattr(private, f"get_{kind}_listeners")()
    except (ImportError, AttributeError, TypeError):
        return None
    return any(registered is listener for registered in current)
