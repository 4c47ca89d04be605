"""Replaying a capture's key events into the key tree: nodes identified by key data.

capture/keys/log.py collects the events while the cell runs (eager `jax.random` calls, jitted
calls whose programs handle keys, eager transforms) holding the key objects; this module reads
each object's data once and replays the events in order. A split registers its rows, so a
later key with the words of row 1 is that row; the same data is the same node whichever way it
came. Each program call instantiates its program's local key tree (capture/keys/flow.py) under
the keys it was given. `finish` counts consumption (whole-array uses consume every row, loop
carries count for the key passed in, cond branches are alternatives) and sets each key's state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...units import plural
from .. import jax_compat, source
from ..record import Finding, KeyRecord, KeyUse, SourceLocation
from . import flow as key_flow
from .findings import key_findings

MAX_NODES = 50_000  # nodes the lineage may grow to; past it, later program calls add none
MAX_ROWS = 100_000  # rows of one key array indexed by value (a split of a million keys stays fast)


@dataclass
class EagerOp:
    """An eager jax.random call."""

    order: int
    name: str
    kind: str
    key: Any  # the key argument (or seed / data for makers)
    out: Any
    extra: Any  # split's num or shape, fold_in's data, the seed
    where: tuple | None  # (file, line, function) of the user's line
    via: str | None


@dataclass
class ProgramCall:
    """A jitted call whose program handles keys."""

    order: int
    index: int | None  # None: a program JAX ran inside an eager op (`jax.random.split`)
    name: str | None  # None: a jax.random sampler's program, named by its use
    program: Any  # key_flow.ProgramKeys
    inputs: dict[int, Any]  # flat input index -> argument object
    outputs: dict[int, Any]  # flat output index -> result object
    source: SourceLocation | None


@dataclass
class _Node:
    record: KeyRecord
    words: Any = None  # uint32 words with keys on the leading axes, when known
    carried_to: int | None = None  # a loop body's carry out: the loop node it becomes


def _shape_of(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def _value(words: np.ndarray) -> tuple:
    """A hashable identity for key data: the shape and the words (key data is always uint32)."""
    return words.shape, words.tobytes()


class Lineage:
    """Replays the events into nodes identified by key data."""

    def __init__(self, seed_words: Callable[[int, str | None], Any]) -> None:
        self.seed_words = seed_words  # the data of key(seed), from JAX
        self.nodes: list[_Node] = []
        self.by_value: dict[tuple, int] = {}  # one key's data -> node
        self.by_array: dict[tuple, int] = {}  # a key array's data -> node
        self.pending: dict[tuple, tuple[int, int]] = {}  # a row's data -> (array node, row index)
        self.by_object: dict[int, int] = {}  # id(clone result) -> node: clones share data on purpose
        self.words: dict[int, Any] = {}  # id(object) -> (impl, words)
        self.locations: dict[tuple, SourceLocation | None] = {}
        self._branches: dict[int, tuple] = {}  # id(KeyUse) -> (call, cond path) for uses inside cond branches
        self._labels: dict[tuple, tuple[str, str]] = {}  # (program, key, function) -> (label, detail)
        self.notes: set[str] = set()
        self._named_inputs: dict[tuple, str] = {}  # key data -> namespace name bound before the cell

    # -- objects ---------------------------------------------------------------------------
    def data(self, obj: Any) -> tuple[str | None, Any]:
        got = self.words.get(id(obj))
        if got is None:
            got = self.words[id(obj)] = key_flow.key_words(obj)
        return got

    def where(self, raw: tuple | None) -> SourceLocation | None:
        if raw is None:
            return None
        if raw not in self.locations:
            self.locations[raw] = source.location(raw[0], raw[1], None, raw[2])
        return self.locations[raw]

    def new(self, how: str, parent: int | None, label: str, detail: str, **kw: Any) -> int:
        words = kw.pop("words", None)
        record = KeyRecord(id=len(self.nodes), parent=parent, how=how, label=label, detail=detail, **kw)
        self.nodes.append(_Node(record))
        if words is not None:
            self.register(record.id, words)
        return record.id

    def register(self, node: int, words: np.ndarray) -> None:
        """Index a node's data: one key by value, a key array by value and row by row."""
        n = self.nodes[node]
        n.words = words
        if words.ndim == 1:
            self.by_value.setdefault(_value(words), node)
            if n.record.data is None:
                n.record.data = tuple(int(w) for w in words)
            return
        if not words.size:
            return  # an empty key array holds no keys: indexing it would make every empty array one node
        self.by_array.setdefault(_value(words), node)
        flat = words.reshape(-1, words.shape[-1])
        if len(flat) > MAX_ROWS:
            self.notes.add(
                f"a key array of {len(flat)} keys has only its first {MAX_ROWS} rows told apart: a key "
                "taken from further in is drawn as a root"
            )
            flat = flat[:MAX_ROWS]
        for i, row in enumerate(flat):
            value = _value(row)
            if value not in self.by_value:
                self.pending.setdefault(value, (node, i))

    def for_value(self, words: np.ndarray) -> int | None:
        value = _value(words)
        node = self.by_value.get(value)
        if node is None and value in self.pending:
            array, index = self.pending.pop(value)
            node = self.row(array, index, words)
        return node

    def row(self, array: int, index: int | None, words: Any = None, **kw: Any) -> int:
        parent = self.nodes[array].record
        label = f"[{index}]" if index is not None else "[?]"
        detail = (
            f"row {index} of {parent.label}" if index is not None else f"a row of {parent.label} picked at run time"
        )
        return self.new(
            "row", array, label, detail, index=index, typed=parent.typed, impl=parent.impl, words=words, **kw
        )

    def nodes_of(self, obj: Any, default_how: str = "input") -> list[int]:
        """The node(s) an argument object stands for, made as a root when its data is new."""
        if id(obj) in self.by_object:
            return [self.by_object[id(obj)]]
        impl, words = self.data(obj)
        typed = impl is not None
        if words is None:
            return [self.new(default_how, None, "key", "a key whose data could not be read", typed=typed or None)]
        if words.ndim == 1:
            node = self.for_value(words)
            if node is None:
                node = self.new(default_how, None, *self._input_text(words), typed=typed, impl=impl, words=words)
            return [node]
        whole = self.by_array.get(_value(words))
        if whole is not None:
            return [whole]
        flat = words.reshape(-1, words.shape[-1])
        rows = [self.for_value(row) for row in flat]
        if all(r is None for r in rows):
            name = self._named_inputs.get(_value(words))
            return [
                self.new(
                    default_how,
                    None,
                    name or plural(len(flat), "key"),
                    f"`{name}`, bound before the cell" if name else _INPUT_DETAIL,
                    shape=tuple(words.shape[:-1]),
                    typed=typed,
                    impl=impl,
                    words=words,
                )
            ]
        return [
            r
            if r is not None
            else self.new(default_how, None, *self._input_text(row), typed=typed, impl=impl, words=row)
            for r, row in zip(rows, flat)
        ]

    def _input_text(self, words: np.ndarray) -> tuple[str, str]:
        """Label and detail of a key first seen as an argument: its name when it was bound before the cell."""
        name = self._named_inputs.get(_value(words))
        if name is not None:
            return name, f"`{name}`, bound before the cell"
        return _input_label(words), _INPUT_DETAIL

    def use(self, nodes: list[int], use: KeyUse) -> None:
        for node in nodes:
            self.nodes[node].record.uses.append(use)

    # -- eager calls --------------------------------------------------------------------------
    def op(self, op: EagerOp) -> None:
        """One eager `jax.random` call: a new key node, a use of its key, or both."""
        where = self.where(op.where)
        made = [where] if where else []
        if op.kind == "seed":
            self.seeded(op, made)
            return
        if op.kind == "wrap":
            self.wrapped(op, where, made)
            return
        parents = self.nodes_of(op.key)
        if op.kind == "sampler":
            self.use(
                parents,
                KeyUse(
                    "sampler",
                    op.name,
                    True,
                    shape=_shape_of(op.out),
                    dtype=_dtype(op.out),
                    source=where,
                    via=op.via,
                    order=op.order,
                ),
            )
            return
        consuming = op.kind == "split"
        self.use(parents, KeyUse(op.kind, op.name, consuming, source=where, via=op.via, order=op.order))
        if op.kind == "data":
            return
        self.derived(op, parents, made)

    def seeded(self, op: EagerOp, made: list) -> None:
        """A key made from a seed; the same key data seeded again is the same node, made more than once."""
        impl, words = self.data(op.out)
        node = self.for_value(words) if words is not None and words.ndim == 1 else None
        label = f"{op.name}({op.extra})" if op.extra is not None else f"{op.name}(…)"
        if node is not None and self.nodes[node].record.how in ("seed", "input"):
            record = self.nodes[node].record
            record.made.extend(made)
            if record.how == "input":
                record.how, record.label, record.detail = "seed", label, _seed_detail(op)
            elif len(record.made) > 1:
                record.detail = f"{record.detail}; the same key data was made {len(record.made)} times"
            return
        self.new(
            "seed",
            None,
            label,
            _seed_detail(op),
            shape=(_shape_of(op.out) or ())[: max(0, words.ndim - 1)] if words is not None else (),
            typed=impl is not None,
            impl=impl,
            words=words,
            made=made,
        )

    def wrapped(self, op: EagerOp, where: Any, made: list) -> None:
        """Key data wrapped as a key: a use of the key it came from when that is known, else a new root."""
        impl, words = self.data(op.out)
        known = self.for_value(words) if words is not None and words.ndim == 1 else None
        if known is not None:
            self.use([known], KeyUse("wrap", op.name, False, source=where, via=op.via, order=op.order))
            return
        self.new(
            "wrap",
            None,
            "wrap_key_data",
            "jax.random.wrap_key_data of data not seen as a key before",
            shape=tuple(words.shape[:-1]) if words is not None else (),
            typed=True,
            impl=impl,
            words=words,
            made=made,
        )

    def derived(self, op: EagerOp, parents: list, made: list) -> None:
        """A key derived from `parents[0]` (split, fold_in, clone); the same derivation twice is one node."""
        impl, words = self.data(op.out)
        parent = self.nodes[parents[0]].record
        impl = impl or parent.impl
        shape = tuple(words.shape[:-1]) if words is not None else ()
        if op.kind == "split":
            label, detail = (
                f"split {op.extra if isinstance(op.extra, int) else '×'.join(map(str, shape))}",
                f"jax.random.split({parent.label}, {op.extra})",
            )
        elif op.kind == "fold_in":
            label = f"fold_in {op.extra}" if op.extra is not None else "fold_in"
            detail = f"jax.random.fold_in({parent.label}, {op.extra if op.extra is not None else 'data'})"
        else:
            label, detail = "clone", f"jax.random.clone({parent.label}): a copy JAX's reuse checker lets you use again"
        if op.kind != "clone" and words is not None:
            same = self.by_array.get(_value(words)) if words.ndim > 1 else self.by_value.get(_value(words))
            if same is not None:  # the same derivation again (split or fold_in of one key twice): one node
                self.nodes[same].record.made.extend(made)
                return
        node = self.new(
            op.kind,
            parents[0],
            label,
            detail,
            shape=shape,
            typed=parent.typed,
            impl=impl,
            words=None if op.kind == "clone" else words,
            made=made,
        )
        if op.kind == "clone":
            self.by_object[id(op.out)] = node
            if words is not None and words.ndim == 1:
                self.nodes[node].record.data = tuple(int(w) for w in words)

    # -- jitted calls ------------------------------------------------------------------------
    def call(self, call: ProgramCall) -> None:
        program = call.program
        local_to_global: dict[int, list[int]] = {}
        for key in key_flow.iter_keys(program):
            local_to_global[key.id] = self.program_node(call, key, local_to_global)
        for use in program.uses:
            key = program.keys[use.key]
            nodes = local_to_global.get(use.key)
            if not nodes:
                continue
            loop = program.loops[use.level[-1]].label if use.level else None
            if loop and use.part:
                loop = f"{loop} {use.part}"  # "while condition"
            branch = f"cond branch {use.branch[-1][1] + 1} of {use.branch[-1][2]}" if use.branch else None
            self.use(
                nodes,
                KeyUse(
                    use.kind,
                    use.name,
                    use.consuming,
                    shape=use.shape,
                    dtype=use.dtype,
                    times=key_flow.repeats(program, use, key),
                    source=use.source,
                    via=use.via,
                    call=call.index,
                    function=call.name,
                    loop=loop,
                    branch=branch,
                    order=call.order,
                ),
            )
            if use.branch:
                self._branches.setdefault(id(self.nodes[nodes[0]].record.uses[-1]), (call.order, use.branch))
        for index, obj in call.outputs.items():
            nodes = local_to_global.get(program.outputs[index])
            impl, words = self.data(obj)
            if nodes and len(nodes) == 1 and words is not None and self.nodes[nodes[0]].words is None:
                self.register(nodes[0], words)

    def program_node(self, call: ProgramCall, key: Any, mapped: dict[int, list[int]]) -> list[int]:
        where = [key.source] if key.source else []
        if key.how == "input":
            obj = call.inputs.get(key.input)
            if obj is not None:
                return self.nodes_of(obj)
            return [self.new("input", None, "key", f"an argument of {call.name}", typed=key.typed, made=where)]
        if key.how == "constant":
            words = key.constant
            node = self.for_value(words) if words is not None and np.ndim(words) == 1 else None
            if node is None:
                node = self.new(
                    "constant",
                    None,
                    "constant key",
                    f"a key {call.name} captured as a constant when it was traced",
                    typed=True,
                    impl=key.impl,
                    words=words,
                    made=[call.source] if call.source else [],
                )
            return [node]
        if key.how == "seed" and key.data is not None and not key.level:
            words = self.seed_words(key.data, key.impl)
            if words is not None:
                node = self.for_value(words)
                if node is not None:
                    self.nodes[node].record.made.extend(where)
                    return [node]
                return [
                    self.new(
                        "seed",
                        None,
                        f"key({key.data})",
                        f"jax.random.key({key.data}) inside {call.name}",
                        typed=key.typed,
                        impl=key.impl,
                        words=words,
                        made=where,
                        call=call.index,
                        function=call.name,
                    )
                ]
        parents = mapped.get(key.parent) if key.parent is not None else None
        parent = parents[0] if parents else None
        count = 1
        for loop in key.level:
            length = call.program.loops[loop].length
            count = None if length is None or count is None else count * length
        loop = call.program.loops[key.level[-1]].label if key.level else None
        if key.how == "row" and parent is not None and key.index is not None and not key.level:
            pnode = self.nodes[parent]
            if pnode.words is not None and pnode.words.ndim >= 2:
                flat = pnode.words.reshape(-1, pnode.words.shape[-1])
                if key.index < len(flat):
                    node = self.for_value(flat[key.index])
                    if node is not None:
                        return [node]
        made_as = (id(call.program), key.id, call.name)
        if made_as not in self._labels:  # the same for every call of a program
            self._labels[made_as] = _program_label(key, call, loop)
        label, detail = self._labels[made_as]
        node = self.new(
            key.how,
            parent,
            label,
            detail,
            shape=key.shape,
            count=count,
            index=key.index,
            typed=key.typed,
            impl=key.impl,
            made=where,
            call=call.index,
            function=call.name,
            loop=loop,
        )
        if key.carried is not None and mapped.get(key.carried):
            self.nodes[node].carried_to = mapped[key.carried][0]
            self.nodes[node].record.detail += "; it becomes the next iteration's carried key"
        return [node]

    # -- namespace names ------------------------------------------------------------------------
    def names_before(self, named: list[tuple[str, Any]]) -> None:
        """Keys bound before the cell: a root first seen as an argument is called by its name."""
        self._named_inputs = {}
        for name, obj in named:
            _, words = self.data(obj)
            if words is not None:
                self._named_inputs.setdefault(_value(words), name)

    def names_after(self, named: list[tuple[str, Any]]) -> None:
        """Keys the cell leaves bound to names: each node they are gets the name."""
        for name, obj in named:
            _, words = self.data(obj)
            if words is None:
                continue
            node = self.by_array.get(_value(words)) if words.ndim > 1 else self.by_value.get(_value(words))
            if node is None and words.ndim == 1 and _value(words) in self.pending:
                node = self.for_value(words)
            if node is not None and name not in self.nodes[node].record.names:
                self.nodes[node].record.names.append(name)

    # -- the result ----------------------------------------------------------------------------
    def finish(self) -> tuple[list[KeyRecord], list[Finding]]:
        for node in self.nodes:
            node.words = None
            # A zero-length key array holds no keys: a use of it (vmap over an empty batch) consumes none.
            node.record.consumed = 0 if _empty(node.record.shape) else self._own(node.record)
        # whole-array uses consume every row taken from the array
        for node in self.nodes:
            record = node.record
            parent = record.parent
            total = record.consumed
            while parent is not None and record.how == "row":
                inherited = self.nodes[parent].record
                if inherited.how == "row" or inherited.shape:
                    total = _add(total, self.nodes[parent].record.consumed if inherited.uses else 0)
                if inherited.how != "row":
                    break
                parent = inherited.parent
            record.consumed = total
        for node in self.nodes:
            # The loop node stands for the key carried into each iteration: the first is the key passed
            # in, and every carry out is the next iteration's key.
            if node.record.how == "loop" and node.record.parent is not None:
                parent = self.nodes[node.record.parent].record
                parent.consumed = _add(parent.consumed, node.record.consumed)
            if node.carried_to is not None:
                node.record.consumed = self.nodes[node.carried_to].record.consumed
        for node in self.nodes:
            c = node.record.consumed
            node.record.state = "reused" if c is None or c > 1 else "consumed" if c == 1 else "unused"
        records = _preorder([n.record for n in self.nodes])
        return records, key_findings(records)

    def _own(self, record: KeyRecord) -> int | None:
        """Consuming uses of this node; cond branches of one call count as alternatives."""
        total: int | None = 0
        alternatives: dict[tuple, dict[int, int | None]] = {}
        for use in record.uses:
            if not use.consuming:
                continue
            times = use.times
            branch = self._branches.get(id(use))
            if branch is not None:
                call, path = branch
                outer = path[0]
                group = alternatives.setdefault((call, outer[0]), {})
                group[outer[1]] = _add(group.get(outer[1], 0), times)
                continue
            total = _add(total, times)
        for group in alternatives.values():
            counts = [v for v in group.values() if v is not None]
            most = max(counts) if len(counts) == len(group) else None  # one branch unknown: all unknown
            total = _add(total, most)
        return total


