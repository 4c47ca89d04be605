"""Capture -> sharding document (kind "sharding", docs/schema.md): where every array lives, what
each jitted call expected and produced, and the communication the compiler inserted.

Meshes are deduplicated by (axis names, shape, device ids) and referenced by id. Arrays carry
their blocks (distinct index ranges with every holder), so a replicated array over 256 devices
is one block with 256 holders and the front end never needs one element per array element.
Jitted calls are read from their recorded stages: `compiled.input_shardings` /
`output_shardings`, collectives parsed from `compiled.as_text()`, the shardings written into
the lowered program (Shardy or GSPMD attributes), and the shard_map bodies of the jaxpr.

Pure functions of a `Capture`: no IPython, no widgets; the result is plain JSON.
"""

from __future__ import annotations

import math
from typing import Any

import jax

from ..capture import jax_compat
from ..capture.prefetch import PREFETCH
from ..capture.record import Artifacts, Capture, JitCall
from ..capture.sharding import arrays as placement
from ..capture.sharding import collectives as hlo
from ..schema.sharding import VERSION
from ..units import bytes_text, plural
from . import findings, folding
from .device_colors import device_colors
from .document import envelope, source_json
from .graph import _function_entries

REPLICATED_BYTES = 1 << 20  # a fully replicated array this big on several devices is a finding
ALL_GATHER_BYTES = 1 << 20  # an all-gather producing this much per device is a finding
MAX_CALLS = 1_000  # functions (per signature) a document details; the rest are counted in a note


def _unshown_note(rest: list) -> list[str]:
    """A note counting the functions past MAX_CALLS (a loop that jits thousands), by name."""
    if not rest:
        return []
    names: dict[str, int] = {}
    for entry in rest:
        names[entry.first.name] = names.get(entry.first.name, 0) + 1
    top = sorted(names.items(), key=lambda kv: -kv[1])[:8]
    return [
        f"{plural(len(rest), 'more jitted function')} (by signature) not detailed here: the view details "
        f"the first {MAX_CALLS:,}: "
        + ", ".join(f"{name} ×{n:,}" for name, n in top)
        + ("" if len(names) <= 8 else f" and {plural(len(names) - 8, 'more name')}")
    ]


def sharding_document(capture: Capture) -> dict:
    notes: list[str] = []
    meshes = _Meshes()
    for record in capture.meshes:
        meshes.id_of(record)
    arrays = [_array(f"a{i}", a, meshes) for i, a in enumerate(_story_order(capture.arrays))]
    calls = []
    entries = [
        e for e in folding.fold(_function_entries(capture)[0], capture.wrappers) if e.first.artifacts is not None
    ]
    for entry in entries[:MAX_CALLS]:
        first = entry.first
        try:
            calls.append(_call(f"c{len(calls)}", first, entry.calls, meshes, notes))
        except Exception as exc:  # one call we cannot read costs that call, with a note
            notes.append(f"{first.name}: shardings not read: {type(exc).__name__}: {exc}")
            continue
        if entry.n_wrappers > 1:  # jit wrappers of one definition, signature and program
            calls[-1]["wrappers"] = entry.n_wrappers
    notes.extend(_unshown_note(entries[MAX_CALLS:]))
    devices = sorted(
        {d for m in meshes.records for d in m["devices"] or ()} | {d for a in arrays for d in a["sharding"]["devices"]}
    )
    own = _findings(arrays, calls)
    findings.publish(capture, own, "sharding")  # one list: model/findings.py
    found = own + [
        {**findings.finding_json(f), "array": None, "call": None, "collective": None} for f in findings.general(capture)
    ]
    n_dev = len(devices)
    if arrays or calls:
        own = sum(not a["earlier"] for a in arrays)  # the title is about this cell; its view's last row, the rest
        title = (
            f"%%sharding: {plural(own, 'array')} on {plural(n_dev, 'device')}, "
            f"{plural(len(meshes.records), 'mesh')}, {plural(len(calls), 'jitted function')}"
        )
    else:
        title = "%%sharding: no arrays and no jitted calls were recorded in this cell"
    info = {int(d[0]): {"id": int(d[0]), "platform": d[1], "kind": d[2]} for d in capture.devices}
    colors = device_colors(meshes.records, devices)  # one colour per device for every view
    return envelope(
        "sharding",
        VERSION,
        title,
        capture,
        notes,
        devices=[
            {**info.get(d, {"id": d, "platform": capture.backend, "kind": None}), "color": colors[d]} for d in devices
        ],
        meshes=meshes.records,
        arrays=arrays,
        calls=calls,
        findings=found,
    )


