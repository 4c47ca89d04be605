"""Sharing the ops named like a run of adjacent twins (same primitive, name stack and source
position: a Python loop without name scopes) out among them, or giving them none."""

from __future__ import annotations

from bisect import bisect_left

from ...capture.jax_compat.stablehlo import op_values
from .eqns import same_lowering
from .search import OpSearch
from .segment import searchable, segment

# Twins compared with each class's first member: a run of thousands (a `tree_map` over a model's
# parameters: one line, one primitive) costs its length times this, never its length squared.
MAX_LOWERING_CLASSES = 32


def split(
    search: OpSearch, run: list[int], p: int, bound: int, func: int, claimed: dict, starts: dict, chunks: dict
) -> None:
    """Share the ops named like a run of adjacent twins, [p, bound), out among them in order.

    Twins with the same params and input avals share one cached lowering, so they made equally
    many ops: equal runs. Otherwise the single cut that looks like separate lowerings (see
    `segment`) is taken; with none or several, no twin gets ops (never a wrong one).
    """
    norms = search.m.norm[func]
    name = norms[p]
    cands = search.candidates(run[0], func)
    ops = []
    for k in range(bisect_left(cands, p), len(cands)):
        q = cands[k]
        if q >= bound:
            break
        if q not in claimed and norms[q] == name and search.same_frame(run[0], func, q):
            ops.append(q)
    del starts[run[0]]
    share(search, run, ops, func, starts, chunks)


def share(search: OpSearch, run: list[int], ops: list[int], func: int, starts: dict, chunks: dict) -> None:
    """Give each twin of a run its consecutive group of `ops` (see `split`), or none at all."""
    objs = [search.eqns[e].obj for e in run]
    classes = lowering_classes(objs)
    groups: list[list[int]] | None = None
    if len(ops) % len(run) == 0 and classes is not None and not any(classes):
        size = len(ops) // len(run)
        groups = [ops[k * size : (k + 1) * size] for k in range(len(run))]
    elif classes is not None or searchable(len(ops), len(run)):  # else no cut can be searched: no text read
        lines = search.m.lines
        made = {id(v) for o in objs for v in o.outvars}
        fed = [all(id(v) in made for v in o.invars if type(v).__name__ != "Literal") for o in objs]
        cut = segment([op_values(lines[search.m.start[func][q]]) for q in ops], classes, len(run), fed)
        groups = None if cut is None else [[ops[i] for i in g] for g in cut]
    if groups is None:
        return
    for e, group in zip(run, groups):
        starts[e] = group[0]
        chunks[e] = group


def lowering_classes(objs: list, limit: int = MAX_LOWERING_CLASSES) -> list[int] | None:
    """For each eqn, the index of its class of eqns sharing one cached lowering (`same_lowering`:
    equal primitive, input avals and params, an equivalence), numbered in order of first
    appearance; None past `limit` classes (then nothing is known of which twins share one)."""
    firsts: list = []
    labels: list[int] = []
    for obj in objs:
        for k, first in enumerate(firsts):
            if same_lowering(first, obj):
                labels.append(k)
                break
        else:
            if len(firsts) == limit:
                return None
            labels.append(len(firsts))
            firsts.append(obj)
    return labels
