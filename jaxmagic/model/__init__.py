"""Capture -> JSON documents (docs/schema.md). Pure functions, tested without a browser."""

from .captions import caption, captioned
from .grad import grad_document
from .graph import derive_edges, function_graph, graph_document
from .keys import keys_document
from .sharding import sharding_document
from .timeline import timeline_document

# Every document leaves here with its "what to look at" caption (model/captions.py), so
# jaxmagic.document(), widgets, static views and exported pages all carry the same sentences.
DOCUMENT_BUILDERS = {
    kind: captioned(build)
    for kind, build in (
        ("graph", graph_document),
        ("timeline", timeline_document),
        ("grad", grad_document),
        ("sharding", sharding_document),
        ("keys", keys_document),
    )
}
DRAWN_KINDS = frozenset(
    {"graph", "timeline", "grad", "sharding", "keys"}
)  # kinds the widget and the static views can draw

__all__ = [
    "DOCUMENT_BUILDERS",
    "DRAWN_KINDS",
    "caption",
    "derive_edges",
    "function_graph",
    "grad_document",
    "graph_document",
    "keys_document",
    "sharding_document",
    "timeline_document",
]
