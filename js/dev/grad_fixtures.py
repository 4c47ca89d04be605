"""Real grad documents for the front-end tests (js/test/fixtures/grad-*.json).

Small differentiated programs, each recorded with `jaxmagic.capture(grads=True)` and
turned into a `kind: "grad"` document (docs/schema.md): an MLP under value_and_grad (a batch
big enough for a residual of 1 MiB),
a checkpointed block, custom_jvp and custom_vjp rules, a cell mixing grad / vjp / jvp / vmap with an
Inf gradient, and a jitted train step. Run by tools/make_fixtures.py (./dev fixtures),
which writes the files; prints {name: document} as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from grad_programs import block_args, block_loss, clip_gradient, remat_loss, small_mlp, softplus  # noqa: E402
from steady import steady  # noqa: E402

import jaxmagic  # noqa: E402

BATCH = 32_768  # rows of the MLP's input: its tanh residual is f32[32768,8], 1 MiB, a large_residual finding


def mlp() -> None:
    loss, params, _ = small_mlp()
    jax.value_and_grad(loss)(params, jnp.linspace(-1, 1, 4 * BATCH).reshape(BATCH, 4))


def remat() -> None:
    jax.grad(remat_loss)(jnp.ones((8, 8)) * 0.1, jnp.ones((4, 8)))


def custom() -> None:
    jax.grad(lambda x: jnp.sum(softplus(clip_gradient(x * 3.0)) * jnp.sin(x)))(jnp.arange(4.0))


def multi() -> None:
    f = lambda x: jnp.sum(jnp.sin(x) * x)
    jax.grad(f)(jnp.arange(3.0))
    _, vjp = jax.vjp(lambda x: jnp.cos(x) * 2, jnp.arange(3.0))
    vjp(jnp.ones(3))
    jax.jvp(f, (jnp.arange(3.0),), (jnp.ones(3),))
    jax.vmap(jax.grad(f))(jnp.ones((5, 3)))
    jax.grad(lambda x: jnp.sum(jnp.sqrt(x)))(jnp.array([0.0, 1.0]))  # d sqrt(0) = Inf


def train_step() -> None:
    p, h = block_args()

    @jax.jit
    def step(p, h):
        loss, g = jax.value_and_grad(block_loss)(p, h)
        return jax.tree.map(lambda a, b: a - 0.1 * b, p, g), loss

    for _ in range(3):
        p, _ = step(p, h)
    # The cell waits for its result, as a training cell that logs does: the NaN check at the capture's
    # stop never waits, so outputs still computing would add a note that depends on the machine's load.
    jax.block_until_ready(p)


PROGRAMS = {
    "mlp": (mlp, True),
    "remat": (remat, True),
    "custom": (custom, False),
    "multi": (multi, True),
    "jit": (train_step, True),
}


def main() -> None:
    steady()
    out = {}
    for name, (body, values) in PROGRAMS.items():
        with jaxmagic.capture({}, grads=True, values=values) as cap:
            body()
        out[name] = jaxmagic.document(cap, "grad")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
