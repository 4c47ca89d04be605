"""Version-robust spellings of the JAX APIs the tests use, so the suite runs on every supported JAX.

Features a JAX lacks make their tests skip with the reason (`needs`), never fail: the package
says "not available on this JAX" for them, and the tests check that wording where it matters.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import pytest

try:
    shard_map = jax.shard_map  # JAX 0.6.1 and later
except AttributeError:  # older JAX: the experimental spelling (same arguments)
    from jax.experimental.shard_map import shard_map  # noqa: F401

HAS_AXIS_TYPES = hasattr(jax.sharding, "AxisType")


def typeof(x: Any) -> Any:
    """`jax.typeof(x)`, on JAX versions without it too."""
    # Imported here, not at the top: kernel cells import this module for `shard_map`, and a plain
    # kernel (tests/test_same_result.py) must not import jaxmagic by doing so.
    from jaxmagic.capture import jax_compat

    return jax_compat.aval_of(x)


def xla_cost(compiled: Any) -> dict:
    """`compiled.cost_analysis()` as one dict (older JAX returns a list with one dict per computation)."""
    analysis = compiled.cost_analysis()
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else {}
    return analysis


def needs(available: bool, feature: str) -> pytest.MarkDecorator:
    """Skip a test whose subject `feature` does not exist on the installed JAX."""
    return pytest.mark.skipif(not available, reason=f"{feature} is not available on JAX {jax.__version__}")


def auto_mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
    """`jax.make_mesh` with every axis `AxisType.Auto` where JAX has axis types (what older JAX meshes are)."""
    if HAS_AXIS_TYPES:
        return jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(shape))
    return jax.make_mesh(shape, names)


AXIS_TYPES = "mesh axis types (jax.sharding.AxisType)"
HAS_SET_MESH = hasattr(jax, "set_mesh")  # JAX 0.7: the mesh a block of code runs under
SET_MESH = "a mesh set for a block of code (jax.set_mesh)"


@functools.cache
def reads_compiled_hlo() -> bool:
    """Whether jaxmagic gets a call's compiled stage on this JAX (asked of a tiny jitted call, not a version).

    JAX 0.5 and later answer `lowered.compile()` from the cache the call filled; 0.4 compiles again,
    so jaxmagic leaves the compiled HLO, XLA's cost and the compiled shardings out there (with a note).
    Asked by the test modules that need it, never at import: kernel cells import this module, and a
    plain kernel must not import jaxmagic by doing so.
    """
    import jax.numpy as jnp

    import jaxmagic

    for _ in range(2):  # the first compile jaxmagic asks for tells it which; the second capture shows it
        with jaxmagic.capture({}) as cap:
            jax.jit(lambda x: x + 1)(jnp.ones(2))
    return cap.calls[0].compiled_text is not None


COMPILED = "a call's compiled HLO without compiling it again (so its collectives and compiled shardings)"


@functools.cache
def locates_callee_ops_at_call_site() -> bool:
    """Whether this JAX gives a called function's ops the caller's source position (asked of a
    tiny program, not a version): JAX 0.7 writes `relu`'s `maximum` as `loc("max"(<call line>))`,
    JAX 0.10 as a bare `loc("max")`. jaxmagic then leaves some of those ops (custom_jvp, loop and
    remat bodies) unlinked rather than risk linking the caller's own ops to them."""
    import re

    import jax.numpy as jnp

    from jaxmagic.capture import jax_compat

    text = jax_compat.stablehlo_with_locations(jax.jit(lambda x: jax.nn.relu(x) * 3.0).lower(jnp.ones(3)))
    found = re.search(r"stablehlo\.maximum .*loc\((#loc\d+)\)", text)
    defs = dict(re.findall(r"^(#loc\d+) = (loc\(.*\))$", text, re.M))
    return bool(found) and bool(re.match(r'loc\("max"\(#loc\d+\)\)', defs.get(found.group(1), "")))


CALLEE_AT_CALL_SITE = (
    "JAX here places a called function's ops at the call's source position (custom_jvp, "
    "loop and remat bodies): jaxmagic leaves those links out rather than risk a wrong one"
)


@functools.cache
def places_unreduced_arrays() -> bool:
    """Whether this JAX makes an array unreduced over a mesh axis and places it (asked, not a version):
    JAX 0.7 has `PartitionSpec(..., unreduced=...)` but raises NotImplementedError placing one."""
    import jax.numpy as jnp

    if not HAS_AXIS_TYPES or not hasattr(jax.sharding.PartitionSpec(), "unreduced"):
        return False
    try:
        mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
        placed = jax.device_put(
            jnp.ones(8), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("y", unreduced={"x"}))
        )
        jax.block_until_ready(placed)
    except NotImplementedError:
        return False
    return True


UNREDUCED = "arrays unreduced over a mesh axis (PartitionSpec(unreduced=...))"
