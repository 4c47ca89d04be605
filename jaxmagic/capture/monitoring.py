"""Listening to `jax.monitoring`: the trace, lowering and compile phases JAX reports.

JAX fires a duration event at the end of every trace, MLIR lowering and backend
compile (with the function name), and plain events for the persistent compilation
cache; nothing fires on a cache hit. Listeners are registered for a capture only and
removed afterwards.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any, Callable

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


def _unregister(kind: str) -> Callable[[Callable], None] | None:
    public = getattr(monitoring, f"unregister_{kind}_listener", None)
    if public is not None:
        return public
    try:
        from jax._src import monitoring as private

        return getattr(private, f"_unregister_{kind}_listener_by_callback")
    except Exception:
        return None


def listen(stack: ExitStack, on_duration: Callable[[str, float, dict], None],
           on_event: Callable[[str, dict], None]) -> list[str]:
    """Register both listeners; returns notes about what could not be undone."""
    notes: list[str] = []

    def duration_listener(event: str, duration: float, **kwargs: Any) -> None:
        on_duration(event, duration, kwargs)

    def event_listener(event: str, **kwargs: Any) -> None:
        on_event(event, kwargs)

    for kind, register, listener in (
        ("event_duration", monitoring.register_event_duration_secs_listener, duration_listener),
        ("event", monitoring.register_event_listener, event_listener),
    ):
        unregister = _unregister(kind)
        if unregister is None:
            notes.append(f"this JAX cannot remove a {kind} listener, so jaxmagic did not add one")
            continue
        register(listener)
        stack.callback(unregister, listener)
    return notes
