"""The collectives XLA inserted, read from the compiled HLO text, and the shardings of a
program's parameters and results, read from the lowered StableHLO text.

Compiled HLO is the only place the compiler's communication is visible: `all-reduce`,
`all-gather`, `reduce-scatter`, `all-to-all`, `collective-permute` (and their async
`-start` forms). Each instruction gives its result shape, its operands (whose shapes are
looked up in the same computation), and its replica groups in one of the three forms XLA
prints: explicit `{{0,1},{2,3}}`, iota `[2,4]<=[8]` / `[4,2]<=[2,4]T(1,0)`, and mesh-axis
`mesh['axis_0'=2,'axis_1'=4] {'axis_0'}`. Groups are expanded to device (or partition) ids,
so the view can say which devices talk. `metadata={op_name=...}` names the jaxpr op that
caused it (`jit(f)/dot_general`).

Lowered text carries the shardings JAX asked for: Shardy `sdy.sharding = #sdy.sharding<@mesh,
[{"x"}, {}]>` on newer JAX, GSPMD `mhlo.sharding = "{devices=[2,1]<=[2]}"` on older.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

KINDS = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "collective-broadcast",
    "ragged-all-to-all",
)
_BYTES = {
    "pred": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
    "f8e4m3fn": 1,
    "f8e5m2": 1,
    "s4": 1,
    "u4": 1,
}
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([a-z][\w\-]*)\((.*)$")
_SHAPE = re.compile(r"\b([a-z]+\d*(?:e\d+m\d+\w*)?)\[([\d,]*)\]")
_COMPUTATION = re.compile(r"^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")


@dataclass(frozen=True)
class Collective:
    kind: str  # "all-gather", ... (async `-start` forms folded into their kind)
    name: str  # the HLO instruction name
    computation: str  # the HLO computation holding it
    result: str  # result shape text, e.g. "f32[8,2]" or "(f32[2], f32[])"
    result_bytes: int
    operands: tuple[str, ...]  # operand shape texts
    operand_bytes: int
    groups: tuple[tuple[int, ...], ...]  # replica groups as device/partition ids; () when absent or unparsed
    groups_text: str  # as XLA printed them
    pairs: tuple[tuple[int, int], ...]  # collective-permute source-target pairs
    dimensions: tuple[int, ...]  # all-gather / reduce-scatter / all-to-all dimension(s)
    op_name: str | None  # metadata op_name: the jaxpr op that caused it


def shape_bytes(text: str) -> int:
    """Bytes of a shape text (tuples summed): `f32[8,2]{1,0}` -> 64."""
    total = 0
    for dtype, dims in _SHAPE.findall(text):
        size = _BYTES.get(dtype)
        if size is None:
            continue
        total += size * int(np.prod([int(d) for d in dims.split(",") if d], dtype=np.int64))
    return total


def _strip_layout(text: str) -> str:
    """A shape without layouts (`{1,0}`) and printer comments (`/*index=5*/`)."""
    return re.sub(r"/\*.*?\*/", "", re.sub(r"\{[\d,]*(?::[^}]*)?\}", "", text)).strip()


def collectives(hlo_text: str | None) -> list[Collective]:
    """Every collective instruction of a compiled module, in text order."""
    if not hlo_text:
        return []
    shapes: dict[str, str] = {}
    found: list[tuple[str, str, str, str, str]] = []
    computation = ""
    for line in hlo_text.splitlines():
        header = _COMPUTATION.match(line)
        if header and "=" not in line.split("{", 1)[0]:
            computation = header.group(1)
            continue
        m = _INSTR.match(line)
        if not m:
            continue
        name, shape, op, rest = m.groups()
        shapes[name] = shape
        kind = op[: -len("-start")] if op.endswith("-start") else op
        if kind in KINDS:
            found.append((kind, name, computation, shape, rest))
    out = []
    for kind, name, computation, shape, rest in found:
        args = re.sub(r"/\*.*?\*/", "", rest).split(")", 1)[0]
        operand_names = [a.strip().lstrip("%").split(" ")[-1].lstrip("%") for a in args.split(",") if a.strip()]
        operands = tuple(_strip_layout(shapes.get(o, "?")) for o in operand_names)
        groups_text = _attribute(rest, "replica_groups")
        pairs_text = _attribute(rest, "source_target_pairs")
        dims = _attribute(rest, "dimensions") or _attribute(rest, "split_dimension")
        op_name = re.search(r'op_name="([^"]*)"', rest)
        out.append(
            Collective(
                kind=kind,
                name=name,
                computation=computation,
                result=_strip_layout(shape),
                result_bytes=shape_bytes(shape),
                operands=operands,
                operand_bytes=sum(shape_bytes(o) for o in operands),
                groups=replica_groups(groups_text),
                groups_text=groups_text or "",
                pairs=_pairs(pairs_text),
                dimensions=tuple(int(d) for d in re.findall(r"\d+", dims or "")),
                op_name=op_name.group(1) if op_name else None,
            )
        )
    return out


def _attribute(rest: str, key: str) -> str | None:
    """The value of `key=` in an instruction's attribute list, balanced over braces and brackets."""
    start = rest.find(key + "=")
    if start < 0:
        return None
    i = start + len(key) + 1
    depth, out = 0, []
    while i < len(rest):
        ch = rest[i]
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
            if depth < 0:
                break
        elif ch == "," and depth == 0:  # noqa: SIM102
            # a mesh form continues after its bracket with a space and a brace: `mesh[...] {'x'}`
            if not (
                rest[start:i].startswith(key + "=mesh[")
                and rest[i:].lstrip(", ").startswith("{")
                and "}" not in rest[start:i].split("]", 1)[-1]
            ):
                break
        out.append(ch)
        i += 1
    return "".join(out).strip()


