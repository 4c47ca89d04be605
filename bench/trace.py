"""`%%trace` benchmarks, as ratios against plain JAX measured in the same run.

    .venv/bin/python bench/trace.py

1. 10,000 calls of a tiny jitted function, plain vs inside a capture (goal at most 1.3x).
2. A 200-step training loop (a 4-layer transformer train step, loss read every 20 steps),
   plain vs inside a capture (goal at most 1.03x).
3. A capture of 100,000 calls: memory it holds (tracemalloc), timeline document build
   time and size (logical JSON and as a widget sends it).
4. 10,000 tiny calls through references the namespace does not hold: a jitted attribute
   made in an object's `__init__`, and Flax's `nnx.jit` (each call of JAX's jitted type is
   routed through the capture, capture/call_hook.py).
Best of several interleaved repeats; nothing here is a pass/fail test.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jaxmagic  # noqa: E402
from bench import programs  # noqa: E402
from bench.run import capture_overhead  # noqa: E402
from jaxmagic.views import wire  # noqa: E402


def training_loop(steps: int = 200, repeats: int = 15) -> tuple[float, float, float, float]:
    """Seconds per loop plain and captured (best of `repeats`, interleaved), the median paired
    ratio, and the median paired difference in seconds (the capture's cost per cell)."""
    step, (params, tokens) = programs.transformer_step(4, scan=True)
    jax.block_until_ready(step(params, tokens))

    def loop() -> float:
        p = params
        start = time.perf_counter()
        for i in range(steps):
            loss, p = step(p, tokens)
            if i % 20 == 0:
                float(loss)  # a training loop logs its loss now and then
        jax.block_until_ready(p)
        return time.perf_counter() - start

    namespace = {"step": step}
    plain, captured = [], []
    for _ in range(repeats):
        plain.append(loop())
        start = time.perf_counter()  # the whole block: starting and stopping the capture count
        with jaxmagic.capture(namespace):
            step = namespace["step"]  # the wrapped function, as a notebook cell would see it
            loop()
        captured.append(time.perf_counter() - start)
        step = namespace["step"]
    ratios = sorted(c / p for p, c in zip(plain, captured))
    extra = sorted(c - p for p, c in zip(plain, captured))
    return min(plain), min(captured), ratios[len(ratios) // 2], extra[len(extra) // 2]


def big_capture(n: int = 100_000) -> dict:
    tiny = jax.jit(lambda x: x * 2)
    x = jnp.ones(3)
    tiny(x).block_until_ready()
    namespace = {"tiny": tiny}
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    with jaxmagic.capture(namespace) as cap:
        f = namespace["tiny"]
        for _ in range(n):
            f(x)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    start = time.perf_counter()
    doc = jaxmagic.document(cap, "timeline")
    build = time.perf_counter() - start
    logical = len(json.dumps(doc))
    sent = len(json.dumps(wire.encode_document(doc)))
    return {"calls": len(cap.calls), "held MB": held / 1e6, "bytes per call": held / n,
            "document build s": build, "document MB": logical / 1e6, "sent MB": sent / 1e6}


def _paired(run, n: int, repeats: int = 15) -> tuple[float, float, float]:
    """µs per call plain and captured (best of `repeats`) and the median paired ratio."""
    run(100)
    plain, captured = [], []
    for _ in range(repeats):
        plain.append(run(n))
        with jaxmagic.capture({}):
            captured.append(run(n))
    ratios = sorted(c / p for p, c in zip(plain, captured))
    return min(plain) / n * 1e6, min(captured) / n * 1e6, ratios[len(ratios) // 2]


def reference_overhead(n: int = 10_000) -> dict[str, tuple[float, float, float]]:
    """Tiny calls through a jitted attribute and through `nnx.jit`, plain vs captured."""
    x = jnp.ones(3)

    class Holder:
        def __init__(self):
            self.step = jax.jit(lambda v: v + 1)

    holder = Holder()

    def through_attribute(count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            holder.step(x)
        return time.perf_counter() - start

    results = {"jitted attribute": _paired(through_attribute, n)}
    try:
        from flax import nnx
    except ImportError:
        return results
    step = nnx.jit(lambda v: v + 1)

    def through_nnx(count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            step(x)
        return time.perf_counter() - start

    results["nnx.jit"] = _paired(through_nnx, n)
    return results


def main() -> None:
    plain_us, captured_us, ratio = capture_overhead()
    print(f"tiny jitted call x10,000: plain {plain_us:.2f} us/call, captured {captured_us:.2f} us/call "
          f"(best of each), median paired ratio {ratio:.2f}x (goal <= 1.3x)")
    plain_s, captured_s, loop_ratio, extra_s = training_loop()
    print(f"200-step training loop: plain {plain_s:.3f} s, captured {captured_s:.3f} s (best of each, the captured "
          f"block including start and stop), median paired ratio {loop_ratio:.3f}x (goal <= 1.03x), "
          f"median extra {extra_s * 1e3:.1f} ms per cell")
    for name, (plain_ref, captured_ref, ratio_ref) in reference_overhead().items():
        print(f"tiny call x10,000 through {name}: plain {plain_ref:.2f} us/call, captured {captured_ref:.2f} us/call "
              f"(best of each), median paired ratio {ratio_ref:.2f}x")
    big = big_capture()
    print("capture of 100,000 calls: " + ", ".join(
        f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in big.items()))


if __name__ == "__main__":
    main()
