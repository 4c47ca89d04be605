"""A real document of every kind the front end draws, from one small capture (bundle tests)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import jaxmagic
from jaxmagic.model import DRAWN_KINDS

from .grad_programs import small_mlp
from .jax_versions import auto_mesh


def documents_of_every_kind() -> dict[str, dict]:
    """kind -> document: a jitted function called at two shapes, one `value_and_grad`, an
    array sharded over the simulated devices, and a split key consumed by a sampler."""
    loss, params, x = small_mlp()
    mesh = auto_mesh((jax.device_count(),), ("d",))
    namespace = {
        "xs": jax.device_put(
            jnp.ones((jax.device_count(), 2)), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
        )
    }
    with jaxmagic.capture(namespace, grads=True, shardings=True) as cap:
        f = jax.jit(lambda x: jnp.sin(x) * 2)
        f(jnp.ones(3))
        f(jnp.ones(4))
        jax.value_and_grad(loss)(params, x)
        jax.random.normal(jax.random.split(jax.random.key(0))[1], (2,))
    return {kind: jaxmagic.document(cap, kind) for kind in sorted(DRAWN_KINDS)}
