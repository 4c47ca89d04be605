"""Many functions or calls in one cell: the size of every view's saved state and fallbacks.

    .venv/bin/python bench/many.py            # the issue's sizes (a few minutes: thousands of compiles)
    .venv/bin/python bench/many.py --scale 0.1

Cells measured (each inside one capture, with shardings and grads recorded as the magics do):
1. `%timeit jax.jit(f)(x)`: a fresh jit wrapper of one function per iteration (16,540 in JAX's
   jit tutorial's cell, as measured in the issue);
2. 2,000 distinct freshly jitted lambdas (one definition, a different constant each);
3. 100,000 calls of one jitted function;
4. one jitted function called with 5,000 different shapes (5,000 signatures, each compiled);
5. 2,000 distinct functions with definitions of their own (exec'd), for the listing's cap.
For each document kind: build seconds, the state the widget syncs (JSON of the wire form), the
text/html and text/plain fallbacks, in MB. Nothing here is a pass/fail test; the bound the
view keeps is ~3 MB per state and per fallback whatever the cell does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jaxmagic
from jaxmagic.model import DOCUMENT_BUILDERS
from jaxmagic.views.static_html import fallback_html, text_summary
from jaxmagic.views.wire import encode_document, safe_document

BOUND_MB = 3.0


def f(x):
    return jnp.sin(x) * 2 + x


def fresh_wrappers(n: int) -> Callable[[], None]:
    """`%timeit jax.jit(f)(x)`: a new wrapper of the same f on every iteration."""
    x = jnp.ones(10)
    return lambda: [jax.jit(f)(x) for _ in range(n)]


def distinct_lambdas(n: int) -> Callable[[], None]:
    """n freshly jitted lambdas of one definition, each closing over its own constant."""
    x = jnp.ones(10)
    make = lambda i: jax.jit(lambda v: v * i + 1.0)
    return lambda: [make(i)(x) for i in range(n)]


def many_calls(n: int) -> Callable[[], None]:
    """n calls of one jitted function (cache hits after the first)."""
    g = jax.jit(lambda v: v + 1)
    x = jnp.ones(3)
    return lambda: [g(x) for _ in range(n)]


def many_shapes(n: int) -> Callable[[], None]:
    """One jitted function called with n different shapes: n signatures, n compiles."""
    g = jax.jit(lambda v: jnp.tanh(v) * 2)
    return lambda: [g(jnp.ones(i + 1)) for i in range(n)]


def many_definitions(n: int) -> Callable[[], None]:
    """n functions with definitions of their own (names and source lines differ)."""
    x = jnp.ones(4)

    def run() -> None:
        for i in range(n):
            space: dict[str, Any] = {"jnp": jnp}
            exec(compile(f"def fn_{i}(v):\n    return jnp.cos(v) + {i}\n", f"<many {i}>", "exec"), space)
            jax.jit(space[f"fn_{i}"])(x)

    return run


CASES = {  # name -> (cell maker, size at scale 1)
    "jit(f)(x) per iteration": (fresh_wrappers, 16_540),
    "distinct jitted lambdas": (distinct_lambdas, 2_000),
    "calls of one function": (many_calls, 100_000),
    "shapes of one function": (many_shapes, 5_000),
    "distinct definitions": (many_definitions, 2_000),
}


def sizes(cap: Any) -> list[dict]:
    """Per kind: build seconds, synced state, text/html and text/plain fallback sizes (MB)."""
    rows = []
    for kind, build in DOCUMENT_BUILDERS.items():
        start = time.perf_counter()
        doc = safe_document(build(cap))
        built = time.perf_counter() - start
        state = len(json.dumps(encode_document(doc), separators=(",", ":"), default=str))
        start = time.perf_counter()
        html, text = len(fallback_html(doc)), len(text_summary(doc))
        rows.append(
            {
                "kind": kind,
                "build_s": built,
                "fallback_s": time.perf_counter() - start,
                "state_mb": state / 1e6,
                "html_mb": html / 1e6,
                "text_mb": text / 1e6,
                "functions": len(doc.get("functions") or []),
                "listed": len(doc.get("listed") or []),
            }
        )
    return rows


def measure(name: str, n: int) -> list[dict]:
    make, _ = CASES[name]
    cell = make(n)
    start = time.perf_counter()
    with jaxmagic.capture(shardings=True, grads=True) as cap:
        cell()
    captured = time.perf_counter() - start
    rows = sizes(cap)
    for row in rows:
        row.update(case=name, n=n, calls=len(cap.calls), cell_s=captured)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the issue's sizes")
    parser.add_argument("--case", action="append", choices=list(CASES), help="only these cells")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    print(f"jax {jax.__version__}, jaxmagic {jaxmagic.__version__}; bound {BOUND_MB} MB per state and fallback")
    print(
        f"{'cell':<28}{'n':>8}{'cell s':>8}  {'kind':<9}{'build s':>8}{'fallbk s':>9}{'state MB':>9}"
        f"{'html MB':>8}{'text MB':>8}{'drawn':>6}{'listed':>7}"
    )
    everything = []
    for name in args.case or list(CASES):
        n = max(1, int(CASES[name][1] * args.scale))
        for row in measure(name, n):
            over = max(row["state_mb"], row["html_mb"], row["text_mb"]) > BOUND_MB
            print(
                f"{name:<28}{n:>8,}{row['cell_s']:>8.1f}  {row['kind']:<9}{row['build_s']:>8.2f}"
                f"{row['fallback_s']:>9.2f}{row['state_mb']:>9.3f}{row['html_mb']:>8.3f}{row['text_mb']:>8.3f}"
                f"{row['functions']:>6}{row['listed']:>7}" + ("  OVER" if over else ""),
                flush=True,
            )
            everything.append(row)
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))


if __name__ == "__main__":
    main()