def _story_order(arrays: list[placement.ArrayRecord]) -> list[placement.ArrayRecord]:
    """This cell's arrays first (those it bound, then the outputs of its calls in call order), the
    ones earlier cells left last: the order the view, the static page and playback show them."""
    return sorted(arrays, key=lambda a: (a.earlier, a.call is not None, a.call or 0))


class _Meshes:
    """Meshes by identity of content (axis names, shape, devices, axis types); an abstract mesh
    matching a concrete one is that one. The first record of a mesh that the namespace names, or
    that was set with `jax.set_mesh`, gives it `names` and `context` (capture records come first)."""

    def __init__(self) -> None:
        self.records: list[dict] = []
        self._ids: dict[tuple, str] = {}

    def id_of(self, mesh: placement.MeshRecord | None) -> str | None:
        if mesh is None:
            return None
        if mesh.abstract:
            for record in self.records:
                if (
                    record["axis_names"] == list(mesh.axis_names)
                    and record["shape"] == list(mesh.shape)
                    and (not mesh.axis_types or record["axis_types"] == list(mesh.axis_types))
                ):
                    self._name(record, mesh)
                    return record["id"]
        key = mesh.key
        if key not in self._ids:
            mid = self._ids[key] = f"m{len(self.records)}"
            self.records.append(
                {
                    "id": mid,
                    "axis_names": list(mesh.axis_names),
                    "shape": list(mesh.shape),
                    "axis_types": list(mesh.axis_types),
                    "devices": list(mesh.device_ids) if not mesh.abstract else None,
                    "abstract": mesh.abstract,
                    "names": [],
                    "context": False,
                }
            )
        record = self.records[int(self._ids[key][1:])]
        self._name(record, mesh)
        return record["id"]

    @staticmethod
    def _name(record: dict, mesh: placement.MeshRecord) -> None:
        record["names"].extend(n for n in mesh.names if n not in record["names"])
        record["context"] = record["context"] or mesh.context


def _sharding(s: placement.ShardingRecord, meshes: _Meshes) -> dict:
    return {
        "kind": s.kind,
        "text": s.text,
        "mesh": meshes.id_of(s.mesh),
        "spec": None if s.spec is None else [list(e) if isinstance(e, tuple) else e for e in s.spec],
        "memory_kind": s.memory_kind,
        "devices": list(s.device_ids),
        "fully_replicated": s.fully_replicated,
        "unreduced": list(s.unreduced),
        "reduced": list(s.reduced),
    }


def _partial_sums(a: placement.ArrayRecord) -> int:
    """How many devices hold partial sums of each block (the product of the unreduced axes' sizes; 1 for none)."""
    mesh = a.sharding.mesh
    sizes = dict(zip(mesh.axis_names, mesh.shape)) if mesh is not None else {}
    return math.prod(sizes.get(axis, 1) for axis in a.sharding.unreduced)


def _unreduced_note(a: placement.ArrayRecord) -> str | None:
    """What an array with unreduced axes is: JAX cannot index it, and its shards are partial sums."""
    axes = a.sharding.unreduced
    if not axes:
        return None
    which = f"mesh axis {axes[0]}" if len(axes) == 1 else "mesh axes " + ", ".join(axes)
    return (
        f"JAX cannot index {a.name or 'this array'}: it is unreduced over {which}, so the devices along "
        f"{'it' if len(axes) == 1 else 'them'} hold partial sums of each block, not copies, and its value is "
        "their sum. jax.sharding.reshard to a spec without unreduced (or a jitted function's out_sharding) "
        "adds them up."
    )


