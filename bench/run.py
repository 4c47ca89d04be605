"""jaxmagic benchmarks, as ratios against plain JAX measured in the same run.

    .venv/bin/python bench/run.py

1. `%load_ext jaxmagic` time after `import jax` (fresh interpreter).
2. Capture overhead: a tiny jitted function called 10,000 times, plain vs inside a capture.
3. Graph document build time and size against eqn count.
Best of several interleaved repeats; nothing here is a pass/fail test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import jaxmagic  # noqa: E402
from jaxmagic.model import graph_document  # noqa: E402

LOAD_SCRIPT = """
import time, jax
from IPython.testing.globalipapp import start_ipython
shell = start_ipython()
t = time.perf_counter()
shell.run_line_magic("load_ext", "jaxmagic")
print(time.perf_counter() - t)
"""


def load_time() -> float:
    runs = [float(subprocess.run([sys.executable, "-c", LOAD_SCRIPT], capture_output=True, text=True,
                                 check=True).stdout.strip().splitlines()[-1]) for _ in range(3)]
    return min(runs)


tiny = jax.jit(lambda x: x + 1)


def calls(n: int, x) -> float:
    start = time.perf_counter()
    for _ in range(n):
        tiny(x)
    return time.perf_counter() - start


def capture_overhead(n: int = 10_000, repeats: int = 7) -> tuple[float, float]:
    x = jnp.ones(3)
    tiny(x).block_until_ready()
    plain, captured = [], []
    for _ in range(repeats):
        plain.append(calls(n, x))
        with jaxmagic.capture():
            captured.append(calls(n, x))
    return min(plain) / n * 1e6, min(captured) / n * 1e6


def chain(n_eqns: int):
    def f(x):
        for i in range(n_eqns // 2):
            x = jnp.sin(x) * 1.0001
        return x
    return jax.jit(f)


def graph_scaling(sizes=(100, 1_000, 10_000)) -> list[tuple[int, float, float, int]]:
    rows = []
    for size in sizes:
        with jaxmagic.capture() as cap:
            chain(size)(jnp.ones(4))
        start = time.perf_counter()
        doc = graph_document(cap)
        build = time.perf_counter() - start
        text = json.dumps(doc, separators=(",", ":"))
        rows.append((doc["functions"][0]["n_eqns"], build * 1e3, len(text) / 1024, len(text) // max(1, doc["functions"][0]["n_eqns"])))
    return rows


def main() -> None:
    print(f"JAX {jax.__version__}, backend {jax.default_backend()}, {os.cpu_count()} cores")
    print(f"%load_ext jaxmagic after import jax: {load_time() * 1e3:.1f} ms")
    plain, captured = capture_overhead()
    print(f"10,000 calls of a tiny jitted function: plain {plain:.2f} us/call, captured {captured:.2f} us/call, "
          f"ratio {captured / plain:.2f}x")
    print("graph document: eqns, build ms, size KiB, bytes/eqn")
    for eqns, ms, kib, per in graph_scaling():
        print(f"  {eqns:>6} eqns  {ms:8.1f} ms  {kib:9.1f} KiB  {per:5d} B/eqn")


if __name__ == "__main__":
    main()
