"""The graph document's wire form (`"encoding": "columnar"`): what widgets and pages carry and
`widgets/graph/decode.js` turns back into the logical `GraphDocument` before anything is drawn.

Each table is columns, every string a position in `strings` (-1: null), ids are positions.
Made by jaxmagic/views/wire.py. Prose: docs/schema.md, "Wire form".
"""

from typing import Literal, Union

from ._typing import NotRequired, TypedDict
from .common import Envelope, Source, ValueSummary
from .graph import Folded, GraphFinding, Levels, ListedFunction, ProgramCost, Repeat

ENCODING = "columnar"

WireOperand = Union[int, list[int]]  # a var position, or [literal string, aval string]
WireCost = Union[list[Union[int, float, None]], Literal[0]]  # [flops, bytes, transcendentals, note string]


class WireGroups(TypedDict):
    node: list[int]
    label: list[int]
    outvars: list[list[WireOperand]]
    n_eqns: list[int]


class WireNodes(TypedDict):
    group: list[int]
    prim: list[int]
    scope: list[int]
    params: list[list[int]]
    ins: list[list[WireOperand]]
    line: list[int]
    src: list[int]
    cost: NotRequired[list[WireCost]]
    shlo: NotRequired[list[list[int]]]
    hlo: NotRequired[list[list[int]]]
    hlo_comp: NotRequired[list[int]]


WireVars = TypedDict(
    "WireVars",
    {"name": list[int], "aval": list[int], "group": list[int], "def": list[int]},  # def: node, -1 in, -2 const, -3 free
)


class WireFunction(TypedDict):
    """One `Function` as columns; the fields not listed travel as in the logical form."""

    id: str
    name: str
    signature: str
    source: Union[Source, None]
    calls: int
    cache_hits: int
    wrappers: NotRequired[int]
    n_eqns: int
    truncated: bool
    text: str
    levels: NotRequired[Levels]
    deferred: NotRequired[list[Literal["levels", "jaxpr"]]]
    cost: NotRequired[ProgramCost]
    repeats: NotRequired[list[Repeat]]
    values_note: NotRequired[Union[str, None]]
    batch_size: NotRequired[Union[int, None]]
    batch_note: NotRequired[Union[str, None]]
    root: int
    groups: WireGroups
    nodes: WireNodes
    vars: WireVars
    scopes: list[list[int]]
    sources: list[list[Union[int, None]]]  # [file, line, col, func, code(, lib)]: strings as positions
    paths: NotRequired[dict[str, int]]
    values: NotRequired[dict[str, ValueSummary]]
    batch: NotRequired[list[int]]
    strings: list[str]


class PackedFunction(TypedDict):
    """A function whose wire JSON is large: gzip, then base64 (the browser inflates it)."""

    packed: Literal["gzip+base64"]
    data: str
    bytes: NotRequired[int]


class WireGraphDocument(Envelope):
    kind: Literal["graph"]
    version: Literal[1, 2]
    encoding: Literal["columnar"]
    functions: list[Union[WireFunction, PackedFunction]]
    listed: NotRequired[list[ListedFunction]]
    folded: NotRequired[Folded]
    findings: NotRequired[list[GraphFinding]]
