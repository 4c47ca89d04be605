"""The public Python API behind `jaxmagic.show`, `jaxmagic.view`, `jaxmagic.document`, `jaxmagic.to_html`.

Glue from model to views: a capture becomes a document, a document becomes a widget
or a page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from .capture.record import Capture

VIEW_ALIASES = {"graph": "graph", "jaxpr": "graph", "timeline": "timeline", "trace": "timeline",
                "grad": "grad", "grad_graph": "grad", "sharding": "sharding", "keys": "keys", "prng": "keys"}


def _builder(view: str) -> Any:
    from .model import DOCUMENT_BUILDERS

    kind = VIEW_ALIASES.get(view)
    if kind is None or kind not in DOCUMENT_BUILDERS:
        raise ValueError(f"unknown jaxmagic view {view!r}; available: {', '.join(VIEW_ALIASES)}")
    return DOCUMENT_BUILDERS[kind]


def _drawable(capture: Capture, view: str, options: dict, present: bool = False) -> dict:
    """The document of a view that the widget and the static views can draw.

    `present` opens the widget in presentation mode (a display hint carried by the document, so
    exported pages keep it; docs/schema.md)."""
    from .model import DRAWN_KINDS

    from .views.wire import safe_document

    doc = safe_document(document(capture, view, **options))
    if doc.get("kind") not in DRAWN_KINDS:
        raise ValueError(f"jaxmagic cannot draw {view!r} documents yet; jaxmagic.document(cap, {view!r}) "
                         "gives the data (docs/schema.md)")
    if present:
        doc["present"] = True
    return doc


def document(capture: Capture, view: str = "graph", **options: Any) -> dict:
    """The JSON document (docs/schema.md) of one view of a capture.

    `options` go to the view's builder (timeline: `storm=N`, the recompile-storm threshold).
    """
    if not isinstance(capture, Capture):
        raise TypeError(f"expected a jaxmagic Capture (from jaxmagic.capture() or --name), got {type(capture).__name__}")
    return _builder(view)(capture, **options)


def view(capture: Capture, view: str = "graph", *, present: bool = False, **options: Any) -> Any:
    """The interactive widget of one view of a capture (`present=True`: in presentation mode)."""
    from .views import JaxmagicWidget

    return JaxmagicWidget(_drawable(capture, view, options, present))


def show(capture: Capture, view: str = "graph", *, present: bool = False, **options: Any) -> None:
    """Display a view in the notebook (`present=True`: in presentation mode); outside IPython,
    print its text summary."""
    from .views import JaxmagicWidget, text_summary

    doc = _drawable(capture, view, options, present)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python without IPython
        get_ipython = None  # type: ignore[assignment]
    if get_ipython is not None and get_ipython() is not None:
        display(JaxmagicWidget(doc))
    else:
        print(text_summary(doc))


def static_html(capture: Capture, view: str = "graph", **options: Any) -> str:
    """The script-free HTML fallback (summary and picture) of one view."""
    from .views import fallback_html

    return fallback_html(_drawable(capture, view, options))


def to_html(captures: Capture | dict | Iterable[Capture | dict], path: str | Path | None = None,
            view: str = "graph", title: str = "jaxmagic") -> str:
    """A self-contained HTML page in which every view renders interactively with no kernel.

    Accepts captures or documents (one or many); writes the page to `path` if given.
    """
    from .views import page

    items = [captures] if isinstance(captures, (Capture, dict)) else list(captures)
    docs = [item if isinstance(item, dict) else _drawable(item, view, {}) for item in items]
    text = page(docs, title=title)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def to_dot(item: Capture | dict, function: int | str = 0) -> Any:
    """A `graphviz.Digraph` of one function's graph (needs the `graphviz` package: `pip install jaxmagic[dot]`).

    `function` picks the function by position or name. `.source` is the DOT text;
    `.render()` needs Graphviz's `dot` binary.
    """
    try:
        import graphviz  # noqa: F401
    except ImportError as exc:
        raise ImportError("jaxmagic.to_dot needs the graphviz package: pip install 'jaxmagic[dot]'") from exc
    from .views.dot import document_dot

    doc = item if isinstance(item, dict) else document(item, "graph")
    if doc.get("kind") != "graph":
        raise ValueError(f"to_dot draws graph documents, not {doc.get('kind')!r}")
    return document_dot(doc, function)
