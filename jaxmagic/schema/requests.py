"""The widget <-> kernel messages (anywidget custom messages; jaxmagic/views/requests.py and
widgets/ui/requests.js). Prose: docs/schema.md, "Requests".
"""

from typing import Literal, Union

from ._typing import TypedDict
from .graph import Function, Levels, ProgramCost


class RequestArgs(TypedDict):
    function: str


class Request(TypedDict):
    """What a view asks for: `levels` or the whole `jaxpr` text of a drawn function, or the graph
    of a listed one."""

    jm: Literal["request"]
    id: int
    what: Literal["levels", "jaxpr", "function"]
    args: RequestArgs


class ReplyOk(TypedDict):
    """Success: the answer travels as one binary buffer, gzip-compressed JSON."""

    jm: Literal["reply"]
    id: int
    ok: Literal[True]


class ReplyError(TypedDict):
    jm: Literal["reply"]
    id: int
    ok: Literal[False]
    error: str


Reply = Union[ReplyOk, ReplyError]


class LevelsAnswer(TypedDict):
    """The buffer of a `levels` reply: what the function left out, one entry per node for links."""

    levels: Union[Levels, None]
    cost: Union[ProgramCost, None]
    shlo: Union[list[list[int]], None]
    hlo: Union[list[list[int]], None]
    hlo_comp: Union[list[Union[str, None]], None]
    notes: list[str]


class JaxprAnswer(TypedDict):
    """The buffer of a `jaxpr` reply: the function's whole jaxpr text, with the graph's variable
    names, and the line where each node's eqn starts (None where not found), in node order."""

    text: str
    lines: list[Union[int, None]]


class FunctionAnswer(Function):
    """The buffer of a `function` reply: a listed function's whole graph, in the logical form."""

    notes: list[str]
