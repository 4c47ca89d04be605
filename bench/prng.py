"""`%%prng` benchmark: a 1,000-step training loop that splits its key every step.

    .venv/bin/python bench/prng.py

Measures, in one run, best of five (bare and captured alternated), against the same loop with no capture:

1. **eager keys**: `key, sub = jax.random.split(key)` in Python each step, `sub` passed to a
   jitted MLP train step with dropout (the common notebook loop);
2. **keys in the step**: the key passed to the jitted step, which splits it and returns the
   next one (the loop most training code runs);
3. **scan**: the whole loop as one jitted `lax.scan` (one program, one loop node).

For each: the capture's time (recording, reading key data at the end, building the lineage)
as a ratio to the bare loop (goal: at most 1.1x), the document's build time and size, and the
number of nodes and runs. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax
import jax.numpy as jnp

import jaxmagic
from bench.timing import best

jr = jax.random
STEPS = 1000
REPEATS = 5
BATCH, WIDTH = 64, 256


def init(key):
    k1, k2 = jr.split(key)
    return {"w1": jr.normal(k1, (WIDTH, WIDTH)) * 0.05, "w2": jr.normal(k2, (WIDTH, 1)) * 0.05}


def loss(params, x, y, key):
    h = jax.nn.relu(x @ params["w1"])
    keep = jr.bernoulli(key, 0.9, h.shape)  # dropout
    h = jnp.where(keep, h / 0.9, 0.0)
    return jnp.mean((h @ params["w2"] - y) ** 2)


def train_step(params, x, y, key):
    grads = jax.grad(loss)(params, x, y, key)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


def train_step_keyed(params, x, y, key):
    key, sub = jr.split(key)
    return train_step(params, x, y, sub), key


def eager_keys(step, params, x, y):
    key = jr.key(0)
    for _ in range(STEPS):
        key, sub = jr.split(key)
        params = step(params, x, y, sub)
    return jax.block_until_ready(params)


def keys_in_step(step, params, x, y):
    key = jr.key(0)
    for _ in range(STEPS):
        params, key = step(params, x, y, key)
    return jax.block_until_ready(params)


def scanned(run, params, x, y):
    return jax.block_until_ready(run(params, x, y, jr.key(0)))


def scan_loop(params, x, y, key):
    def body(carry, _):
        p, k = carry
        return train_step_keyed(p, x, y, k), None

    return jax.lax.scan(body, (params, key), None, length=STEPS)[0]


CASES = {
    "eager keys": (eager_keys, train_step),
    "keys in the step": (keys_in_step, train_step_keyed),
    "scan": (scanned, scan_loop),
}


def main() -> None:
    params = init(jr.key(1))
    x = jr.normal(jr.key(2), (BATCH, WIDTH))
    y = jr.normal(jr.key(3), (BATCH, 1))
    print(f"jax {jax.__version__}, {jax.default_backend()}, {STEPS} steps, MLP {WIDTH} wide, batch {BATCH}")
    print(f"{'case':18} {'bare':>9} {'%%prng':>9} {'ratio':>6} {'doc':>8} {'doc size':>9} {'nodes':>6} {'runs':>5}")
    for name, (loop, fn) in CASES.items():
        step = jax.jit(fn)
        loop(step, params, x, y)  # compile outside the timings

        def captured():
            ns = {"step": step}
            with jaxmagic.capture(ns) as cap:
                loop(ns["step"], params, x, y)  # the recorded stand-in, as a notebook's global name is
            return cap

        # Alternated, best of five each: this machine's noise is larger than the difference measured.
        bare_s = cap_s = float("inf")
        for _ in range(REPEATS):
            bare_s = min(bare_s, best(lambda: loop(step, params, x, y), 1)[0])
            took, cap = best(captured, 1)
            cap_s = min(cap_s, took)
        start = time.perf_counter()
        doc = jaxmagic.document(cap, "keys")
        doc_s = time.perf_counter() - start
        size = len(json.dumps(doc))
        print(
            f"{name:18} {bare_s * 1e3:7.1f}ms {cap_s * 1e3:7.1f}ms {cap_s / bare_s:5.2f}x {doc_s * 1e3:6.1f}ms "
            f"{size / 1024:7.0f}KB {len(doc['nodes']):6} {len(doc['runs']):5}"
        )


if __name__ == "__main__":
    main()
