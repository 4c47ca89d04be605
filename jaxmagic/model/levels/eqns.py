"""The eqns of a program as the aligner reads them: graph order, names as JAX writes them into op
names, user frames, and which ones `jit` keeps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...capture import jax_compat
from ...capture.jax_compat.stablehlo import Frame, file_canonicaliser


@dataclass(slots=True)
class Eqn:
    prim: str
    ns: str  # name stack relative to the eqn's jaxpr, as JAX writes it into op names
    rel: str  # ns + "/" + prim: the tail of every op name lowered from the eqn
    frame: Frame | None  # innermost user frame; an eqn without one inherits its owner's (JAX does too)
    subs: list[list[int]]  # for each sub-jaxpr (param order), the indices of its top-level eqns
    own_frame: bool = True  # False: `frame` is inherited; JAX writes it only when lowering inline
    live: bool = True  # False: removed by the dead-code elimination `jit` runs before lowering, or no op
    obj: Any = None  # the JAX eqn, to compare twins' params and input avals


def collect_eqns(closed_jaxpr: Any) -> list[Eqn]:
    """Index 0 is a pseudo-eqn whose single sub-jaxpr is the root; eqn i of graph order is index i+1."""
    canon = file_canonicaliser()
    root = Eqn("", "", "", None, [])
    eqns = [root]
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    root.subs.append(_collect_body(jaxpr, None, True, eqns, _kept(jaxpr), canon))
    return eqns


def _collect_body(
    jaxpr: Any, inherited: Frame | None, live: bool, eqns: list[Eqn], kept: set[int] | None, canon: Any
) -> list[int]:
    """`collect_eqns`' walk: appends the body's eqns (nested ones after their owner), returns their
    indices (a module function: a recursive closure is a reference cycle, which would keep every
    `Eqn` of a big program alive until Python's cyclic collector runs)."""
    ids = []
    for eqn in jaxpr.eqns:
        prim = eqn.primitive.name
        ns = jax_compat.lowered_name_stack_text(eqn.source_info)
        own = _eqn_frame(eqn, canon)
        frame = own or inherited
        alive = (
            live
            and (kept is None or id(eqn) in kept or any(id(v) in kept for v in eqn.outvars))
            and not (prim == "integer_pow" and eqn.params.get("y") == 1)
        )  # JAX 0.4 keeps `x ** 1`: lowered to x, no op
        info = Eqn(prim, ns, f"{ns}/{prim}" if ns else prim, frame, [], own is not None, alive, eqn)
        ids.append(len(eqns))
        eqns.append(info)
        for _, sub in jax_compat.sub_jaxprs(eqn, opened=True):
            info.subs.append(_collect_body(sub, frame, alive, eqns, kept, canon))
    return ids


def same_lowering(a: Any, b: Any) -> bool:
    """Whether two eqns share JAX's cached lowering key (primitive, params, input avals)."""
    try:
        return (
            a.primitive is b.primitive
            and [v.aval for v in a.invars] == [v.aval for v in b.invars]
            and bool(a.params == b.params)
        )
    except Exception:  # params that cannot be compared (arrays): assume they differ
        return False


def _kept(jaxpr: Any) -> set[int] | None:
    """ids of the eqns (and their outvars) that survive `jit`'s dead-code elimination, or None.

    The eliminated program keeps the surviving eqn objects; an owner whose sub-jaxpr shrank is
    a new eqn but keeps its output vars, hence both.
    """
    pruned = jax_compat.dce_jaxpr(jaxpr)
    if pruned is None:
        return None
    kept: set[int] = set()
    _add_kept(pruned, kept)
    return kept


def _add_kept(jaxpr: Any, kept: set[int]) -> None:
    """`_kept`'s walk (a module function: a recursive closure is a reference cycle)."""
    for eqn in jaxpr.eqns:
        kept.add(id(eqn))
        kept.update(id(v) for v in eqn.outvars)
        for _, sub in jax_compat.sub_jaxprs(eqn, opened=True):
            _add_kept(sub, kept)


def _eqn_frame(eqn: Any, canon: Any) -> Frame | None:
    frame = jax_compat.user_frame(eqn.source_info)
    if frame is None:
        return None
    return (
        canon(frame.file_name),
        frame.start_line,
        frame.start_column,
        getattr(frame, "end_line", None),
        getattr(frame, "end_column", None),
    )
