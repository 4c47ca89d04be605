"""Meshes, axis types and PartitionSpecs as each JAX keeps and prints them."""

from __future__ import annotations

from typing import Any

import jax

from ... import strict


def context_meshes() -> list[Any]:
    """The meshes in context now: the concrete one `jax.set_mesh` / `use_mesh` set (as a global or a
    `with` block), then the abstract one (`use_abstract_mesh`, or the concrete one's). Empty where
    none is set or this JAX has no such context (older versions: `with mesh:` only)."""
    out = []
    for getter in ("get_mesh", "get_abstract_mesh"):
        try:
            mesh = getattr(jax.sharding, getter)()
        except AttributeError:  # older JAX: no mesh context
            continue
        except Exception as exc:
            strict.fallback("the mesh set in context", exc)
            continue
        if mesh is not None and getattr(mesh, "axis_names", None):  # the empty mesh means none is set
            out.append(mesh)
    return out


def axis_types(mesh: Any) -> tuple[Any, ...]:
    """The mesh's axis types (`AxisType.Auto`, `Explicit`, `Manual`), one per axis; () on a JAX without them.

    JAX 0.4 to 0.5 keep them as {type: axis name or names}: read per axis name, so a 2-axis mesh
    never reads as having one type.
    """
    try:
        types = getattr(mesh, "axis_types", None) or ()
        if isinstance(types, dict):
            by_name = {
                name: kind
                for kind, names in types.items()
                for name in (names if isinstance(names, tuple) else (names,))
            }
            return tuple(by_name[name] for name in mesh.axis_names if name in by_name)
        return tuple(types)
    except Exception:  # boundary: `mesh` is the user's (any object with axis names)
        return ()


def traced_spec(aval: Any) -> Any:
    """The PartitionSpec a traced value's abstract value carries, or None where it says nothing.

    Only explicit-sharding mode puts a meaningful spec in the aval (`jax.typeof(x).sharding`
    on a mesh with Explicit axes); elsewhere the mesh is empty or the spec all None. Reading
    a tracer's own `.sharding` instead raises an AttributeError whose message walks the
    trace's provenance (about 12 ms per leaf of a grad inside jit).
    """
    sharding = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    spec = getattr(sharding, "spec", None)
    if mesh is None or spec is None or getattr(mesh, "empty", True):
        return None
    try:
        return spec if any(entry is not None for entry in spec) else None
    except TypeError:
        return None


def spec_text(spec: Any) -> str:
    """A PartitionSpec as JAX 0.5 and later print it, `P(None, 'd')`, on every JAX (older ones print
    `PartitionSpec(None, 'd')`: the same entries under the class's long name)."""
    text = str(spec)
    long_name = "PartitionSpec("
    return "P(" + text[len(long_name) :] if text.startswith(long_name) else text


def spec_partitions(spec: Any) -> tuple[Any, ...]:
    """A PartitionSpec's per-dimension entries, on every JAX.

    JAX 0.7 and later keep them in `partitions`, and iterating a spec with unreduced or reduced
    axes raises there ("Using *pspec is dangerous"); older JAX has no `partitions`, its spec is the
    tuple of entries itself (0.6 already takes `unreduced=` and keeps it beside them)."""
    partitions = getattr(spec, "partitions", None)
    return tuple(partitions) if isinstance(partitions, tuple) else tuple(spec)


def shard_map_specs(eqn: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(in_specs, out_specs) of a shard_map eqn as PartitionSpecs, on every JAX.

    JAX 0.6 and later keep the specs as written; older ones keep `in_names`/`out_names`, one
    `{dimension: (mesh axes...)}` per operand, from which the same spec is rebuilt (trailing
    unsplit dimensions left out, as `P('d')` means `P('d', None)`).
    """
    params = eqn.params
    if "in_specs" in params or "out_specs" in params:
        return tuple(params.get("in_specs", ())), tuple(params.get("out_specs", ()))

    def specs(names: Any, atoms: Any) -> tuple[Any, ...]:
        out = []
        for dims, atom in zip(names or (), atoms):
            rank = len(getattr(getattr(atom, "aval", None), "shape", ()))
            entries = [None] * max(rank, max(dims, default=-1) + 1)
            for dim, axes in dict(dims).items():
                axes = tuple(axes)
                entries[dim] = axes[0] if len(axes) == 1 else axes
            while entries and entries[-1] is None:
                entries.pop()
            out.append(jax.sharding.PartitionSpec(*entries))
        return tuple(out)

    return specs(params.get("in_names"), eqn.invars), specs(params.get("out_names"), eqn.outvars)
