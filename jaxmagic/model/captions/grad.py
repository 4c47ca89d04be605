"""Captions of grad documents (%%grad_graph): see captions/__init__.py."""

from __future__ import annotations

import math

from ...units import bytes_text
from .words import at_line, counted, first_clause, user_name

_VALUE_FINDINGS = ("nan_gradient", "inf_gradient", "exploding_gradient", "vanishing_gradient")


def grad_caption(doc: dict) -> list[str]:
    entries = doc.get("entries") or []
    if not entries:
        return []
    out = []
    finding = min(
        (f for f in doc.get("findings") or [] if f["kind"] in _VALUE_FINDINGS),
        key=lambda f: _VALUE_FINDINGS.index(f["kind"]),
        default=None,
    )
    if finding is not None:
        out.append(_gradient_finding(finding, {e["id"]: e for e in entries}))
    shown = entries if len(entries) <= 3 else entries[:2]
    out.extend(_entry_sentence(e) for e in shown)
    if len(shown) < len(entries):
        out.append(
            f"{len(entries) - len(shown)} more differentiations; "
            f"{bytes_text(doc.get('residual_bytes', 0))} of residuals in all."
        )
    largest = _largest_residual(entries)
    if largest is not None:
        out.append(largest)
    return out


def _what(entry: dict) -> str:
    name = user_name(entry["name"])
    return name if entry["origin"] == "jit" else f"{entry['kind']} of {name}"


def _entry_sentence(entry: dict) -> str:
    what = _what(entry)
    if entry["origin"] == "tangent":
        t = entry["totals"]
        return (
            f"{what}: {t['n_primal']:,} primal and {t['n_tangent']:,} tangent eqns in one forward pass; "
            "nothing is saved for a backward pass."
        )
    if entry["origin"] == "jit":
        t = entry["totals"]
        saved = f"{counted(t['n_residuals'], 'residual')} ({bytes_text(entry['residual_bytes'])}) saved"
        recomputed = f", {t['n_recomputed']:,} recomputed" if t.get("n_recomputed") else ""
        return (
            f"{what}: {t['n_forward']:,} forward, {t['n_backward']:,} backward and {t['n_other']:,} other eqns"
            f"{recomputed}; {saved} between the passes."
        )
    residuals = entry.get("residuals") or []
    text = (
        f"{what}: forward {counted(entry['forward']['n_eqns'], 'eqn')}, backward "
        f"{counted(entry['backward']['n_eqns'], 'eqn')}; {counted(len(residuals), 'residual')} "
        f"({bytes_text(entry['residual_bytes'])}) saved between them"
    )
    if entry.get("recomputed"):
        text += f"; {len(entry['recomputed']):,} backward eqns recompute checkpointed work"
    return text + "."


def _gradient_finding(finding: dict, entries: dict[str, dict]) -> str:
    entry = entries.get(finding.get("entry") or "")
    if entry is None:
        return first_clause(finding["message"]) + "."
    node = _finding_node(entry, finding)
    where = ""
    if node is not None:
        graph = finding.get("graph") or "program"
        where = f" at {node['prim']} in the {graph}{at_line(node.get('src'))}"
    name = _what(entry)
    if finding["kind"] in ("nan_gradient", "inf_gradient"):
        word = "NaN" if finding["kind"] == "nan_gradient" else "Inf"
        if node is None:
            return f"{name}: {word} in the gradients, already in the inputs (no op introduces it)."
        return f"{name}: {word} first appears{where}."
    grad = next((g for g in entry.get("grads_of") or [] if g["path"] == finding.get("path")), None)
    rms = _rms((grad or {}).get("value"))
    if finding["kind"] == "exploding_gradient":
        state = f"explodes (RMS {rms:.3g})" if rms is not None else "explodes"
    else:
        state = (
            "vanishes (exactly zero)" if rms == 0 else f"vanishes (RMS {rms:.3g})" if rms is not None else "vanishes"
        )
    first = f"; it first gets there{where}" if node is not None else ""
    return f"{name}: the gradient of {user_name(finding.get('path'))} {state}{first}."


def _finding_node(entry: dict, finding: dict) -> dict | None:
    graph = (
        entry.get(finding.get("graph") or "") if finding.get("graph") in ("forward", "backward", "program") else None
    )
    if graph is None or not finding.get("node"):
        return None
    return next((n for n in graph["nodes"] if n["id"] == finding["node"]), None)


def _rms(summary: dict | None) -> float | None:
    if not summary or summary.get("norm") is None:
        return None
    size = math.prod(summary.get("shape") or [])
    return summary["norm"] / math.sqrt(size) if size else None


def _largest_residual(entries: list[dict]) -> str | None:
    found = []
    for entry in entries:
        if entry["origin"] == "split":
            graph, residuals = entry["forward"], entry.get("residuals") or []
        elif entry["origin"] == "jit":
            graph, residuals = entry["program"], [r for reg in entry.get("regions") or [] for r in reg["residuals"]]
        else:
            continue
        found.extend((r["bytes"], entry, graph, r) for r in residuals)
    if not found:
        return None
    nbytes, entry, graph, r = max(found, key=lambda t: t[0])  # the first of equals: cell order
    if nbytes <= 0:
        return None
    producer = r.get("producer")
    if isinstance(producer, str):
        prim = next((n["prim"] for n in graph["nodes"] if n["id"] == producer), "?")
        made = f", made by {prim}{at_line(r.get('source'))}"
    elif isinstance(producer, dict) and "path" in producer:
        made = f": the input {user_name(producer['path'])} itself"
    else:
        made = ""
    return f"The largest residual is {r['aval']} ({bytes_text(nbytes)}) in {_what(entry)}{made}."
