"""jaxmagic benchmarks, as ratios against plain JAX measured in the same run.

    .venv/bin/python bench/run.py

1. `%load_ext jaxmagic` time after `import jax` (fresh interpreter).
2. Capture overhead: a tiny jitted function called 10,000 times, plain vs inside a capture.
3. Graph documents of real programs at about 1k, 10k and 50k eqns: build time as a widget builds
   it (the jaxpr text's head; the whole text when the view asks, timed apart) and as an export
   builds it (the whole text), size per eqn (logical JSON, wire form, as sent), and Graphviz
   `dot` on the same graph's DOT export.
Best of several interleaved repeats; nothing here is a pass/fail test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jaxmagic
from bench import programs
from jaxmagic.model.graph import function_graph
from jaxmagic.model.jaxpr_text import forget_printed
from jaxmagic.views import wire
from jaxmagic.views.dot import function_dot

LOAD_SCRIPT = """
import time, jax
from IPython.testing.globalipapp import start_ipython
shell = start_ipython()
t = time.perf_counter()
shell.run_line_magic("load_ext", "jaxmagic")
print(time.perf_counter() - t)
"""


def load_time() -> float:
    runs = [
        float(
            subprocess.run([sys.executable, "-c", LOAD_SCRIPT], capture_output=True, text=True, check=True)
            .stdout.strip()
            .splitlines()[-1]
        )
        for _ in range(3)
    ]
    return min(runs)


tiny = jax.jit(lambda x: x + 1)


def calls(n: int, x) -> float:
    start = time.perf_counter()
    for _ in range(n):
        tiny(x)
    return time.perf_counter() - start


def capture_overhead(n: int = 10_000, repeats: int = 21) -> tuple[float, float, float, float]:
    """µs per call plain and captured (best of `repeats`), the median ratio of paired runs, and the
    median ratio of the whole capture block (start, the calls, stop) to the plain calls.

    Each repeat runs the 10,000 plain calls and then the same calls in a fresh capture (its
    one-time costs included). This VM's speed drifts by ±30% over seconds, so the median of
    back-to-back ratios is the figure to quote; the best-of times show the floor. The block's
    ratio is what a cell of these calls pays: stop turns each call's row into its `JitCall`.
    """
    x = jnp.ones(3)
    tiny(x).block_until_ready()
    plain, captured, block = [], [], []
    for _ in range(repeats):
        plain.append(calls(n, x))
        start = time.perf_counter()
        with jaxmagic.capture():
            captured.append(calls(n, x))
        block.append(time.perf_counter() - start)
    return min(plain) / n * 1e6, min(captured) / n * 1e6, _median_ratio(plain, captured), _median_ratio(plain, block)


def _median_ratio(plain: list[float], captured: list[float]) -> float:
    ratios = sorted(c / p for p, c in zip(plain, captured))
    return ratios[len(ratios) // 2]


REAL_PROGRAMS = {  # name -> builder of (jitted fn, args); about 1k, 10k and 50k eqns
    "mlp grad, 70 layers": lambda: programs.mlp_grad(70),
    "transformer step, 46 layers": lambda: programs.transformer_step(46),
    "transformer step, scan over 46 layers": lambda: programs.transformer_step(46, scan=True),
    "transformer step, 232 layers": lambda: programs.transformer_step(232),
}


def graph_scaling(dot_timeout: float = 120.0, repeats: int = 5) -> list[dict]:
    """Document build time (best of `repeats`, and the median) and sizes for real programs, and
    Graphviz `dot` on the same graph.

    Trace only (`fn.trace(...).jaxpr`): XLA-compiling the 50k-eqn program takes more memory
    than this machine has, and the document does not need it.
    """
    rows = []
    for name, build in REAL_PROGRAMS.items():
        fn, args = build()
        jaxpr = fn.trace(*args).jaxpr
        builds, eager, texts, encodes, warm = [], [], [], [], []
        for _ in range(repeats):  # as a view builds it: no cyclic GC meanwhile (api.paused_gc)
            with jaxmagic.api.paused_gc():
                forget_printed()  # a first build: the jaxpr's printout is kept per Jaxpr object
                printouts: dict = {}
                start = time.perf_counter()  # a widget's: the text's head, the rest when its pane asks
                function_graph("f0", name, jaxpr, printouts=printouts)
                builds.append(time.perf_counter() - start)
                start = time.perf_counter()  # the view's "jaxpr" request
                printouts["f0"].data()
                texts.append(time.perf_counter() - start)
                forget_printed()
                start = time.perf_counter()  # an export's (document(), to_html): the whole text
                doc = function_graph("f0", name, jaxpr)
                eager.append(time.perf_counter() - start)
                start = time.perf_counter()  # the same jaxpr again (a re-run cell, JAX's trace cache)
                function_graph("f0", name, jaxpr)
                warm.append(time.perf_counter() - start)
                start = time.perf_counter()
                wire_fn = wire.encode_function(doc)
                encodes.append(time.perf_counter() - start)
        eqns = doc["n_eqns"]
        logical = len(json.dumps(doc, separators=(",", ":")))
        wire_bytes = len(json.dumps(wire_fn, separators=(",", ":")))
        packed = len(json.dumps(wire.pack(wire_fn), separators=(",", ":")))
        build_s, encode_s = min(builds), min(encodes)
        rows.append(
            {
                "program": name,
                "eqns": eqns,
                "build ms": build_s * 1e3,
                "encode ms": encode_s * 1e3,
                "build median ms": sorted(builds)[len(builds) // 2] * 1e3,
                "eager ms": min(eager) * 1e3,
                "text ms": min(texts) * 1e3,
                "again ms": min(warm) * 1e3,
                "logical B/eqn": logical / eqns,
                "wire B/eqn": wire_bytes / eqns,
                "sent B/eqn": packed / eqns,
                "repeats": len(doc["repeats"]),
                "dot": dot_time(doc, dot_timeout) if eqns < 20_000 else "not run",
            }
        )
    return rows


def dot_time(doc: dict, timeout: float) -> str:
    """Graphviz `dot -Tsvg` on our DOT export of the same graph: seconds, or the time-out."""
    if not shutil.which("dot"):
        return "dot not installed"
    source = function_dot(doc).source
    start = time.perf_counter()
    try:
        subprocess.run(
            ["dot", "-Tsvg", "-o", os.devnull],
            input=source,
            text=True,
            timeout=timeout,
            capture_output=True,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return f"no layout in {timeout:.0f} s"
    except subprocess.CalledProcessError as exc:
        return f"failed: {exc.stderr[-120:]}"
    return f"{time.perf_counter() - start:.1f} s"


def main() -> None:
    print(f"JAX {jax.__version__}, backend {jax.default_backend()}, {os.cpu_count()} cores")
    print(f"%load_ext jaxmagic after import jax: {load_time() * 1e3:.1f} ms")
    plain, captured, ratio, block = capture_overhead()
    print(
        f"10,000 calls of a tiny jitted function: plain {plain:.2f} us/call, captured {captured:.2f} us/call "
        f"(best of each), median paired ratio {ratio:.2f}x; the whole capture block {block:.2f}x"
    )
    print("graph documents of real programs (trace only):")
    for row in graph_scaling():
        print(
            f"  {row['program']:<40} {row['eqns']:>6} eqns  build {row['build ms']:7.0f} ms "
            f"(median {row['build median ms']:.0f}; whole text asked later {row['text ms']:.0f}; "
            f"with the whole text, as exported {row['eager ms']:.0f}; same jaxpr again {row['again ms']:.0f})  "
            f"encode {row['encode ms']:5.0f} ms  logical {row['logical B/eqn']:4.0f} B/eqn  "
            f"wire {row['wire B/eqn']:4.0f} B/eqn  sent {row['sent B/eqn']:4.0f} B/eqn  "
            f"repeats {row['repeats']}  graphviz dot: {row['dot']}"
        )


if __name__ == "__main__":
    main()
