"""Compiled HLO instructions linked to eqns: those whose metadata (op_name, frame) is that of an
eqn's StableHLO ops; instructions several twins' ops name are shared out by result shape."""

from __future__ import annotations

from math import prod
from typing import Any

from ...capture.jax_compat.hlo import HloFrame, HloModule, dtype_name
from ...units import plural
from .eqns import Eqn
from .ops import OpTable
from .search import OpSearch


def link_hlo(links: Any, eqns: list[Eqn], module: OpTable, aligner: OpSearch, text: str) -> None:
    """Fill `links.hlo` / `links.hlo_comp` (a LevelLinks) for every eqn with StableHLO hits."""
    hlo = HloModule(text)
    requests, group_lines = _requests(hlo, eqns, module, aligner)
    per_eqn: dict[int, list[list[int]]] = {}
    unresolved = 0
    for key, owners in requests.items():
        lines = group_lines[key]
        if len(owners) == 1:
            per_eqn.setdefault(owners[0], []).append(lines)
            continue
        shares = share_out(hlo, [eqns[e] for e in owners], lines)
        if shares is None:
            unresolved += len(owners)
            continue
        for e, share in zip(owners, shares):
            if share:
                per_eqn.setdefault(e, []).append(share)
    _assign(links, hlo, per_eqn)
    if unresolved:
        # Said where it matters, the HLO pane (not the top of the view), in a reader's words: XLA labels each
        # instruction with the op, scope and line it came from, and these ops share all three with another.
        them = "it" if unresolved == 1 else "them"
        said = (
            f"{plural(unresolved, 'op')} of this function came from the same line as another op of the same "
            f"kind, so XLA's labels cannot tell their instructions apart: selecting {them} marks no HLO line."
        )
        links.hlo_note = f"{links.hlo_note} {said}" if links.hlo_note else said


def _requests(
    hlo: HloModule, eqns: list[Eqn], module: OpTable, aligner: OpSearch
) -> tuple[dict[tuple, list[int]], dict[tuple, list[int]]]:
    """HLO group -> eqns (graph order) whose ops carry its metadata, and each group's lines."""
    requests: dict[tuple, list[int]] = {}
    group_lines: dict[tuple, list[int]] = {}
    frame_ok: dict[tuple, bool] = {}
    for e in range(1, len(eqns)):
        hits = aligner.hits[e]
        if not hits:
            continue
        frame = eqns[e].frame
        for name in _full_names(module, hits):
            for key, hframe, lines in hlo.by_name.get(name, ()):
                if hframe is not None and frame is not None:
                    ok = frame_ok.get((hframe, frame))
                    if ok is None:
                        ok = frame_ok[(hframe, frame)] = _frame_matches(hframe, frame)
                    if not ok:
                        continue
                owners = requests.setdefault(key, [])
                if not owners or owners[-1] != e:
                    owners.append(e)
                group_lines[key] = lines
    return requests, group_lines


def _full_names(module: OpTable, hits: list[tuple[int, int, str]]) -> set[str]:
    """The op names XLA writes into the metadata of what an eqn's ops became: callers' names + own."""
    wanted: set = set()
    for func, p, prefix in hits:
        name = module.name[func][p]
        absolute = module.absolute.get(func)
        if absolute is not None and absolute[p] is not None:  # JAX 0.4: HLO reads the absolute name
            wanted.add(absolute[p])
            continue
        wanted.add(f"{prefix}/{name}" if prefix else name)
    return wanted


def _assign(links: Any, hlo: HloModule, per_eqn: dict[int, list[list[int]]]) -> None:
    """Each eqn's lines, plus the fusions calling their computations, and the computation to name."""
    comps_of: dict[int, list[int]] = {}  # id(line list) -> computations, once per HLO group
    for e, parts in per_eqn.items():
        lines = parts[0] if len(parts) == 1 else sorted(set().union(*parts))
        found: set[int] = set()
        for part in parts:
            comps_part = comps_of.get(id(part))
            if comps_part is None:
                comps_part = comps_of[id(part)] = hlo.computations(part)
            found.update(comps_part)
        comps = sorted(found)
        extra = [line for c in comps for line in hlo.fusion_closure(c)]
        links.hlo[e - 1] = sorted(set(lines).union(extra)) if extra else list(lines)
        # name the fused computation when there is one (a reduction's `to_apply` region comes first in the text)
        fused = [c for c in comps if hlo.comp_names[c] in hlo.fusion_callers]
        chosen = fused[0] if fused else (comps[0] if comps else -1)
        links.hlo_comp[e - 1] = hlo.comp_names[chosen] if chosen >= 0 else None


def share_out(hlo: HloModule, twins: list[Eqn], lines: list[int]) -> list[list[int]] | None:
    """Instructions with the metadata of several eqns (twins), shared out, or None.

    An instruction whose result shape is an output shape of exactly one twin is that twin's (the
    two dots of a matmul's gradient differ so); failing that, one whose element type and count
    are (XLA reshapes freely). Otherwise, with one instruction per twin (no duplication by
    fusion), in order of appearance. Anything else stays unassigned.
    """
    shapes = [_out_shapes(t.obj) for t in twins]
    shares: list[list[int]] = [[] for _ in twins]
    if all(shapes) and len({frozenset(x) for x in shapes}) > 1:  # else no shape tells them apart
        by_shape = _owners(shapes)  # looked up per line: a run of thousands of twins stays linear
        by_count = _owners([{(dtype, prod(dims)) for dtype, dims in x} for x in shapes])
        for line in lines:
            shape = hlo.result_shape(line)
            if shape is None:
                continue
            owners = by_shape.get(shape) or by_count.get((shape[0], prod(shape[1])), [])
            if len(owners) == 1:
                shares[owners[0]].append(line)
        if any(shares):
            return shares
    if len(lines) == len(twins):
        return [[line] for line in lines]
    return None


def _owners(keys_per_twin: list[set]) -> dict[Any, list[int]]:
    """key -> the twins (indices) having it."""
    owners: dict[Any, list[int]] = {}
    for k, keys in enumerate(keys_per_twin):
        for key in keys:
            owners.setdefault(key, []).append(k)
    return owners


def _out_shapes(eqn: Any) -> set[tuple[str, tuple[int, ...]]]:
    """Output avals of an eqn as HLO writes them: `f32[2,8]` -> ("f32", (2, 8))."""
    shapes = set()
    try:
        for var in eqn.outvars:
            short = dtype_name(var.aval.dtype.name)
            if short is not None:
                shapes.add((short, tuple(int(d) for d in var.aval.shape)))
    except Exception:
        return set()
    return shapes


def _frame_matches(hframe: HloFrame, frame: tuple) -> bool:
    file, line, col = hframe
    if file is not None and file != frame[0]:
        return False
    return line == frame[1] and (col is None or col == frame[2])