def _empty(shape: tuple[int, ...] | None) -> bool:
    """A key array with a zero-length axis: no keys in it, so nothing to consume."""
    return bool(shape) and 0 in shape


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


_INPUT_DETAIL = "first seen as an argument: made before the cell, or by code jaxmagic does not see"


def _input_label(words: np.ndarray) -> str:
    return "key " + ":".join(f"{int(w):x}" for w in words[-2:])


def _seed_detail(op: EagerOp) -> str:
    return f"jax.random.{op.name}({op.extra if op.extra is not None else '…'})"


def _dtype(value: Any) -> str | None:
    dtype = getattr(value, "dtype", None)
    return None if dtype is None else jax_compat.short_dtype(dtype)


def _program_label(key: Any, call: ProgramCall, loop: str | None) -> tuple[str, str]:
    inside = (f"inside {call.name}" if call.name else "in an eager transform") + (f", {loop}" if loop else "")
    if key.how == "split":
        n = "×".join(map(str, key.shape)) or "1"
        return f"split {n}", f"split {inside}"
    if key.how == "row":
        return (
            f"[{key.index}]" if key.index is not None else "[?]",
            (f"row {key.index}" if key.index is not None else "a row picked at run time") + f" {inside}",
        )
    if key.how == "fold_in":
        return (f"fold_in {key.data}" if key.data is not None else "fold_in"), f"fold_in {inside}"
    if key.how == "seed":
        return (f"key({key.data})" if key.data is not None else "key(…)"), f"a key seeded {inside}"
    if key.how == "loop":
        return loop or "loop", f"the key carried through {loop or 'a loop'}: one per iteration, {inside}"
    if key.how == "loop_out":
        return f"after {loop or 'loop'}", f"the key the loop hands back after its last iteration, {inside}"
    if key.how == "wrap":
        return "wrap", f"key data wrapped as a key {inside}"
    if key.how == "clone":
        return "clone", f"clone {inside}"
    return "key", f"a key chosen at run time {inside}"


def _preorder(records: list[KeyRecord]) -> list[KeyRecord]:
    """Parents before children, each root's tree together; ids renumbered to positions."""
    children: dict[int | None, list[KeyRecord]] = {}
    for r in records:
        children.setdefault(r.parent, []).append(r)
    ordered: list[KeyRecord] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        r = stack.pop()
        ordered.append(r)
        stack.extend(reversed(children.get(r.id, [])))
    new_id = {r.id: i for i, r in enumerate(ordered)}
    for r in ordered:
        r.id = new_id[r.id]
        r.parent = None if r.parent is None else new_id[r.parent]
    return ordered
