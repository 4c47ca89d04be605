"""`kind: "keys"`: the lineage of every PRNG key the cell touched, as a tree of nodes.

Prose: docs/schema.md, "Keys documents".
"""

from typing import Literal, Union

from ._typing import TypedDict
from .common import Envelope, Source

KIND = "keys"
VERSION = 1
READS = (1,)


class Summary(TypedDict):
    keys: int
    roots: int
    consumed: int
    reused: int
    unused: int
    uses: int
    programs: int


class Use(TypedDict):
    """One use of a key, in the order they happened (`order` over the whole capture)."""

    kind: Literal["sampler", "split", "fold_in", "clone", "data", "wrap"]
    name: str
    consuming: bool
    shape: Union[list[int], None]
    dtype: Union[str, None]
    times: Union[int, None]
    source: Union[Source, None]
    via: Union[str, None]
    call: Union[int, None]
    function: Union[str, None]
    loop: Union[str, None]
    branch: Union[str, None]
    order: int


class KeyNode(TypedDict):
    """One key or key array; `id` is its position in `nodes` (parents before children)."""

    id: int
    parent: Union[int, None]
    how: Literal["seed", "input", "constant", "wrap", "split", "row", "fold_in", "clone", "loop", "loop_out", "mixed"]
    label: str
    detail: str
    shape: list[int]
    count: Union[int, None]
    index: Union[int, None]
    typed: Union[bool, None]
    impl: Union[str, None]
    data: Union[str, None]
    made: list[Source]
    call: Union[int, None]
    function: Union[str, None]
    loop: Union[str, None]
    names: list[str]
    uses: list[Use]
    state: Literal["unused", "consumed", "reused"]
    run: Union[int, None]


class Run(TypedDict):
    """A chain of `length` identical steps folded into one drawn node."""

    id: int
    first: int
    last: int
    length: int
    label: str


class KeyFinding(TypedDict):
    kind: Literal["key_reuse", "loop_reuse", "constant_key"]
    severity: Literal["info", "warning", "bug"]
    message: str
    node: Union[int, None]
    sources: list[Source]


class KeysDocument(Envelope):
    kind: Literal["keys"]
    version: Literal[1]
    summary: Summary
    nodes: list[KeyNode]
    runs: list[Run]
    findings: list[KeyFinding]
