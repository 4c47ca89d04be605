"""Finding an eqn's ops in a function: by primitive and source position, under a name context.

The state every step of the alignment shares: which ops each eqn got (`hits`) and which ops of
each function instance are taken (`claims`).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from .eqns import Eqn
from .ops import OpTable


class OpSearch:
    """Queries over the op table for eqns; `hits[e]` = [(func, position, caller prefix)]."""

    def __init__(self, eqns: list[Eqn], module: OpTable):
        self.eqns = eqns
        self.m = module
        self.hits: list[list[tuple[int, int, str]]] = [[] for _ in eqns]
        self.claims: dict[tuple, dict[int, int]] = {}  # function instance -> {position: eqn}
        self._cand_cache: dict[tuple[int, int], list[int]] = {}
        self.frame_prims: dict[Any, set[str]] = {}  # primitives of all eqns, per source position
        for info in eqns[1:]:
            self.frame_prims.setdefault(info.frame[:3] if info.frame else None, set()).add(info.prim)
        # primitives of live eqns with no op at their own position: JAX wrote their ops elsewhere (JAX 0.7
        # writes a remat or loop body's ops at the owner's position), so an op named so may be theirs
        at = {key for index in module.index for key in index}
        self.displaced = {
            info.prim
            for info in eqns[1:]
            if info.live and info.frame is not None and (info.prim,) + info.frame[:3] not in at
        }
        self._owners_at: dict[Any, list[int]] | None = None  # `twin_owner_prims`

    # An eqn's ops in a function (by primitive and frame), and whether an op's frame is the eqn's.
    # An eqn without a user frame of its own has its owner's frame when lowered inline and none
    # in a function of its own (a nested jit's body from library code): both are accepted.
    def candidates(self, e: int, func: int) -> list[int]:
        info = self.eqns[e]
        cache_key = (e, func)
        found = self._cand_cache.get(cache_key)
        if found is not None:
            return found
        frame = info.frame
        index = self.m.index[func]
        found = index.get((info.prim,) + (frame[:3] if frame is not None else (None, None, None)), [])
        if not info.own_frame and frame is not None:
            bare = index.get((info.prim, None, None, None))
            if bare:
                found = sorted(found + bare)
        self._cand_cache[cache_key] = found
        return found

    def same_frame(self, e: int, func: int, p: int) -> bool:
        info = self.eqns[e]
        a, b = info.frame, self.m.frame[func][p]
        if a is None or b is None:
            return a is b or (b is None and not info.own_frame)
        if a[:3] != b[:3]:
            return False
        return a[3] is None or b[3] is None or (a[3], a[4]) == (b[3], b[4])

    def first(
        self,
        e: int,
        func: int,
        claimed: dict,
        ctx: str | None,
        lo: int,
        hi: int,
        exclude: set[str | None] | None = None,
        blocked: set[int] | None = None,
    ) -> int | None:
        """The first unclaimed op in [lo, hi) named for eqn e: exactly `ctx/rel`, or (ctx None) any `.../rel`.

        Ops named in `exclude` and ops inside the regions of ops at `blocked` positions (bodies of
        eqns placed before) are passed over.
        """
        cands = self.candidates(e, func)
        if not cands:
            return None
        rel = self.eqns[e].rel
        want = None if ctx is None else (f"{ctx}/{rel}" if ctx else rel)
        norms = self.m.norm[func]
        for k in range(bisect_left(cands, lo), len(cands)):
            p = cands[k]
            if p >= hi:
                break
            if p in claimed or not self.same_frame(e, func, p):
                continue
            n = norms[p]  # never None: the index holds named ops only
            if (
                (n == want if want is not None else (n is not None and (n == rel or n.endswith("/" + rel))))
                and (exclude is None or self.m.name[func][p] not in exclude)
                and not (blocked and self.m.inside(func, p, blocked))
            ):
                return p
        return None

    def claim(self, e: int, fi: tuple, claimed: dict, p: int) -> None:
        claimed[p] = e
        self.hits[e].append((fi[0], p, fi[1]))

    def descendant_keys(self, e: int) -> set[tuple]:
        """(rel, frame) of every eqn in owner e's bodies, at any depth."""
        keys = set()
        todo = [s for ids in self.eqns[e].subs for s in ids]
        while todo:
            s = todo.pop()
            keys.add((self.eqns[s].rel, self.eqns[s].frame))
            todo.extend(x for ids in self.eqns[s].subs for x in ids)
        return keys

    def twins(self, a: int, b: int) -> bool:
        x, y = self.eqns[a], self.eqns[b]
        return x.rel == y.rel and x.frame == y.frame and not x.subs

    def foreign(self, func: int, p: int, unmatched: set) -> bool:
        """An op that may belong to a sibling eqn we could not place: never claim it for another."""
        norm = self.m.norm[func][p]
        if norm is None:
            return False
        frame = self.m.frame[func][p]
        last = norm[norm.rfind("/") + 1 :]
        return any(prim == last and (f is None or frame is None or f[:3] == frame[:3]) for prim, f in unmatched)

    def twin_owner_prims(self, e: int) -> set[str]:
        """Primitives in the bodies of the other owners at owner e's source position (two remats on
        one line): JAX 0.7 writes those bodies at that position, so an op so named may be theirs."""
        if self._owners_at is None:  # source position -> owners there, built once per program
            self._owners_at = {}
            for o, info in enumerate(self.eqns):
                if info.subs and info.live:
                    self._owners_at.setdefault(info.frame[:3] if info.frame else None, []).append(o)
        frame = self.eqns[e].frame
        frame = frame[:3] if frame else None
        prims: set[str] = set()
        for o in self._owners_at.get(frame, ()):
            if o != e:
                prims |= {rel[rel.rfind("/") + 1 :] for rel, _ in self.descendant_keys(o)}
        return prims