def _array(aid: str, a: placement.ArrayRecord, meshes: _Meshes) -> dict:
    blocks = [
        {"index": [list(r) for r in b.index], "devices": list(b.devices), "replicas": list(b.replicas)}
        for b in a.blocks
    ]
    itemsize = a.nbytes // max(1, math.prod(a.shape)) if a.shape else a.nbytes
    per_device: dict[int, int] = {}
    for b in a.blocks:
        size = math.prod(stop - start for start, stop in b.index) * itemsize if b.index else a.nbytes
        for d in b.devices:
            per_device[d] = per_device.get(d, 0) + size
    return {
        "id": aid,
        "name": a.name,
        "origin": a.origin,
        "earlier": a.earlier,
        "call": a.call,
        "shape": list(a.shape),
        "dtype": a.dtype,
        "bytes": a.nbytes,
        "sharding": _sharding(a.sharding, meshes),
        "blocks": blocks,
        "bytes_per_device": {str(d): n for d, n in sorted(per_device.items())},
        "replication": max((len(b.devices) for b in a.blocks), default=0) // _partial_sums(a),
        "partial_sums": _partial_sums(a),
        "note": _unreduced_note(a),
        "addressable": a.addressable,
    }


def _spec_text(sharding: Any) -> str | None:
    """What a sharding says about placement, in the form the call signature records for arguments."""
    if sharding is None:
        return None
    if type(sharding).__name__ == "SingleDeviceSharding":
        return None
    spec = getattr(sharding, "spec", None)
    return jax_compat.spec_text(spec) if spec is not None else type(sharding).__name__


def _leaf(path: str, aval: str, sharding: Any, meshes: _Meshes) -> dict:
    mesh = placement.mesh_record(getattr(sharding, "mesh", None)) if sharding is not None else None
    spec = getattr(sharding, "spec", None)
    return {
        "path": path,
        "aval": aval,
        "kind": type(sharding).__name__ if sharding is not None else None,
        "text": repr(sharding) if sharding is not None else None,
        "mesh": meshes.id_of(mesh),
        "spec": None if spec is None else [list(e) if isinstance(e, tuple) else e for e in placement._spec(spec)],
        "unreduced": list(placement._axes(spec, "unreduced")) if spec is not None else [],
    }


def _call(cid: str, first: JitCall, calls: list[JitCall], meshes: _Meshes, notes: list[str]) -> dict:
    art = first.artifacts
    assert art is not None  # `sharding_document` passes only calls with artefacts
    compiled = art.compiled
    inputs, outputs = [], []
    specs = [a for a in (first.signature.args if first.signature else ()) if not a.static]
    if compiled is not None:
        expected = jax.tree_util.tree_leaves(compiled.input_shardings, is_leaf=_is_sharding)
        jaxpr_in = list(art.jaxpr.in_avals) if art.jaxpr is not None else []
        consts = len(jaxpr_in) - len(specs)
        for k, sharding in enumerate(expected):
            spec = specs[k] if k < len(specs) else None
            aval = spec.aval if spec else (str(jaxpr_in[consts + k]) if consts + k < len(jaxpr_in) else "?")
            leaf = _leaf(spec.path if spec else f"arg{k}", aval, sharding, meshes)
            want = _spec_text(sharding)
            given = spec.sharding if spec else None
            leaf["given"] = given
            leaf["mismatch"] = bool(
                spec is not None
                and given != want
                and not (given is None and _replicated(sharding) and _single(sharding))
            )
            inputs.append(leaf)
        out_avals = list(art.jaxpr.out_avals) if art.jaxpr is not None else []
        out_leaves = jax.tree_util.tree_flatten_with_path(compiled.output_shardings, is_leaf=_is_sharding)[0]
        for k, (path, sharding) in enumerate(out_leaves):
            aval = _short(out_avals[k]) if k < len(out_avals) else "?"
            outputs.append(_leaf("out" + jax.tree_util.keystr(tuple(path)), aval, sharding, meshes))
    else:
        notes.append(
            f"{first.name}: not compiled in the capture ({art.error or 'no compiled stage'}); "
            "in/out shardings and collectives unknown"
        )
    order = _device_order(compiled)
    if _on_one_device(order, art):  # no other device to talk to: the compiled text is not read
        found, known = [], True
    else:
        text = art.compiled_text  # printed by XLA on each read: 40 MB for a 10k-eqn train step
        found, known = hlo.collectives(text), text is not None
    lowered = _main_shardings(art)
    maps = _prefetched("shard maps", art.jaxpr, placement.shard_maps, [])
    inner, more = _prefetched("intermediate shardings", art.jaxpr, placement.intermediate_shardings, ([], 0))
    if more:
        notes.append(
            f"{first.name}: {more} more intermediate shardings not listed (the first {placement.MAX_INTERMEDIATES} are)"
        )
    return {
        "id": cid,
        "call": first.index,
        "name": first.name,
        "signature": str(first.signature or ""),
        "calls": len(calls),
        "source": source_json(first.source),
        "call_site": source_json(first.call_site),
        "inputs": inputs,
        "outputs": outputs,
        "lowered": lowered,
        "collectives": [_collective(c, order) for c in found],
        "collectives_known": known,  # False: no compiled HLO to read them from
        "shard_maps": [_shard_map(m, meshes) for m in maps],
        "intermediates": [
            {
                "primitive": x.primitive,
                "aval": x.aval,
                "spec": x.spec,
                "requested": x.requested,
                "path": list(x.path),
                "source": _source(x.source),
                "uneven": [list(u) for u in x.uneven],
            }
            for x in inner
        ],
    }


