"""Cutting a run of twins' ops into the groups their separate lowerings made, by data flow."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import combinations
from math import comb

from ...capture.jax_compat.stablehlo import is_constant_value

Facts = tuple[set, set, str]  # (SSA values an op defines, values it uses, op kind): stablehlo.op_values

_MAX_SEGMENTATIONS = 4096


def segment(
    facts: list[Facts],
    classes: list[int] | None,
    parts: int,
    fed_by_run: list[bool] | None = None,
) -> list[list[int]] | None:
    """The only way to cut ops into `parts` consecutive groups that look like separate lowerings.

    A lowering's ops feed its last op (every earlier op's value is used later in the group), its
    inner values are used by no other lowering, and twins' last ops are of one kind; twins of one
    of `classes` (a label per twin, twins/`lowering_classes`; None: unknown) share a lowering, so
    their groups have equal sizes. A twin whose inputs all come from twins of the run
    (`fed_by_run`) uses no value from outside the run but constants.

    With `classes` known, the candidates are one cut per choice of each class's size (a `tree_map`
    over 3,600 parameters of two shapes: a handful of cuts, where cut points would be
    astronomically many); without, every choice of cut points, where there are few enough. Fewer
    constraints can only let more cuts fit, so an unknown `classes` never gives a wrong cut, at
    worst none. Returns group index lists, or None when no cut or several fit.
    """
    n = len(facts)
    candidates = _cuts_by_class_sizes(n, classes) if classes is not None else None
    if candidates is None:
        if not searchable(n, parts):
            return None
        candidates = _cuts_by_points(n, parts)
    in_run = set().union(*(f[0] for f in facts)) if facts else set()
    found = None
    for groups in candidates:
        if not _looks_like_lowerings(facts, groups, in_run, fed_by_run):
            continue
        if found is not None:
            return None
        found = groups
    return found


def searchable(n_ops: int, parts: int) -> bool:
    """Whether cutting `n_ops` ops into `parts` groups has few enough ways to try them all."""
    return 0 < parts <= n_ops and comb(n_ops - 1, parts - 1) <= _MAX_SEGMENTATIONS


def _cuts_by_points(n: int, parts: int) -> Iterator[list[list[int]]]:
    for cuts in combinations(range(1, n), parts - 1):
        bounds = (0, *cuts, n)
        yield [list(range(bounds[k], bounds[k + 1])) for k in range(parts)]


def _cuts_by_class_sizes(n: int, classes: list[int]) -> list[list[list[int]]] | None:
    """One cut per way to give each class a size (at least one op per twin) that adds up to `n`
    ops; None when there are more than _MAX_SEGMENTATIONS ways."""
    counts = sorted(Counter(classes).items())
    choices: list[dict[int, int]] = []
    if not _choose_sizes(counts, 0, n, {}, choices):
        return None
    cuts = []
    for sizes in choices:
        groups, start = [], 0
        for label in classes:
            groups.append(list(range(start, start + sizes[label])))
            start += sizes[label]
        cuts.append(groups)
    return cuts


def _choose_sizes(
    counts: list[tuple[int, int]], k: int, left: int, sizes: dict[int, int], choices: list[dict[int, int]]
) -> bool:
    """Add to `choices` every way to size classes k.. with `left` ops; False once there are too many
    (a module function: a recursive closure is a reference cycle)."""
    if k == len(counts):
        if left == 0:
            choices.append(dict(sizes))
        return len(choices) <= _MAX_SEGMENTATIONS
    label, twins = counts[k]
    rest = sum(c for _, c in counts[k + 1 :])  # ops the later classes need at least
    for size in range(1, (left - rest) // twins + 1):
        sizes[label] = size
        if not _choose_sizes(counts, k + 1, left - size * twins, sizes, choices):
            return False
    return True


def _looks_like_lowerings(
    facts: list[Facts], groups: list[list[int]], in_run: set, fed_by_run: list[bool] | None
) -> bool:
    if len({facts[g[-1]][2] for g in groups}) != 1:
        return False
    if not all(_feeds_last(facts, g) for g in groups):
        return False
    if _uses_foreign_internals(facts, groups):
        return False
    return not (
        fed_by_run
        and any(
            fed and any(not is_constant_value(v) for i in g for v in facts[i][1] - in_run)
            for fed, g in zip(fed_by_run, groups)
        )
    )


def _uses_foreign_internals(facts: list[Facts], groups: list[list[int]]) -> bool:
    """Whether a group uses a value another group consumes itself (an internal of another lowering).
    One pass over the ops: each internal value knows its group (SSA values are defined once)."""
    owner: dict[str, int] = {}
    for k, g in enumerate(groups):
        inside: set[str] = set()
        for i in g:
            inside |= facts[i][1]
        for i in g[:-1]:
            for v in facts[i][0]:
                if v in inside:
                    owner[v] = k
    return any(owner.get(v, k) != k for k, g in enumerate(groups) for i in g for v in facts[i][1])


def _feeds_last(facts: list[Facts], group: list[int]) -> bool:
    later: set[str] = set()
    for i in reversed(group):
        if i != group[-1] and not (facts[i][0] & later):
            return False
        later |= facts[i][1]
    return True