def replica_groups(text: str | None) -> tuple[tuple[int, ...], ...]:
    """Replica groups in XLA's explicit, iota or mesh-axis form, as tuples of ids ("" -> ())."""
    if not text:
        return ()
    text = text.strip()
    if text.startswith("{"):
        return tuple(tuple(int(x) for x in re.findall(r"\d+", g)) for g in re.findall(r"\{([\d,\s]*)\}", text[1:-1]))
    iota = re.fullmatch(r"\[([\d,]+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", text)
    if iota:
        out_shape = [int(d) for d in iota.group(1).split(",")]
        dims = [int(d) for d in iota.group(2).split(",")]
        ids = np.arange(int(np.prod(dims))).reshape(dims)
        if iota.group(3):
            ids = ids.transpose([int(p) for p in iota.group(3).split(",")])
        ids = ids.reshape(out_shape)
        return tuple(tuple(int(x) for x in row) for row in ids.reshape(out_shape[0], -1))
    mesh = re.fullmatch(r"mesh\[(.*?)\]\s*\{(.*?)\}", text)
    if mesh:
        axes = re.findall(r"'([^']+)'\s*=\s*(\d+)", mesh.group(1))
        names, sizes = [a for a, _ in axes], [int(n) for _, n in axes]
        grouped = re.findall(r"'([^']+)'", mesh.group(2))
        if not names or any(g not in names for g in grouped):
            return ()
        ids = np.arange(int(np.prod(sizes))).reshape(sizes)
        along = [names.index(g) for g in grouped]
        rest = [i for i in range(len(names)) if i not in along]
        ids = ids.transpose(rest + along).reshape(-1, int(np.prod([sizes[i] for i in along], dtype=np.int64)))
        return tuple(tuple(int(x) for x in row) for row in ids)
    return ()


def _pairs(text: str | None) -> tuple[tuple[int, int], ...]:
    if not text:
        return ()
    return tuple((int(a), int(b)) for a, b in re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}", text))


# ---------------------------------------------------------------------------------------------
# Shardings written into the lowered program.


_MAIN = re.compile(r"func\.func\s+public\s+@main\((.*?)\)\s*->\s*\((.*?)\)\s*(?:attributes|\{)", re.S)


def lowered_shardings(lowered_text: str | None) -> dict[str, list[str | None]]:
    """{"args": [...], "results": [...]}: each `@main` parameter's and result's sharding attribute
    text (Shardy `#sdy.sharding<...>` or GSPMD `{devices=...}`), None where it has none."""
    out: dict[str, list[str | None]] = {"args": [], "results": []}
    if not lowered_text:
        return out
    m = _MAIN.search(lowered_text)
    if not m:
        return out
    for key, block in (("args", m.group(1)), ("results", m.group(2))):
        for part in _split_top(block):
            sdy = re.search(r"sdy\.sharding\s*=\s*(#sdy\.sharding<.*?>)(?=[,}])", part)
            mhlo = re.search(r'mhlo\.sharding\s*=\s*"([^"]*)"', part)
            out[key].append(sdy.group(1) if sdy else mhlo.group(1) if mhlo else None)
    return out


def _split_top(block: str) -> list[str]:
    """`block` split at commas outside brackets, braces, angle brackets and quotes."""
    parts, depth, quote, cur = [], 0, False, []
    for ch in block:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "([{<":
            depth += 1
        elif not quote and ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def sdy_dims(text: str | None) -> list[list[str]] | None:
    """Axis names per dimension of a Shardy sharding: `[{"x"}, {}]` -> [["x"], []]."""
    if not text or not text.startswith("#sdy.sharding"):
        return None
    m = re.search(r"\[(.*)\]", text)
    if not m:
        return None
    return [re.findall(r'"([^"]+)"', dim) for dim in re.findall(r"\{([^}]*)\}", m.group(1))]