def _is_sharding(x: Any) -> bool:
    return isinstance(x, jax.sharding.Sharding)


def _replicated(sharding: Any) -> bool:
    try:
        return bool(sharding.is_fully_replicated)
    except Exception:  # boundary: a sharding of the user's (or over an abstract mesh) that cannot say
        return False


def _single(sharding: Any) -> bool:
    try:
        return len(sharding.device_set) == 1
    except Exception:  # boundary: as above
        return False


def _short(aval: Any) -> str:
    from ..capture import jax_compat

    return jax_compat.short_aval(aval)


def _device_order(compiled: Any) -> list[int] | None:
    """Device id of each logical id the compiled program uses (its device assignment), or None.

    Replica groups in HLO name logical ids, positions in this assignment; a mesh built from a
    permuted device list (as `make_mesh` does on TPU) makes them differ from device ids.
    """
    try:
        return [int(d.id) for d in compiled.runtime_executable().local_devices()]
    except Exception:  # boundary: a backend or executable that does not list its devices: ids stand for positions
        return None


_JAXPR_WALKS = {"shard maps": placement.shard_maps, "intermediate shardings": placement.intermediate_shardings}


def prebuild(closed_jaxpr: Any) -> None:
    """Start what `%%sharding` reads of a program's jaxpr alone (its shard_map bodies and sharding
    constraints) while XLA compiles it (capture/prefetch.py)."""
    for what, walk in _JAXPR_WALKS.items():
        PREFETCH.submit(what, closed_jaxpr, walk)


def _prefetched(what: str, closed_jaxpr: Any, walk: Any, default: Any) -> Any:
    """`walk(closed_jaxpr)`, found while XLA compiled the program when it was started then."""
    if closed_jaxpr is None:
        return default
    ready, answer = PREFETCH.take(what, closed_jaxpr)
    return answer if ready else walk(closed_jaxpr)


def _main_shardings(art: Artifacts) -> dict[str, list[str | None]]:
    """The shardings in the lowered `@main`'s signature, from its attributes where the MLIR module
    can be read (the whole StableHLO text is not printed for them), else from the text."""
    found = hlo.lowered_shardings_of(art.lowered) if art.lowered is not None else None
    return found if found is not None else hlo.lowered_shardings(art.lowered_text)


def _on_one_device(order: list[int] | None, art: Artifacts) -> bool:
    """True when the compiled program runs on one device of a one-process job: XLA inserts no
    collective there, and a 10k-eqn train step's compiled text (40 MB, printed and parsed) cost
    `%%sharding` 10% of the cell (bench/cells.py). Other processes' devices are not in `order`.
    Without the compiled program's devices (JAX 0.4 leaves the capture none), the lowered
    module's own partition and replica counts say it."""
    if jax.process_count() != 1:
        return False
    if order is not None:
        return len(order) == 1
    return hlo.module_device_count(art.lowered_text) == 1


def _collective(c: hlo.Collective, order: list[int] | None) -> dict:
    def device(i: int) -> int:
        return order[i] if order is not None and 0 <= i < len(order) else i

    return {
        "kind": c.kind,
        "name": c.name,
        "computation": c.computation,
        "result": c.result,
        "result_bytes": c.result_bytes,
        "operands": list(c.operands),
        "operand_bytes": c.operand_bytes,
        "groups": [[device(i) for i in g] for g in c.groups],
        "groups_text": c.groups_text,
        "pairs": [[device(a), device(b)] for a, b in c.pairs],
        "dimensions": list(c.dimensions),
        "op_name": c.op_name,
    }


