"""`jax.monitoring`'s event names, and removing a listener on a JAX without a public way to.

JAX fires a duration event at the end of every trace, MLIR lowering and backend compile, and plain
events for the persistent compilation cache; their names differ between versions
(`/jax/core/compile/backend_compile_duration`, ...), so they are read by the words in them.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.monitoring as monitoring


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
