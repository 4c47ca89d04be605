"""The widget: one anywidget class for every view; the front end dispatches on `doc.kind`.

A document in, a widget out. The mime bundle also carries `text/html` (summary and
static picture) and `text/plain` (the jaxpr text), so hosts without a widget
front end still show something true.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

from .wire import encode_document
from .static_html import BUNDLE, fallback_html, text_summary


class JaxmagicWidget(anywidget.AnyWidget):
    """Renders one jaxmagic JSON document (docs/schema.md)."""

    _esm = BUNDLE
    doc = traitlets.Dict().tag(sync=True)

    def __init__(self, doc: dict, **kwargs: Any):
        self.document = doc  # the logical document (docs/schema.md); `doc` syncs its wire form
        super().__init__(doc=encode_document(doc), **kwargs)

    def __repr__(self) -> str:
        return f"<jaxmagic view: {self.document.get('title', '')}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle or {}, {})
        data = dict(data)
        data["text/plain"] = text_summary(self.document)
        data["text/html"] = fallback_html(self.document)
        return data, metadata
