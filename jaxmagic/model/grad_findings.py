"""Findings of a grad document: where residual memory goes and, with values, what is wrong with
the gradients (NaN or Inf, vanishing, exploding) and the op where it first appears.

Pure functions of the document's entries (graphs with `values` by var id, as
`model/grad.py` builds them), so they are tested on the JSON a user sees.

Thresholds are on a gradient's root mean square (L2 norm / sqrt(size)), which does not grow
with the size of the parameter: a leaf is *vanishing* when its gradient is exactly zero, or
its RMS is below `VANISH_RMS`, or below `VANISH_RELATIVE` times the median RMS of the
entry's leaves (one layer starved while the others learn; the median, so one exploding leaf
does not make every other leaf look vanishing); *exploding* when its RMS is above
`EXPLODE_RMS`. These are rules of thumb, stated in every message, not facts from JAX; NaN and
Inf counts are facts.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from typing import Any

from ..capture.source import where_text
from ..units import bytes_text, plural

TOP_RESIDUALS = 5  # largest residuals reported as findings, at most
# A residual is *large* (a `large_residual` finding) when it is both big in memory and a big part of
# what the cell keeps between the passes: at least LARGE_RESIDUAL_BYTES (1 MiB: below that, memory held
# for the backward pass is not what limits a program) and at least LARGE_RESIDUAL_SHARE (10%) of all
# residual bytes (so one of a thousand equal 2 MiB activations is not called out). A 16-byte residual
# never is; the total is always reported (`residual_memory`).
LARGE_RESIDUAL_BYTES = 1 << 20
LARGE_RESIDUAL_SHARE = 0.10
VANISH_RMS = 1e-7
VANISH_RELATIVE = 1e-6
EXPLODE_RMS = 1e3


def grad_findings(entries: list[dict], total: int) -> list[dict]:
    """Warnings about gradient values first (entry order), then residual memory."""
    out: list[dict] = []
    for entry in entries:
        out.extend(_value_findings(entry))
    out.extend(_residual_findings(entries, total))
    return out


def _finding(kind: str, severity: str, message: str, entry: str | None, **extra: Any) -> dict:
    return {
        "kind": kind,
        "severity": severity,
        "message": message,
        "entry": entry,
        "residual": None,
        "source": None,
        **extra,
    }


# ---------------------------------------------------------------------------------------------
# Residual memory.


def is_large_residual(nbytes: int, total: int) -> bool:
    """Big in memory and a big part of the total (LARGE_RESIDUAL_BYTES, LARGE_RESIDUAL_SHARE)."""
    return nbytes >= LARGE_RESIDUAL_BYTES and nbytes >= LARGE_RESIDUAL_SHARE * total


def _residual_findings(entries: list[dict], total: int) -> list[dict]:
    found = []
    for entry in entries:
        residuals = (
            entry["residuals"]
            if entry["origin"] == "split"
            else [r for region in entry.get("regions", []) for r in region["residuals"]]
        )
        found.extend((r["bytes"], entry, r) for r in residuals)
    out = []
    if found:
        count = len(found)
        out.append(
            _finding(
                "residual_memory",
                "info",
                f"{plural(count, 'residual')} {'holds' if count == 1 else 'hold'} {bytes_text(total)} between the forward "
                "and the backward pass",
                None,
            )
        )
    found.sort(key=lambda t: -t[0])
    for nbytes, entry, r in found[:TOP_RESIDUALS]:
        if not is_large_residual(nbytes, total):
            break
        where = f" ({where_text(r['source']['file'], r['source']['line'])})" if r.get("source") else ""
        out.append(
            {
                **_finding(
                    "large_residual",
                    "info",
                    f"{entry['name']}: residual {r['aval']} holds {bytes_text(nbytes)}{where}",
                    entry["id"],
                ),
                "residual": r["id"],
                "source": r.get("source"),
            }
        )
    return out


# ---------------------------------------------------------------------------------------------
# Gradient values.


def _value_findings(entry: dict) -> list[dict]:
    if entry["origin"] == "split":
        graphs = [("forward", entry["forward"]), ("backward", entry["backward"])]
    else:
        program = entry["program"]
        graphs = [("program", program)]
    if not any(g.get("values") for _, g in graphs):
        return []
    out = []
    for kind, word, bad in (
        ("nan_gradient", "NaN", lambda v: v.get("nan", 0) > 0),
        ("inf_gradient", "Inf", lambda v: v.get("inf", 0) > 0),
    ):
        finding = _first_bad(entry, graphs, kind, word, bad)
        if finding is not None:
            out.append(finding)
    out.extend(_leaf_findings(entry))
    return out


def _first_bad(
    entry: dict, graphs: list[tuple[str, dict]], kind: str, word: str, bad: Callable[[dict], bool]
) -> dict | None:
    """The first node (forward before backward) whose output is bad while none of its inputs is."""
    bad_grads = [g["path"] for g in entry.get("grads_of", []) if g.get("value") and bad(g["value"])]
    roles = entry.get("roles") or {}
    hit = None
    for name, fn in graphs:
        node = _first_node(fn, fn.get("values") or {}, bad, nodes=fn["nodes"])
        if node is not None:
            hit = (name, fn, node)
            break
    if hit is None and not bad_grads:
        return None
    leaves = f"; gradients with {word}: {', '.join(bad_grads[:5])}" if bad_grads else ""
    if hit is None:
        return _finding(
            kind,
            "warning",
            f"{entry['name']}: {word} in the gradients{leaves} (already in the inputs: no op introduces it)",
            entry["id"],
            node=None,
            graph=None,
            path=None,
        )
    name, fn, node = hit
    count = sum((fn["values"].get(v) or {}).get(word.lower(), 0) for v in node["outs"])
    where = _where(node)
    part = f"{roles[node['id']]} part of the program" if name == "program" and node["id"] in roles else name
    return {
        **_finding(
            kind,
            "warning",
            f"{entry['name']}: {word} first appears in the {part} at {node['prim']}"
            f"{where} ({count} {word} in its output){leaves}",
            entry["id"],
            node=node["id"],
            graph=name,
            path=None,
        ),
        "source": node.get("src"),
    }


def _leaf_findings(entry: dict) -> list[dict]:
    """Vanishing and exploding gradients of the differentiated leaves, each with its first op
    (a jitted step's leaves are the gradients each `grad` returned while the step was traced)."""
    leaves = [(g, _rms(g["value"])) for g in entry.get("grads_of", []) if g.get("value")]
    finite = [r for _, r in leaves if r is not None]
    if not finite:
        return []
    typical = statistics.median(finite)
    out = []
    for g, rms in leaves:
        if rms is None:
            continue
        if rms == 0:
            kind, why = "vanishing_gradient", "is exactly zero"
            small = lambda v: _rms(v) == 0
        elif rms < VANISH_RMS or rms < VANISH_RELATIVE * typical:
            kind, limit = "vanishing_gradient", max(VANISH_RMS, VANISH_RELATIVE * typical)
            why = (
                f"has RMS {rms:.3g} (below {limit:.3g}: {VANISH_RMS:g} absolute or {VANISH_RELATIVE:g} × the "
                f"median leaf's {typical:.3g})"
            )
            small = lambda v, limit=limit: (r := _rms(v)) is not None and r < limit
        elif rms > EXPLODE_RMS:
            kind, why = "exploding_gradient", f"has RMS {rms:.3g} (above {EXPLODE_RMS:g})"
            small = lambda v: (r := _rms(v)) is not None and r > EXPLODE_RMS
        else:
            continue
        graph, node = _origin(entry, g.get("var"), small) if g.get("var") else (None, None)
        where = f"; it first gets there in the {graph} at {node['prim']}{_where(node)}" if node is not None else ""
        out.append(
            {
                **_finding(
                    kind,
                    "warning",
                    f"{entry['name']}: the gradient of {g['path']} {why}{where}",
                    entry["id"],
                    node=node["id"] if node else None,
                    graph=graph if node else None,
                    path=g["path"],
                ),
                "source": node.get("src") if node else None,
            }
        )
    return out


def _origin(entry: dict, var: str, bad: Callable[[dict], bool]) -> tuple[str | None, dict | None]:
    """Where the backward value `var` first turns bad: the first backward op on its way that makes it
    so, or, when a residual brings it in already bad (exp overflowed, tanh saturated), the first
    forward op on the way to that residual. A jitted step is one graph: its first op on the way."""
    if entry["origin"] == "jit":
        program = entry["program"]
        node = _first_node(program, program.get("values") or {}, bad, nodes=_ordered(program, _ancestors(program, var)))
        return ("program", node) if node is not None else (None, None)
    backward, forward = entry["backward"], entry["forward"]
    bvals, fvals = backward.get("values") or {}, forward.get("values") or {}
    upstream = _ancestors(backward, var)
    node = _first_node(backward, bvals, bad, nodes=_ordered(backward, upstream))
    if node is not None:
        return "backward", node
    read = {op["var"] for n in _ordered(backward, upstream) for op in n["ins"] if "var" in op} | {var}
    for r in entry["residuals"]:
        if r["forward_var"] and any(v in read and bvals.get(v) and bad(bvals[v]) for v in r["backward_vars"]):
            node = _first_node(forward, fvals, bad, nodes=_ordered(forward, _ancestors(forward, r["forward_var"])))
            if node is not None:
                return "forward", node
    return None, None


def _rms(summary: dict | None) -> float | None:
    if not summary or summary.get("norm") is None:
        return None
    size = math.prod(summary.get("shape") or [])
    return summary["norm"] / math.sqrt(size) if size else None


def _ordered(fn: dict, keep: Any = None) -> Iterable[dict]:
    """Nodes in evaluation order (the graph's node order); `keep`: a predicate or a set of node ids."""
    for node in fn["nodes"]:
        if keep is None or (node["id"] in keep if isinstance(keep, set) else keep(node)):
            yield node


def _first_node(fn: dict, values: dict, bad: Callable[[dict], bool], nodes: Iterable[dict]) -> dict | None:
    for node in nodes:
        outs = [values.get(v) for v in node["outs"]]
        if not any(o is not None and bad(o) for o in outs):
            continue
        ins = [values.get(op["var"]) for op in node["ins"] if "var" in op]
        if not any(i is not None and bad(i) for i in ins):
            return node
    return None


def _ancestors(fn: dict, var: str) -> set[str]:
    """Ids of the nodes `var` depends on, through the graph's own operands (sub-jaxprs via their owner)."""
    defs = {v["id"]: v["def"] for v in fn["vars"]}
    nodes = {n["id"]: n for n in fn["nodes"]}
    seen: set[str] = set()
    stack = [var]
    while stack:
        node = nodes.get(defs.get(stack.pop(), ""))
        if node is None or node["id"] in seen:
            continue
        seen.add(node["id"])
        stack.extend(op["var"] for op in node["ins"] if "var" in op)
    return seen


def _where(node: dict | None) -> str:
    src = (node or {}).get("src")
    return f" ({where_text(src['file'], src['line'])})" if src else ""
