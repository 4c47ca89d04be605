"""When a call's outputs were ready on the device, learned without blocking.

A jitted call returns as soon as its work is queued, so the time a call takes in
Python is dispatch time; the device may work on long after. `is_ready()` on a
concrete array answers without blocking, so a call leaves a weak reference to one of
its outputs (all outputs of one executable become ready together), and the queue of
unfinished calls is polled at later recorded calls and when the capture stops. The
time of the poll that first sees the output ready is an upper bound on device
completion ("ready by"). Weak references keep buffer lifetimes unchanged; a freed or
donated output leaves its call's device time unknown.

Watching and polling cost about 1 µs per call, a fifth of a tiny jitted call, so they
are sampled in time: at most one watch and one poll per `SAMPLE_S`. Calls longer than
that (where device time matters) are all watched; in a tight loop of tiny calls about
one in twenty is, and the others' device time stays unknown (the view says how many calls
the figure covers).

With `sync=True` (the user's explicit choice, `%%trace --sync`) each call's outputs are
waited for right after the call instead, which gives exact device times but changes the
program's timing.
"""

from __future__ import annotations

import weakref
from collections import deque
from typing import Any, Callable

import jax

# Calls under this many seconds get only the cheap first-leaf lookup (tuple, list, dict);
# longer ones may afford a full tree flatten (custom pytrees: Flax and Equinox states).
_CHEAP_BELOW_S = 1e-3
SAMPLE_S = 100e-6  # at most one watch and one poll per this many seconds


def _first_leaf(out: Any) -> Any:
    for _ in range(8):
        kind = type(out)
        if kind is tuple or kind is list:
            if not out:
                return None
            out = out[0]
        elif kind is dict:
            out = next(iter(out.values()), None)
        else:
            return out
    return out


def output_array(out: Any, seconds: float) -> Any:
    """One device array among a call's outputs, or None."""
    leaf = _first_leaf(out)
    if hasattr(leaf, "is_ready"):
        return leaf
    if seconds < _CHEAP_BELOW_S or leaf is None:
        return None
    try:
        for leaf in jax.tree_util.tree_leaves(out):
            if hasattr(leaf, "is_ready"):
                return leaf
    except Exception:  # an odd output type: its device time stays unknown
        return None
    return None


class ReadyWatch:
    """Calls waiting for their outputs; `poll` settles every one that is ready now."""

    def __init__(self, clock: Callable[[], float]):
        self._clock = clock
        self.pending: deque[tuple[int, Any]] = deque()
        self.ready: dict[int, float] = {}  # call index -> ready-by time (clock seconds)

    def watch(self, index: int, out: Any, seconds: float) -> bool:
        """Keep a weak reference to one of this call's outputs; False when none can be watched."""
        array = output_array(out, seconds)
        if array is None:
            return False
        try:
            self.pending.append((index, weakref.ref(array)))
        except TypeError:  # not weak-referenceable: unknown
            return False
        return True

    def poll(self, now: float | None = None) -> None:
        """Settle calls in order until one is still running (later ones queue behind it)."""
        pending = self.pending
        while pending:
            index, ref = pending[0]
            array = ref()
            try:
                if array is None or not array.is_ready():
                    if array is not None:
                        return
                    pending.popleft()  # freed before we looked: unknown
                    continue
            except Exception:  # deleted (donated) arrays raise: unknown
                pending.popleft()
                continue
            if now is None:
                now = self._clock()
            self.ready[index] = now
            pending.popleft()

    def wait(self, index: int, out: Any) -> None:
        """`--sync`: block until this call's outputs are ready and record the exact time."""
        try:
            jax.block_until_ready(out)
        except Exception:  # donated or deleted outputs: nothing to wait for
            return
        self.ready[index] = self._clock()
