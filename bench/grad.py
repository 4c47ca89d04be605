"""`%%grad_graph` benchmarks: capture and build time for differentiated programs, as ratios
against `jax.make_jaxpr(jax.grad(f))` alone, measured in the same run.

    .venv/bin/python bench/grad.py

1. A 12-layer transformer stack differentiated eagerly: the exact vjp split with links
   (`capture/grads/split.py`) and the grad document (`model/grad.py`).
2. A 12-layer transformer train step under jit: forward/backward regions by name stack
   (`capture/grads/stacks.py`) and the document.
3. A whole `%%grad_graph` cell with one eager `jax.grad` of the 12-layer stack, with and without
   `--values`, against the same call without a capture.
Best of a few repeats; nothing here is a pass/fail test.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jaxmagic
from bench import programs
from bench.timing import best
from jaxmagic.capture.grads.split import grad_split
from jaxmagic.capture.grads.stacks import grad_regions
from jaxmagic.capture.record import Capture, GradCall
from jaxmagic.model.grad import grad_document


def stacked_layers(n: int = 12):
    key = jax.random.key(0)
    d = 64
    layer = {
        "wq": jnp.ones((d, d)) * 0.01,
        "wk": jnp.ones((d, d)) * 0.01,
        "wv": jnp.ones((d, d)) * 0.01,
        "wo": jnp.ones((d, d)) * 0.01,
        "w1": jnp.ones((d, 4 * d)) * 0.01,
        "w2": jnp.ones((4 * d, d)) * 0.01,
    }
    layers = [jax.tree.map(lambda a: a + i * 1e-3, layer) for i in range(n)]
    h = jax.random.normal(key, (8, 16, d))

    def loss(layers, h):
        for i, p in enumerate(layers):
            with jax.named_scope(f"layer_{i}"):
                a = jax.nn.softmax((h @ p["wq"]) @ jnp.swapaxes(h @ p["wk"], -1, -2) / 8.0) @ (h @ p["wv"])
                h = h + a @ p["wo"]
                h = h + jax.nn.gelu(h @ p["w1"]) @ p["w2"]
        return jnp.mean(h**2)

    return loss, (layers, h)


def eager_split() -> None:
    loss, args = stacked_layers()
    reference, _ = best(lambda: jax.make_jaxpr(jax.grad(loss))(*args))
    split_s, split = best(lambda: grad_split(loss, args))
    call = GradCall(
        index=0,
        kind="grad",
        name="loss",
        source=None,
        call_site=None,
        argnums=(0,),
        has_aux=False,
        args=(),
        traced=False,
        split=split,
    )
    doc_s, doc = best(lambda: grad_document(Capture(grads=[call])))
    entry = doc["entries"][0]
    eqns = entry["forward"]["n_eqns"] + entry["backward"]["n_eqns"]
    size = len(json.dumps(doc))
    print(
        f"12-layer transformer, eager grad: make_jaxpr(grad) {reference:.2f} s; split {split_s:.2f} s "
        f"({split_s / reference:.1f}x); document {doc_s:.2f} s; split + document "
        f"{(split_s + doc_s) / reference:.1f}x; {eqns} eqns, {len(entry['residuals'])} residuals, "
        f"{size / eqns:.0f} B/eqn"
    )


def jitted_step() -> None:
    fresh = [programs.transformer_step(12) for _ in range(3)]  # new functions: no trace cache to hit
    reference = min(best(lambda s=s: jax.make_jaxpr(s[0])(*s[1]), repeats=1)[0] for s in fresh)
    step, args = fresh[0]
    closed = jax.make_jaxpr(step)(*args)
    regions_s, regions = best(lambda: grad_regions(closed))
    with jaxmagic.capture({}) as cap:
        jitted = jax.jit(step)
        jitted(*args)
    doc_s, doc = best(lambda: grad_document(cap))
    entry = doc["entries"][0]
    print(
        f"12-layer transformer train step under jit: make_jaxpr of a new step {reference:.2f} s; regions {regions_s * 1e3:.0f} ms "
        f"({regions_s / reference:.2f}x); document {doc_s:.2f} s ({doc_s / reference:.1f}x); "
        f"{entry['program']['n_eqns']} eqns, {len(json.dumps(doc)) / entry['program']['n_eqns']:.0f} B/eqn"
    )


def whole_cell() -> None:
    """What `%%grad_graph` adds to a cell that calls `jax.grad` once, against the plain call (both warm:
    the user's own call is compiled already, as it would be from an earlier cell), with and without
    `--values` (the split evaluated again, eqn by eqn, on the call's arguments)."""
    loss, args = stacked_layers()
    grad_fn = jax.grad(loss)
    jax.block_until_ready(grad_fn(*args))  # warm JAX's eager caches for the plain call
    plain, _ = best(lambda: jax.block_until_ready(grad_fn(*args)))

    def captured(values: bool) -> dict:
        with jaxmagic.capture({}, grads=True, values=values) as cap:
            jax.block_until_ready(jax.grad(loss)(*args))
        return jaxmagic.document(cap, "grad")

    captured(True)  # the first evaluation compiles each primitive once; later cells reuse them
    split_s, _ = best(lambda: captured(False))
    values_s, doc = best(lambda: captured(True))
    print(
        f"12-layer transformer, one jax.grad call in a cell: plain {plain * 1e3:.0f} ms; %%grad_graph "
        f"{split_s:.2f} s ({split_s / plain:.1f}x); %%grad_graph --values {values_s:.2f} s "
        f"({values_s / plain:.1f}x); {len(doc['entries'][0]['backward']['values'])} cotangents summarised"
    )


if __name__ == "__main__":
    eager_split()
    jitted_step()
    whole_cell()
