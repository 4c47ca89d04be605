"""Where an owner's sub-jaxprs went (inline under some context, or into a called function), and
the ops an owner's lowering emits itself."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .align import Aligner


def place_bodies(
    aligner: Aligner, e: int, fi: tuple, claimed: dict, kmin: str | None, lo: int, hi: int, unmatched: set
) -> None:
    """Align each sub-jaxpr of owner e where most of its eqns have ops: inline in [lo, hi) under a
    context starting with `kmin`, or in a function called from there. Ties leave it unlinked."""
    callees = _call_instances(aligner, e, fi, claimed, lo, hi, unmatched)
    used: set = set()
    for ids in aligner.eqns[e].subs:
        ids = [s for s in ids if aligner.eqns[s].live]
        if not ids:
            continue
        votes: dict[tuple, int] = {}
        for s in ids:
            for option in _options(aligner, s, fi[0], claimed, kmin, lo, hi, callees):
                votes[option] = votes.get(option, 0) + 1
        ranked = sorted(((n, o) for o, n in votes.items() if o not in used), key=lambda t: -t[0])
        if not ranked or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
            continue  # nothing, or a tie: leave this sub-jaxpr unlinked rather than guess
        option = ranked[0][1]
        used.add(option)
        if option[0] == "inline":
            aligner.align(ids, fi, option[1], lo, hi)
        else:
            aligner.align(ids, option[1], "", 0, len(aligner.m.start[option[1][0]]))


def _call_instances(
    aligner: Aligner, e: int, fi: tuple, claimed: dict, lo: int, hi: int, unmatched: set
) -> list[tuple]:
    """Function instances called from [lo, hi) by owner e's calls or unclaimed calls at its frame:
    (func, caller's full name, (caller instance, call op))."""
    func, prefix = fi[0], fi[1]
    m = aligner.m
    callees: list[tuple] = []
    calls = m.calls[func]
    for k in range(bisect_left(calls, lo), len(calls)):
        p = calls[k]
        if p >= hi:
            break
        owner = claimed.get(p)
        if owner == e or (
            owner is None
            and m.name[func][p] is not None
            and aligner.same_frame(e, func, p)
            and not aligner.foreign(func, p, unmatched)
        ):
            caller = m.name[func][p]
            callees.append((m.callee[func][p], f"{prefix}/{caller}" if prefix else caller, (fi, p)))
    return callees


def _options(
    aligner: Aligner, s: int, func: int, claimed: dict, kmin: str | None, lo: int, hi: int, callees: list[tuple]
) -> set:
    """Where body eqn s has an op: ("inline", context) in [lo, hi), ("call", instance) in a callee."""
    m = aligner.m
    seen = set()
    rel = aligner.eqns[s].rel
    cands = aligner.candidates(s, func)
    for k in range(bisect_left(cands, lo), len(cands)):
        p = cands[k]
        if p >= hi:
            break
        if p in claimed or not aligner.same_frame(s, func, p):
            continue
        n = m.norm[func][p]
        if n is None:  # never for a candidate: the index holds named ops only
            continue
        if n == rel:
            x = ""
        elif n.endswith("/" + rel):
            x = n[: len(n) - len(rel) - 1]
        else:
            continue
        if kmin is None or x == kmin or (x.startswith(kmin + "/") if kmin else True):
            seen.add(("inline", x))
    for instance in callees:
        callee = instance[0]
        taken = aligner.claims.get(instance, {})
        if any(
            m.norm[callee][p] == rel and p not in taken and aligner.same_frame(s, callee, p)
            for p in aligner.candidates(s, callee)
        ):
            seen.add(("call", instance))
    return seen


def claim_leftovers(
    aligner: Aligner, e: int, fi: tuple, claimed: dict, kmin: str, lo: int, hi: int, unmatched: set
) -> None:
    """Ops an owner's lowering emits itself (a scan's `while`, counters, helper calls).

    Only ops named with no primitive that some eqn at the same source position has: those
    could be such an eqn's (a body eqn of a later owner on the same line, say); nor one of the
    owner's own body eqns has (JAX 0.7 writes a while loop's body ops at the loop's position); nor
    one of an eqn JAX wrote elsewhere than its own position (`displaced`).
    """
    func = fi[0]
    names = aligner.m.norm[func]
    head = kmin + "/" if kmin else ""
    info = aligner.eqns[e]
    taken = aligner.frame_prims.get(info.frame[:3] if info.frame else None, set()) - {info.prim}
    taken = taken | {rel[rel.rfind("/") + 1 :] for rel, _ in aligner.descendant_keys(e)}
    # nor one whose eqns have no op at their own position: JAX 0.7 writes a remat body's ops at the
    # remat's line, so a second remat on that line would take the first one's body ops
    taken = taken | aligner.displaced | aligner.twin_owner_prims(e)
    for p in range(lo, hi):
        n = names[p]
        if (
            n is None
            or p in claimed
            or not n.startswith(head)
            or n == kmin
            or not aligner.same_frame(e, func, p)
            or aligner.foreign(func, p, unmatched)
            or n[n.rfind("/") + 1 :] in taken
        ):  # could be an eqn's with that primitive
            continue
        aligner.claim(e, fi, claimed, p)
