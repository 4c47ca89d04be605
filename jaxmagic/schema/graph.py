"""`kind: "graph"`: what `%%jaxpr` records, one `Function` per jitted function and signature.

Prose: docs/schema.md, "kind: graph". Version 2 adds optional fields to version 1 (`levels`,
`cost`, `repeats`, `values`, `batch` on functions; `cost`, `shlo`, `hlo`, `hlo_comp` on nodes),
so a reader of version 2 reads both.
"""

from typing import Literal, Union

from ._typing import NotRequired, TypedDict
from .common import Envelope, Finding, NodeSource, Source, ValueSummary

KIND = "graph"
VERSION = 2
READS = (1, 2)  # versions a graph reader reads


class VarOperand(TypedDict):
    var: str


class LiteralOperand(TypedDict):
    """A literal, drawn as an inline chip on the node that reads it, never as an edge."""

    lit: str
    aval: str


Operand = Union[VarOperand, LiteralOperand]


class Group(TypedDict):
    """One (sub-)jaxpr: the root (`node` null) or a sub-jaxpr of the eqn `node`."""

    id: str
    node: Union[str, None]
    label: str
    invars: list[str]
    constvars: list[str]
    outvars: list[Operand]
    n_eqns: int


class NodeCost(TypedDict):
    """A per-primitive estimate (docs/cost.md); `flops`/`bytes` null where it cannot say."""

    flops: Union[int, float, None]
    bytes: Union[int, float, None]
    estimate: Literal[True]
    transcendentals: NotRequired[Union[int, float]]
    note: NotRequired[str]


class Node(TypedDict):
    """One eqn, in depth-first print order."""

    id: str
    group: str
    scope: list[str]
    prim: str
    params: dict[str, str]
    ins: list[Operand]
    outs: list[str]
    subgroups: list[str]
    src: Union[NodeSource, None]
    line: Union[int, None]
    cost: NotRequired[Union[NodeCost, None]]
    shlo: NotRequired[list[int]]
    hlo: NotRequired[list[int]]
    hlo_comp: NotRequired[Union[str, None]]


Var = TypedDict(
    "Var",
    {
        "id": str,
        "name": str,
        "aval": str,
        "group": str,
        "path": NotRequired[str],
        "def": str,  # a node id, "in", "const" (or "free")
    },
)


class Repeat(TypedDict):
    """A run of >= 2 structurally identical units (layers) inside one container."""

    id: str
    group: str
    scope: list[str]
    units: list[list[int]]
    label: str


class LevelText(TypedDict):
    text: Union[str, None]
    note: Union[str, None]


class Levels(TypedDict):
    """The lowered StableHLO and compiled HLO texts the side panes show."""

    stablehlo: LevelText
    hlo: LevelText


class ProgramCost(TypedDict):
    """XLA's whole-program `cost_analysis()` and `memory_analysis()`, as XLA reports them."""

    program: Union[dict[str, Union[int, float]], None]
    memory: Union[dict[str, Union[int, float]], None]
    note: Union[str, None]


class Function(TypedDict):
    """One jitted function and argument signature, with its whole jaxpr as groups, nodes and vars."""

    id: str
    name: str
    signature: str
    source: Union[Source, None]
    calls: int
    cache_hits: int
    wrappers: NotRequired[int]
    n_eqns: int
    text: str
    root: str
    groups: list[Group]
    nodes: list[Node]
    vars: list[Var]
    truncated: bool
    repeats: NotRequired[list[Repeat]]
    levels: NotRequired[Levels]
    cost: NotRequired[ProgramCost]
    deferred: NotRequired[list[Literal["levels", "jaxpr"]]]
    values: NotRequired[Union[dict[str, ValueSummary], None]]
    values_note: NotRequired[Union[str, None]]
    batch: NotRequired[Union[dict[str, Union[int, None]], None]]
    batch_size: NotRequired[Union[int, None]]
    batch_note: NotRequired[Union[str, None]]


class ListedFunction(TypedDict):
    """A function listed without its graph (past the document's budget: model/folding.py)."""

    id: str
    name: str
    signature: str
    source: Union[Source, None]
    calls: int
    cache_hits: int
    wrappers: int
    n_eqns: int


class Folded(TypedDict):
    """What the document folded and left out."""

    functions: int
    calls: int
    wrappers: int
    folded_functions: int
    listed: int
    unlisted: int
    unlisted_calls: int
    listed_graphs: Literal["on request", "not in this page"]


class GraphFinding(Finding):
    """A general finding with the drawn function (`fn`) of its call and the node at its line."""

    fn: Union[str, None]
    node: Union[str, None]


class GraphDocument(Envelope):
    kind: Literal["graph"]
    version: Literal[1, 2]
    functions: list[Function]
    listed: NotRequired[list[ListedFunction]]
    folded: NotRequired[Folded]
    findings: NotRequired[list[GraphFinding]]
