"""The widget: one anywidget class per document kind, each carrying only its kind's bundle.

A document in, a widget out. `JaxmagicWidget(doc)` returns an instance of the subclass
for `doc["kind"]`, whose `_esm` carries `jaxmagic/static/jaxmagic-<kind>.js` (built from
`widgets/entries/<kind>.js`): a timeline widget does not ship the graph viewer and dagre.
The bundle travels packed (`packed_esm`: gzip + base64 inside the small loader
widgets/packed-loader.js), because a saved notebook keeps one copy per widget. A kind
without its own bundle gets the all-kinds bundle (`BUNDLE`), whose front end says what it
cannot draw.

The mime bundle also carries `text/html` (summary and static picture) and `text/plain`
(the jaxpr text), so hosts without a widget front end still show something true. With
ipywidgets 8 IPython asks `_repr_mimebundle_` for it; ipywidgets 7 (Google Colab's) displays
a widget through `_ipython_display_`, which IPython calls first and which publishes only the
view and a repr, so there the class publishes the same whole bundle itself.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anywidget
import ipywidgets
import traitlets

from .. import kinds
from .requests import Handler, serve
from .static_html import BUNDLE, fallback_html, text_summary
from .wire import safe_wire

# The kinds with a bundle of their own (one per widgets/entries/<kind>.js; tests/test_bundles.py
# checks the two agree). Listed, not globbed: a stray jaxmagic-*.js in the folder is no widget class.
KINDS = kinds.NAMES
LOADER = BUNDLE.parent / "packed-loader.js"
PACKED_PLACEHOLDER = '"__JAXMAGIC_PACKED__"'


def kind_bundles() -> dict[str, Path]:
    """kind -> its bundle, for the kinds whose bundle the build wrote."""
    paths = {kind.name: BUNDLE.parent / kind.bundle for kind in kinds.KINDS}
    return {kind: path for kind, path in paths.items() if path.is_file()}


def packed_esm(source: str) -> str:
    """The `_esm` that carries `source` (a bundle) gzipped and base64-encoded in the loader.

    Why: a saved notebook with widget state keeps every widget's `_esm`; the bundles were 2.7 of
    the 4.4 MB of the saved demo. Packed, each copy is about half as big and the page inflates and
    imports a kind's bundle once however many widgets show it. Deterministic (gzip mtime 0), so
    every widget of a kind carries the same text.
    """
    payload = base64.b64encode(gzip.compress(source.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")
    loader = LOADER.read_text(encoding="utf-8")
    if loader.count(PACKED_PLACEHOLDER) != 1:
        raise RuntimeError(f"{LOADER} has no single {PACKED_PLACEHOLDER}: rebuild the front end (js/build.mjs)")
    return loader.replace(PACKED_PLACEHOLDER, f'"{payload}"')


class _PackedBundle:
    """A class's `_esm`, packed on first read and kept (read by anywidget when a widget is made).

    Packing is gzip at level 9 of a 80-350 KB bundle: ~50 ms each, 0.3 s for all six. Done when the
    module is imported, the first magic cell of a session paid for bundles it never showed."""

    def __init__(self, bundle: Path):
        self.bundle = bundle
        self.packed: str | None = None

    def __get__(self, obj: Any, owner: Any = None) -> str:
        if self.packed is None:
            self.packed = packed_esm(self.bundle.read_text(encoding="utf-8"))
        return self.packed


_IPYWIDGETS_DEPRECATIONS = ("ignore", None, DeprecationWarning, re.compile(r"ipywidgets(\.|$)"), 0)


@contextlib.contextmanager
def _ipywidgets_deprecations_hidden() -> Iterator[None]:
    """The DeprecationWarnings ipywidgets 7 (Colab's pin) raises from its own code while it makes a
    widget, left out of the user's warnings: `trait.get_metadata`, deprecated in traitlets 5, once
    per synced trait anywidget adds, and ipykernel's `Comm` class, deprecated since ipykernel 6.22.
    A plain cell raises none of them; under a "default" or "always" filter the view showed four.

    A filter entry put in front for the widget's making and taken out by identity, without
    `catch_warnings` or `filterwarnings`: both tell CPython the filters changed, which empties every
    module's once-per-location registry and shows the user's "default" warnings again. An
    "ignore" leaves no registry entry behind."""
    filters: list = warnings.filters  # type: ignore[assignment]  # a list at run time (typeshed: Sequence)
    filters.insert(0, _IPYWIDGETS_DEPRECATIONS)
    try:
        yield
    finally:
        for i, entry in enumerate(filters):
            if entry is _IPYWIDGETS_DEPRECATIONS:
                del filters[i]
                break


class JaxmagicWidget(anywidget.AnyWidget):
    """Renders one jaxmagic JSON document (docs/schema.md).

    Constructing this class picks the subclass of the document's kind (`KIND_WIDGETS`);
    anywidget reads `_esm` from the class, so the choice of bundle is the choice of class.
    This class itself carries the all-kinds bundle. `_esm` is the bundle's text, read once
    per process: given a Path, anywidget watches the file and ties every instance to the
    watcher, so no view (and no document) could ever be freed.
    """

    _esm = _PackedBundle(BUNDLE)
    doc = traitlets.Dict().tag(sync=True)

    def __new__(cls, doc: dict | None = None, **kwargs: Any) -> JaxmagicWidget:
        chosen: type[JaxmagicWidget] = cls
        if cls is JaxmagicWidget and isinstance(doc, dict):
            chosen = KIND_WIDGETS.get(doc.get("kind", ""), cls)
        return super(JaxmagicWidget, chosen).__new__(chosen, doc, **kwargs)  # super(), for `chosen`

    def __init__(self, doc: dict, handlers: dict[str, Handler] | None = None, **kwargs: Any):
        # Jupyter sends state as UTF-8: no lone surrogates, checked by the one JSON pass that packs it.
        doc, wire = safe_wire(doc)
        self.document = doc  # the logical document (docs/schema.md); `doc` syncs its wire form
        with _ipywidgets_deprecations_hidden():
            super().__init__(doc=wire, **kwargs)
        # What the document left out (`deferred`), computed when the view asks (views/requests.py).
        serve(self, handlers or {})

    @classmethod
    def opened(cls, kind: str) -> JaxmagicWidget:
        """A widget of `kind` whose document comes next (`show_document`), made before it is built.

        Making a widget opens its comm, and the front end then starts loading the kind's bundle
        (inflating and importing some 300 KB of JavaScript) while the kernel builds the document
        (0.4 s at 10k eqns): the two overlap instead of following each other. Nothing is drawn
        until the widget is displayed, after `show_document`: the view never shows the placeholder.
        """
        return cls({"kind": kind, "pending": True})

    def show_document(self, doc: dict, handlers: dict[str, Handler] | None = None) -> JaxmagicWidget:
        """Give an `opened` widget its document (one state update) and the answers to its requests."""
        doc, wire = safe_wire(doc)
        self.document = doc
        self.doc = wire
        serve(self, handlers or {})
        return self

    def discard(self) -> None:
        """Close a widget that was never shown, with the layout widget ipywidgets made for it."""
        layout = getattr(self, "layout", None)
        self.close()
        if layout is not None and hasattr(layout, "close"):
            layout.close()

    def __repr__(self) -> str:
        return f"<jaxmagic view: {self.document.get('title', '')}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        data = dict(data)
        data["text/plain"] = text_summary(self.document)
        data["text/html"] = fallback_html(self.document)
        return data, metadata

    def _publish_bundle(self, **kwargs: Any) -> None:
        """Display the whole mime bundle (view, `text/html`, `text/plain`) where the widget base
        class displays itself (ipywidgets 7), then run its display callbacks as its own method does."""
        from IPython.display import display

        data, metadata = self._repr_mimebundle_()
        display(data, raw=True, metadata=metadata)
        handle_displayed = getattr(self, "_handle_displayed", None)  # ipywidgets 7's, the one calling this
        if self._view_name is not None and handle_displayed is not None:
            handle_displayed(**kwargs)

    # ipywidgets 7's `Widget._ipython_display_` would publish the view without the fallbacks; where
    # the base class has none (ipywidgets 8), IPython asks `_repr_mimebundle_` and this stays unset.
    if callable(getattr(ipywidgets.Widget, "_ipython_display_", None)):
        _ipython_display_ = _publish_bundle


def _kind_widget(kind: str, bundle: Path) -> type[JaxmagicWidget]:
    """The subclass whose `_esm` is `bundle` (named after the kind: anywidget's `_anywidget_id`)."""
    name = "Jaxmagic" + "".join(part.capitalize() for part in kind.split("_")) + "Widget"
    return type(
        name,
        (JaxmagicWidget,),
        {
            "_esm": _PackedBundle(bundle),
            "__module__": __name__,
            "__qualname__": name,
            "__doc__": f"A {kind} document, drawn by {bundle.name} alone.",
        },
    )


KIND_WIDGETS: dict[str, type[JaxmagicWidget]] = {
    kind: _kind_widget(kind, path) for kind, path in kind_bundles().items()
}
