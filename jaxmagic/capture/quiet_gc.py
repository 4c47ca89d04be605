"""No cyclic garbage collection while jaxmagic's own bookkeeping runs.

Recording a call, stopping a capture and building a view allocate tens of thousands of dicts,
lists and records at once, nearly all of them freed again by reference counting moments later.
Each allocation burst triggers collections; once enough objects have survived a young collection,
Python walks the whole heap of the kernel (JAX's modules, the user's arrays and programs): one such
full collection cost 80-100 ms inside a 4k-eqn first-call cell under every magic, where the plain
cell had none (bench/cells.py). With the collector paused, our temporaries are freed by reference
counting and never promoted, so they no longer count towards the next full collection. The
collector is restored exactly as it was, also on KeyboardInterrupt; the user's code never runs
with it paused.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The block runs with the cyclic collector off; on leaving it is on again if it was on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
