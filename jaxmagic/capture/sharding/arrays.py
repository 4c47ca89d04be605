"""Where every array lives: meshes, shardings and shards, read from JAX's own objects.

`%%sharding` records, for arrays bound in the user namespace when the cell ends and arrays a
recorded jitted call returned, what JAX itself says about placement: the sharding object
(NamedSharding with its mesh and PartitionSpec, SingleDeviceSharding, or any other kind,
described generically through `devices_indices_map`), and each addressable shard's device,
index and replica id. Only metadata is kept (ints and strings), never a buffer: a cell making
1 GB arrays still gives a small capture.

Blocks are the unit of the picture: shards with the same index are one block held by several
devices (replication), so an array sharded over 256 devices is at most 256 records, and a
replicated one is one block with 256 holders.
"""

from __future__ import annotations

import collections
import itertools
import math
import time
import types
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import jax
import numpy as np

from ...units import plural
from .. import jax_compat

MAX_ARRAYS = 500  # arrays recorded per cell; the rest are counted in a note
IPYTHON_HISTORY = frozenset({"In", "Out"})  # IPython's input and output caches: aliases, not arrays of the user


@dataclass(frozen=True)
class MeshRecord:
    """A device mesh: axis names and sizes, axis types, and the device id at every mesh position.

    Two meshes are one when all four agree (`key`): an Auto and an Explicit mesh over the same
    devices place arrays under different rules, so they are two. `names` (the names the user's
    namespace binds to it) and `context` (set with `jax.set_mesh` / `use_mesh`) say how the user
    refers to it and are not part of its identity."""

    axis_names: tuple[str, ...]
    shape: tuple[int, ...]
    axis_types: tuple[str, ...]  # "Auto" | "Explicit" | "Manual" (JAX's AxisType names); () when unknown
    device_ids: tuple[int, ...]  # row-major over `shape`; () for an abstract mesh (no devices)
    abstract: bool = False
    names: tuple[str, ...] = field(default=(), compare=False)
    context: bool = field(default=False, compare=False)

    @property
    def key(self) -> tuple:
        return (self.axis_names, self.shape, self.device_ids, self.axis_types)


@dataclass(frozen=True)
class Block:
    """One distinct piece of an array: its index range per dimension and every device holding a copy."""

    index: tuple[tuple[int, int], ...]  # [start, stop) per dimension
    devices: tuple[int, ...]  # device ids, in the order JAX lists the shards
    replicas: tuple[int, ...]  # replica id of each of those shards (addressable shards only; -1 unknown)


@dataclass(frozen=True)
class ShardingRecord:
    kind: str  # "named" | "single_device" | another sharding class name, e.g. "GSPMDSharding"
    text: str  # repr, for the details panel
    mesh: MeshRecord | None
    spec: tuple[Any, ...] | None  # PartitionSpec entries: None, an axis name, or a tuple of axis names
    memory_kind: str | None
    device_ids: tuple[int, ...]  # every device of the sharding's device set, sorted
    fully_replicated: bool
    unreduced: tuple[str, ...] = ()  # mesh axes whose devices hold partial sums (P(..., unreduced={...})), sorted
    reduced: tuple[str, ...] = ()  # mesh axes marked `reduced` (P(..., reduced={...})), sorted


@dataclass
class ArrayRecord:
    """One array as JAX placed it (metadata only; `ref`, a weak reference used to tell that an output
    is also bound in the namespace, is dropped when the capture stops)."""

    name: str | None  # name in the user namespace, or a path under it ("params['w']")
    origin: str  # "namespace" | "output"
    call: int | None  # index of the recorded jitted call that returned it
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    sharding: ShardingRecord
    blocks: tuple[Block, ...]
    addressable: bool = True  # all shards addressable from this process (single-host: always)
    earlier: bool = False  # bound before the cell ran and not read by its jitted calls: context
    ref: Any = field(default=None, repr=False, compare=False)


@dataclass
class ShardingLog:
    """What a `%%sharding` capture collects besides the calls (kept on `Capture.arrays`)."""

    arrays: list[ArrayRecord] = field(default_factory=list)
    skipped: int = 0


# ---------------------------------------------------------------------------------------------
# Reading JAX's objects.


def mesh_record(mesh: Any) -> MeshRecord | None:
    """A `Mesh` or `AbstractMesh` as plain data (None for anything else)."""
    try:
        names = tuple(str(n) for n in mesh.axis_names)
        shape = tuple(int(n) for n in (mesh.axis_sizes if hasattr(mesh, "axis_sizes") else mesh.devices.shape))
    except Exception:  # boundary: any object of the user's that is not a mesh
        return None
    types = tuple(_axis_type_name(t) for t in jax_compat.axis_types(mesh))
    if not names:
        return None  # the empty mesh JAX reports when none is set
    try:
        devices = mesh.devices
    except Exception:  # AbstractMesh raises: it has no devices
        devices = None
    if isinstance(devices, np.ndarray) and devices.size and all(d is not None for d in devices.flat):
        return MeshRecord(names, shape, types, tuple(int(d.id) for d in devices.flat))
    return MeshRecord(names, shape, types, (), abstract=True)


