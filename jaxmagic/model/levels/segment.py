"""Cutting a run of twins' ops into the groups their separate lowerings made, by data flow."""

from __future__ import annotations

from itertools import combinations
from math import comb

from ...capture.jax_compat.stablehlo import is_constant_value

Facts = tuple[set, set, str]  # (SSA values an op defines, values it uses, op kind): stablehlo.op_values

_MAX_SEGMENTATIONS = 4096


def segment(
    facts: list[Facts],
    sizes_equal: list[tuple[int, int]],
    parts: int,
    fed_by_run: list[bool] | None = None,
) -> list[list[int]] | None:
    """The only way to cut ops into `parts` consecutive groups that look like separate lowerings.

    A lowering's ops feed its last op (every earlier op's value is used later in the group), its
    inner values are used by no other lowering, and twins' last ops are of one kind; `sizes_equal`
    pairs of twins share a lowering, so equal sizes. A twin whose inputs all come from twins of the
    run (`fed_by_run`) uses no value from outside the run but constants.
    Returns group index lists, or None when no cut or several fit.
    """
    n = len(facts)
    in_run = set().union(*(f[0] for f in facts)) if facts else set()
    if parts > n or comb(n - 1, parts - 1) > _MAX_SEGMENTATIONS:
        return None
    found = None
    for cuts in combinations(range(1, n), parts - 1):
        bounds = (0, *cuts, n)
        groups = [list(range(bounds[k], bounds[k + 1])) for k in range(parts)]
        if len({facts[g[-1]][2] for g in groups}) != 1:
            continue
        if any(len(groups[a]) != len(groups[b]) for a, b in sizes_equal):
            continue
        if not all(_feeds_last(facts, g) for g in groups):
            continue
        if _uses_foreign_internals(facts, groups):
            continue
        if fed_by_run and any(
            fed and any(not is_constant_value(v) for i in g for v in facts[i][1] - in_run)
            for fed, g in zip(fed_by_run, groups)
        ):
            continue
        if found is not None:
            return None
        found = groups
    return found


def _uses_foreign_internals(facts: list[Facts], groups: list[list[int]]) -> bool:
    """Whether a group uses a value another group consumes itself (an internal of another lowering)."""
    internal: list[set[str]] = []
    for g in groups:
        inside: set[str] = set()
        for i in g:
            inside |= facts[i][1]
        internal.append({v for i in g[:-1] for v in facts[i][0] if v in inside})
    for k, g in enumerate(groups):
        uses = set().union(*(facts[i][1] for i in g))
        if any(uses & internal[j] for j in range(len(groups)) if j != k):
            return True
    return False


def _feeds_last(facts: list[Facts], group: list[int]) -> bool:
    later: set[str] = set()
    for i in reversed(group):
        if i != group[-1] and not (facts[i][0] & later):
            return False
        later |= facts[i][1]
    return True
