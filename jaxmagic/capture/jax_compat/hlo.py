"""Compiled HLO text as XLA prints it, read into plain structures: instructions grouped by their
metadata (op name, source frame), computations, fusion callers, result shapes; and the
instruction lines, shapes and attributes collectives are read from.

XLA writes `metadata={op_name="jit(f)/dot_general" stack_frame_id=N}` (older XLA:
`source_file=`/`source_line=`) on each instruction, with the frames in tables at the top of the
module. These formats belong to XLA: this module is the one place that reads them (model/levels/
links eqns through them; capture/sharding/collectives.py reads the collectives).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from .stablehlo import unescape

HloFrame = tuple  # (file | None, line, column | None)

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_META = re.compile(rb'op_name="([^"\\\n]*(?:\\.[^"\\\n]*)*)"([^}\n]*)')
_COMP = re.compile(rb"\n(?:ENTRY )?%([^\s(]+) ")
_RESULT_SHAPE = re.compile(rb" = ([a-z][a-z0-9]*)\[([0-9,]*)\]")
_FUSION = re.compile(rb" fusion\([^\n]*?calls=%([\w.\-]+)")
_FRAME_ID = re.compile(rb"stack_frame_id=(\d+)")
_SOURCE = re.compile(rb'source_file="([^"]*)" source_line=(\d+)(?: source_end_line=\d+)?(?: source_column=(\d+))?')


def compiled_text(compiled: Any) -> tuple[str | None, str | None]:
    """(HLO text, note): the text is None, and the note says why, when there is none."""
    if compiled is None:
        return None, "no HLO: the function was not compiled"
    try:
        return compiled.as_text(), None
    except Exception as exc:
        return None, f"no HLO: {type(exc).__name__}: {exc}"


def cost_analysis(compiled: Any) -> tuple[dict[str, Any] | None, str | None]:
    """XLA's whole-program cost figures ({name: number}), or None; and why it failed, if it did.

    None with no failure: the backend gives none. Some versions give one dict per computation or
    device: the first is the program's.
    """
    try:
        analysis = compiled.cost_analysis()
    except Exception as exc:
        return None, f"cost_analysis() failed: {type(exc).__name__}: {exc}"
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else None
    if not isinstance(analysis, dict):
        return None, None
    return {str(k): v for k, v in analysis.items() if _is_number(v)}, None


def memory_analysis(compiled: Any) -> tuple[dict[str, int] | None, str | None]:
    """XLA's memory figures of a compiled program ({`*_in_bytes` name: bytes}), or None; and why it
    failed, if it did (None with no failure: the backend gives none)."""
    try:
        stats = compiled.memory_analysis()
    except Exception as exc:
        return None, f"memory_analysis() failed: {type(exc).__name__}: {exc}"
    if stats is None:
        return None, None
    memory = {
        name: int(getattr(stats, name))
        for name in dir(stats)
        if name.endswith("_in_bytes") and not name.startswith("_") and _is_number(getattr(stats, name, None))
    }
    return memory or None, None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class HloModule:
    """HLO instructions grouped by (op_name, rest of metadata), with their computations."""

    def __init__(self, text: str):
        data = text.encode()
        newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        self._data, self._newlines = data, newlines
        self.frames = stack_frames(data)
        # op_name -> [(group key, frame (file, line, col) | None, lines)]
        self.by_name: dict[str, list[tuple[tuple, HloFrame | None, list[int]]]] = {}
        for (name, rest), group in self._metadata_groups().items():
            text_name = unescape(name.decode(errors="replace"))
            self.by_name.setdefault(text_name, []).append(((name, rest), self._frame_of(rest), group))
        comp_pos = [(m.start(1), m.group(1).decode(errors="replace")) for m in _COMP.finditer(data)]
        self.comp_lines: list[int] = self._lines_of([p for p, _ in comp_pos])
        self._comp_array = np.asarray(self.comp_lines, dtype=np.int64)
        self.comp_names: list[str] = [name for _, name in comp_pos]
        self._closure: dict[int, list[int]] = {}
        fusion_pos = [(m.start(1), m.group(1).decode(errors="replace")) for m in _FUSION.finditer(data)]
        self.fusion_callers: dict[str, list[int]] = {}
        for (_, callee), line in zip(fusion_pos, self._lines_of([p for p, _ in fusion_pos])):
            self.fusion_callers.setdefault(callee, []).append(line)

    def _lines_of(self, positions: list[int]) -> list[int]:
        return np.searchsorted(self._newlines, np.asarray(positions, dtype=np.int64)).tolist()

    def _metadata_groups(self) -> dict[tuple, list[int]]:
        """(op_name, rest of metadata) -> lines of the instructions carrying it."""
        found = [(m.start(), m.group(1, 2)) for m in _META.finditer(self._data)]
        positions = np.fromiter((p for p, _ in found), dtype=np.int64, count=len(found))
        lines = np.searchsorted(self._newlines, positions).tolist()
        groups: dict[tuple, list[int]] = {}
        for (_, key), line in zip(found, lines):
            group = groups.get(key)
            if group is None:
                groups[key] = [line]
            else:
                group.append(line)
        return groups

    def _frame_of(self, rest: bytes) -> HloFrame | None:
        m = _FRAME_ID.search(rest)
        if m:
            return self.frames.get(int(m.group(1)))
        m = _SOURCE.search(rest)
        if m:
            col = int(m.group(3)) if m.group(3) else None
            return (m.group(1).decode(errors="replace"), int(m.group(2)), col)
        return None

    def computations(self, lines: list[int]) -> list[int]:
        """Indices of the computations holding these lines (sorted, distinct)."""
        found = np.unique(np.searchsorted(self._comp_array, np.asarray(lines, dtype=np.int64), side="right") - 1)
        return [int(c) for c in found if c >= 0]

    def fusion_closure(self, comp: int) -> list[int]:
        """Lines of the fusion instructions calling computation `comp`, up through nested fusions."""
        cached = self._closure.get(comp)
        if cached is not None:
            return cached
        self._closure[comp] = []  # guards against cycles while we compute
        result: list[int] = []
        for line in self.fusion_callers.get(self.comp_names[comp], ()):
            result.append(line)
            for outer in self.computations([line]):
                if outer != comp:
                    result.extend(self.fusion_closure(outer))
        self._closure[comp] = result
        return result

    def result_shape(self, line: int) -> tuple[str, tuple[int, ...]] | None:
        """("f32", (2, 8)) for `%x = f32[2,8]{1,0} op(...)`; None for tuples and non-instructions."""
        start = int(self._newlines[line - 1]) + 1 if line > 0 else 0
        end = int(self._newlines[line]) if line < len(self._newlines) else len(self._data)
        m = _RESULT_SHAPE.search(self._data, start, end)
        if m is None:
            return None
        dims = m.group(2)
        return m.group(1).decode(), tuple(int(d) for d in dims.split(b",")) if dims else ()


def stack_frames(data: bytes) -> dict[int, HloFrame]:
    """stack_frame_id -> (file, line, column) of its innermost location, from the module's tables."""
    head_end = data.find(b"\n%")
    entry = data.find(b"\nENTRY")
    head = data[: min(x for x in (head_end, entry, len(data)) if x >= 0)].decode(errors="replace")
    section = ""
    files: dict[int, str] = {}
    locations: dict[int, tuple] = {}
    frames: dict[int, HloFrame] = {}
    for line in head.split("\n"):
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = line
            continue
        first, _, rest = line.partition(" ")
        if not first.isdigit():
            continue
        key = int(first)
        if section == "FileNames":
            m = _STRING.match(rest)
            if m:
                files[key] = unescape(m.group(1))
        elif section == "FileLocations":
            fields = dict(re.findall(r"(\w+)=(\d+)", rest))
            if "file_name_id" in fields and "line" in fields:
                locations[key] = (
                    int(fields["file_name_id"]),
                    int(fields["line"]),
                    int(fields["column"]) if "column" in fields else None,
                )
        elif section == "StackFrames":
            m = re.search(r"file_location_id=(\d+)", rest)
            if m and int(m.group(1)) in locations:
                file_id, line_no, col = locations[int(m.group(1))]
                frames[key] = (files.get(file_id), line_no, col)
    return frames


