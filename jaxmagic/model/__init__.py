"""Capture -> JSON documents (docs/schema.md). Pure functions, tested without a browser."""

from .graph import derive_edges, function_graph, graph_document
from .timeline import timeline_document

DOCUMENT_BUILDERS = {"graph": graph_document, "timeline": timeline_document}

__all__ = ["DOCUMENT_BUILDERS", "derive_edges", "function_graph", "graph_document", "timeline_document"]
