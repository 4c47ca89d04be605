"""HTML without a kernel: the fallback inside a notebook output, and self-contained pages.

The fallback (`text/html` next to the widget) must survive hosts that strip scripts and
styles, so it is plain markup plus `<img>` tags holding data-URI SVGs. Pages made by
`page()` embed the front-end bundle and the documents, so every view is interactive
offline. Every string from a document is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..kinds import KINDS, resolve
from ..model.captions.words import cells_of
from ..units import plural
from .html_parts import caption_html, caption_text, error_html, error_text, findings_html, signature_text, svg_img
from .html_parts import esc as _esc
from .static_svg import function_svg
from .wire import safe_wire

# Every kind's views: a page loads it once whatever kinds it mixes (a widget loads its kind's own: widget.py).
BUNDLE = Path(__file__).resolve().parent.parent / "static" / "jaxmagic.js"
MAX_TEXT_LINES = 400  # of each function's jaxpr in text/plain
MAX_TOTAL_TEXT_LINES = 4_000  # of all functions' jaxprs together
MAX_PICTURES = 12  # functions drawn as pictures in text/html
MAX_LISTED_ROWS = 200  # functions listed without graphs, one line each, in either fallback
# kind -> (html, text), for the kinds drawn by a module of their own (graphs are drawn here)
STATIC_VIEWS = {
    kind.name: (resolve(kind.static_html), resolve(kind.static_text))
    for kind in KINDS
    if kind.static_html and kind.static_text
}


def _counts(fn: dict) -> str:
    """'5 eqns, 2 calls, 1 cache hit' (and '16,540 jit wrappers' when several were folded)."""
    wrappers = fn.get("wrappers") or 1
    return ", ".join(
        [plural(fn["n_eqns"], "eqn"), plural(fn["calls"], "call"), plural(fn["cache_hits"], "cache hit")]
        + ([plural(wrappers, "jit wrapper") + " folded into this entry"] if wrappers > 1 else [])
    )


def _listing_lines(doc: dict) -> list[str]:
    """The functions a graph document lists without graphs (model/folding.py), the first
    MAX_LISTED_ROWS one a line and the rest counted: bounded whatever the cell jitted."""
    listed = doc.get("listed") or []
    unlisted = (doc.get("folded") or {}).get("unlisted") or 0
    if not listed and not unlisted:
        return []
    out = (
        [f"{plural(len(listed), 'function')} listed without graphs (not in this page: listed only):"] if listed else []
    )
    for fn in listed[:MAX_LISTED_ROWS]:
        src = fn.get("source") or {}
        where = f" at {src.get('file')}:{src.get('line')}" if src.get("file") else ""
        out.append(f"  {fn['name']}({signature_text(fn['signature'])}): {_counts(fn)}{where}")
    if len(listed) > MAX_LISTED_ROWS:
        out.append(f"  … and {plural(len(listed) - MAX_LISTED_ROWS, 'more function')} (listed in the widget)")
    if unlisted:
        out.append(f"{plural(unlisted, 'more function')} recorded but not listed (see the notes)")
    return out


def fallback_html(doc: dict) -> str:
    """Summary and collapsed top-level picture of each function, for script-free hosts."""
    if doc.get("kind") in STATIC_VIEWS:
        with cells_of(doc):  # lines named from the document's `cells`, as the widget names them
            return STATIC_VIEWS[doc["kind"]][0](doc)
    parts = [
        f"<div><p><b>{_esc(doc.get('title', 'jaxmagic'))}</b></p>",
        caption_html(doc),
        error_html(doc),
        findings_html(doc),
    ]
    for i, fn in enumerate(doc.get("functions", [])):
        parts.append(
            f"<p><code>{_esc(fn['name'])}({_esc(signature_text(fn['signature']))})</code>: {_esc(_counts(fn))}</p>"
        )
        if i < MAX_PICTURES:  # a picture is tens of kB: a document of 40 functions draws the first few
            parts.append(svg_img(lambda fn=fn: function_svg(fn), f"graph of {fn['name']}"))
    parts.extend(f"<p>{_esc(line)}</p>" for line in _listing_lines(doc))
    for note in doc.get("notes", []):
        parts.append(f"<p><i>{_esc(note)}</i></p>")
    parts.append("</div>")
    return "".join(parts)


def text_summary(doc: dict) -> str:
    """text/plain: the title and each function's jaxpr text (timelines: the summary and the misses)."""
    if doc.get("kind") in STATIC_VIEWS:
        with cells_of(doc):
            return STATIC_VIEWS[doc["kind"]][1](doc)
    lines = [
        doc.get("title", "jaxmagic"),
        *caption_text(doc),
        *error_text(doc),
        *(f"{f['severity']}: {f['message']}" for f in doc.get("findings") or []),
    ]
    budget = MAX_TOTAL_TEXT_LINES
    for fn in doc.get("functions", []):
        text = fn["text"].split("\n") if fn["text"] else []
        keep = max(0, min(MAX_TEXT_LINES, budget))
        if "jaxpr" in (fn.get("deferred") or ()):  # a widget's document: the text's first lines only
            text = text[:keep] + [
                f"… the jaxpr has {fn['n_eqns']:,} eqns in all (the whole text is in the widget and in the capture)"
            ]
        elif len(text) > keep:  # a 50k-eqn jaxpr would put megabytes into every saved notebook
            text = text[:keep] + [
                f"… {len(text) - keep} more lines (the whole text is in the widget and in the capture)"
            ]
        budget -= len(text)
        lines.append(f"\n{fn['name']}({signature_text(fn['signature'])}): {_counts(fn)}\n" + "\n".join(text))
    lines.extend(_listing_lines(doc))
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    return "\n".join(lines)


def embed_json(doc: dict) -> str:
    """JSON that is safe inside a <script> element (no `</script>`, no comment openers)."""
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False, default=str)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def bundle_source() -> str:
    return BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script")


def doc_mount(doc: dict) -> str:
    """One interactive view in a page that includes `page_scripts()` once (valid Unicode: `safe_wire`)."""
    return f'<script type="application/json" data-jaxmagic-doc>{embed_json(safe_wire(doc)[1])}</script>'


def page_scripts() -> str:
    return f'<script>window.__jaxmagic_static = true;</script><script type="module">{bundle_source()}</script>'


def page(docs: list[dict], title: str = "jaxmagic") -> str:
    """A self-contained page in which every document renders interactively, offline."""
    body = "\n".join(f"<section>{doc_mount(d)}</section>" for d in docs)
    return (
        f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{_esc(title)}</title>"
        "<meta name='viewport' content='width=device-width'>"
        "<style>body{margin:16px;font-family:system-ui,sans-serif}section{margin-bottom:24px}</style>"
        f"</head><body>\n{body}\n{page_scripts()}\n</body></html>\n"
    )
