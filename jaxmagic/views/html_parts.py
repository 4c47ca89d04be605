"""Pieces every script-free view is made of: escaped text, the cell's error, findings, SVG pictures.

One place for them so each static view (graph, timeline, grad) escapes document strings the
same way: every string in a document is untrusted text.
"""

from __future__ import annotations

import base64
import html


def esc(text: object) -> str:
    """Text for HTML content or a quoted attribute."""
    return html.escape(str(text), quote=True)


def error_html(doc: dict) -> str:
    """The exception the cell raised, as a paragraph ("" when it raised none)."""
    error = doc.get("error")
    if not error:
        return ""
    where = f" (line {esc(error['line'])}: <code>{esc(error.get('code') or '')}</code>)" if error.get("line") else ""
    return f"<p>Cell raised <b>{esc(error['type'])}</b>: {esc(error['message'])}{where}</p>"


def error_text(doc: dict) -> list[str]:
    error = doc.get("error")
    return [f"Cell raised {error['type']}: {error['message']}"] if error else []


def findings_html(doc: dict) -> str:
    parts = []
    for f in doc.get("findings", []):
        where = f" (line {esc(f['source']['line'])})" if f.get("source") else ""
        parts.append(f"<p>{esc(f['severity'])}: {esc(f['message'])}{where}</p>")
    return "".join(parts)


def svg_img(make_svg, alt: str) -> str:
    """An `<img>` holding the SVG `make_svg()` draws; a picture that fails leaves a short note instead."""
    try:
        data = base64.b64encode(make_svg().encode()).decode()
    except Exception as exc:  # a picture we cannot draw is no reason to lose the summary
        return f"<p>(no picture: {esc(type(exc).__name__)})</p>"
    return f'<img alt="{esc(alt)}" style="max-width:100%" src="data:image/svg+xml;base64,{data}"/>'
