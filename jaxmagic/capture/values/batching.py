"""Where `jax.vmap` put the batch dimension of every variable of a recorded program.

JAX does not record batch dimensions in a jaxpr, but it decides them exactly and
deterministically when it traces. So we ask it: the jitted function's Python code is
traced once more with every top-level `jax.vmap` mapping one more element (B+1: its
batched inputs padded by one slice, its outputs cut back to B, all inside a name scope
we filter out again). The two jaxprs have the same eqns in the same order; for each
variable, the one dimension whose size went from B to B+1 is its batch dimension.

This covers both shapes of vmapped programs:
  * `jax.jit(jax.vmap(f, in_axes=...))`: the vmap arguments are read from the function
    (`jax_compat.vmap_spec`) and the whole program is one batched region;
  * `jax.vmap` called inside a jitted function (per-example gradients in a train step):
    `jax.vmap` is replaced while we trace, and only its regions are batched.

With nested vmaps only the outermost one is enlarged, so a variable's batch dimension
is the outermost vmap's (inner vmaps' dimensions are left out). The inputs a vmap maps
get the dimension from `in_axes`. Variables outside vmap regions get None.

The extra trace runs only for programs with vmap (seen in their name stacks) up to
MAX_EQNS eqns; it compiles nothing and never touches the user's results. Anything that
makes the two traces disagree gives no dims and a note, never a guess.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax import lax

from ...units import plural
from .. import jax_compat
from ..silence import this_thread_silenced  # tracing again must not print twice

MAX_EQNS = 5_000  # programs larger than this are not traced again
PROBE_SCOPE = "jaxmagic-batch-probe"  # our pad and cut eqns, dropped before aligning
REGION_SCOPE = "jaxmagic-batch-region"  # eqns traced inside an enlarged vmap


@dataclass
class BatchInfo:
    dims: dict[Any, int | None] | None  # Var of the recorded jaxpr -> batch dimension
    size: int | None
    note: str | None


class _Unsupported(Exception):
    """A vmap this module cannot enlarge (the message says why)."""


class _Mismatch(Exception):
    """The enlarged trace differs from the recorded one beyond sizes."""


def batch_info(
    fn: Any, args: tuple, kwargs: dict, closed_jaxpr: Any, namespace: dict | None = None, max_eqns: int | None = None
) -> BatchInfo | None:
    """Batch dimensions of the recorded `closed_jaxpr` of `fn(*args, **kwargs)`; None without vmap.

    `namespace` (the notebook's) gets its `vmap` aliases patched too. Never raises: a
    failure gives `BatchInfo(None, None, note)`.
    """
    try:
        return _batch_info(fn, args, kwargs, closed_jaxpr, namespace, MAX_EQNS if max_eqns is None else max_eqns)
    except Exception as exc:  # boundary: the note says why; batch dimensions never cost the user's cell
        return BatchInfo(None, None, f"batch dimensions could not be found: {type(exc).__name__}: {exc}")


def _batch_info(
    fn: Any, args: tuple, kwargs: dict, closed_jaxpr: Any, namespace: dict | None, max_eqns: int
) -> BatchInfo | None:
    python_fn = jax_compat.python_function(fn)
    spec = jax_compat.vmap_spec(python_fn) if python_fn is not None else None
    n_eqns, n_vmapped = _count(closed_jaxpr.jaxpr)
    if spec is None and not n_vmapped:
        return None
    if python_fn is None:
        return BatchInfo(None, None, "batch dimensions unknown: the jitted function's Python code is not reachable")
    if n_eqns > max_eqns:
        return BatchInfo(
            None, None, f"batch dimensions not computed: {n_eqns:,} eqns (they are computed up to {max_eqns:,})"
        )
    probe = _Probe(jax.vmap)
    # jit(vmap(f)): trace our enlarged vmap of f instead; vmap inside the function: patch jax.vmap.
    target = probe.vmap(**spec) if spec is not None else python_fn
    try:
        with this_thread_silenced(), _patched_vmap(probe, python_fn, namespace, active=spec is None):
            enlarged = _trace_fresh(fn, target, args, kwargs)
    except _Unsupported as exc:
        return BatchInfo(None, None, f"batch dimensions unknown: {exc}")
    if probe.unsupported:
        return BatchInfo(None, None, f"batch dimensions unknown: {probe.unsupported[0]}")
    if not probe.sizes:
        return BatchInfo(
            None,
            None,
            f"batch dimensions unknown: {plural(n_vmapped, 'eqn')} {'is' if n_vmapped == 1 else 'are'} under vmap, but no "
            "jax.vmap call was reached when tracing again (vmap through "
            "jnp.vectorize, or made outside the jitted function)",
        )
    aligner = _Aligner()
    try:
        aligner.align(closed_jaxpr.jaxpr, enlarged.jaxpr, in_region=spec is not None)
    except _Mismatch as exc:
        return BatchInfo(
            None,
            None,
            "batch dimensions unknown: the program traced with another batch size "
            f"has a different structure ({exc}); shape-dependent Python code?",
        )
    dims = aligner.result()
    notes = []
    sizes = sorted(set(probe.sizes))
    size = sizes[0] if len(sizes) == 1 else None
    if len(sizes) > 1:
        notes.append(f"vmaps of sizes {', '.join(map(str, sizes))}: batch_size is left empty")
    if aligner.outside:
        notes.append(
            f"{plural(aligner.outside, 'eqn')} under vmap {'was' if aligner.outside == 1 else 'were'} not traced again (vmap inside an inner jitted "
            "function JAX had cached, or through jnp.vectorize): their variables have no batch dims"
        )
    if aligner.ambiguous:
        notes.append(
            f"{len(aligner.ambiguous)} variables have no batch dim: several dims changed with the batch "
            "size, or a shared sub-jaxpr is batched differently at its uses"
        )
    if _has_nested_vmap(closed_jaxpr.jaxpr):
        notes.append("nested vmaps: dims are those of the outermost vmap")
    return BatchInfo(dims, size, "; ".join(notes) or None)


# -- the enlarged vmap ------------------------------------------------------------------


class _Probe:
    """Makes `jax.vmap` stand-ins that map B+1 elements and cut the results back to B."""

    def __init__(self, original_vmap: Callable):
        self.original = original_vmap
        self.depth = 0  # > 0 while tracing inside an enlarged vmap: inner vmaps stay as they are
        self.sizes: list[int] = []
        self.unsupported: list[str] = []

    def vmap(
        self,
        fun: Callable,
        in_axes: Any = 0,
        out_axes: Any = 0,
        axis_name: Any = None,
        axis_size: int | None = None,
        spmd_axis_name: Any = None,
        **rest: Any,
    ) -> Callable:
        original = self.original
        plain = original(
            fun,
            in_axes=in_axes,
            out_axes=out_axes,
            axis_name=axis_name,
            axis_size=axis_size,
            spmd_axis_name=spmd_axis_name,
            **rest,
        )
        bigger = original(
            fun,
            in_axes=in_axes,
            out_axes=out_axes,
            axis_name=axis_name,
            axis_size=None if axis_size is None else axis_size + 1,
            spmd_axis_name=spmd_axis_name,
            **rest,
        )
        probe = self

        @functools.wraps(plain)
        def mapped(*args: Any, **kwargs: Any) -> Any:
            if probe.depth:
                return plain(*args, **kwargs)
            try:
                with jax.named_scope(PROBE_SCOPE):
                    sizes: list[int] = []
                    padded = _map_args(in_axes, args, lambda leaf, axis: _pad(leaf, axis, sizes))
                    padded_kwargs = {
                        k: _map_tree(0, v, lambda leaf, axis: _pad(leaf, axis, sizes)) for k, v in kwargs.items()
                    }
                size = axis_size if axis_size is not None else (sizes[0] if sizes else None)
                if size is None:
                    raise _Unsupported("a vmap with no mapped input and no axis_size")
                if rest.get("sum_match"):
                    raise _Unsupported("vmap(sum_match=True)")
            except _Unsupported as exc:
                probe.unsupported.append(str(exc))
                return plain(*args, **kwargs)
            probe.depth += 1
            try:
                with jax.named_scope(REGION_SCOPE):
                    out = bigger(*padded, **padded_kwargs)
            finally:
                probe.depth -= 1
            probe.sizes.append(size)
            with jax.named_scope(PROBE_SCOPE):
                return _map_tree(out_axes, out, lambda leaf, axis: _cut(leaf, axis, size))

        return mapped


def _map_args(in_axes: Any, args: tuple, fn: Callable[[Any, int], Any]) -> tuple:
    """`fn(leaf, axis)` on each positional-argument leaf that `in_axes` maps, as vmap reads in_axes."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if isinstance(in_axes, tuple):
        if len(in_axes) != len(args):
            raise _Unsupported("in_axes and arguments differ in length")
        return tuple(_map_tree(axes, arg, fn) for axes, arg in zip(in_axes, args))
    return tuple(_map_tree(in_axes, arg, fn) for arg in args)


def _map_tree(axes: Any, tree: Any, fn: Callable[[Any, int], Any]) -> Any:
    """`fn(leaf, axis)` on each leaf of `tree` under an int leaf of the prefix tree `axes`."""

    def per_subtree(axis: Any, subtree: Any) -> Any:
        if axis is None:
            return subtree
        if type(axis) is not int:
            raise _Unsupported(f"an axis spec jaxmagic does not know: {type(axis).__name__}")
        return jax.tree.map(lambda leaf: fn(leaf, axis), subtree)

    return jax.tree.map(per_subtree, axes, tree, is_leaf=lambda x: x is None)


def _pad(leaf: Any, axis: int, sizes: list[int]) -> Any:
    """`leaf` with one more element along `axis`, using `leaf` once (so its gradient has no extra sum)."""
    ndim = jax.numpy.ndim(leaf)
    if not -ndim <= axis < ndim:
        raise _Unsupported(f"in_axes {axis} out of range for a rank-{ndim} input")
    axis %= ndim
    size = jax.numpy.shape(leaf)[axis]
    if size < 1:
        raise _Unsupported("a vmap over zero elements")
    sizes.append(size)
    dtype = jax.numpy.result_type(leaf)
    if jax.numpy.issubdtype(dtype, jax.dtypes.extended):  # keys: no pad value; not differentiated
        return lax.concatenate([leaf, lax.slice_in_dim(leaf, 0, 1, axis=axis)], axis)
    config = [(0, 1 if d == axis else 0, 0) for d in range(ndim)]
    return lax.pad(leaf, np.zeros((), dtype), config)


def _cut(leaf: Any, axis: int, size: int) -> Any:
    return lax.slice_in_dim(leaf, 0, size, axis=axis % jax.numpy.ndim(leaf))


@contextlib.contextmanager
def _patched_vmap(probe: _Probe, python_fn: Callable, namespace: dict | None, active: bool) -> Iterator[None]:
    """`jax.vmap`, and names bound to it in the function's module and the notebook, become the probe's."""
    if not active:
        yield
        return
    original = probe.original
    namespaces = [jax.__dict__]
    for ns in (getattr(python_fn, "__globals__", None), namespace):
        if isinstance(ns, dict) and all(ns is not seen for seen in namespaces):
            namespaces.append(ns)
    stand_in = probe.vmap  # one bound method object, so the restore below can recognise it
    patched: list[tuple[dict, str]] = []
    try:
        for ns in namespaces:
            for name, value in list(ns.items()):
                if value is original:
                    ns[name] = stand_in
                    patched.append((ns, name))
        yield
    finally:
        for ns, name in patched:
            if ns.get(name) is stand_in:
                ns[name] = original


def _trace_fresh(jitted: Any, target: Callable, args: tuple, kwargs: dict) -> Any:
    """The ClosedJaxpr of `target` traced as `jitted` would be (same static args), not from any cache.

    A new function object misses JAX's trace cache (keyed weakly on the function), and
    the cache entry goes when it does.
    """
    info = jax_compat.jit_info(jitted)
    statics = {key: getattr(info, key) for key in ("static_argnums", "static_argnames") if getattr(info, key, None)}

    @functools.wraps(target)
    def fresh(*a: Any, **k: Any) -> Any:
        return target(*a, **k)

    jit = getattr(jax.jit, "_jaxmagic_original", jax.jit)  # not our recording jit
    return jit(fresh, **statics).trace(*args, **kwargs).jaxpr


# -- aligning the two traces ---------------------------------------------------------------


class _Aligner:
    """Walks the recorded and the enlarged jaxpr side by side, eqn by eqn."""

    def __init__(self) -> None:
        self.dims: dict[Any, int | None] = {}
        self.ambiguous: set = set()
        self.inputs: dict[Any, int] = {}  # recorded var -> in_axes of a vmap it feeds
        self.outside = 0  # eqns under vmap that were not in an enlarged region
        self._var_map: dict[Any, Any] = {}  # enlarged var -> recorded var

    def align(self, recorded: Any, enlarged: Any, in_region: bool) -> None:
        if len(recorded.constvars) != len(enlarged.constvars) or len(recorded.invars) != len(enlarged.invars):
            raise _Mismatch("different inputs")
        for a, b in zip(recorded.constvars, enlarged.constvars):
            self._pair(a, b)
        for a, b in zip(recorded.invars, enlarged.invars):
            self._pair(a, b)
        kept = sum(not _in_scope(eqn, PROBE_SCOPE) for eqn in enlarged.eqns)
        if kept != len(recorded.eqns):
            raise _Mismatch(f"{len(recorded.eqns)} eqns became {kept}")
        recorded_eqns = iter(recorded.eqns)
        for b in enlarged.eqns:
            if _in_scope(b, PROBE_SCOPE):
                self._note_input(b)
                continue
            a = next(recorded_eqns)
            if (
                a.primitive.name != b.primitive.name
                or len(a.outvars) != len(b.outvars)
                or len(a.invars) != len(b.invars)
            ):
                raise _Mismatch(f"{a.primitive.name} became {b.primitive.name}")
            region = in_region or _in_scope(b, REGION_SCOPE)
            if not region and jax_compat.has_transform(a.source_info, "vmap"):
                self.outside += 1
            for x, y in zip(a.outvars, b.outvars):
                self._pair(x, y)
            subs_a = [sub for _, sub in jax_compat.sub_jaxprs(a)]
            subs_b = [sub for _, sub in jax_compat.sub_jaxprs(b)]
            if len(subs_a) != len(subs_b):
                raise _Mismatch(f"{a.primitive.name} has other sub-jaxprs")
            for sa, sb in zip(subs_a, subs_b):
                if sa is sb:  # the same object: JAX's cache, not traced again
                    self.outside += _count(getattr(sa, "jaxpr", sa))[1]
                    continue
                self.align(getattr(sa, "jaxpr", sa), getattr(sb, "jaxpr", sb), region)

    def _pair(self, recorded: Any, enlarged: Any) -> None:
        if jax_compat.is_dropvar(recorded):
            return
        self._var_map[enlarged] = recorded
        dim = _changed_dim(recorded.aval, enlarged.aval)
        if recorded in self.dims and self.dims[recorded] != dim:
            self.ambiguous.add(recorded)
        self.dims.setdefault(recorded, dim)
        if dim is _AMBIGUOUS:
            self.ambiguous.add(recorded)

    def _note_input(self, eqn: Any) -> None:
        """Our pad of x (`pad` or `concatenate` along d) says: vmap maps x along d."""
        if not eqn.invars or jax_compat.is_literal(eqn.invars[0]):
            return
        if eqn.primitive.name == "concatenate":
            axis = int(eqn.params["dimension"])
        elif eqn.primitive.name == "pad":
            grown = [d for d, (_, high, _) in enumerate(eqn.params["padding_config"]) if high]
            if len(grown) != 1:
                return
            axis = grown[0]
        else:
            return
        recorded = self._var_map.get(eqn.invars[0])
        if recorded is not None:
            self.inputs.setdefault(recorded, axis)

    def result(self) -> dict[Any, int | None]:
        dims = {var: (None if var in self.ambiguous else dim) for var, dim in self.dims.items()}
        for var, axis in self.inputs.items():
            if dims.get(var) is None and var not in self.ambiguous:
                dims[var] = axis
        return dims


_AMBIGUOUS = object()


def _changed_dim(recorded: Any, enlarged: Any) -> Any:
    """The one dimension that grew by one, None if none changed, _AMBIGUOUS otherwise."""
    a, b = getattr(recorded, "shape", None), getattr(enlarged, "shape", None)
    if a is None or b is None:
        return None
    if len(a) != len(b):
        raise _Mismatch(f"rank of {jax_compat.short_aval(recorded)} changed")
    changed = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if not changed:
        return None
    if len(changed) == 1 and b[changed[0]] == a[changed[0]] + 1:
        return changed[0]
    return _AMBIGUOUS


def _in_scope(eqn: Any, scope: str) -> bool:
    return scope in jax_compat.name_stack_text(eqn.source_info)


def _count(jaxpr: Any) -> tuple[int, int]:
    """(eqns, eqns traced under vmap), recursive over sub-jaxprs."""
    n = vmapped = 0
    stack = [jaxpr]
    while stack:
        current = stack.pop()
        for eqn in current.eqns:
            n += 1
            vmapped += jax_compat.has_transform(eqn.source_info, "vmap")
            stack.extend(sub for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False, opened=True))
    return n, vmapped


def _has_nested_vmap(jaxpr: Any) -> bool:
    """True if some eqn's name stack has two vmaps."""
    stack = [jaxpr]
    while stack:
        current = stack.pop()
        for eqn in current.eqns:
            count = jax_compat.transform_depth(eqn.source_info, "vmap")
            if count >= 2:
                return True
            stack.extend(sub for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False, opened=True))
    return False