def _shard_map(m: placement.ShardMapRecord, meshes: _Meshes) -> dict:
    return {
        "mesh": meshes.id_of(m.mesh),
        "in_specs": list(m.in_specs),
        "out_specs": list(m.out_specs),
        "in_avals": list(m.in_avals),
        "shard_avals": list(m.shard_avals),
        "out_avals": list(m.out_avals),
        "path": list(m.path),
        "collectives": [
            {
                "primitive": c.primitive,
                "axes": list(c.axes),
                "avals": list(c.avals),
                "params": c.params,
                "source": _source(c.source),
            }
            for c in m.collectives
        ],
    }


def _source(frame: tuple | None) -> dict | None:
    return None if frame is None else {"file": frame[0], "line": frame[1], "func": frame[2]}


# ---------------------------------------------------------------------------------------------
# Findings.


def _findings(arrays: list[dict], calls: list[dict]) -> list[dict]:
    out = []
    for c in calls:
        for leaf in c["inputs"]:
            if leaf.get("mismatch"):
                out.append(
                    _finding(
                        "resharding",
                        "warning",
                        f"{c['name']}: argument {leaf['path']} arrives as {leaf['given'] or 'one device'} but "
                        f"the compiled program expects {leaf['text']}: JAX copies it to that sharding on "
                        "every call",
                        call=c["id"],
                    )
                )
        for x in c.get("intermediates", []):
            if x["uneven"]:
                dims = ", ".join(f"dim {d} of size {size} into {n}" for d, size, n in x["uneven"])
                where = f" (line {x['source']['line']})" if x.get("source") else ""
                out.append(
                    _finding(
                        "uneven",
                        "info",
                        f"{c['name']}: {x['primitive']} {x['aval']} as {x['spec']}{where} splits {dims} "
                        "unevenly: XLA pads the blocks to the same size (compute and memory on padding)",
                        call=c["id"],
                    )
                )
        for k, col in enumerate(c["collectives"]):
            if col["kind"] == "all-gather" and col["result_bytes"] >= ALL_GATHER_BYTES:
                cause = f" (from {col['op_name']})" if col["op_name"] else ""
                out.append(
                    _finding(
                        "large_all_gather",
                        "warning",
                        f"{c['name']}: all-gather of {', '.join(col['operands'])} into {col['result']} "
                        f"({bytes_text(col['result_bytes'])} per device){cause}: a sharded operand is "
                        "gathered whole on each device of its group",
                        call=c["id"],
                        collective=k,
                    )
                )
    for a in arrays:
        s = a["sharding"]
        n = len(s["devices"])
        if s["fully_replicated"] and n > 1 and a["bytes"] >= REPLICATED_BYTES:
            out.append(
                _finding(
                    "replicated",
                    "warning",
                    f"{a['name']} ({a['dtype']}{a['shape']}, {bytes_text(a['bytes'])}) is fully "
                    f"replicated on {n} devices: {bytes_text(a['bytes'] * n)} in all",
                    array=a["id"],
                )
            )
        uneven = _uneven_dims(a)
        if uneven:
            dims = ", ".join(f"dim {d} ({a['shape'][d]} into blocks of {sizes})" for d, sizes in uneven)
            out.append(
                _finding(
                    "uneven",
                    "info",
                    f"{a['name']}: {dims} does not divide evenly: the last blocks are smaller and XLA "
                    "pads them to the largest block's size",
                    array=a["id"],
                )
            )
    order = {"warning": 0, "info": 1}
    return sorted(out, key=lambda f: order.get(f["severity"], 2))


def _uneven_dims(a: dict) -> list[tuple[int, str]]:
    out = []
    for d in range(len(a["shape"])):
        sizes = sorted({b["index"][d][1] - b["index"][d][0] for b in a["blocks"]}, reverse=True)
        if len(sizes) > 1:
            out.append((d, "/".join(str(s) for s in sizes)))
    return out


def _finding(
    kind: str,
    severity: str,
    message: str,
    array: str | None = None,
    call: str | None = None,
    collective: int | None = None,
) -> dict:
    return {
        "kind": kind,
        "severity": severity,
        "message": message,
        "array": array,
        "call": call,
        "collective": collective,
    }
