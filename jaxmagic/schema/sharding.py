"""`kind: "sharding"`: where every array lives, each jitted call's shardings and collectives.

Every figure is JAX's own. Prose: docs/schema.md, "Sharding documents".
"""

from typing import Literal, Union

from ._typing import NotRequired, TypedDict
from .common import Envelope, ShortSource, Source

KIND = "sharding"
VERSION = 1
READS = (1,)

Spec = Union[list[Union[str, list[str], None]], None]  # per dimension: no axis, an axis, or axes


class Device(TypedDict):
    id: int
    platform: str
    kind: Union[str, None]
    color: NotRequired[str]  # the device's colour, the same in every view (model/device_colors.py)


class Mesh(TypedDict):
    id: str
    axis_names: list[str]
    shape: list[int]
    axis_types: list[str]
    devices: Union[list[int], None]
    abstract: bool
    names: list[str]
    context: bool


class Sharding(TypedDict):
    kind: str
    text: str
    mesh: Union[str, None]
    spec: Spec
    memory_kind: Union[str, None]
    devices: list[int]
    fully_replicated: bool
    unreduced: list[str]
    reduced: list[str]


class Block(TypedDict):
    index: list[list[int]]
    devices: list[int]
    replicas: list[int]


ShardedArray = TypedDict(
    "ShardedArray",
    {
        "id": str,
        "name": Union[str, None],
        "origin": Literal["namespace", "output"],
        "call": Union[int, None],
        "earlier": bool,
        "shape": list[int],
        "dtype": str,
        "bytes": int,
        "sharding": Sharding,
        "blocks": list[Block],
        "bytes_per_device": dict[str, int],
        "replication": int,
        "partial_sums": int,
        "note": Union[str, None],
        "addressable": bool,
    },
)


class InputLeaf(TypedDict):
    path: str
    aval: str
    kind: str
    text: str
    mesh: Union[str, None]
    spec: Spec
    unreduced: NotRequired[list[str]]
    given: Union[str, None]
    mismatch: bool


class OutputLeaf(TypedDict):
    path: str
    aval: str
    kind: str
    text: str
    mesh: Union[str, None]
    spec: Spec
    unreduced: NotRequired[list[str]]


class Lowered(TypedDict):
    args: list[Union[str, None]]
    results: list[Union[str, None]]


class Collective(TypedDict):
    """A collective in the compiled HLO; replica groups mapped to device ids."""

    kind: str
    name: str
    computation: Union[str, None]
    result: str
    result_bytes: int
    operands: list[str]
    operand_bytes: int
    groups: list[list[int]]
    groups_text: Union[str, None]
    pairs: list[list[int]]
    dimensions: list[int]
    op_name: Union[str, None]


class BodyCollective(TypedDict):
    """A collective written in a shard_map body (`psum`, `all_gather`, ...)."""

    primitive: str
    axes: list[str]
    avals: list[str]
    params: str
    source: Union[ShortSource, None]


class ShardMap(TypedDict):
    mesh: Union[str, None]
    in_specs: list[str]
    out_specs: list[str]
    in_avals: list[str]
    shard_avals: list[str]
    out_avals: list[str]
    path: list[int]
    collectives: list[BodyCollective]


class Intermediate(TypedDict):
    primitive: str
    aval: str
    spec: str
    requested: bool
    path: list[int]
    source: Union[ShortSource, None]
    uneven: list[list[int]]


class CallPlacement(TypedDict):
    id: str
    call: int
    name: str
    signature: str
    calls: int
    wrappers: NotRequired[int]  # jit wrappers folded into this entry, when more than one
    source: Union[Source, None]
    call_site: Union[Source, None]
    inputs: list[InputLeaf]
    outputs: list[OutputLeaf]
    lowered: Union[Lowered, None]
    collectives: list[Collective]
    collectives_known: bool
    shard_maps: list[ShardMap]
    intermediates: list[Intermediate]


class ShardingFinding(TypedDict):
    """A sharding finding, or a general one (its `source` and `function` then present)."""

    kind: str
    severity: Literal["info", "warning", "bug"]
    message: str
    array: Union[str, None]
    call: Union[str, None]
    collective: Union[int, None]
    source: NotRequired[Union[Source, None]]
    function: NotRequired[Union[str, None]]


class ShardingDocument(Envelope):
    kind: Literal["sharding"]
    version: Literal[1]
    devices: list[Device]
    meshes: list[Mesh]
    arrays: list[ShardedArray]
    calls: list[CallPlacement]
    findings: list[ShardingFinding]