def _axis_type_name(axis_type: Any) -> str:
    name = getattr(axis_type, "name", None) or str(axis_type)
    return name.rsplit(".", 1)[-1]


def _spec(spec: Any) -> tuple[Any, ...]:
    """The spec's per-dimension entries as strings and tuples of strings (`jax_compat.spec_partitions`)."""
    out = []
    for entry in jax_compat.spec_partitions(spec):
        if entry is None or isinstance(entry, str):
            out.append(entry)
        elif isinstance(entry, (tuple, list)):
            out.append(tuple(str(e) for e in entry))
        else:  # P.UNCONSTRAINED and future markers: shown as JAX prints them
            out.append(str(entry))
    return tuple(out)


def sharding_record(sharding: Any, shape: tuple[int, ...]) -> ShardingRecord:
    """Any `jax.sharding.Sharding`: named ones with their mesh and spec, every kind through its
    device set and replication as JAX reports them."""
    kind = type(sharding).__name__
    mesh = spec = None
    unreduced = reduced = ()
    if kind == "NamedSharding":
        kind, mesh, spec = "named", mesh_record(sharding.mesh), _spec(sharding.spec)
        unreduced, reduced = _axes(sharding.spec, "unreduced"), _axes(sharding.spec, "reduced")
    elif kind == "SingleDeviceSharding":
        kind = "single_device"
    try:
        device_ids = tuple(sorted(int(d.id) for d in sharding.device_set))
    except Exception:  # boundary: a sharding over an abstract mesh (or a user's own) has no devices
        device_ids = ()
    try:
        replicated = bool(sharding.is_fully_replicated)
    except Exception:  # boundary: as above
        replicated = False
    return ShardingRecord(
        kind=kind,
        text=repr(sharding),
        mesh=mesh,
        spec=spec,
        memory_kind=getattr(sharding, "memory_kind", None),
        device_ids=device_ids,
        fully_replicated=replicated,
        unreduced=unreduced,
        reduced=reduced,
    )


def _axes(spec: Any, which: str) -> tuple[str, ...]:
    """A spec's `unreduced` or `reduced` mesh axes, sorted (none on a JAX without them)."""
    try:
        return tuple(sorted(str(a) for a in getattr(spec, which, None) or ()))
    except Exception:  # boundary: a user's spec-like object
        return ()


def _indexable(sharding: Any) -> Any:
    """The sharding JAX can index for an array whose spec has unreduced axes: the same mesh and
    partitions without them. JAX raises on the shards' index of such an array (0.10: "device_indices_map
    doesn't work with unreduced"), but each device's block is where the partitions alone put it; along an
    unreduced axis the devices holding one block hold partial sums of it, not copies."""
    spec = sharding.spec
    return jax.sharding.NamedSharding(
        sharding.mesh,
        jax.sharding.PartitionSpec(*jax_compat.spec_partitions(spec)),
        memory_kind=getattr(sharding, "memory_kind", None),
    )


