"""The script-free timeline: summary table, misses in words, findings, and a small SVG.

For hosts that run no scripts (GitHub, nbviewer, email) and for `text/plain`. The
picture aggregates calls into at most `COLUMNS` time columns per lane, so a cell of
100,000 calls gives the same small image as one of ten. Every document string is escaped.
"""

from __future__ import annotations

from ..units import duration_text, plural
from .html_parts import caption_html, caption_text, error_html, error_text, findings_html, svg_img
from .html_parts import esc as _esc

COLUMNS = 240  # time columns of the static picture
MAX_LANES = 40  # lanes drawn and listed; the rest are counted
MAX_MISSES = 30  # misses listed in words
LANE_H, LABEL_W, PLOT_W, PAD = 22, 180, 720, 8
COLOURS = {"trace": "#7b61ff", "lower": "#2f80ed", "compile": "#e8710a", "hit": "#12a4a4", "miss": "#d93025"}
FONT = "ui-sans-serif, system-ui, sans-serif"


def fmt_us(us: float | None) -> str:
    """12 µs, 3.4 ms, 1.25 s (units.duration_text); `unknown` for a figure not measured."""
    return "unknown" if us is None else duration_text(us)


def _lane_rows(doc: dict) -> list[dict]:
    return sorted(
        doc.get("lanes", []), key=lambda l: -(l["trace_us"] + l["lower_us"] + l["compile_us"] + l["dispatch_us"])
    )


def timeline_svg(doc: dict) -> str:
    """Lanes × time: compile phases as bars, calls as hit/miss ticks, aggregated per column."""
    lanes = doc.get("lanes", [])[:MAX_LANES]
    duration = max(1, int(doc.get("duration_us") or 1))
    w = LABEL_W + PLOT_W + 2 * PAD
    h = len(lanes) * LANE_H + 2 * PAD + 16
    x_of = lambda t: LABEL_W + PAD + min(PLOT_W, max(0.0, t / duration * PLOT_W))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'font-family="{FONT}" font-size="11"><rect width="{w}" height="{h}" fill="#ffffff"/>'
    ]
    for i, lane in enumerate(lanes):
        y = PAD + i * LANE_H
        out.append(f'<text x="{PAD}" y="{y + 15}" fill="#333">{_esc(_cut(lane["name"]))}</text>')
        out.append(
            f'<line x1="{LABEL_W + PAD}" y1="{y + LANE_H - 1}" x2="{LABEL_W + PAD + PLOT_W}" '
            f'y2="{y + LANE_H - 1}" stroke="#eee"/>'
        )
    spans = doc.get("spans", {})
    drawn: set[tuple] = set()  # one rect per lane, phase and pixel: 5,000 compiles stay a few kB
    for li, phase, start, end in zip(
        spans.get("lane", []), spans.get("phase", []), spans.get("start", []), spans.get("end", [])
    ):
        if li >= len(lanes):
            continue
        x0, x1 = x_of(start), x_of(end)
        pixel = (li, phase, int(x0), int(x1))
        if pixel in drawn:
            continue
        drawn.add(pixel)
        out.append(
            f'<rect x="{x0:.1f}" y="{PAD + li * LANE_H + 3}" width="{max(1.0, x1 - x0):.1f}" height="10" '
            f'fill="{COLOURS.get(phase, "#999")}"/>'
        )
    calls = doc.get("calls", {})
    columns: dict[tuple[int, int], list[int]] = {}
    for li, start, hit in zip(calls.get("lane", []), calls.get("start", []), calls.get("hit", [])):
        if li >= len(lanes):
            continue
        col = min(COLUMNS - 1, int(start / duration * COLUMNS))
        counts = columns.setdefault((li, col), [0, 0])
        counts[0 if hit else 1] += 1
    step = PLOT_W / COLUMNS
    for (li, col), (hits, misses) in columns.items():
        x = LABEL_W + PAD + col * step
        y = PAD + li * LANE_H + 14
        colour = COLOURS["miss"] if misses else COLOURS["hit"]
        out.append(
            f'<rect x="{x:.1f}" y="{y}" width="{max(1.0, step - 0.5):.1f}" height="5" fill="{colour}">'
            f"<title>{plural(hits, 'hit')}, {plural(misses, 'miss')}</title></rect>"
        )
    axis_y = PAD + len(lanes) * LANE_H + 12
    out.append(f'<text x="{LABEL_W + PAD}" y="{axis_y}" fill="#666">0</text>')
    out.append(
        f'<text x="{LABEL_W + PAD + PLOT_W}" y="{axis_y}" fill="#666" text-anchor="end">{_esc(fmt_us(duration))}</text>'
    )
    out.append("</svg>")
    return "".join(out)


