"""The entry point: both levels' texts and, for every eqn in graph order, the lines made from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...capture.jax_compat import hlo, stablehlo
from .align import Aligner
from .eqns import collect_eqns
from .hlo_links import link_hlo
from .ops import OpTable


@dataclass
class LevelLinks:
    """Per-eqn links into the StableHLO and HLO texts; lists are aligned with graph order."""

    stablehlo_text: str | None
    stablehlo_note: str | None
    hlo_text: str | None
    hlo_note: str | None
    shlo: list[list[int]] = field(default_factory=list)  # 0-based line indices in stablehlo_text
    hlo: list[list[int]] = field(default_factory=list)  # 0-based line indices in hlo_text
    hlo_comp: list[str | None] = field(default_factory=list)  # HLO computation holding the eqn
    notes: list[str] = field(default_factory=list)

    def levels_json(self) -> dict:
        """The function's `levels` field of the graph document."""
        return {
            "stablehlo": {"text": self.stablehlo_text, "note": self.stablehlo_note},
            "hlo": {"text": self.hlo_text, "note": self.hlo_note},
        }

    def node_fields(self, index: int) -> dict:
        """The `shlo` / `hlo` / `hlo_comp` fields of the node at graph-order `index`."""
        return {"shlo": self.shlo[index], "hlo": self.hlo[index], "hlo_comp": self.hlo_comp[index]}

    def line_owners(self, level: str) -> dict[int, list[int]]:
        """Reverse map line -> graph-order eqn indices, built on demand ("stablehlo" or "hlo")."""
        per_eqn = self.shlo if level == "stablehlo" else self.hlo
        owners: dict[int, list[int]] = {}
        for i, lines in enumerate(per_eqn):
            for line in lines:
                owners.setdefault(line, []).append(i)
        return owners


def link_levels(closed_jaxpr: Any, lowered: Any, compiled: Any) -> LevelLinks:
    """Texts of both levels and, for every eqn in graph order, the lines made from it."""
    eqns = collect_eqns(closed_jaxpr)
    n = len(eqns) - 1  # eqns[0] is the root pseudo-entry
    shlo_text, shlo_note = stablehlo.lowered_text(lowered)
    hlo_text, hlo_note = hlo.compiled_text(compiled)
    links = LevelLinks(
        shlo_text, shlo_note, hlo_text, hlo_note, [[] for _ in range(n)], [[] for _ in range(n)], [None] * n
    )
    if shlo_text is None:
        if hlo_text is not None:
            links.notes.append("HLO lines are linked through StableHLO locations, which are missing")
        return links
    try:  # the texts' formats belong to JAX and XLA: a change there costs the links, never the document
        module = OpTable(stablehlo.parse_module(shlo_text))
        if module.main is None:
            links.notes.append("no `main` function found in the StableHLO text: no lines linked")
            return links
        aligner = Aligner(eqns, module)
        aligner.run()
    except Exception as exc:
        links.notes.append(f"StableHLO lines not linked: {type(exc).__name__}: {exc}")
        return links
    for i in range(n):
        hits = aligner.hits[i + 1]
        if hits:
            links.shlo[i] = sorted({module.start[f][p] for f, p, _ in hits})
    if hlo_text is not None:
        try:
            link_hlo(links, eqns, module, aligner, hlo_text)
        except Exception as exc:
            links.hlo, links.hlo_comp = [[] for _ in range(n)], [None] * n
            links.notes.append(f"HLO lines not linked: {type(exc).__name__}: {exc}")
    return links
