"""Pieces every script-free view is made of: escaped text, the cell's error, findings, SVG pictures.

One place for them so each static view (graph, timeline, grad) escapes document strings the
same way: every string in a document is untrusted text.
"""

from __future__ import annotations

import base64
import html

from ..capture.source import where_text

# C0 controls and DEL as Unicode's "control pictures" (U+2400...): visible, and legal in XML, which
# forbids most controls (an SVG picture holding one does not decode at all).
_CONTROLS = {c: 0x2400 + c for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)} | {0x7F: 0x2421}


def visible(text: object) -> str:
    """Text any page can carry: controls shown as control pictures, lone surrogates (undecodable
    bytes of a file name, say) as U+FFFD; everything else unchanged."""
    text = str(text).translate(_CONTROLS)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


SIGNATURE_CHARS = 240  # a fallback's signature past this is cut (a model's step takes thousands of leaves)


def top_level_items(text: str) -> int:
    """How many comma-separated items `text` lists outside brackets (`f32[2,3], i32[]` is two)."""
    if not text.strip():
        return 0
    depth, items = 0, 1
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items += 1
    return items


def signature_text(signature: str, limit: int = SIGNATURE_CHARS) -> str:
    """A signature for a one-line fallback: whole, or cut at an argument boundary before `limit`
    characters with how many arguments it has in all (a 7,200-leaf signature was a 75 KB line)."""
    if len(signature) <= limit:
        return signature
    head = signature[:limit]
    cut = head.rfind(", ")
    head = head[:cut] if cut > 0 else head
    return f"{head}, … ({top_level_items(signature):,} arguments in all)"


def esc(text: object) -> str:
    """Text for HTML content, SVG text or a quoted attribute: escaped, and `visible`."""
    return html.escape(visible(text), quote=True)


def where_of(doc: dict, src: dict) -> str:
    """`cell [3], line 5` or `train.py:12` for a source of `doc`, named from the document's `cells`
    as the widget names it (capture/source.py where_text)."""
    cells = doc.get("cells")
    return where_text(src.get("file"), src.get("line"), cells if isinstance(cells, dict) else {})


def error_html(doc: dict) -> str:
    """The exception the cell raised, as a paragraph ("" when it raised none)."""
    error = doc.get("error")
    if not error:
        return ""
    where = f" ({esc(where_of(doc, error))}: <code>{esc(error.get('code') or '')}</code>)" if error.get("line") else ""
    explanation = f"<p>{esc(error['explanation'])}</p>" if error.get("explanation") else ""
    return f"<p>Cell raised <b>{esc(error['type'])}</b>: {esc(error['message'])}{where}</p>{explanation}"


def error_text(doc: dict) -> list[str]:
    error = doc.get("error")
    if not error:
        return []
    return [f"Cell raised {error['type']}: {error['message']}"] + (
        [error["explanation"]] if error.get("explanation") else []
    )


def caption_html(doc: dict) -> str:
    """The document's "what to look at" sentences (model/captions.py) as one paragraph, escaped
    ("" when it has none): the first thing every script-free view shows under its title."""
    sentences = [s for s in doc.get("caption") or [] if s]
    if not sentences:
        return ""
    return f'<p class="jm-caption">{esc(" ".join(map(str, sentences)))}</p>'


def caption_text(doc: dict) -> list[str]:
    """The caption for text/plain: one line per sentence."""
    return [str(s) for s in doc.get("caption") or [] if s]


def findings_html(doc: dict) -> str:
    parts = []
    for f in doc.get("findings", []):
        where = f" ({esc(where_of(doc, f['source']))})" if f.get("source") else ""
        parts.append(f"<p>{esc(f['severity'])}: {esc(f['message'])}{where}</p>")
    return "".join(parts)


def svg_img(make_svg, alt: str) -> str:
    """An `<img>` holding the SVG `make_svg()` draws; a picture that fails leaves a short note instead."""
    try:
        data = base64.b64encode(make_svg().encode()).decode()
    except Exception as exc:  # a picture we cannot draw is no reason to lose the summary
        return f"<p>(no picture: {esc(type(exc).__name__)})</p>"
    return f'<img alt="{esc(alt)}" style="max-width:100%" src="data:image/svg+xml;base64,{data}"/>'