def _cut(text: str, limit: int = 26) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def persistent_cache_line(doc: dict) -> str | None:
    """'Persistent compilation cache: 2 hits, 1 miss, saved 40 ms', or None when it was off."""
    cache = doc.get("cache") or {}
    if not cache.get("enabled"):
        return None
    hits, misses = cache.get("hits", 0), cache.get("misses", 0)
    line = f"Persistent compilation cache: {plural(hits, 'hit')}, {plural(misses, 'miss')}"
    if cache.get("saved_us") is not None:
        line += f", saved {fmt_us(cache['saved_us'])}"
    return line


def timeline_html(doc: dict) -> str:
    parts = [
        f"<div><p><b>{_esc(doc.get('title', 'jaxmagic'))}</b></p>",
        caption_html(doc),
        error_html(doc),
        findings_html(doc),
    ]
    rows = _lane_rows(doc)
    parts.append(
        "<table><tr><th>function</th><th>calls</th><th>hits</th><th>misses</th><th>compiles</th>"
        "<th>trace</th><th>lower</th><th>compile</th><th>dispatch</th><th>until ready</th></tr>"
    )
    for lane in rows[:MAX_LANES]:
        parts.append(
            "<tr>"
            + "".join(
                f"<td>{_esc(v)}</td>"
                for v in (
                    lane["name"],
                    lane["calls"],
                    lane["hits"],
                    lane["misses"],
                    lane["compiles"],
                    fmt_us(lane["trace_us"]),
                    fmt_us(lane["lower_us"]),
                    fmt_us(lane["compile_us"]),
                    fmt_us(lane["dispatch_us"]),
                    fmt_us(lane["device_us"]),
                )
            )
            + "</tr>"
        )
    parts.append("</table>")
    disk = persistent_cache_line(doc)
    if disk:
        parts.append(f"<p>{_esc(disk)}</p>")
    if len(rows) > MAX_LANES:
        parts.append(f"<p>… and {len(rows) - MAX_LANES} more functions</p>")
    parts.append(svg_img(lambda: timeline_svg(doc), "timeline"))
    misses = [m for m in doc.get("misses", []) if m["kind"] != "first"]
    if misses:
        parts.append("<p><b>Why it recompiled</b></p><ul>")
        names = doc.get("lanes", [])
        lane_of = doc.get("calls", {}).get("lane", [])
        for m in misses[:MAX_MISSES]:
            name = names[lane_of[m["call"]]]["name"] if m["call"] < len(lane_of) else "?"
            fix = f" Fix: {_esc(m['fix'])}" if m.get("fix") else ""
            parts.append(f"<li>call {m['call'] + 1} of <code>{_esc(name)}</code>: {_esc(m['words'])}.{fix}</li>")
        parts.append("</ul>")
        if len(misses) > MAX_MISSES:
            parts.append(f"<p>… and {len(misses) - MAX_MISSES} more recompiles</p>")
    for note in doc.get("notes", []):
        parts.append(f"<p><i>{_esc(note)}</i></p>")
    parts.append("</div>")
    return "".join(parts)


def timeline_text(doc: dict) -> str:
    lines = [doc.get("title", "jaxmagic"), *caption_text(doc), *error_text(doc)]
    for f in doc.get("findings", []):
        lines.append(f"{f['severity']}: {f['message']}")
    for lane in _lane_rows(doc)[:MAX_LANES]:
        lines.append(
            f"{lane['name']}: {plural(lane['calls'], 'call')}, {plural(lane['hits'], 'hit')}, "
            f"{plural(lane['misses'], 'miss')}, {plural(lane['compiles'], 'compile')}; compile phases "
            f"{fmt_us(lane['trace_us'] + lane['lower_us'] + lane['compile_us'])}, "
            f"dispatch {fmt_us(lane['dispatch_us'])}"
        )
    disk = persistent_cache_line(doc)
    if disk:
        lines.append(disk)
    lane_of = doc.get("calls", {}).get("lane", [])
    names = doc.get("lanes", [])
    for m in [m for m in doc.get("misses", []) if m["kind"] != "first"][:MAX_MISSES]:
        name = names[lane_of[m["call"]]]["name"] if m["call"] < len(lane_of) else "?"
        lines.append(
            f"  call {m['call'] + 1} of {name}: {m['words']}" + (f" (fix: {m['fix']})" if m.get("fix") else "")
        )
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    return "\n".join(lines)
