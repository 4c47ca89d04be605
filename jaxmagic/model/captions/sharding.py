"""Captions of sharding documents (%%sharding): see captions/__init__.py."""

from __future__ import annotations

from collections import Counter

from ...units import bytes_text
from .words import at_line, aval_text, counted, first_clause, fitting, listed, user_name

_COLLECTIVE_PURPOSE = {
    "all-reduce": "combine the devices' partial results",
    "all-gather": "collect the shards into whole arrays",
    "reduce-scatter": "combine partial results and split them again",
    "all-to-all": "swap pieces between the devices",
    "collective-permute": "pass blocks from device to device",
}


def sharding_caption(doc: dict) -> list[str]:
    arrays = doc.get("arrays") or []
    calls = doc.get("calls") or []
    if not arrays and not calls:
        return []
    out: list[str] = []
    warning = next((f for f in doc.get("findings") or [] if f["severity"] == "warning"), None)
    if warning is not None:
        out.append(_sharding_warning(warning, arrays, calls))
    # the cell's own arrays before the outputs of its calls, named before unnamed, big before small
    ranked = sorted(
        arrays, key=lambda a: (a["origin"] != "namespace", a.get("call") is not None, a["name"] is None, -a["bytes"])
    )
    split = _same_placement(
        [a for a in ranked if len(a["sharding"]["devices"]) > 1 and not a["sharding"]["fully_replicated"]]
    )
    replicated = [a for a in ranked if len(a["sharding"]["devices"]) > 1 and a["sharding"]["fully_replicated"]]
    if split:
        out.append(_split_sentence(split[0]))
    if replicated:
        out.append(_replicated_sentence(replicated))
    with_collectives = [c for c in calls if c["collectives"]]
    for c in with_collectives[:2]:
        out.append(_collectives_sentence(c))
    for c in calls:
        for m in c.get("shard_maps") or []:
            ops = [
                f"{k['primitive']} over {', '.join(repr(user_name(a, 24)) for a in k['axes'])}{at_line(k.get('source'))}"
                for k in m["collectives"]
            ]
            out.append(
                f"{user_name(c['name'])}: a shard_map body sees {listed(m['shard_avals'], 2)} per device"
                + (f" and calls {listed(ops, 2)}." if ops else ", with no collectives in it.")
            )
    known = [c for c in calls if c.get("collectives_known", True)]  # never "none" where the HLO was not read
    if known and not with_collectives and len(doc.get("devices") or []) > 1:
        names = [user_name(c["name"], 24) for c in known]
        out.append(
            fitting(
                f"XLA inserted no collectives into {listed(names, 3)}: no device exchanges data during the call.",
                f"XLA inserted no collectives into {listed(names, 1)}.",
            )
        )
    out.extend(_split_sentence(same) for same in split[1:3])
    if not split and not replicated:
        single = [a for a in ranked if len(a["sharding"]["devices"]) == 1]
        if single:
            device = single[0]["sharding"]["devices"][0]
            same = [a for a in single if a["sharding"]["devices"] == [device]]
            out.append(
                f"{listed([_label(a) for a in same], 3)} "
                f"{'lives' if len(same) == 1 else 'live'} on device {device} only."
            )
    return out


def _same_placement(arrays: list[dict]) -> list[list[dict]]:
    """Arrays of one aval placed the same way (spec, devices, blocks) as one group, first seen first."""
    groups: dict[tuple, list[dict]] = {}
    for a in arrays:
        s = a["sharding"]
        key = (
            a["dtype"],
            tuple(a["shape"]),
            repr(s.get("spec")),
            tuple(s["devices"]),
            repr([b["index"] for b in a["blocks"]]),
            s.get("kind"),
            tuple(s.get("unreduced") or ()),
        )
        groups.setdefault(key, []).append(a)
    return list(groups.values())


def _label(array: dict) -> str:
    return user_name(array["name"] or array["id"], 32)


