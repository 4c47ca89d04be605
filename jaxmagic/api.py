"""The public Python API behind `jaxmagic.show`, `jaxmagic.view`, `jaxmagic.document`, `jaxmagic.to_html`.

Glue from model to views: a capture becomes a document, a document becomes a widget
or a page.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import kinds
from .capture.quiet_gc import paused_gc
from .capture.record import Capture

VIEW_ALIASES = kinds.VIEW_ALIASES  # view name -> document kind (jaxmagic/kinds.py)


def _builder(view: str) -> Any:
    from .model import DOCUMENT_BUILDERS

    kind = VIEW_ALIASES.get(view)
    if kind is None or kind not in DOCUMENT_BUILDERS:
        raise ValueError(f"unknown jaxmagic view {view!r}; available: {', '.join(VIEW_ALIASES)}")
    return DOCUMENT_BUILDERS[kind]


def _drawable(
    capture: Capture, view: str, options: dict, present: bool = False, on_demand: Any = None, scrub: bool = True
) -> dict:
    """The document of a view that the widget and the static views can draw.

    `present` opens the widget in presentation mode (a display hint carried by the document, so
    exported pages keep it; docs/schema.md). `on_demand` (a widget's model.on_demand.OnDemand)
    lets a builder that supports it leave heavy parts out for the view to request. `scrub=False`
    leaves lone surrogates for the caller whose serialisation replaces them (a widget, a page:
    views/wire.py `safe_wire`), sparing a JSON pass over the whole document."""
    from .model import DRAWN_KINDS
    from .views.wire import safe_document

    if on_demand is not None and _takes_on_demand(_builder(view)):
        options = {**options, "on_demand": on_demand}
    doc = document(capture, view, **options)
    if scrub:
        doc = safe_document(doc)
    if doc.get("kind") not in DRAWN_KINDS:
        raise ValueError(
            f"jaxmagic cannot draw {view!r} documents yet; jaxmagic.document(cap, {view!r}) "
            "gives the data (docs/schema.md)"
        )
    if present:
        doc["present"] = True
    return doc


def _takes_on_demand(build: Any) -> bool:
    import inspect

    try:
        return "on_demand" in inspect.signature(build).parameters
    except (TypeError, ValueError):
        return False


def _widget(capture: Capture, view: str, options: dict, present: bool) -> Any:
    """The widget of one view, its heavy parts computed when its front end asks (views/requests.py).

    The widget is opened before its document is built (`JaxmagicWidget.opened`), so the front end
    loads its bundle meanwhile: cell end to graph drawn in JupyterLab at 9.8k eqns, 1.05-1.19 s
    best against 1.22-1.23 s opening it after (bench/lab.py)."""
    from .model.on_demand import OnDemand
    from .views import JaxmagicWidget

    on_demand = OnDemand()
    _builder(view)  # an unknown view's error before any widget exists
    widget = JaxmagicWidget.opened(VIEW_ALIASES[view])  # its front end loads the bundle meanwhile
    try:
        doc = _drawable(capture, view, options, present, on_demand, scrub=False)
    except BaseException:
        widget.discard()
        raise
    if doc.get("kind") != VIEW_ALIASES[view]:  # a builder's other kind: the widget of that kind
        widget.discard()
        return JaxmagicWidget(doc, handlers=on_demand.handlers)
    return widget.show_document(doc, on_demand.handlers)


def complete_findings(capture: Capture, storm: int | None = None) -> None:
    """What a capture does when it stops (its session's `finish`): the findings over the whole cell
    (model/findings.py). Imported here, at stop, so `%load_ext` does not load the model."""
    from .model import findings

    findings.complete(capture, storm or findings.STORM_THRESHOLD)


def prebuild_for(magic: str) -> Any:
    """What a magic's widget can start on a program while XLA compiles it (CaptureSession's
    `prebuild`): the graph walk for the views that draw one (and `%%grad_graph`'s regions),
    `%%sharding`'s jaxpr walks, else None."""
    view = kinds.MAGIC_VIEWS.get(magic)
    if view == "graph":
        from .model import graph

        return graph.prebuild
    if view == "grad":
        from .model import grad

        return grad.prebuild
    if view == "sharding":
        from .model import sharding

        return sharding.prebuild
    return None


def document(capture: Capture, view: str = "graph", **options: Any) -> dict:
    """The JSON document (docs/schema.md) of one view of a capture.

    `options` go to the view's builder (timeline: `storm=N`, the recompile-storm threshold).
    """
    if not isinstance(capture, Capture):
        raise TypeError(
            f"expected a jaxmagic Capture (from jaxmagic.capture() or --name), got {type(capture).__name__}"
        )
    return _builder(view)(capture, **options)


def view(capture: Capture, view: str = "graph", *, present: bool = False, **options: Any) -> Any:
    """The interactive widget of one view of a capture (`present=True`: in presentation mode)."""
    with paused_gc():
        return _widget(capture, view, options, present)


def show(capture: Capture, view: str = "graph", *, present: bool = False, **options: Any) -> None:
    """Display a view in the notebook (`present=True`: in presentation mode); outside IPython,
    print its text summary."""
    from .views import text_summary

    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # plain Python without IPython
        get_ipython = None  # type: ignore[assignment]
    if get_ipython is not None and get_ipython() is not None:
        with paused_gc():
            display(_widget(capture, view, options, present))
    else:
        print(text_summary(_drawable(capture, view, options, present)))


def static_html(capture: Capture, view: str = "graph", **options: Any) -> str:
    """The script-free HTML fallback (summary and picture) of one view."""
    from .views import fallback_html

    return fallback_html(_drawable(capture, view, options))


def to_html(
    captures: Capture | dict | Iterable[Capture | dict],
    path: str | Path | None = None,
    view: str = "graph",
    title: str = "jaxmagic",
) -> str:
    """A self-contained HTML page in which every view renders interactively with no kernel.

    Accepts captures or documents (one or many); writes the page to `path` if given.
    """
    from .views import page

    items = [captures] if isinstance(captures, (Capture, dict)) else list(captures)
    with paused_gc():
        docs = [item if isinstance(item, dict) else _drawable(item, view, {}, scrub=False) for item in items]
        text = page(docs, title=title)  # each document's wire form made valid Unicode there
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
