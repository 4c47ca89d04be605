"""Repeated structure in a graph: the layers of a model, found without names.

A 46-layer transformer written as a Python loop is 46 copies of the same eqns; a deep
MLP without name scopes is one flat run of thousands of eqns that repeats every 14.
Showing each copy is noise; showing "46 identical blocks" (expandable) is the
structure the user wrote. A *repeat* is a run of >= 2 consecutive, structurally
identical units among the items (eqns and scope boxes) of one container (a group,
or a name-scope box inside it). Identity is structural: the same primitives, params,
avals and literals, recursively through sub-jaxprs and nested scopes, and the same
wiring inside the unit; never names of the unit itself (layer_0 vs layer_1).

Works on a built function document (docs/schema.md), so it needs no JAX objects.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..units import plural

MAX_PERIOD = 400  # items per unit searched for; a layer rarely has more top-level items
MIN_UNIT_EQNS = 4  # a unit must hold at least this many eqns, or the run this many units...
MIN_SMALL_UNITS = 4
MIN_RUN_EQNS = 16  # ...and the whole run at least this many eqns, to be worth a box

_JAXPR_REF = re.compile(r"<jaxpr [^>]*>")


class _Item:
    """One item of a container: an eqn (with its sub-jaxprs) or a scope box.

    A scope box is one contiguous run of eqns under a name: the same name entered again
    later (the `vmap(…)` of the next block's einsum) is another box, as it is in the view.
    `box` is the box's container key, `name` its scope name; both None for an eqn.
    """

    __slots__ = ("key", "start", "stop", "box", "name")

    def __init__(self, key: Any, start: int, stop: int, box: tuple | None = None, name: str | None = None):
        self.key = key
        self.start, self.stop = start, stop
        self.box = box
        self.name = name


def _node_spans(fn: dict) -> list[int]:
    """Exclusive end index of each node's subtree (the node plus its sub-jaxprs' nodes)."""
    n_eqns = {g["id"]: g["n_eqns"] for g in fn["groups"]}
    return [
        i + 1 + sum(n_eqns.get(g, 0) for g in node["subgroups"]) if node["subgroups"] else i + 1
        for i, node in enumerate(fn["nodes"])
    ]


class _Hasher:
    """Structural hashes of nodes, groups and scope boxes, bottom-up.

    A box's hash is kept once made: the box is an item of its parent container and of no
    other, but each container up the scope path would otherwise hash everything inside it again
    (a 46-layer model nested five deep hashed each eqn five times)."""

    def __init__(self, fn: dict):
        self.fn = fn
        self.avals = {v["id"]: v["aval"] for v in fn["vars"]}  # var id -> its type text
        self.groups = {g["id"]: g for g in fn["groups"]}
        self.node_hash: list[int] = [0] * len(fn["nodes"])
        self.group_hash: dict[str, int] = {}
        self.box_hash: dict[tuple, int] = {}
        # Per node: its group and the var ids it reads (the wiring of a unit);
        # each node output's rank among its group's node outputs, in document order, and each node's
        # count of those before it: a var's position within a sequence is its rank minus the
        # sequence's first node's count, so a box never walks the nodes of the boxes inside it.
        nodes = fn["nodes"]
        self.by_group: dict[str, list[int]] = {}
        self.node_group: list[str] = []
        self.node_reads: list[list[str]] = []
        self.rank: dict[str, tuple[str, int]] = {}
        self.outs_before: list[int] = []
        made: dict[str, int] = {}
        rank = self.rank
        for i, node in enumerate(nodes):  # one pass: a 10k-eqn graph has 10k nodes to read
            group, outs = node["group"], node["outs"]
            self.by_group.setdefault(group, []).append(i)
            self.node_group.append(group)
            self.node_reads.append([op["var"] for op in node["ins"] if "var" in op])
            count = made.get(group, 0)
            self.outs_before.append(count)
            for v in outs:
                rank[v] = (group, count)
                count += 1
            made[group] = count
        self.box_outside: dict[tuple, list[str]] = {}  # box -> the vars its nodes read from before it
        for i in range(len(fn["nodes"]) - 1, -1, -1):  # sub-jaxpr nodes come after their owner
            self.node_hash[i] = self._node(i)

    def _node(self, i: int) -> int:
        node = self.fn["nodes"][i]
        params = tuple(
            sorted([(k, _JAXPR_REF.sub("<jaxpr>", v) if "<jaxpr" in v else v) for k, v in node["params"].items()])
        )
        subs = tuple([self._group(g) for g in node["subgroups"]]) if node["subgroups"] else ()
        avals = self.avals  # inputs by type alone: the node's hash knows nothing of its neighbours
        ins = tuple(
            [
                ("ext", avals.get(op["var"], "?")) if "var" in op else ("lit", op.get("lit"), op.get("aval"))
                for op in node["ins"]
            ]
        )
        outs = tuple([avals[v] for v in node["outs"] if v in avals])
        return hash((node["prim"], params, ins, outs, subs))

    def _group(self, gid: str) -> int:
        if gid in self.group_hash:
            return self.group_hash[gid]
        group = self.groups[gid]
        avals = tuple(self.avals[v] for v in group["constvars"] + group["invars"] if v in self.avals)
        nodes = tuple(self.node_hash[i] for i in self.by_group.get(gid, []))
        h = hash((avals, nodes, len(group["outvars"])))
        self.group_hash[gid] = h
        return h

    def items_hash(self, items: list[_Item], inner: dict[tuple, list[_Item]], scope_prefix: tuple) -> int:
        """Hash of a sequence of items with its internal wiring: each read of a var defined in the
        sequence by the var's position among the sequence's definitions, of one from before it as -1.

        A box item stands for its own wiring (in its hash); only its reads from before it are
        placed here (`box_outside`), so each read is looked at once per box it leaves, not once per
        box around it. `scope_prefix` is the box whose items these are."""
        parts: list[Any] = []
        outside: list[str] = []
        if items:
            rank, node_reads = self.rank, self.node_reads
            group = self.node_group[items[0].start]
            base = self.outs_before[items[0].start]
            for item in items:
                parts.append(self.item_hash(item, inner, scope_prefix))
                reads = node_reads[item.start] if item.box is None else self.box_outside[item.box]
                if not reads:
                    parts.append(())
                    continue
                placed = []
                for v in reads:
                    r = rank.get(v)
                    if r is not None and r[1] >= base and r[0] == group:
                        placed.append(r[1] - base)
                    else:
                        placed.append(-1)
                        outside.append(v)
                parts.append(tuple(placed))
        self.box_outside[scope_prefix] = outside
        return hash(tuple(parts))

    def item_hash(self, item: _Item, inner: dict[tuple, list[_Item]], scope_prefix: tuple) -> int:
        if item.box is None:
            return self.node_hash[item.start]
        h = self.box_hash.get(item.box)
        if h is None:
            children = inner.get(item.box, [])
            h = self.box_hash[item.box] = hash(("scope", self.items_hash(children, inner, item.box)))
        return h  # never its name: layer_0 ≡ layer_1


def _containers(fn: dict, spans: list[int]) -> tuple[dict[tuple, list[_Item]], dict[tuple, list[str]]]:
    """Items of every container in document order, and each container's scope path (names).

    Keys are (group id, name, occurrence, name, occurrence, ...): a name entered again after
    other items of its container is a new box, so a key's length grows with its depth.
    """
    containers: dict[tuple, list[_Item]] = {}
    paths: dict[tuple, list[str]] = {}
    group_nodes: dict[str, list[int]] = {}
    for i, node in enumerate(fn["nodes"]):
        group_nodes.setdefault(node["group"], []).append(i)
    for gid, members in group_nodes.items():
        containers[(gid,)], paths[(gid,)] = [], []
        opened: Counter = Counter()  # (container, name) -> boxes of that name made in it
        last_scope: list[str] | None = None
        open_boxes: list[_Item] = []  # the boxes the previous node of the group went through
        last_container: tuple = (gid,)  # the innermost of them (the group itself when none)
        for i in members:
            node, stop = fn["nodes"][i], spans[i]
            scope = node["scope"]
            if scope == last_scope:  # the same boxes, all still open: a layer's eqns share a scope
                for tail in open_boxes:
                    tail.stop = stop
                containers[last_container].append(_Item(node["id"], i, stop))
                continue
            container = (gid,)
            open_boxes = []
            for name in scope:
                siblings = containers[container]
                tail = siblings[-1] if siblings else None
                if tail is not None and tail.box is not None and tail.name == name:
                    tail.stop = stop  # the box is still open
                    box = tail.box
                else:
                    box = (*container, name, opened[container, name])
                    opened[container, name] += 1
                    tail = _Item(box, i, stop, box, name)
                    siblings.append(tail)
                    containers[box], paths[box] = [], [*paths[container], name]
                open_boxes.append(tail)
                container = box
            last_scope, last_container = scope, container
            containers[container].append(_Item(node["id"], i, stop))
    return containers, paths


def _runs(hashes: list[int], sizes: list[int]) -> Iterable[tuple[int, int, int]]:
    """(start, period, count) of maximal repeated runs, greedy left to right.

    At each position only periods to later occurrences of the same hash are tried, so
    sequences without repeats cost about one dict lookup per item.
    """
    n = len(hashes)
    occurrences: dict[int, list[int]] = {}
    for i, h in enumerate(hashes):
        occurrences.setdefault(h, []).append(i)
    position = {}
    for h, idx in occurrences.items():  # noqa: B007
        for k, i in enumerate(idx):
            position[i] = k
    i = 0
    while i < n:
        best = (0, 0, 0)  # covered eqns, period, count
        later = occurrences[hashes[i]]
        for j in later[position[i] + 1 :]:
            p = j - i
            if p > MAX_PERIOD or i + 2 * p > n:
                break
            if hashes[i : i + p] != hashes[j : j + p]:
                continue
            count = 2
            while i + (count + 1) * p <= n and hashes[i + count * p : i + (count + 1) * p] == hashes[i : i + p]:
                count += 1
            unit_eqns = sum(sizes[i : i + p])
            covered = unit_eqns * count
            big_enough = covered >= MIN_RUN_EQNS and (unit_eqns >= MIN_UNIT_EQNS or count >= MIN_SMALL_UNITS)
            if big_enough and covered > best[0]:  # ties keep the smaller period: one layer per unit
                best = (covered, p, count)
        if best[0]:
            yield i, best[1], best[2]
            i += best[1] * best[2]
        else:
            i += 1


def find_repeats(fn: dict) -> list[dict]:
    """The `repeats` of a function document (docs/schema.md), outermost containers first."""
    if not fn.get("nodes"):
        return []
    spans = _node_spans(fn)
    containers, paths = _containers(fn, spans)
    hasher = _Hasher(fn)
    repeats: list[dict] = []
    for key in sorted(containers, key=len):
        items = containers[key]
        if len(items) < 2:
            continue
        hashes = [hasher.item_hash(item, containers, key) for item in items]
        sizes = [item.stop - item.start for item in items]
        for start, period, count in _runs(hashes, sizes):
            units = [
                [items[start + u * period].start, items[start + u * period + period - 1].stop] for u in range(count)
            ]
            first, last = items[start], items[start + period * count - 1]
            label = _label(first, last, period, count, units[0][1] - units[0][0])
            repeats.append(
                {"id": f"r{len(repeats)}", "group": key[0], "scope": paths[key], "units": units, "label": label}
            )
    return repeats


def _label(first: _Item, last: _Item, period: int, count: int, eqns: int) -> str:
    if period == 1 and first.box is not None:
        return f"{count} identical blocks {first.name} … {last.name} ({plural(eqns, 'eqn')} each)"
    return f"{count} identical blocks of {plural(period, 'item')} ({plural(eqns, 'eqn')} each)"
