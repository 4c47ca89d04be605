"""Timing helper shared by the benchmarks: best of a few repeats, in one run."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """(fastest wall-clock seconds of `repeats` calls, the last result): the least disturbed run on a
    noisy machine, for comparing two things measured the same way in the same run."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result
