"""A real timeline document for the front-end tests (js/test/fixtures/timeline-real.json).

What `%%trace` records for a small cell, run under real JAX: `f` called with f32[3] twice,
f32[4] twice (a shape recompile), i32[3] once (a dtype recompile), then a loop of 6 hits; `g`
with a static argument n=2, n=2, n=3 (a static recompile); arrays made by eager ops
(`jnp.ones`, `jnp.arange`), which JAX compiles outside the recorded calls. Times differ per
run; which calls hit, which missed and why do not (they are JAX's answers). Run by
tools/make_fixtures.py (./dev fixtures); prints the document as JSON.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from steady import steady  # noqa: E402

import jaxmagic  # noqa: E402


def cell(ns: dict) -> None:
    @jax.jit
    def f(x):
        return (jnp.sin(x) * 2).sum()

    @partial(jax.jit, static_argnames="n")
    def g(x, n):
        return x * n

    f(jnp.ones(3))
    f(jnp.ones(3))
    f(jnp.ones(4))
    f(jnp.ones(4))
    f(jnp.arange(3))
    x = jnp.ones(4)
    for _ in range(6):
        f(x)
    g(x, n=2)
    g(x, n=2)
    g(x, n=3)
    ns.update(f=f, g=g)


def main() -> None:
    steady()
    ns: dict = {}
    with jaxmagic.capture(ns) as cap:
        cell(ns)
    print(json.dumps(jaxmagic.document(cap, "trace")))


if __name__ == "__main__":
    main()
