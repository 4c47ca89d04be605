"""Capture -> JSON documents (declared in jaxmagic/schema/). Pure functions, tested without a browser."""

from .. import kinds
from .captions import caption, captioned
from .document import checked
from .grad import grad_document
from .graph import derive_edges, function_graph, graph_document
from .keys import keys_document
from .sharding import sharding_document
from .timeline import timeline_document

# Every document leaves here with its "what to look at" caption (model/captions.py), so
# jaxmagic.document(), widgets, static views and exported pages all carry the same sentences;
# under strict mode (the test suite) each is checked against its declaration (jaxmagic/schema/).
DOCUMENT_BUILDERS = {kind.name: checked(captioned(kind.build())) for kind in kinds.KINDS}
DRAWN_KINDS = frozenset(kinds.NAMES)  # kinds the widget and the static views can draw

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
