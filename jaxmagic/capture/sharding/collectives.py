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

from ..jax_compat import hlo, stablehlo

KINDS = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "collective-broadcast",
    "ragged-all-to-all",
)


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


# Read through the compat package (the HLO and StableHLO formats are JAX's and XLA's); named here too
# for the sharding model and its tests.
shape_bytes = hlo.shape_bytes
replica_groups = hlo.replica_groups
lowered_shardings = stablehlo.main_shardings
lowered_shardings_of = stablehlo.main_shardings_of
module_device_count = stablehlo.module_device_count
sdy_dims = stablehlo.sdy_dims


def collectives(hlo_text: str | None) -> list[Collective]:
    """Every collective instruction of a compiled module, in text order."""
    if not hlo_text:
        return []
    shapes: dict[str, str] = {}
    found: list[tuple[str, str, str, str, str]] = []
    for computation, name, shape, op, rest in hlo.instructions(hlo_text):
        shapes[name] = shape
        kind = op[: -len("-start")] if op.endswith("-start") else op
        if kind in KINDS:
            found.append((kind, name, computation, shape, rest))
    out = []
    for kind, name, computation, shape, rest in found:
        operands = tuple(hlo.strip_layout(shapes.get(o, "?")) for o in hlo.operand_names(rest))
        groups_text = hlo.attribute(rest, "replica_groups")
        dims = hlo.attribute(rest, "dimensions") or hlo.attribute(rest, "split_dimension")
        out.append(
            Collective(
                kind=kind,
                name=name,
                computation=computation,
                result=hlo.strip_layout(shape),
                result_bytes=hlo.shape_bytes(shape),
                operands=operands,
                operand_bytes=sum(hlo.shape_bytes(o) for o in operands),
                groups=hlo.replica_groups(groups_text),
                groups_text=groups_text or "",
                pairs=hlo.pairs(hlo.attribute(rest, "source_target_pairs")),
                dimensions=tuple(int(d) for d in re.findall(r"\d+", dims or "")),
                op_name=hlo.op_name(rest),
            )
        )
    return out
