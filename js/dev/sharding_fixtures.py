"""Real sharding documents for the front-end tests (js/test/fixtures/sharding-*.json).

`small` (8 simulated devices): a 2x4, an 8-device and a 2x2x2 mesh; 2-D, 1-D, 3-D and 0-D
arrays, a replicated one (a finding), one on device 3 alone; a jitted matmul whose all-gather
is big enough to be a finding, a shard_map with psum, a ring ppermute (collective-permute
pairs) and an argument JAX has to move (a resharding finding).
`256` (256 simulated devices): a 16x16 mesh, one array per kind of spec (256 blocks, 16
blocks of 16 holders, 1 block of 256) and one jitted call with grouped collectives.

The device count is fixed when JAX starts, so each document is one process: run by
tools/make_fixtures.py (./dev fixtures), which sets XLA_FLAGS and writes the files; prints the
document as JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import shard_map  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402
from steady import steady  # noqa: E402

import jaxmagic  # noqa: E402


def _mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> jax.sharding.Mesh:
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))


def small(ns: dict) -> None:
    mesh, dmesh, cube = _mesh((2, 4), ("x", "y")), _mesh((8,), ("data",)), _mesh((2, 2, 2), ("a", "b", "c"))
    ns.update(mesh=mesh, dmesh=dmesh, cube_mesh=cube)
    ns["w"] = jax.device_put(jnp.ones((512, 512)), NamedSharding(mesh, P("x", "y")))
    ns["batch"] = jax.device_put(jnp.ones((64, 512)), NamedSharding(dmesh, P("data")))
    ns["rep"] = jax.device_put(jnp.ones((1024, 512)), NamedSharding(mesh, P()))
    ns["params"] = {
        "b": jnp.zeros(512),
        "cube": jax.device_put(jnp.ones((4, 8, 6)), NamedSharding(mesh, P(None, "y", "x"))),
    }
    ns["t3"] = jax.device_put(jnp.ones((4, 4, 8)), NamedSharding(cube, P("a", "b", "c")))
    ns["scale"] = jax.device_put(jnp.float32(2.0), NamedSharding(mesh, P()))
    ns["on3"] = jax.device_put(jnp.ones((16,)), jax.devices()[3])

    @jax.jit
    def step(w, batch):
        return jnp.tanh(batch @ w).sum(0)

    ns["out"] = step(ns["w"], ns["batch"])

    @jax.jit
    def smap(x, w):
        return shard_map(
            lambda x, w: jax.lax.psum(x @ w, "data"), mesh=dmesh, in_specs=(P(None, "data"), P("data")), out_specs=P()
        )(x, w)

    ns["y"] = smap(ns["batch"], jnp.ones((512, 16)))

    @jax.jit
    def roll(x):
        ring = [(i, (i + 1) % 4) for i in range(4)]
        return shard_map(lambda b: jax.lax.ppermute(b, "y", ring), mesh=mesh, in_specs=P("y"), out_specs=P("y"))(x)

    ns["rolled"] = roll(jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("y"))))

    @jax.jit
    def gram(x):
        return x @ x.T

    ns["g"] = gram(jax.device_put(jnp.ones((2048, 512)), NamedSharding(mesh, P("x", "y"))))

    @jax.jit
    def constrained(x):  # an intermediate sharding the user asked for
        return jax.lax.with_sharding_constraint(jnp.tanh(x), NamedSharding(dmesh, P("data"))).sum(0)

    constrained(ns["rep"])


def big(ns: dict) -> None:
    mesh = _mesh((16, 16), ("data", "model"))
    # the mesh is bound to no name: the views call it "unnamed mesh m0" (js/test/sharding-story.test.js)
    for name, spec in [
        ("w_dm", P("data", "model")),
        ("w_d", P("data")),
        ("w_m", P(None, "model")),
        ("w_rep", P()),
        ("w_flat", P(("data", "model"))),
    ]:
        ns[name] = jax.device_put(jnp.ones((256, 512)), NamedSharding(mesh, spec))
    ns["cube"] = jax.device_put(jnp.ones((4, 32, 64)), NamedSharding(mesh, P(None, "data", "model")))

    @jax.jit
    def f(a, b):
        return a @ b.T

    ns["out"] = f(ns["w_dm"], ns["w_d"])


def main() -> None:
    steady()
    body = {"small": small, "256": big}[sys.argv[1]]
    ns: dict = {}
    with jaxmagic.capture(ns, shardings=True) as cap:
        body(ns)
        # the cell waits for what it bound: whether an output is ready at the capture's stop (a
        # NaN-check note) then never depends on the machine's load
        jax.block_until_ready(ns)
    json.dump(jaxmagic.document(cap, "sharding"), sys.stdout)


if __name__ == "__main__":
    main()