def _index(index: tuple, shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    out = []
    for dim, piece in zip(shape, tuple(index) + (slice(None),) * (len(shape) - len(tuple(index)))):
        start, stop, _ = piece.indices(dim) if isinstance(piece, slice) else (int(piece), int(piece) + 1, 1)
        out.append((int(start), int(stop)))
    return tuple(out)


def blocks_of(array: Any) -> tuple[Block, ...]:
    """Distinct shards of `array` with their holders, from `addressable_shards` (device, index,
    replica id), and for devices this process cannot address, from `devices_indices_map`."""
    shape = tuple(int(d) for d in array.shape)
    spec = getattr(array.sharding, "spec", None)
    if getattr(spec, "unreduced", None):  # JAX indexes `reduced` ones (copies) as any other
        holders = _indexable(array.sharding).devices_indices_map(shape).items()
        return _grouped((_index(index, shape), int(device.id), -1) for device, index in holders)
    found: dict[tuple, tuple[list[int], list[int]]] = {}
    seen: set[int] = set()
    for shard in array.addressable_shards:
        index = _index(shard.index, shape)
        devices, replicas = found.setdefault(index, ([], []))
        devices.append(int(shard.device.id))
        replicas.append(int(shard.replica_id))
        seen.add(int(shard.device.id))
    if len(seen) < len(array.sharding.device_set):
        for device, index in array.sharding.devices_indices_map(shape).items():
            if int(device.id) not in seen:
                devices, replicas = found.setdefault(_index(index, shape), ([], []))
                devices.append(int(device.id))
                replicas.append(-1)
    return tuple(Block(index, tuple(d), tuple(r)) for index, (d, r) in found.items())


def _grouped(pieces: Iterable[tuple[tuple, int, int]]) -> tuple[Block, ...]:
    """Blocks from (index, device, replica id) triples: one block per index, its holders in order."""
    found: dict[tuple, tuple[list[int], list[int]]] = {}
    for index, device, replica in pieces:
        devices, replicas = found.setdefault(index, ([], []))
        devices.append(device)
        replicas.append(replica)
    return tuple(Block(index, tuple(d), tuple(r)) for index, (d, r) in found.items())


def array_record(
    value: Any, name: str | None, origin: str, call: int | None = None, unread: list[str] | None = None
) -> ArrayRecord | None:
    """An `ArrayRecord` of a concrete `jax.Array` (None for tracers, deleted or non-arrays). A live
    array whose placement JAX would not give is None too, and said in `unread` when given: the view
    then names it instead of leaving it out without a word."""
    if not isinstance(value, jax.Array) or jax_compat.is_tracer(value):
        return None
    try:
        if value.is_deleted():
            return None
        shape = tuple(int(d) for d in value.shape)
        dtype = value.dtype
        # math.prod: np.prod costs 2.6 us an array, half of a record (a train step's namespace holds 1,000)
        if jax.numpy.issubdtype(dtype, jax.dtypes.extended):  # PRNG keys: placed like their key data
            nbytes = math.prod(shape) * 8
        else:
            nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        placed, blocks, addressable = _placement(value, shape)
        return ArrayRecord(
            name=name,
            origin=origin,
            call=call,
            shape=shape,
            dtype=jax_compat.short_dtype(dtype),
            nbytes=nbytes,
            sharding=placed,
            blocks=blocks,
            addressable=addressable,
        )
    except Exception as exc:  # boundary: a user's array freed, donated or odd while it is read
        if unread is not None and not _gone(value):
            unread.append(f"{name or 'an array'} ({type(exc).__name__}: {str(exc)[:160]})")
        return None


def _gone(value: Any) -> bool:
    """True when the array was freed or donated meanwhile (nothing to say about it)."""
    try:
        return bool(value.is_deleted())
    except Exception:  # boundary: an array JAX cannot even answer this for
        return False


_PLACEMENTS: dict[tuple, tuple[ShardingRecord, tuple[Block, ...], bool]] = {}
_MAX_PLACEMENTS = 512


def _placement(value: Any, shape: tuple[int, ...]) -> tuple[ShardingRecord, tuple[Block, ...], bool]:
    """The sharding record, blocks and addressability of `value`, read from JAX once per (sharding,
    shape): they depend on nothing else, and a train step's 1,000 outputs share a handful (reading
    `addressable_shards` of each cost 0.4 ms, 0.5 s per cell for a 280-layer MLP's grads)."""
    sharding = value.sharding
    try:
        key = (sharding, shape)
        hash(key)
    except Exception:  # an unhashable sharding: asked every time
        return (sharding_record(sharding, shape), blocks_of(value), bool(getattr(value, "is_fully_addressable", True)))
    found = _PLACEMENTS.get(key)
    if found is None:
        found = (sharding_record(sharding, shape), blocks_of(value), bool(getattr(value, "is_fully_addressable", True)))
        if len(_PLACEMENTS) >= _MAX_PLACEMENTS:
            _PLACEMENTS.clear()
        _PLACEMENTS[key] = found
    return found


def namespace_arrays(
    namespace: dict,
    before: dict[str, int] | None = None,
    read: set[int] | None = None,
    meshes: dict[int, tuple[Any, list[str]]] | None = None,
    notes: list[str] | None = None,
) -> tuple[list[ArrayRecord], int]:
    """Arrays bound in the namespace (and inside lists, tuples and dicts bound there: params), by
    path; (records, how many more there were past `MAX_ARRAYS`).

    Names the cell bound anew (absent from `before`, {name: id of its value} when the cell
    started, or bound to another object) come first: in a notebook, the arrays of this cell
    are what its view is about, the ones earlier cells left follow, marked `earlier` unless the
    cell's jitted calls read them (`read`: ids of the arrays passed to them).

    The same walk names meshes (no second pass, no deeper look): every `Mesh` / `AbstractMesh`
    leaf it meets is added to `meshes` (when given) as {id: (mesh, [names in walk order])}, so
    `dp = jax.make_mesh(...)` is drawn as `dp`, not as `m0`.

    The walk is bounded (`_Walk`): a notebook may bind a 3M-item list of ints, and an empty cell
    must not cost seconds for it. What was not looked into is said in `notes` (when given).
    """
    read = read or set()
    before = before or {}
    items = list(namespace.items())
    items.sort(key=lambda kv: before.get(kv[0]) == id(kv[1]))  # stable: this cell's names first
    records: list[ArrayRecord] = []
    extra = 0
    items = [
        (name, value)
        for name, value in items
        if not (name.startswith("_") or name in IPYTHON_HISTORY or isinstance(value, type))
    ]
    walk = _Walk()
    found = walk.namespace(items)
    unread: list[str] = []
    for name, value in items:
        for path, leaf in found.get(name, ()):
            if not isinstance(leaf, jax.Array):
                if meshes is not None and type(leaf).__name__ in MESH_TYPES:
                    meshes.setdefault(id(leaf), (leaf, []))[1].append(name + jax.tree_util.keystr(tuple(path)))
                continue
            if len(records) >= MAX_ARRAYS:
                extra += 1
                continue
            record = array_record(leaf, name + jax.tree_util.keystr(tuple(path)), "namespace", unread=unread)
            if record is not None:
                record.ref = weakref.ref(leaf)
                record.earlier = before.get(name) == id(value) and id(leaf) not in read
                records.append(record)
    if notes is not None:
        notes.extend(walk.notes())
        if unread:
            notes.append(
                f"{plural(len(unread), 'array')} not shown: JAX would not give where "
                f"{'it lives' if len(unread) == 1 else 'they live'}: {'; '.join(unread[:LISTED])}"
                + (f"; and {len(unread) - LISTED} more" if len(unread) > LISTED else "")
            )
    return records, extra


WALK_ITEMS = 100_000  # pytree nodes and leaves looked at per cell, all names together
WALK_SECONDS = 0.5  # and the time that may take
FIRST_LOOK = 10_000  # items each name may take before every other name was looked at
SAMPLE_ABOVE = 1_000  # a list, tuple or dict with more items is sampled before it is walked
SAMPLE = 32  # items sampled: spread over a list or tuple; a dict's first and last values
LISTED = 8  # names a note lists; the rest are counted
PLAIN = frozenset({int, float, bool, complex, str, bytes, type(None)})
OPAQUE = (
    np.ndarray,
    np.generic,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    type,
)  # never pytree nodes, never jax.Arrays: JAX need not be asked
BUILTIN_CONTAINERS = frozenset({list, tuple, dict, collections.OrderedDict, collections.defaultdict})


class _Walk:
    """The namespace walk, bounded in items and time, and what it left out.

    Finds what `jax.tree_util.tree_flatten_with_path` of each value finds (the same leaves in the
    same order with the same paths), one pytree level at a time so that it can stop. Python
    scalars, strings, None and NumPy data are passed over without asking JAX. A list, tuple or dict
    (the builtin types only: their len and items are CPython's, no user code) of more than
    `SAMPLE_ABOVE` items whose sampled items are all plain values is not walked: an array hidden
    among a million ints is not what a notebook binds. One larger than what is left of `WALK_ITEMS`
    is not walked. Once `WALK_ITEMS` or `WALK_SECONDS` is spent, only top-level values are looked
    at (a bound array or mesh is O(1)). The only user code called is what flattening called
    before: the flatten functions of registered pytree nodes (Flax, Equinox, Optax)."""

    def __init__(self) -> None:
        self.items = 0
        self.deadline = time.perf_counter() + WALK_SECONDS
        self.stopped = False
        self.plain: list[tuple[str, int]] = []  # (path, items): big containers of plain values
        self.big: list[tuple[str, int]] = []  # (path, items): larger than what was left of the walk
        self.cut: list[str] = []  # names not looked into, or only in part, once the walk stopped

    def namespace(self, named: list[tuple[str, Any]]) -> dict[str, list[tuple[tuple, Any]]]:
        """{name: its arrays and meshes} for the names JAX can flatten. Every name first gets
        `FIRST_LOOK` items, then the names that needed more share what is left: a params dict is
        found even when a bigger container of other things comes before it."""
        found: dict[str, list[tuple[tuple, Any]]] = {}
        later = []
        for limit, names in ((FIRST_LOOK, named), (None, later)):
            for name, value in names:
                try:
                    leaves = self.leaves(name, value, limit)
                except Exception:  # what JAX cannot flatten (unsortable dict keys, a failing node) is not walked
                    continue
                if leaves is None:
                    later.append((name, value))
                else:
                    found[name] = leaves
        return found

    def leaves(self, name: str, value: Any, limit: int | None = None) -> list[tuple[tuple, Any]] | None:
        """(path, leaf) of every array and mesh under `value`, in JAX's flattening order; None
        when it has more than `limit` items (the walk is then left for later)."""
        if self.stopped:
            return self._top_only(name, value)
        out: list[tuple[tuple, Any]] = []
        # (children left, the node's own keys under its parent, id of the node): a path is built
        # only for what is found (a path per step would cost O(depth) each on a deep nest)
        stack: list[tuple[Iterator, tuple, int]] = []
        on_path: set[int] = set()  # ids of the nodes on the stack (alive: their parents hold them)
        self._visit(name, (), value, out, stack, on_path)
        taken = 0
        while stack:
            child = next(stack[-1][0], None)
            if child is None:
                on_path.discard(stack.pop()[2])
                continue
            self.items += 1
            taken += 1
            if limit is not None and taken > limit:
                return None
            if self.items > WALK_ITEMS or (not self.items % 256 and time.perf_counter() > self.deadline):
                self.stopped = True
                self.cut.append(name)
                break
            self._visit(name, tuple(child[0]), child[1], out, stack, on_path)
        return out

    def _visit(self, name: str, keys: tuple, node: Any, out: list, stack: list, on_path: set[int]) -> None:
        """A leaf we want goes to `out` with its path; a pytree node worth walking pushes its children."""
        kind = type(node)
        if kind in PLAIN or isinstance(node, OPAQUE):
            return
        if isinstance(node, jax.Array) or kind.__name__ in MESH_TYPES:
            out.append((_path(stack, keys), node))
            return
        if id(node) in on_path:
            return  # a list that holds itself: JAX would recurse without end
        if kind in BUILTIN_CONTAINERS and len(node) > SAMPLE_ABOVE:
            where = name + jax.tree_util.keystr(_path(stack, keys))
            if all(_plain(item, 1) for item in _sample(node)):
                self.plain.append((where, len(node)))
                return
            if len(node) > WALK_ITEMS - self.items:
                self.big.append((where, len(node)))
                return
        children = _children(node)
        if children is not None:
            stack.append((children, keys, id(node)))
            on_path.add(id(node))

    def _top_only(self, name: str, value: Any) -> list[tuple[tuple, Any]]:
        """Once the walk stopped: a bound array or mesh is still found (O(1)); a value that could
        hold one is listed as not looked into; plain values and leaves are passed over."""
        kind = type(value)
        if kind in PLAIN or isinstance(value, OPAQUE):
            return []
        if isinstance(value, jax.Array) or kind.__name__ in MESH_TYPES:
            return [((), value)]
        if kind in BUILTIN_CONTAINERS:
            if len(value) > SAMPLE_ABOVE and all(_plain(item, 1) for item in _sample(value)):
                self.plain.append((name, len(value)))
            elif not _plain(value, 1):
                self.cut.append(name)
        elif _children(value) is not None:  # a registered pytree node (what flattening called before)
            self.cut.append(name)
        return []

    def notes(self) -> list[str]:
        """What the walk did not look into, by name, for the capture's notes and the view."""
        out = []
        if self.plain:
            out.append(
                f"{plural(len(self.plain), 'container')} with more than {SAMPLE_ABOVE:,} items "
                f"{_were(self.plain)} not looked into for arrays (every item sampled is a number, string, "
                f"None or NumPy value, not a jax.Array): {_listed(self.plain)}"
            )
        if self.big:
            out.append(
                f"{plural(len(self.big), 'container')} larger than what was left of the "
                f"{WALK_ITEMS:,} items the namespace walk looks at {_were(self.big)} not looked into for arrays: "
                f"{_listed(self.big)}"
            )
        if self.cut:
            out.append(
                f"the namespace walk stopped after {plural(self.items, 'item')} "
                f"(at most {WALK_ITEMS:,} items or {WALK_SECONDS} s); not looked into for arrays, or only in part "
                f"(arrays and meshes bound at the top level were still recorded): {_listed(self.cut)}"
            )
        return out


def _path(stack: list, keys: tuple) -> tuple:
    """The full key path of a node met under the nodes on `stack`."""
    return tuple(k for frame in stack for k in frame[1]) + keys


def _children(node: Any) -> Iterator[tuple[tuple, Any]] | None:
    """One pytree level of `node`: (path keys, child) as `tree_flatten_with_path` names and orders
    them; None for a leaf. A builtin list or tuple is read lazily (a walk that stops early pays only
    for what it read); a dict's keys are sorted as JAX sorts them (unsortable keys raise, as in JAX);
    every other node is flattened one level by JAX itself."""
    kind = type(node)
    if kind is list or kind is tuple:
        return (((jax.tree_util.SequenceKey(i),), item) for i, item in enumerate(node))
    if kind is dict or kind is collections.defaultdict:
        return iter([((jax.tree_util.DictKey(k),), node[k]) for k in sorted(node)])
    if kind is collections.OrderedDict:
        return iter([((jax.tree_util.DictKey(k),), v) for k, v in node.items()])
    first = [True]

    def is_leaf(x: Any) -> bool:  # the root is flattened, every child is a leaf of this level
        if first[0]:
            first[0] = False
            return False
        return True

    flat = jax.tree_util.tree_flatten_with_path(node, is_leaf=is_leaf)[0]
    if len(flat) == 1 and not flat[0][0] and flat[0][1] is node:
        return None  # not a pytree node: a leaf
    return iter(flat)


def _sample(node: Any) -> list[Any]:
    """Up to `SAMPLE` items of a builtin list, tuple or dict, in O(1): spread over a sequence (the
    last included); a dict's first and last values (the middle of a dict has no O(1) access)."""
    if isinstance(node, dict):
        values = node.values()
        return list(itertools.islice(values, SAMPLE // 2)) + list(itertools.islice(reversed(values), SAMPLE // 2))
    step = max(1, len(node) // (SAMPLE - 1))
    return [node[i] for i in range(0, len(node), step)][: SAMPLE - 1] + [node[-1]]


def _plain(value: Any, depth: int) -> bool:
    """A value that neither is nor can hold a jax.Array: a Python scalar, string, None or NumPy
    value, or (`depth` > 0) a small builtin tuple, list or dict of those (`(token, count)` pairs)."""
    kind = type(value)
    if kind in PLAIN or isinstance(value, (np.ndarray, np.generic)):
        return True
    if depth and kind in BUILTIN_CONTAINERS and len(value) <= 8:
        items = value.values() if isinstance(value, dict) else value
        return all(_plain(item, depth - 1) for item in items)
    return False


def _were(found: list) -> str:
    return "was" if len(found) == 1 else "were"


def _listed(found: list) -> str:
    """'big (3,000,000 items), vocab (1,000,000 items)', at most `LISTED` of them, then a count."""
    names = [f"{n[0]} ({plural(n[1], 'item')})" if isinstance(n, tuple) else n for n in found[:LISTED]]
    if len(found) > LISTED:
        names.append(f"and {len(found) - LISTED:,} more")
    return ", ".join(names)


def output_arrays(out: Any, call: int, function: str) -> list[ArrayRecord]:
    """The arrays a recorded jitted call returned, named by function and output path (`step → out[0]`)."""
    records = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(out)[0]:
        record = array_record(leaf, f"{function} → out{jax.tree_util.keystr(tuple(path))}", "output", call)
        if record is not None:
            try:
                record.ref = weakref.ref(leaf)
            except TypeError:
                pass
            records.append(record)
    return records


def merge_outputs(outputs: list[ArrayRecord], bound: list[ArrayRecord], namespace: dict) -> list[ArrayRecord]:
    """One record per array: an output still bound in the namespace takes its name there (and keeps
    the call that made it); weak references are dropped, so the capture holds no array."""
    by_object: dict[int, ArrayRecord] = {}
    for record in outputs:
        obj = record.ref() if record.ref is not None else None
        if obj is not None:
            by_object[id(obj)] = record
    merged = list(outputs)
    named: set[int] = set()  # objects already given a name: an alias is not a second array
    for record in bound:
        obj = record.ref() if record.ref is not None else None
        if obj is not None and id(obj) in named:
            continue
        if obj is not None:
            named.add(id(obj))
        made = by_object.get(id(obj)) if obj is not None else None
        if made is not None:
            made.name, made.origin = record.name, "namespace"
        else:
            merged.append(record)
    for record in merged:
        record.ref = None
    return merged


MESH_TYPES = frozenset({"Mesh", "AbstractMesh"})


def namespace_meshes(
    namespace: dict, named: dict[int, tuple[Any, list[str]]] | None = None, context: Iterable[MeshRecord] = ()
) -> list[MeshRecord]:
    """Meshes the namespace binds, with their names, then the meshes set with `jax.set_mesh` /
    `use_mesh`: in context now, or at a jitted call of the cell (`context`, recorded then), marked
    `context` and named where the namespace binds the same mesh.

    `named` is what `namespace_arrays(..., meshes=named)` found; without it, the top level of the
    namespace is looked at (the same names, minus meshes inside containers)."""
    if named is None:
        named = {}
        for name, value in list(namespace.items()):
            if type(value).__name__ in MESH_TYPES and not name.startswith("_"):
                named.setdefault(id(value), (value, []))[1].append(name)
    out: list[MeshRecord] = []
    by_key: dict[tuple, int] = {}

    def add(record: MeshRecord | None) -> None:
        if record is None:
            return
        at = by_key.get(record.key)
        if at is None:
            by_key[record.key] = len(out)
            out.append(record)
            return
        had = out[at]
        out[at] = replace(
            had,
            names=had.names + tuple(n for n in record.names if n not in had.names),
            context=had.context or record.context,
        )

    for mesh, names in named.values():
        record = mesh_record(mesh)
        add(record and replace(record, names=tuple(names)))
    for record in context:
        add(record)
    for mesh in jax_compat.context_meshes():
        record = mesh_record(mesh)
        add(record and replace(record, context=True))
    return out


def context_mesh_records() -> list[MeshRecord]:
    """The meshes in context right now (at a jitted call: `with jax.set_mesh(m): f(x)`), marked `context`."""
    out = []
    for mesh in jax_compat.context_meshes():
        record = mesh_record(mesh)
        if record is not None:
            out.append(replace(record, context=True))
    return out


# ---------------------------------------------------------------------------------------------
# shard_map bodies in a recorded jaxpr.

COLLECTIVE_PRIMITIVES = (
    "psum",
    "psum_invariant",
    "psum2",
    "pmax",
    "pmin",
    "pmean",
    "all_gather",
    "all_gather_invariant",
    "ppermute",
    "all_to_all",
    "psum_scatter",
    "reduce_scatter",
    "pbroadcast",
    "pbroadcast_dynamic",  # JAX 0.12
    "unreduced_pmax",  # JAX 0.12
    "unreduced_pmin",  # JAX 0.12
    "axis_index",
)


@dataclass(frozen=True)
class ExplicitCollective:
    """A collective the user wrote inside a shard_map body (`psum`, `all_gather`, `ppermute`...)."""

    primitive: str
    axes: tuple[str, ...]
    avals: tuple[str, ...]  # per-shard operand avals
    params: str  # the rest of its params, short
    source: Any  # SourceLocation-like (file, line, function) or None


@dataclass(frozen=True)
class ShardMapRecord:
    mesh: MeshRecord | None
    in_specs: tuple[str, ...]
    out_specs: tuple[str, ...]
    in_avals: tuple[str, ...]  # global avals of the operands
    shard_avals: tuple[str, ...]  # per-shard avals of the body's inputs
    out_avals: tuple[str, ...]
    collectives: tuple[ExplicitCollective, ...]
    path: tuple[int, ...]  # eqn indices from the top of the jaxpr (nested bodies)


def shard_maps(closed_jaxpr: Any) -> list[ShardMapRecord]:
    """Every shard_map eqn in a jaxpr (inside jit bodies too), with its specs and explicit collectives."""
    out: list[ShardMapRecord] = []
    _add_shard_maps(closed_jaxpr.jaxpr, (), out)
    return out


def _add_shard_maps(jaxpr: Any, path: tuple[int, ...], out: list[ShardMapRecord]) -> None:
    """`shard_maps`' walk (a module function, not a closure: a recursive closure is a reference
    cycle, which keeps what it reaches alive until Python's cyclic collector runs)."""
    for i, eqn in enumerate(jaxpr.eqns):
        subs = [sub for _, sub in jax_compat.sub_jaxprs(eqn, opened=True)]
        if eqn.primitive.name == "shard_map" and subs:
            body = subs[0]
            in_specs, out_specs = jax_compat.shard_map_specs(eqn)
            out.append(
                ShardMapRecord(
                    mesh=mesh_record(eqn.params.get("mesh")),
                    in_specs=tuple(jax_compat.spec_text(s) for s in in_specs),
                    out_specs=tuple(jax_compat.spec_text(s) for s in out_specs),
                    in_avals=tuple(jax_compat.short_aval(v.aval) for v in eqn.invars),
                    shard_avals=tuple(jax_compat.short_aval(v.aval) for v in body.invars),
                    out_avals=tuple(jax_compat.short_aval(v.aval) for v in eqn.outvars),
                    collectives=tuple(_explicit(body)),
                    path=(*path, i),
                )
            )
        for sub in subs:
            _add_shard_maps(sub, (*path, i), out)


def _explicit(jaxpr: Any) -> Iterable[ExplicitCollective]:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in COLLECTIVE_PRIMITIVES:
            axes = eqn.params.get("axes", eqn.params.get("axis_name", ()))
            axes = tuple(str(a) for a in (axes if isinstance(axes, (tuple, list)) else (axes,)))
            rest = {k: v for k, v in eqn.params.items() if k not in ("axes", "axis_name", "axis_index_groups")}
            frame = jax_compat.user_frame(eqn.source_info)
            yield ExplicitCollective(
                primitive=eqn.primitive.name,
                axes=axes,
                avals=tuple(jax_compat.short_aval(v.aval) for v in eqn.invars if hasattr(v, "aval")),
                params=", ".join(f"{k}={v}" for k, v in rest.items())[:200],
                source=None if frame is None else (frame.file_name, frame.start_line, frame.function_name),
            )
        for _, sub in jax_compat.sub_jaxprs(eqn, opened=True):
            yield from _explicit(sub)


# ---------------------------------------------------------------------------------------------
# Shardings of intermediates, where JAX records them.

SHARDING_PRIMITIVES = ("sharding_constraint", "reshard", "mesh_cast", "device_put")
MAX_INTERMEDIATES = 300


@dataclass(frozen=True)
class IntermediateSharding:
    """A value inside a jitted program whose sharding JAX knows at trace time: the result of a
    `with_sharding_constraint` / `reshard` / `mesh_cast`, or (explicit-sharding mode) any value
    whose type carries its sharding (`f32[16@data,4]`)."""

    primitive: str
    aval: str
    spec: str | None
    requested: bool  # set by the user (a constraint or reshard) rather than carried by the type
    source: Any  # (file, line, function) or None
    path: tuple[int, ...]
    uneven: tuple[tuple[int, int, int], ...] = ()  # (dim, size, shards) where shards do not divide size


def _uneven(shape: tuple[int, ...], spec: Any, mesh: Any) -> tuple[tuple[int, int, int], ...]:
    """Dimensions a spec splits into pieces that do not divide them: XLA pads those."""
    try:
        sizes = dict(zip(mesh.axis_names, mesh.axis_sizes if hasattr(mesh, "axis_sizes") else mesh.devices.shape))
    except Exception:  # boundary: any object of the user's that is not a mesh
        return ()
    out = []
    for dim, (size, entry) in enumerate(zip(shape, _spec(spec))):
        axes = (entry,) if isinstance(entry, str) else entry if isinstance(entry, tuple) else ()
        shards = int(np.prod([sizes.get(a, 1) for a in axes], dtype=np.int64)) if axes else 1
        if shards > 1 and int(size) % shards:
            out.append((dim, int(size), shards))
    return tuple(out)


def intermediate_shardings(closed_jaxpr: Any) -> tuple[list[IntermediateSharding], int]:
    """(records, how many more past `MAX_INTERMEDIATES`), in eqn order, nested call bodies included
    (not shard_map bodies, which are per-shard and described by their specs)."""
    out: list[IntermediateSharding] = []
    extra = 0
    for path, eqn in _eqns_outside_shard_maps(closed_jaxpr.jaxpr, ()):
        found = _sharding_of_output(eqn)
        if found is None:
            continue
        if len(out) >= MAX_INTERMEDIATES:
            extra += 1
            continue
        var, sharding, spec = found
        frame = jax_compat.user_frame(eqn.source_info)
        out.append(
            IntermediateSharding(
                primitive=eqn.primitive.name,
                aval=jax_compat.short_aval(var.aval),
                spec=None if spec is None else jax_compat.spec_text(spec),
                requested=eqn.primitive.name in SHARDING_PRIMITIVES,
                path=path,
                source=None if frame is None else (frame.file_name, frame.start_line, frame.function_name),
                uneven=_uneven(tuple(getattr(var.aval, "shape", ())), spec, getattr(sharding, "mesh", None))
                if spec is not None
                else (),
            )
        )
    return out, extra


def _eqns_outside_shard_maps(jaxpr: Any, path: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Any]]:
    """(path, eqn) in eqn order, nested bodies included except shard_map's (a module function: a
    recursive closure is a reference cycle, kept alive until Python's cyclic collector runs)."""
    for i, eqn in enumerate(jaxpr.eqns):
        yield (*path, i), eqn
        if eqn.primitive.name != "shard_map":
            for _, sub in jax_compat.sub_jaxprs(eqn, opened=True):
                yield from _eqns_outside_shard_maps(sub, (*path, i))


def _sharding_of_output(eqn: Any) -> tuple[Any, Any, Any] | None:
    """(first output var, its sharding, its spec) when the eqn asks for a sharding or its output has a
    non-trivial one; None otherwise."""
    requested = eqn.primitive.name in SHARDING_PRIMITIVES
    for var in eqn.outvars[:1]:
        sharding = eqn.params.get("sharding") if requested else None
        spec = getattr(sharding, "spec", None) if sharding is not None else None
        if spec is None:
            sharding = getattr(var.aval, "sharding", None)
            spec = getattr(sharding, "spec", None)
            if not requested and (
                spec is None or (all(p is None for p in _spec(spec)) and not _axes(spec, "unreduced"))
            ):
                return None
        return var, sharding, spec
    return None
