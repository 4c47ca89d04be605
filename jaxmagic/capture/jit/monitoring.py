"""Listening to `jax.monitoring`: the trace, lowering and compile phases JAX reports.

JAX fires a duration event at the end of every trace, MLIR lowering and backend
compile (with the function name), and plain events for the persistent compilation
cache; nothing fires on a cache hit. Listeners are registered for a capture only and
removed afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import jax.monitoring as monitoring

from ..jax_compat.monitoring import is_registered, unregister
from ..jax_compat.monitoring import phase_of as phase_of  # the session's name for it

# What the view says when the cell took jaxmagic's listeners away (`jax.monitoring.clear_event_listeners()`).
LISTENERS_REMOVED = (
    "the cell removed jaxmagic's jax.monitoring listeners (jax.monitoring.clear_event_listeners() or an "
    "unregister): traces and compiles after that were not seen, so their calls may show as cache hits"
)


def listen(
    stack: ExitStack,
    on_duration: Callable[[str, float, dict], None],
    on_event: Callable[[str, dict], None],
    note: Callable[[str], None],
) -> list[str]:
    """Register both listeners; returns notes about what could not be undone. At the end, a listener
    the cell already removed is left alone and `note` says so (once)."""
    notes: list[str] = []
    lost: list[str] = []

    def remove_if_registered(kind: str, remove: Callable[[Any], None], listener: Callable[..., None]) -> None:
        if is_registered(kind, listener) is False:
            if not lost:
                note(LISTENERS_REMOVED)
            lost.append(kind)
            return
        remove(listener)

    def duration_listener(event: str, duration: float, **kwargs: Any) -> None:
        on_duration(event, duration, kwargs)

    def event_listener(event: str, **kwargs: Any) -> None:
        on_event(event, kwargs)

    def add(kind: str, register: Callable[[Any], None], listener: Callable[..., None]) -> None:
        """Register `listener` with JAX's `register`, only where this JAX can remove it again."""
        remove = unregister(kind)
        if remove is None:
            notes.append(f"this JAX cannot remove a {kind} listener, so jaxmagic did not add one")
            return
        register(listener)
        stack.callback(remove_if_registered, kind, remove, listener)

    add("event_duration", monitoring.register_event_duration_secs_listener, duration_listener)
    add("event", monitoring.register_event_listener, event_listener)
    return notes


def top_level(events: list) -> list:
    """The events not nested inside another event of the same phase.

    JAX 0.4–0.8 report a trace span for every inner jit and jnp function traced inside
    an outer one (inner spans end first); summing them all would count time twice.
    """
    out = []
    for event in events:
        if not any(
            other is not event
            and other.phase == event.phase
            and other.start <= event.start
            and event.end <= other.end
            and (other.start, other.end) != (event.start, event.end)
            for other in events
        ):
            out.append(event)
    return out


def phase_durations(events: list) -> dict[str, float]:
    """Seconds spent in trace, lower and compile among `events` (one call's), nesting removed."""
    durations = {"trace": 0.0, "lower": 0.0, "compile": 0.0}
    if not events:
        return durations
    for event in top_level(events) if len(events) > 3 else events:
        if event.phase in durations:
            durations[event.phase] += event.end - event.start
    return durations
