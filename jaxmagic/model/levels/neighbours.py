"""What the eqns around one tell about where its ops are: a later eqn's op before it, an owner's
body, and ops an eqn made through other primitives."""

from __future__ import annotations

from typing import Any

from .search import OpSearch

_LOOKAHEAD = 4  # how many following eqns (not twins of placed ones) `overtakes` checks

# The primitives JAX lowers through ops named for other primitives, and those names (`integer_pow`
# with y > 3 as `mul`s, y < -1 as a `div`; a psum's `add`): only these are ever taken as an eqn's
# internal ops. Any other foreign name is another eqn's (JAX 0.7 writes remat bodies at the remat's
# line, where a `sin` took the next remat's multiplies); an unknown lowering is left unlinked.
_LOWERED_THROUGH = {
    "integer_pow": frozenset({"mul", "div", "broadcast_in_dim"}),
    "psum": frozenset({"add"}),
    "psum2": frozenset({"add"}),
    "psum_invariant": frozenset({"add"}),
    "broadcast_in_dim": frozenset({"empty"}),
}


def join(a: str | None, b: str) -> str | None:
    """Name context `a` extended by the name stack `b` (None: any context)."""
    if a is None:
        return None
    return f"{a}/{b}" if a and b else (a or b)


class Neighbours(OpSearch):
    def overtakes(
        self,
        ids: list[int],
        k: int,
        func: int,
        claimed: dict,
        ctx: str | None,
        lo: int,
        p: int,
        placed: set[tuple],
        placed_names: set[str | None],
        regions: set[int],
    ) -> bool:
        """True if one of the next few eqns has an op before p.

        Eqns lower in order, so eqn k's first op cannot follow a later eqn's: then eqn k made no
        ops here (a no-op convert, say) and p belongs to a later twin with the same name. Twins of
        eqn k and of eqns already placed (whose further ops may lie before p) are no evidence. An
        owner without ops of its own counts by its body's first op.
        """
        checked = 0
        for other in ids[k + 1 : k + 1 + 8 * _LOOKAHEAD]:
            o = self.eqns[other]
            if self.twins(ids[k], other) or (o.rel, o.frame) in placed:
                continue
            checked += 1
            if checked > _LOOKAHEAD:
                break
            if self.first(other, func, claimed, ctx, lo, p, None, regions) is not None:
                return True
            if o.subs and self.proxy(other, func, claimed, ctx, lo, p, placed_names, placed, regions) is not None:
                return True
        return False

    def proxy(
        self,
        e: int,
        func: int,
        claimed: dict,
        ctx: str | None,
        lo: int,
        hi: int,
        exclude: set[str | None],
        ambiguous: set[tuple] | None = None,
        blocked: set[int] | None = None,
    ) -> int | None:
        """Where the body of an owner without ops of its own starts (its first body eqn's first op).

        Without it an op-less owner's span would run to the next placed sibling and swallow the
        ops of an op-less twin next to it (`relu(relu(x))`: two custom_jvp_calls on one line).
        Body eqns whose (name, frame) is in `ambiguous` (an earlier eqn's body has the same) are
        skipped: their ops could be the earlier one's.
        """
        kmin = join(ctx, self.eqns[e].ns)
        head = None if kmin is None else (kmin + "/" if kmin else "")
        for ids in self.eqns[e].subs:
            for b in [s for s in ids if self.eqns[s].live][:3]:
                if ambiguous is not None and (self.eqns[b].rel, self.eqns[b].frame) in ambiguous:
                    continue
                q = self.first(b, func, claimed, None, lo, hi, exclude, blocked)
                if q is not None and (head is None or (self.m.norm[func][q] or "").startswith(head)):
                    return q
                if self.eqns[b].subs:
                    q = self.proxy(b, func, claimed, kmin, lo, hi, exclude, ambiguous, blocked)
                    if q is not None:
                        return q
        return None

    def internals(
        self,
        e: int,
        func: int,
        claimed: dict,
        head: str | None,
        lo: int,
        hi: int,
        regions: set[int],
        before: set,
    ) -> list[int]:
        """Ops of an eqn JAX lowered through other primitives, or [] if it made none.

        `integer_pow` with y > 3 lowers to multiplies named `.../mul`: ops from `lo` on, at the
        eqn's own frame, named `<ctx>/<name stack>/<p>` where p is the eqn's primitive or one no other
        eqn of the program with that frame has, up to the first named op that is not such. Only
        called when the previous placed eqn has another frame; ops at the positions of earlier eqns
        (`before`: a scan's loop, an unplaced owner's body) are passed over until the first op of ours.
        """
        info = self.eqns[e]
        others = (self.frame_prims.get(info.frame[:3] if info.frame else None, set()) | self.displaced) - {info.prim}
        helpers = _LOWERED_THROUGH.get(info.prim, frozenset())
        prefix = head + "/" if head else ""
        norms, frames = self.m.norm[func], self.m.frame[func]
        found: list[int] = []
        foreign = False
        for p in range(lo, hi):
            n = norms[p]
            if n is None or p in claimed or self.m.inside(func, p, regions):
                continue
            last = n[n.rfind("/") + 1 :]
            if (
                frames[p] is None
                or info.frame is None
                or not self.same_frame(e, func, p)
                or not n.startswith(prefix)
                or "/" in n[len(prefix) :]
                or last in others
                or (last != info.prim and last not in helpers)
            ):
                if not found and frames[p] is not None and frame_key(frames[p]) in before:
                    continue
                break
            foreign = foreign or last != info.prim
            found.append(p)
        return found if foreign else []


def frame_key(frame: Any) -> Any:
    """The source position (file, line, column) of a frame, or None."""
    return frame[:3] if frame else None
