"""A real keys document for the front-end tests (js/test/fixtures/keys-small.json).

One cell's worth of key handling, recorded by `jaxmagic.capture()`: a `key, sub = split(key)`
loop (a run), a typed key consumed twice (reuse), a jitted step that splits its key on each
call (a run of program splits), a scan with a key from outside consumed on every iteration
(loop reuse), a wide split whose rows feed bernoulli, fold_in and wrap/key_data round trips.
Run by tools/make_fixtures.py (./dev fixtures); prints the document as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from steady import steady  # noqa: E402

import jaxmagic  # noqa: E402

jr = jax.random


@jax.jit
def step(key, x):
    key, sub = jr.split(key)
    return key, x + jr.normal(sub, x.shape)


@jax.jit
def noise_every_step(key):
    def body(carry, _):
        return carry + jr.normal(key, (2,)), None  # the same key on every iteration: a bug

    return jax.lax.scan(body, jnp.zeros(2), None, length=100)[0]


def main() -> None:
    steady()
    with jaxmagic.capture() as cap:
        key = jr.PRNGKey(0)
        for _ in range(10):
            key, sub = jr.split(key)
            jr.normal(sub, (3,))
        k = jr.key(1)
        jr.normal(k)
        jr.uniform(k)
        key = jr.key(2)
        x = jnp.zeros(3)
        for _ in range(8):
            key, x = step(key, x)
        for sub in jr.split(jr.key(5), 20):
            jr.bernoulli(sub, 0.5, (4,))
        noise_every_step(jr.key(6))
        folded = jr.fold_in(jr.key(7), 3)
        jr.wrap_key_data(jr.key_data(folded))
    print(json.dumps(jaxmagic.document(cap, "keys")))


if __name__ == "__main__":
    main()
