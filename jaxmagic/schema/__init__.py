"""The documents jaxmagic emits, declared once: the source of truth for their shape.

One module per document kind (graph, timeline, grad, sharding, keys), one for the parts they
share (common: envelope, Source, Error, Finding, ValueSummary), the graph's wire form (wire)
and the widget <-> kernel messages (requests). Plain TypedDicts that import nothing of JAX,
so capture, model, views and tools may all read them. docs/schema.md says why each field
exists; `validate` checks a document against its declaration (the test suite's strict mode);
`typescript` writes widgets/types/documents.d.ts from the same declarations.
"""

from __future__ import annotations

from . import grad, graph, keys, sharding, timeline
from .common import SCHEMA

# kind -> (its module: KIND, VERSION, READS and the document's TypedDict)
MODULES = {module.KIND: module for module in (graph, timeline, grad, sharding, keys)}
DOCUMENTS = {
    "graph": graph.GraphDocument,
    "timeline": timeline.TimelineDocument,
    "grad": grad.GradDocument,
    "sharding": sharding.ShardingDocument,
    "keys": keys.KeysDocument,
}
VERSIONS = {kind: module.VERSION for kind, module in MODULES.items()}

__all__ = ["DOCUMENTS", "MODULES", "SCHEMA", "VERSIONS"]