def _split_sentence(same: list[dict]) -> str:
    """'batch f32[64,16] is split along 'data' over 8 devices: 8 rows each.' (arrays placed alike: one sentence)"""
    a = same[0]
    s = a["sharding"]
    n = len(s["devices"])
    verb = "is" if len(same) == 1 else "are"
    block = [stop - start for start, stop in (a["blocks"][0]["index"] if a["blocks"] else [])]
    spec = s.get("spec")
    if spec is None or not block:
        rest = f" {aval_text(a['dtype'], a['shape'])} {verb} split into {counted(len(a['blocks']), 'block')} over {n:,} devices."
    else:
        dims = [(d, [e] if isinstance(e, str) else list(e)) for d, e in enumerate(spec) if e]
        axes = listed(
            [
                " × ".join(repr(user_name(x, 24)) for x in axes) + _dim_word(d, len(a["shape"]), len(dims))
                for d, axes in dims
            ]
        )
        split_dims = [d for d, _ in dims]
        if len(a["shape"]) == 1:
            each = counted(block[0], "element")
        elif len(a["shape"]) == 2 and split_dims == [0]:
            each = counted(block[0], "row")
        elif len(a["shape"]) == 2 and split_dims == [1]:
            each = counted(block[1], "column")
        else:
            each = f"a {aval_text(a['dtype'], block)} block"
        copies = f", each block on {a['replication']:,} devices" if a.get("replication", 1) > 1 else ""
        unreduced = s.get("unreduced") or []
        if unreduced:  # partial sums, not copies: JAX cannot index it (model/sharding.py, the array's note)
            over = " × ".join(repr(user_name(x, 24)) for x in unreduced)
            copies += (
                f", each block as {a.get('partial_sums', 0):,} partial sums over {over} (unreduced: "
                "JAX cannot index it)"
            )
        rest = (
            f" {aval_text(a['dtype'], a['shape'])} {verb} split along {axes} over {n:,} devices: {each} each{copies}."
        )
    names = [_label(x) for x in same]
    return fitting(listed(names, 3) + rest, listed([user_name(x, 16) for x in names], 1) + rest)


def _dim_word(d: int, rank: int, n_split: int) -> str:
    if n_split < 2:
        return ""
    return {0: " (rows)", 1: " (columns)"}.get(d, f" (dim {d})") if rank == 2 else f" (dim {d})"


def _replicated_sentence(arrays: list[dict]) -> str:
    by_count: dict[int, list[dict]] = {}
    for a in arrays:
        by_count.setdefault(len(a["sharding"]["devices"]), []).append(a)
    n, same = max(by_count.items(), key=lambda t: len(t[1]))
    names = listed([_label(a) for a in same], 3)
    verb = "is" if len(same) == 1 else "are"
    return f"{names} {verb} replicated: each of the {n:,} devices holds a full copy."


def _collectives_sentence(call: dict) -> str:
    """'data_parallel_grad: XLA inserted 1 all-reduce to combine the devices' partial results.'"""
    kinds = Counter(c["kind"] for c in call["collectives"])
    shown = listed([counted(count, kind) for kind, count in kinds.most_common()], 3)
    purpose = _COLLECTIVE_PURPOSE.get(next(iter(kinds))) if len(kinds) == 1 else None
    return f"{user_name(call['name'])}: XLA inserted {shown}" + (f" to {purpose}." if purpose else ".")


def _sharding_warning(f: dict, arrays: list[dict], calls: list[dict]) -> str:
    call = next((c for c in calls if c["id"] == f.get("call")), None)
    array = next((a for a in arrays if a["id"] == f.get("array")), None)
    if f["kind"] == "resharding" and call is not None:
        leaf = next((leaf for leaf in call["inputs"] if leaf.get("mismatch")), None)
        if leaf is not None:
            return (
                f"{user_name(call['name'])}: argument {user_name(leaf['path'], 24)} arrives as "
                f"{user_name(leaf['given'] or 'one device', 24)} but the program expects another sharding: "
                "JAX moves it on every call."
            )
    if f["kind"] == "replicated" and array is not None:
        n = len(array["sharding"]["devices"])
        return (
            f"{_label(array)} ({bytes_text(array['bytes'])}) is fully replicated on {n:,} devices: "
            f"{bytes_text(array['bytes'] * n)} in all."
        )
    if f["kind"] == "large_all_gather" and call is not None and f.get("collective") is not None:
        col = call["collectives"][f["collective"]]
        return (
            f"{user_name(call['name'])}: an all-gather builds {col['result']} "
            f"({bytes_text(col['result_bytes'])}) whole on each device of its group."
        )
    return first_clause(f["message"]) + "."
