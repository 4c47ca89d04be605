"""The alignment itself: one jaxpr's eqns, in graph order, with the ops of the function or region
span their jaxpr was lowered into (the rules: this package's docstring)."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from . import bodies, twins
from .neighbours import Neighbours, frame_key, join


@dataclass(slots=True)
class _Span:
    """One jaxpr being aligned with the ops [lo, hi) of a function instance: what is placed so far."""

    fi: tuple  # function instance: (func, caller prefix, (caller instance, call op) | None)
    func: int  # fi[0]: the function's index
    claimed: dict  # the instance's {position: eqn}
    ctx: str | None  # name context of the jaxpr's ops ("" at the function's top, None: any)
    lo: int
    hi: int
    ids: list[int]  # the jaxpr's live eqns
    cur: int  # where the next eqn's ops may start
    starts: dict[int, int] = field(default_factory=dict)  # eqn -> its first op
    chunks: dict[int, list[int]] = field(default_factory=dict)  # twins' ops, shared out by twins.split
    # owners placed by their body's first op (they claim nothing there)
    proxies: dict[int, int] = field(default_factory=dict)
    # (name, frame) of eqns placed so far and their bodies': no evidence
    placed: set[tuple] = field(default_factory=set)
    # op names (as written) of placed eqns: further such ops are theirs
    placed_names: set[str | None] = field(default_factory=set)
    regions: set[int] = field(default_factory=set)  # placed ops: what lies in their regions is their eqns' bodies
    earlier: set = field(default_factory=set)  # source positions of the eqns (and bodies) before the current one
    pending: tuple[list[int], int] | None = None  # a run of twins placed at an op, its end not yet known
    last_frame: Any = None


class Aligner(Neighbours):
    """Assigns StableHLO ops to eqns; `hits[e]` = [(func, position, caller prefix)]."""

    def run(self) -> None:
        main = self.m.main
        assert main is not None
        self.align(self.eqns[0].subs[0], (main, "", None), self.m.root_name, 0, len(self.m.start[main]))

    def align(self, ids: list[int], fi: tuple, ctx: str | None, lo: int, hi: int) -> None:
        """Align one jaxpr's eqns with the ops at positions [lo, hi) of a function instance."""
        live = [e for e in ids if self.eqns[e].live]
        span = _Span(fi, fi[0], self.claims.setdefault(fi, {}), ctx, lo, hi, live, lo)
        position = {e: k for k, e in enumerate(live)}
        runs = self._runs(live)
        for k_run, run in enumerate(runs):
            if k_run:
                for x in runs[k_run - 1]:
                    frame = self.eqns[x].frame
                    span.earlier.add(frame[:3] if frame else None)  # frame_key, inline: a hot loop
                    if self.eqns[x].subs:
                        span.earlier.update(frame_key(f) for _, f in self.descendant_keys(x))
            info = self.eqns[run[0]]
            if info.subs or ctx is None or info.frame == span.last_frame or not self._place_internals(span, run):
                self._place(span, run, position[run[0]])
        self._split_pending(span, hi)
        self._claim_placed(span)

    def _runs(self, ids: list[int]) -> list[list[int]]:
        """Adjacent twins (same name and frame) form one run."""
        runs: list[list[int]] = []
        for e in ids:
            if runs and not self.eqns[e].subs and self.twins(runs[-1][-1], e):
                runs[-1].append(e)
            else:
                runs.append([e])
        return runs

    def _split_pending(self, span: _Span, bound: int) -> None:
        if span.pending is None:
            return
        run, p = span.pending
        twins.split(self, run, p, bound, span.func, span.claimed, span.starts, span.chunks)
        span.pending = None

    def _place_internals(self, span: _Span, run: list[int]) -> bool:
        """Place a run whose eqn JAX lowered through other primitives (`neighbours.internals`).

        Only for an eqn without sub-jaxprs in a known context whose frame differs from the last
        placed eqn's (the caller checks, on its hot path)."""
        e = run[0]
        info = self.eqns[e]
        inner = self.internals(
            e,
            span.func,
            span.claimed,
            join(span.ctx, info.ns),
            span.cur,
            span.hi,
            span.regions,
            span.earlier - {frame_key(info.frame)},
        )
        if not inner:
            return False
        if span.pending is not None:
            self._split_pending(span, inner[0])
        if len(run) == 1:
            span.starts[e], span.chunks[e] = inner[0], inner
        else:
            twins.share(self, run, inner, span.func, span.starts, span.chunks)
        span.placed.add((info.rel, info.frame))
        span.last_frame = info.frame
        span.cur = inner[-1] + 1
        return True

    def _place(self, span: _Span, run: list[int], k: int) -> None:
        """Place a run at the first op named for its first eqn, unless later eqns say it made none here."""
        e = run[0]
        info = self.eqns[e]
        func, claimed, ctx, cur = span.func, span.claimed, span.ctx, span.cur
        p = self.first(e, func, claimed, ctx, cur, span.hi, None, span.regions)
        if (
            p is not None
            and p > cur
            and self.overtakes(span.ids, k, func, claimed, ctx, cur, p, span.placed, span.placed_names, span.regions)
        ):
            p = None
        if p is not None and info.subs:
            # an owner's own ops come before its inline body; an op named for it after its body's
            # first op is a later twin's (a constant of a second remat on the same line, say)
            q = self.proxy(e, func, claimed, ctx, cur, p, span.placed_names, span.placed, span.regions)
            if q is not None:
                p = None
        if p is None:
            if info.subs:  # an owner without ops of its own: its body's first op bounds it
                q = self.proxy(e, func, claimed, ctx, cur, span.hi, span.placed_names, span.placed, span.regions)
                if q is not None:
                    span.proxies[e] = q
                    span.placed.update(self.descendant_keys(e))
                    span.cur = q + 1
            return
        if span.pending is not None:
            self._split_pending(span, p)
        span.pending = (run, p) if len(run) > 1 else None
        span.starts[e] = p
        span.regions.add(p)
        span.placed.add((info.rel, info.frame))
        if info.subs:
            span.placed.update(self.descendant_keys(e))
        span.placed_names.add(self.m.name[func][p])
        span.last_frame = info.frame
        span.cur = p + 1

    def _claim_placed(self, span: _Span) -> None:
        """Each placed eqn claims its ops up to the next placed eqn; owners then place their bodies."""
        ends: dict[int, int] = {}
        nxt = span.hi
        for e in reversed(span.ids):
            ends[e] = nxt
            if e in span.starts:
                nxt = span.starts[e]
            elif e in span.proxies:
                nxt = span.proxies[e]
        unmatched = {(self.eqns[e].prim, self.eqns[e].frame) for e in span.ids if e not in span.starts}
        prev = span.lo
        for e in span.ids:
            info = self.eqns[e]
            p, end = span.starts.get(e), ends[e]
            ectx = span.ctx
            if p is not None:
                ectx = self._claim_own(span, e, p, end)
            if info.subs:
                kmin = join(ectx, info.ns)
                bodies.place_bodies(self, e, span.fi, span.claimed, kmin, prev, end, unmatched)
                if kmin is not None and p is not None:  # placed by an op of its own, not by its body
                    bodies.claim_leftovers(self, e, span.fi, span.claimed, kmin, prev, end, unmatched)
            if p is not None:
                prev = p + 1
            elif e in span.proxies:
                prev = span.proxies[e] + 1

    def _claim_own(self, span: _Span, e: int, p: int, end: int) -> str:
        """Claim eqn e's ops from its first op p up to `end`; returns the name context of its ops."""
        func, claimed = span.func, span.claimed
        norms = self.m.norm[func]
        rel = self.eqns[e].rel
        name = norms[p]
        assert name is not None  # a placed op is one named for the eqn
        if e in span.chunks:
            for q in span.chunks[e]:
                self.claim(e, span.fi, claimed, q)
        else:
            cands = self.candidates(e, func)
            for k in range(bisect_left(cands, p), len(cands)):
                q = cands[k]
                if q >= end:
                    break
                if q not in claimed and norms[q] == name and self.same_frame(e, func, q):
                    self.claim(e, span.fi, claimed, q)
        return name[: len(name) - len(rel) - 1] if len(name) > len(rel) else ""