_DTYPES = {"bool": "pred", "bfloat16": "bf16"}
_DTYPE_FAMILY = re.compile(r"(float|int|uint|complex)(\d+)")


def dtype_name(numpy_name: str) -> str | None:
    """The element type as HLO writes it (`float32` -> `f32`, `bool` -> `pred`), or None if unknown."""
    short = _DTYPES.get(numpy_name)
    if short is not None:
        return short
    m = _DTYPE_FAMILY.fullmatch(numpy_name)
    if m is None:
        return None
    return {"float": "f", "int": "s", "uint": "u", "complex": "c"}[m.group(1)] + m.group(2)


# ---------------------------------------------------------------------------------------------
# Instruction lines, shapes and attributes (what collectives are read from).

_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([a-z][\w\-]*)\((.*)$")
_SHAPE = re.compile(r"\b([a-z]+\d*(?:e\d+m\d+\w*)?)\[([\d,]*)\]")
_COMPUTATION = re.compile(r"^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
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


def instructions(hlo_text: str) -> Iterator[tuple[str, str, str, str, str]]:
    """(computation, instruction name, result shape text, opcode, rest of the line) of every instruction."""
    computation = ""
    for line in hlo_text.splitlines():
        header = _COMPUTATION.match(line)
        if header and "=" not in line.split("{", 1)[0]:
            computation = header.group(1)
            continue
        m = _INSTR.match(line)
        if m:
            name, shape, op, rest = m.groups()
            yield computation, name, shape, op, rest


def operand_names(rest: str) -> list[str]:
    """The operand instruction names of an instruction, from the rest of its line after `op(`."""
    args = re.sub(r"/\*.*?\*/", "", rest).split(")", 1)[0]
    return [a.strip().lstrip("%").split(" ")[-1].lstrip("%") for a in args.split(",") if a.strip()]


def op_name(rest: str) -> str | None:
    """The metadata op_name of an instruction (the jaxpr op that caused it), from the rest of its line."""
    m = re.search(r'op_name="([^"]*)"', rest)
    return m.group(1) if m else None


def shape_bytes(text: str) -> int:
    """Bytes of a shape text (tuples summed): `f32[8,2]{1,0}` -> 64."""
    total = 0
    for dtype, dims in _SHAPE.findall(text):
        size = _BYTES.get(dtype)
        if size is None:
            continue
        total += size * int(np.prod([int(d) for d in dims.split(",") if d], dtype=np.int64))
    return total


def strip_layout(text: str) -> str:
    """A shape without layouts (`{1,0}`) and printer comments (`/*index=5*/`)."""
    return re.sub(r"/\*.*?\*/", "", re.sub(r"\{[\d,]*(?::[^}]*)?\}", "", text)).strip()


def attribute(rest: str, key: str) -> str | None:
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
        return _iota_groups(iota)
    mesh = re.fullmatch(r"mesh\[(.*?)\]\s*\{(.*?)\}", text)
    if mesh:
        return _mesh_groups(mesh)
    return ()


def _iota_groups(iota: re.Match) -> tuple[tuple[int, ...], ...]:
    """`[2,4]<=[8]` / `[4,2]<=[2,4]T(1,0)`: ids arange'd to the dims, transposed, reshaped to groups."""
    out_shape = [int(d) for d in iota.group(1).split(",")]
    dims = [int(d) for d in iota.group(2).split(",")]
    ids = np.arange(int(np.prod(dims))).reshape(dims)
    if iota.group(3):
        ids = ids.transpose([int(p) for p in iota.group(3).split(",")])
    ids = ids.reshape(out_shape)
    return tuple(tuple(int(x) for x in row) for row in ids.reshape(out_shape[0], -1))


def _mesh_groups(mesh: re.Match) -> tuple[tuple[int, ...], ...]:
    """`mesh['axis_0'=2,'axis_1'=4] {'axis_0'}`: one group per combination of the other axes."""
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


def pairs(text: str | None) -> tuple[tuple[int, int], ...]:
    """collective-permute `source_target_pairs={{0,1},{1,0}}` as (source, target) tuples."""
    if not text:
        return ()
    return tuple((int(a), int(b)) for a, b in re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}", text))
