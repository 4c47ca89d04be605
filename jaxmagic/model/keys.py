"""Capture -> `kind: "keys"` document (docs/schema.md, "Keys documents"): the PRNG key tree.

The capture already holds the lineage (`Capture.keys`, parents first) and the reuse
findings; this adds what a reader needs to see it at a glance: runs, the chains a
`key, sub = split(key)` loop makes, folded into one step so a 1,000-step loop is one
node, and a summary.
"""

from __future__ import annotations

from typing import Any

from ..capture.record import Capture, KeyRecord, KeyUse
from ..schema.keys import VERSION
from ..units import plural
from .document import envelope, source_json

RUN_MIN = 4  # identical steps before a chain is folded into a run
MAX_NODES = 20_000  # nodes a document carries; the rest are counted in a note


def _use_json(use: KeyUse) -> dict:
    return {
        "kind": use.kind,
        "name": use.name,
        "consuming": use.consuming,
        "shape": list(use.shape) if use.shape is not None else None,
        "dtype": use.dtype,
        "times": use.times,
        "source": source_json(use.source),
        "via": use.via,
        "call": use.call,
        "function": use.function,
        "loop": use.loop,
        "branch": use.branch,
        "order": use.order,
    }


def _data_text(data: tuple[int, ...] | None) -> str | None:
    return None if data is None else " ".join(f"0x{w:08x}" for w in data)


def _node_json(r: KeyRecord, run: int | None) -> dict:
    return {
        "id": r.id,
        "parent": r.parent,
        "how": r.how,
        "label": r.label,
        "detail": r.detail,
        "shape": list(r.shape),
        "count": r.count,
        "index": r.index,
        "typed": r.typed,
        "impl": r.impl,
        "data": _data_text(r.data),
        "made": [source_json(m) for m in r.made],
        "call": r.call,
        "function": r.function,
        "loop": r.loop,
        "uses": [_use_json(u) for u in r.uses],
        "state": r.state,
        "names": list(r.names),
        "run": run,
    }


def _line(use: KeyUse) -> str:
    return f":{use.source.line}" if use.source else ""


def _uses_key(record: KeyRecord) -> tuple:
    return tuple(
        (u.kind, u.name, u.source.file if u.source else None, u.source.line if u.source else None, u.function, u.times)
        for u in record.uses
    )


def _step(k: KeyRecord, children: dict[int, list[KeyRecord]]) -> tuple | None:
    """One `key -> split -> (next key, used keys)` step from key k: (signature, nodes, next key)."""
    kids = children.get(k.id, [])
    if len(kids) != 1 or k.state == "reused":
        return None
    array = kids[0]
    if array.how != "split" or array.state == "reused":
        return None
    rows = children.get(array.id, [])
    going = [r for r in rows if children.get(r.id)]
    if len(going) != 1:
        return None
    nxt = going[0]
    rest = [r for r in rows if r is not nxt]
    if nxt.state == "reused" or any(r.state == "reused" for r in rest):
        return None
    signature = (
        k.how,
        _uses_key(k),
        array.label,
        array.function,
        nxt.index,
        tuple((r.how, r.label, r.state, _uses_key(r)) for r in rest),
    )
    return signature, [array, *rest], nxt


def _runs(records: list[KeyRecord]) -> tuple[list[dict], dict[int, int]]:
    """Fold chains of at least RUN_MIN identical steps; returns the runs and node id -> run id."""
    children: dict[int, list[KeyRecord]] = {}
    for r in records:
        if r.parent is not None:
            children.setdefault(r.parent, []).append(r)
    runs: list[dict] = []
    run_of: dict[int, int] = {}
    for k in records:
        if k.id in run_of:
            continue
        first = _step(k, children)
        if first is None:
            continue
        signature = first[0]
        steps: list[tuple[list[KeyRecord], KeyRecord]] = []
        cursor, step = k, first
        while step is not None and step[0] == signature:
            steps.append((step[1], step[2]))
            cursor = step[2]
            step = _step(cursor, children)
        if len(steps) < RUN_MIN:
            continue
        run_id = len(runs)
        members: list[KeyRecord] = []
        for i, (nodes, nxt) in enumerate(steps):
            members.extend(nodes)
            if i < len(steps) - 1:
                members.append(nxt)
        for m in members:
            run_of[m.id] = run_id
        last = steps[-1][1]
        runs.append(
            {
                "id": run_id,
                "first": steps[0][0][0].id,
                "last": last.id,
                "length": len(steps),
                "label": _run_label(k, steps[0][0]),
            }
        )
    return runs, run_of


def _run_label(k: KeyRecord, nodes: list[KeyRecord]) -> str:
    parts = [f"{u.name}{_line(u)}" for u in k.uses if u.consuming]
    used = [f"{u.name}{_line(u)}" for r in nodes[1:] for u in r.uses if u.consuming]
    where = f" in {nodes[0].function}" if nodes[0].function else ""
    text = " → ".join([" ".join(parts) or nodes[0].label, *(sorted(set(used)) or ["unused"])])
    return text + where


def _finding_json(f: Any, records: list[KeyRecord]) -> dict:
    node = records[f.key] if f.key is not None and f.key < len(records) else None
    sources = []
    if node is not None:
        if f.kind == "constant_key":
            sources = [source_json(m) for m in node.made]
        else:
            seen = set()
            for u in node.uses:
                if u.consuming and u.source is not None and (u.source.file, u.source.line, u.function) not in seen:
                    seen.add((u.source.file, u.source.line, u.function))
                    sources.append(source_json(u.source))
    elif f.source is not None:
        sources = [source_json(f.source)]
    return {"kind": f.kind, "severity": f.severity, "message": f.message, "node": f.key, "sources": sources}


def keys_document(capture: Capture) -> dict:
    """The key tree of a capture (docs/schema.md); every figure comes from the capture's record."""
    records = capture.keys
    notes: list[str] = []
    if len(records) > MAX_NODES:
        notes.append(f"{len(records) - MAX_NODES} more keys are not drawn (the first {MAX_NODES} are)")
        records = records[:MAX_NODES]
    runs, run_of = _runs(records)
    nodes = [_node_json(r, run_of.get(r.id)) for r in records]
    findings = [
        _finding_json(f, records)
        for f in capture.findings
        if f.kind in ("key_reuse", "loop_reuse", "constant_key") and (f.key is None or f.key < len(records))
    ]
    states = [r.state for r in records]
    programs = len(
        {u.call for r in records for u in r.uses if u.call is not None}
        | {r.call for r in records if r.call is not None}
    )
    summary = {
        "keys": len(records),
        "roots": sum(r.parent is None for r in records),
        "consumed": states.count("consumed"),
        "reused": states.count("reused"),
        "unused": states.count("unused"),
        "uses": sum(len(r.uses) for r in records),
        "programs": programs,
    }
    reused = summary["reused"]
    title = (
        f"%%prng — {plural(summary['keys'], 'key')} from {plural(summary['roots'], 'root')}"
        + (f", {reused} reused" if reused else ", no reuse")
        if records
        else "%%prng — no PRNG keys"
    )
    return envelope("keys", VERSION, title, capture, notes, summary=summary, nodes=nodes, runs=runs, findings=findings)
