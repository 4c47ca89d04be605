"""The script-free grad view: per differentiation, what was saved and what the gradients were.

For hosts that run no scripts (GitHub, nbviewer, email) and for `text/plain`: the findings,
then for each entry the residual table (largest first), the gradient of each input leaf
(with values), and collapsed pictures of the forward and backward graphs (a jitted train
step or a forward-mode call: its one program, with counts by role). Every document string is escaped.
"""

from __future__ import annotations

import heapq

from ..model.captions.words import at_line
from ..units import bytes_text, plural
from .html_parts import caption_html, caption_text, error_html, error_text, esc, findings_html, svg_img
from .static_svg import function_svg

MAX_ROWS = 30  # residuals and gradients listed per entry; the rest are counted


def grad_html(doc: dict) -> str:
    parts = [
        f"<div><p><b>{esc(doc.get('title', 'jaxmagic'))}</b></p>",
        caption_html(doc),
        error_html(doc),
        findings_html(doc),
    ]
    for entry in doc.get("entries", []):
        parts.append(f"<p><b>{esc(_heading(entry))}</b></p>")
        parts.extend(f"<p>{esc(line)}</p>" for line in _facts(entry))
        rows, n_residuals = _residual_rows(entry)
        if rows:
            parts.append("<table><tr><th>residual</th><th>bytes</th><th>made by</th><th>read by</th></tr>")
            parts.extend("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in rows)
            parts.append("</table>")
            if n_residuals > MAX_ROWS:
                parts.append(f"<p>… and {n_residuals - MAX_ROWS} more residuals</p>")
        grads = _gradient_rows(entry)
        if grads:
            parts.append(
                "<table><tr><th>gradient of</th><th>aval</th><th>min</th><th>max</th><th>mean</th>"
                "<th>norm</th><th>NaN</th><th>Inf</th></tr>"
            )
            parts.extend("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in row) + "</tr>" for row in grads[:MAX_ROWS])
            parts.append("</table>")
        for label, fn in _graphs(entry):
            parts.append(f"<p>{esc(label)}: {plural(fn['n_eqns'], 'eqn')}</p>")
            parts.append(svg_img(lambda fn=fn: function_svg(fn), f"{label} of {entry['name']}"))
    parts.extend(f"<p><i>{esc(note)}</i></p>" for note in doc.get("notes", []))
    parts.append("</div>")
    return "".join(parts)


def grad_text(doc: dict) -> str:
    lines = [doc.get("title", "jaxmagic"), *caption_text(doc), *error_text(doc)]
    lines.extend(f"{f['severity']}: {f['message']}" for f in doc.get("findings", []))
    for entry in doc.get("entries", []):
        lines.append("")
        lines.append(_heading(entry))
        lines.extend("  " + line for line in _facts(entry))
        rows, n_residuals = _residual_rows(entry)
        lines.extend(f"  residual {aval}: {size}, made by {made}, read by {read}" for aval, size, made, read in rows)
        if n_residuals > MAX_ROWS:
            lines.append(f"  … and {n_residuals - MAX_ROWS} more residuals")
        for path, aval, lo, hi, mean, norm, nan, inf in _gradient_rows(entry)[:MAX_ROWS]:
            lines.append(
                f"  gradient of {path} {aval}: min {lo}, max {hi}, mean {mean}, norm {norm}"
                + (f", NaN {nan}" if nan else "")
                + (f", Inf {inf}" if inf else "")
            )
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    return "\n".join(lines)


def _heading(entry: dict) -> str:
    what = "jitted" if entry["origin"] == "jit" else entry["kind"]
    site = entry.get("call_site") or entry.get("source")
    where = at_line(site) if site else ""
    calls = f", {entry['calls']} calls" if entry.get("calls", 1) > 1 else ""
    batch = f", per example: {entry['batch']}" if entry.get("batch") else ""
    saved = (
        "forward mode, nothing saved"
        if entry["origin"] == "tangent"
        else f"{bytes_text(entry['residual_bytes'])} of residuals"
    )
    return f"{what} {entry['name']}{where}{calls}{batch}: {saved}"


def _facts(entry: dict) -> list[str]:
    if entry["origin"] == "tangent":
        t = entry["totals"]
        return [f"{t['n_primal']} primal and {t['n_tangent']} tangent eqns; {entry['note']}"]
    if entry["origin"] == "jit":
        t = entry["totals"]
        return [
            f"{t['n_forward']} forward, {t['n_backward']} backward, {plural(t['n_other'], 'other eqn')}; "
            f"{plural(t['n_regions'], 'differentiation')}, {plural(t['n_residuals'], 'residual')}, "
            f"{t['n_recomputed']} recomputed"
        ]
    out = [entry["note"]] if entry.get("note") else []
    out += [
        f"forward {plural(entry['forward']['n_eqns'], 'eqn')}, backward {plural(entry['backward']['n_eqns'], 'eqn')}, "
        f"{plural(len(entry['residuals']), 'residual')}, "
        f"{plural(len(entry['links']['backward']), 'backward eqn')} linked to forward ones"
    ]
    if entry.get("recomputed"):
        out.append(f"{plural(len(entry['recomputed']), 'backward eqn')} recompute forward work (checkpoint/remat)")
    custom = [n for n in entry["forward"]["nodes"] if n["prim"].startswith("custom_")]
    if custom:
        out.append(f"{len(custom)} custom differentiation rule(s): " + ", ".join(sorted({n["prim"] for n in custom})))
    if entry.get("cotangent"):
        out.append(f"backward seeded with {entry['cotangent']}")
    return out


def _residual_rows(entry: dict) -> tuple[list[tuple], int]:
    """The rows of the `MAX_ROWS` largest residuals, and how many residuals there are in all: only
    the rows shown are formatted (a 10k-eqn step saves thousands of residuals)."""
    if entry["origin"] == "split":
        residuals, fn = entry["residuals"], entry["forward"]
    else:
        residuals, fn = [r for region in entry.get("regions", []) for r in region["residuals"]], entry["program"]
    shown = heapq.nsmallest(MAX_ROWS, residuals, key=lambda r: -r["bytes"])  # largest first, ties in order
    producers = {r["producer"] for r in shown if isinstance(r.get("producer"), str)}
    prims = {n["id"]: n["prim"] for n in fn["nodes"] if n["id"] in producers}
    rows = []
    for r in shown:
        producer = r.get("producer")
        if isinstance(producer, str):
            made = prims.get(producer, producer) + (at_line(r["source"]) if r.get("source") else "")
        elif isinstance(producer, dict) and "path" in producer:
            made = f"input {producer['path']}"
        elif isinstance(producer, dict) and "literal" in producer:
            made = f"constant {producer['literal']}"
        else:
            made = "an input or constant" if r.get("origin") != "forward" else "?"
        count = len(r.get("consumers", []))
        rows.append((r["aval"], bytes_text(r["bytes"]), made, plural(count, "backward eqn")))
    return rows, len(residuals)


def _gradient_rows(entry: dict) -> list[tuple]:
    rows = []
    for g in entry.get("grads_of", []):
        v = g.get("value")
        if v is None:
            continue
        rows.append(
            (
                g["path"],
                g["aval"],
                _num(v["min"]),
                _num(v["max"]),
                _num(v["mean"]),
                _num(v.get("norm")),
                v["nan"],
                v["inf"],
            )
        )
    return rows


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def _graphs(entry: dict) -> list[tuple[str, dict]]:
    if entry["origin"] != "split":
        return [("program", entry["program"])]
    return [("forward", entry["forward"]), ("backward", entry["backward"])]
