"""HTML without a kernel: the fallback inside a notebook output, and self-contained pages.

The fallback (`text/html` next to the widget) must survive hosts that strip scripts and
styles, so it is plain markup plus `<img>` tags holding data-URI SVGs. Pages made by
`page()` embed the front-end bundle and the documents, so every view is interactive
offline. Every string from a document is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..model.captions.words import cells_of
from ..units import plural
from .html_parts import caption_html, caption_text, error_html, error_text, esc as _esc, svg_img
from .static_grad import grad_html, grad_text
from .static_keys import keys_html, keys_text
from .static_sharding import sharding_html, sharding_text
from .static_svg import function_svg
from .static_timeline import timeline_html, timeline_text
from .wire import encode_document, safe_document

# Every kind's views: a page loads it once whatever kinds it mixes (a widget loads its kind's own: widget.py).
BUNDLE = Path(__file__).resolve().parent.parent / "static" / "jaxmagic.js"
MAX_TEXT_LINES = 400  # of each function's jaxpr in text/plain
STATIC_VIEWS = {"timeline": (timeline_html, timeline_text), "grad": (grad_html, grad_text),
                "sharding": (sharding_html, sharding_text), "keys": (keys_html, keys_text)}  # kind -> (html, text)




def fallback_html(doc: dict) -> str:
    """Summary and collapsed top-level picture of each function, for script-free hosts."""
    if doc.get("kind") in STATIC_VIEWS:
        with cells_of(doc):  # lines named from the document's `cells`, as the widget names them
            return STATIC_VIEWS[doc["kind"]][0](doc)
    parts = [f"<div><p><b>{_esc(doc.get('title', 'jaxmagic'))}</b></p>", caption_html(doc), error_html(doc)]
    for fn in doc.get("functions", []):
        parts.append(f"<p><code>{_esc(fn['name'])}({_esc(fn['signature'])})</code>: {plural(fn['n_eqns'], 'eqn')}, "
                     f"{plural(fn['calls'], 'call')}, {plural(fn['cache_hits'], 'cache hit')}</p>")
        parts.append(svg_img(lambda fn=fn: function_svg(fn), f"graph of {fn['name']}"))
    for note in doc.get("notes", []):
        parts.append(f"<p><i>{_esc(note)}</i></p>")
    parts.append("</div>")
    return "".join(parts)


def text_summary(doc: dict) -> str:
    """text/plain: the title and each function's jaxpr text (timelines: the summary and the misses)."""
    if doc.get("kind") in STATIC_VIEWS:
        with cells_of(doc):
            return STATIC_VIEWS[doc["kind"]][1](doc)
    lines = [doc.get("title", "jaxmagic"), *caption_text(doc), *error_text(doc)]
    for fn in doc.get("functions", []):
        text = fn["text"].split("\n")
        if len(text) > MAX_TEXT_LINES:  # a 50k-eqn jaxpr would put megabytes into every saved notebook
            text = text[:MAX_TEXT_LINES] + [f"… {len(text) - MAX_TEXT_LINES} more lines (the whole text is "
                                            "in the widget and in the capture)"]
        lines.append(f"\n{fn['name']}({fn['signature']}):\n" + "\n".join(text))
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    return "\n".join(lines)


def embed_json(doc: dict) -> str:
    """JSON that is safe inside a <script> element (no `</script>`, no comment openers)."""
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False, default=str)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def bundle_source() -> str:
    return BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script")


def doc_mount(doc: dict) -> str:
    """One interactive view in a page that includes `page_scripts()` once."""
    return f'<script type="application/json" data-jaxmagic-doc>{embed_json(encode_document(doc))}</script>'


def page_scripts() -> str:
    return ("<script>window.__jaxmagic_static = true;</script>"
            f'<script type="module">{bundle_source()}</script>')


def page(docs: list[dict], title: str = "jaxmagic") -> str:
    """A self-contained page in which every document renders interactively, offline."""
    body = "\n".join(f"<section>{doc_mount(safe_document(d))}</section>" for d in docs)
    return (f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{_esc(title)}</title>"
            "<meta name='viewport' content='width=device-width'>"
            "<style>body{margin:16px;font-family:system-ui,sans-serif}section{margin-bottom:24px}</style>"
            f"</head><body>\n{body}\n{page_scripts()}\n</body></html>\n")
