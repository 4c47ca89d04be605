"""The parts every document kind shares: the envelope, a source line, an error, a finding.

Prose (why each field exists): docs/schema.md, top and "Findings: one list".
"""

from typing import Literal, Union

from ._typing import NotRequired, TypedDict

SCHEMA = "jaxmagic"

Severity = Literal["info", "warning", "bug"]


class Source(TypedDict):
    """A line of the user's code: `code` is the stripped line when the file or cell is readable."""

    file: str
    line: int
    col: Union[int, None]
    func: Union[str, None]
    code: Union[str, None]


class NodeSource(Source):
    """A node's `src`: `lib` names the library frame JAX saw the op in, under the user's line."""

    lib: NotRequired[str]


class ShortSource(TypedDict):
    """`{file, line, func}`: where a sharding intermediate or a shard_map collective was written."""

    file: str
    line: int
    func: Union[str, None]


class CellError(TypedDict):
    """The exception the cell raised: its innermost frame in the user's cell, when there is one."""

    type: str
    message: str
    file: Union[str, None]
    line: Union[int, None]
    code: Union[str, None]
    explanation: NotRequired[str]


class Finding(TypedDict):
    """The one JSON shape of a finding (model/findings.py `finding_json`); views add anchors."""

    kind: str
    severity: Severity
    message: str
    source: Union[Source, None]
    function: Union[str, None]
    call: Union[int, None]


class ValueSummary(TypedDict):
    """A recorded value: statistics of its finite elements, the printed value when small."""

    shape: list[int]
    dtype: str
    min: Union[float, None]
    max: Union[float, None]
    mean: Union[float, None]
    norm: Union[float, None]
    nan: int
    inf: int
    value: Union[str, None]


class Envelope(TypedDict):
    """The fields of every document but `kind` and `version`, which each kind declares."""

    schema: Literal["jaxmagic"]
    title: str
    caption: list[str]
    notes: list[str]
    error: Union[CellError, None]
    cells: NotRequired[dict[str, int]]
    present: NotRequired[bool]
