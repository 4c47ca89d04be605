"""When a call's outputs were ready on the device, learned without blocking.

A jitted call returns as soon as its work is queued, so the time a call takes in
Python is dispatch time; the device may work on long after. `is_ready()` on a
concrete array answers without blocking, so a call leaves a weak reference to one of
its outputs (all outputs of one executable become ready together), and the queue of
unfinished calls is polled at later recorded calls and when the capture stops. The
time of the poll that first sees the output ready is an upper bound on device
completion ("ready by"). Weak references keep buffer lifetimes unchanged; a freed or
donated output leaves its call's device time unknown.

Watching and polling cost a few µs, as much as a tiny jitted call, so they are sampled
in time: at most one watch per `SAMPLE_S` (and the poll at the call right after it, while
a loop still holds the output). Calls longer than the interval (where device time matters)
are all watched; in a tight loop of tiny calls a few in ten thousand are, and the others'
device time stays unknown (the view says how many calls the figure covers). Where watches keep telling nothing (a train step's outputs are consumed
by the next step and freed before any poll sees them ready), the interval doubles after
every `BACKOFF_AFTER` such watches in a row, up to 64 x `SAMPLE_S`, and falls back to
`SAMPLE_S` as soon as one watch gives a time.

A sample's own cost is measured too (the poll and the watch, two clock reads), and the
interval is at least `COST_FACTOR` times it, so sampling takes at most about 1/COST_FACTOR of
the cell's time whatever the step. The cost taken is the smaller of the last two samples': one
sample stretched by a thread switch does not stop sampling for the next `COST_INTERVAL_MAX_S`. Warm, a sample costs 2-3 µs; inside a framework's loop
(Flax NNX flattens its graph in Python around every call) the caches are cold and it costs
20-30 µs, which on a 1.7 ms `nnx.jit` step sampled at every call was 1.5% of the loop. A step
longer than `COST_FACTOR` samples (a GPU step of tens of ms) is still sampled at every call.

With `sync=True` (the user's explicit choice, `%%trace --sync`) each call's outputs are
waited for right after the call instead, which gives exact device times but changes the
program's timing.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

import jax

# Calls under this many seconds get only the cheap first-leaf lookup (tuple, list, dict);
# longer ones may afford a full tree flatten (custom pytrees: Flax and Equinox states).
_CHEAP_BELOW_S = 1e-3
SAMPLE_S = 100e-6  # at most one watch and one poll per this many seconds
# Watches whose outputs were all freed (or donated) before any poll saw them ready tell nothing: after
# this many in a row the interval doubles, up to MAX_DOUBLINGS times; a watch that settles resets it.
BACKOFF_AFTER = 4
MAX_DOUBLINGS = 6  # 6.4 ms: a 200-step loop of 0.5 ms steps knows as many device times as at 1.6 ms
# The interval is at least this many times what the last sample cost (sampling: at most ~0.5% of
# the time), never more than COST_INTERVAL_MAX_S on that account.
COST_FACTOR = 200
COST_INTERVAL_MAX_S = 20e-3


def _edge_leaf(out: Any, end: int) -> Any:
    """The first (`end=0`) or last (`end=-1`) leaf of plain tuples, lists and dicts."""
    for _ in range(8):
        kind = type(out)
        if kind is tuple or kind is list:
            if not out:
                return None
            out = out[end]
        elif kind is dict:
            if not out:
                return None
            out = next(iter(out.values())) if end == 0 else next(reversed(out.values()))
        else:
            return out
    return out


def output_arrays(out: Any, seconds: float) -> list[Any]:
    """One or two device arrays among a call's outputs (all become ready together).

    The first and the last leaf: a train step returns `(loss, params)` and the loop drops
    `loss` at once but keeps `params`, so watching both keeps most steps' device time known.
    """
    if hasattr(out, "is_ready"):  # one array (the common case of a small step): no walk
        return [out]
    found = [leaf for leaf in (_edge_leaf(out, 0), _edge_leaf(out, -1)) if hasattr(leaf, "is_ready")]
    if found or seconds < _CHEAP_BELOW_S:
        return found[:1] if len(found) == 2 and found[0] is found[1] else found
    try:
        for leaf in jax.tree_util.tree_leaves(out):
            if hasattr(leaf, "is_ready"):
                return [leaf]
    except Exception:  # an odd output type: its device time stays unknown
        return []
    return []


class ReadyWatch:
    """Calls waiting for their outputs; `poll` settles every one that is ready now."""

    def __init__(self, clock: Callable[[], float]):
        self._clock = clock
        self.pending: deque[tuple[int, tuple[weakref.ref, ...]]] = deque()
        self.ready: dict[int, float] = {}  # call index -> ready-by time (clock seconds)
        self.unknown_streak = 0  # watches in a row whose outputs were gone before they were seen ready

    def interval(self, sample_s: float = 0.0) -> float:
        """Seconds until the next sample: SAMPLE_S, doubled while watches keep telling nothing (a
        pipelined train step whose outputs the next step consumes), never below SAMPLE_S, and at
        least COST_FACTOR times `sample_s`, what this sample's poll and watch cost."""
        backoff = SAMPLE_S * (1 << min(self.unknown_streak // BACKOFF_AFTER, MAX_DOUBLINGS))
        return max(backoff, min(COST_FACTOR * sample_s, COST_INTERVAL_MAX_S))

    def watch(self, index: int, out: Any, seconds: float) -> bool:
        """Keep weak references to this call's outputs; False when none can be watched."""
        if hasattr(out, "is_ready"):  # one array: no list, no walk (about 0.4 us of a sampled call)
            try:
                self.pending.append((index, (weakref.ref(out),)))
            except TypeError:  # not weak-referenceable: unknown
                return False
            return True
        try:
            refs = tuple(map(weakref.ref, output_arrays(out, seconds)))
        except TypeError:  # not weak-referenceable: unknown
            return False
        if not refs:
            return False
        self.pending.append((index, refs))
        return True

    def poll(self, now: float | None = None) -> None:
        """Settle calls in order until one is still running (later ones queue behind it)."""
        pending = self.pending
        while pending:
            index, refs = pending[0]
            for ref in refs:  # one or two: the first still alive
                array = ref()
                if array is not None:
                    break
            try:
                if array is None or not array.is_ready():
                    if array is not None:
                        return
                    pending.popleft()  # every watched output freed before we looked: unknown
                    self.unknown_streak += 1
                    continue
            except Exception:  # deleted (donated) arrays raise: unknown
                pending.popleft()
                self.unknown_streak += 1
                continue
            if now is None:
                now = self._clock()
            self.ready[index] = now
            self.unknown_streak = 0
            pending.popleft()

    def wait(self, index: int, out: Any) -> None:
        """`--sync`: block until this call's outputs are ready and record the exact time."""
        try:
            jax.block_until_ready(out)
        except Exception:  # donated or deleted outputs: nothing to wait for
            return
        self.ready[index] = self._clock()
