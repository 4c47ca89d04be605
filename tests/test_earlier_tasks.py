"""Jitted calls from asyncio tasks an earlier cell started are not the cell's.

A kernel runs every cell on one event loop: a background task an earlier cell left running makes
its jitted calls on the cell's own thread whenever the cell awaits. The capture below starts
inside a running loop (as a kernel cell does) while such a task runs; only the cell's own calls,
and those of a task the cell itself starts, are recorded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import jax
import jax.numpy as jnp

import jaxmagic


def test_an_earlier_cells_task_is_not_recorded_and_the_cells_own_task_is():
    x = jnp.ones(3)

    @jax.jit
    def background_step(v):
        return v + 1

    @jax.jit
    def cell_step(v):
        return v * 2

    @jax.jit
    def task_step(v):
        return v - 1

    counts = {"background": 0}

    async def background(stop: asyncio.Event) -> None:  # "an earlier cell" started this
        while not stop.is_set():
            background_step(x)
            counts["background"] += 1
            await asyncio.sleep(0)

    async def started_by_the_cell() -> None:
        task_step(x)

    async def kernel() -> jaxmagic.Capture:
        stop = asyncio.Event()
        earlier = asyncio.create_task(background(stop))
        await asyncio.sleep(0.01)
        before = counts["background"]
        with jaxmagic.capture({}) as cap:  # the cell
            for _ in range(3):
                cell_step(x)
                await asyncio.sleep(0.002)
            await asyncio.create_task(started_by_the_cell())
        during = counts["background"] - before
        stop.set()
        await earlier
        assert during > 0  # the earlier task really ran while the cell awaited
        return cap

    # a fresh thread: an earlier test in the same process may have left this thread's loop marked running
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        cap = pool.submit(asyncio.run, kernel()).result(timeout=120)
    assert [c.name.rsplit(".", 1)[-1] for c in cap.calls] == ["cell_step"] * 3 + ["task_step"]
    assert any("asyncio tasks that earlier cells started" in note for note in cap.notes), cap.notes
