"""JAX's own answer, computed independently of jaxmagic's model: eqns, var uses and avals per (sub-)jaxpr."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jax import extend


def _is_jaxpr(value: Any) -> bool:
    return isinstance(value, (extend.core.ClosedJaxpr, extend.core.Jaxpr))


def sub_jaxprs(eqn: Any) -> Iterator[Any]:
    for key in sorted(eqn.params):
        value = eqn.params[key]
        if _is_jaxpr(value):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from (v for v in value if _is_jaxpr(v))


def jaxprs_preorder(closed: Any) -> list[Any]:
    """Every jaxpr, root first, children after their parent (the order of the document's groups)."""
    out = []

    def visit(j: Any) -> None:
        j = getattr(j, "jaxpr", j)
        out.append(j)
        for eqn in j.eqns:
            for sub in sub_jaxprs(eqn):
                visit(sub)

    visit(closed)
    return out


def var_uses(jaxpr: Any) -> int:
    literal = extend.core.Literal
    uses = sum(1 for e in jaxpr.eqns for a in e.invars if not isinstance(a, literal))
    return uses + sum(1 for a in jaxpr.outvars if not isinstance(a, literal))


def total_eqns(closed: Any) -> int:
    return sum(len(j.eqns) for j in jaxprs_preorder(closed))
