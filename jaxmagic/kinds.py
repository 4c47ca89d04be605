"""Every document kind jaxmagic has, in one table that the rest of the package reads.

A kind is a magic (`%%jaxpr`), the names `jaxmagic.document/show/view` accept for it, the
document version it emits (declared in jaxmagic/schema/), its builder, its script-free views,
the fields its wire form packs, and its widget bundle (built from widgets/entries/<kind>.js;
widgets/<kind>/kind.js names the kind and the versions it reads). Builders and views are named
by "module:function" and imported when first asked for, so reading this table (`%load_ext`,
the magics' usage, tools) loads neither JAX nor the model.
tests/test_kinds.py checks the widgets' files agree with it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .schema import VERSIONS


@dataclass(frozen=True)
class Kind:
    name: str  # the document's `kind`
    magic: str  # the cell magic that shows it
    aliases: tuple[str, ...]  # view names that mean it (its name and magic among them)
    builder: str  # "module:function": Capture -> document
    static_html: str | None  # "module:function": document -> script-free HTML (None: drawn by views/static_html.py)
    static_text: str | None  # "module:function": document -> text/plain
    packed_fields: tuple[str, ...]  # top-level fields the wire form packs when large (views/wire.py)
    reads: tuple[int, ...]  # document versions its widget reads (widgets/<kind>/kind.js `versions`)

    @property
    def version(self) -> int:
        """The version of the documents it emits (jaxmagic/schema/<kind>.py VERSION)."""
        return VERSIONS[self.name]

    @property
    def bundle(self) -> str:
        """Its widget bundle in jaxmagic/static/ (built from widgets/entries/<name>.js)."""
        return f"jaxmagic-{self.name}.js"

    def build(self) -> Callable[..., dict]:
        """The builder, imported now."""
        return resolve(self.builder)


def resolve(target: str) -> Any:
    """The object `module:attribute` names."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


_STATIC = "jaxmagic.views.static_"
KINDS: tuple[Kind, ...] = (
    Kind("graph", "jaxpr", ("graph", "jaxpr"), "jaxmagic.model.graph:graph_document", None, None, (), (1, 2)),
    Kind(
        "timeline",
        "trace",
        ("timeline", "trace"),
        "jaxmagic.model.timeline:timeline_document",
        f"{_STATIC}timeline:timeline_html",
        f"{_STATIC}timeline:timeline_text",
        ("calls", "spans", "misses", "signatures"),
        (1,),
    ),
    Kind(
        "grad",
        "grad_graph",
        ("grad", "grad_graph"),
        "jaxmagic.model.grad:grad_document",
        f"{_STATIC}grad:grad_html",
        f"{_STATIC}grad:grad_text",
        ("entries",),
        (1,),
    ),
    Kind(
        "sharding",
        "sharding",
        ("sharding",),
        "jaxmagic.model.sharding:sharding_document",
        f"{_STATIC}sharding:sharding_html",
        f"{_STATIC}sharding:sharding_text",
        ("arrays", "calls"),
        (1,),
    ),
    Kind(
        "keys",
        "prng",
        ("keys", "prng"),
        "jaxmagic.model.keys:keys_document",
        f"{_STATIC}keys:keys_html",
        f"{_STATIC}keys:keys_text",
        ("nodes",),
        (1,),
    ),
)
BY_NAME = {kind.name: kind for kind in KINDS}
NAMES = tuple(BY_NAME)  # every kind, in the order views list them
VIEW_ALIASES = {alias: kind.name for kind in KINDS for alias in kind.aliases}  # view name -> kind
MAGIC_VIEWS = {kind.magic: kind.name for kind in KINDS}  # magic -> kind
PACKED_FIELDS = {kind.name: kind.packed_fields for kind in KINDS if kind.packed_fields}
