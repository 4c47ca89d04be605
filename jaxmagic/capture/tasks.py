"""Asyncio tasks that are not the cell's: started by an earlier cell, still running.

A kernel runs every cell on one event loop, so a task an earlier cell started (a background
training loop, a poller holding a jitted step) runs on the cell's own thread whenever the cell
awaits. Its jitted calls are not the cell's work. The tasks alive when the capture starts,
other than the one running the cell and the kernel's own machinery, are set aside; a call made
from one of them is passed through unrecorded. Tasks the cell itself starts are the cell's.

With no such task (the usual case) the set is empty and a call pays one truth test.
"""

from __future__ import annotations

import asyncio

# Coroutines of the host itself (the kernel's message loop, tornado, zmq, asyncio's own): never a
# user's jitted work, and always alive in a kernel, so leaving them out keeps the set empty.
_HOST_PARTS = ("/ipykernel/", "/tornado/", "/zmq/", "/jupyter_client/", "/asyncio/", "/IPython/", "/anyio/")


def earlier_tasks() -> frozenset:
    """Tasks of the running loop that were started before this moment and are not the caller's."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop runs on this thread (a terminal, a script): no task can interleave
        return frozenset()
    current = asyncio.current_task(loop)
    return frozenset(task for task in asyncio.all_tasks(loop) if task is not current and not _host_task(task))


def _host_task(task: asyncio.Task) -> bool:
    code = getattr(task.get_coro(), "cr_code", None)
    filename = str(getattr(code, "co_filename", "")).replace("\\", "/")
    return any(part in filename for part in _HOST_PARTS)


def current_task() -> asyncio.Task | None:
    """The task running now, or None outside any loop."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None
