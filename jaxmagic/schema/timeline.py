"""`kind: "timeline"`: what `%%trace` records. Calls and spans are columns (a cell can make
100,000 calls; one object per call would cost about ten times as much). Times are integer
microseconds since the capture started. Prose: docs/schema.md, "kind: timeline".
"""

from typing import Literal, Union

from ._typing import TypedDict
from .common import Envelope, Finding, Source

KIND = "timeline"
VERSION = 1
READS = (1,)


class Lane(TypedDict):
    """One function: recorded per call, or seen only through JAX's compile events."""

    id: str
    name: str
    origin: Literal["call", "events"]
    source: Union[Source, None]
    calls: int
    hits: int
    misses: int
    traces: int
    compiles: int
    trace_us: int
    lower_us: int
    compile_us: int
    dispatch_us: int
    device_us: Union[int, None]
    device_calls: int


class Calls(TypedDict):
    """One entry per call in each column, in call order."""

    lane: list[int]
    start: list[int]
    end: list[int]
    hit: list[Literal[0, 1]]
    ready: list[Union[int, None]]
    sig: list[int]
    miss: list[int]
    site: list[int]
    errors: dict[str, str]


class Spans(TypedDict):
    """One entry per phase JAX reported through `jax.monitoring`, in each column."""

    lane: list[int]
    call: list[int]
    phase: list[Literal["trace", "lower", "compile"]]
    start: list[int]
    end: list[int]


class Change(TypedDict):
    """What changed in one argument; `before`/`after` null where it was absent (a keyword added)."""

    path: str
    kind: str
    before: Union[str, None]
    after: Union[str, None]


MissKind = Literal[
    "first",
    "shape",
    "dtype",
    "weak_type",
    "static",
    "pytree",
    "sharding",
    "donation",
    "new_function",
    "new_wrapper",
    "context",
    "unknown",
]

Miss = TypedDict(
    "Miss",
    {
        "call": int,
        "kind": MissKind,
        "changes": list[Change],
        "words": str,
        "fix": Union[str, None],
        "jax": Union[str, None],
        "from": Literal["jax", "diff", "both"],
        "hint": Union[str, None],
    },
)


class SignatureArg(TypedDict):
    path: str
    aval: str
    weak: bool
    static: bool
    sharding: Union[str, None]


class Signature(TypedDict):
    text: str
    args: list[SignatureArg]


class TimelineFinding(Finding):
    """A finding with its lane and calls (a recompile storm names every miss of its function)."""

    lane: Union[int, None]
    calls: list[int]


class CacheEvent(TypedDict):
    t: int
    lane: int
    kind: Literal["hit", "miss"]


class PersistentCache(TypedDict):
    enabled: bool
    hits: int
    misses: int
    saved_us: Union[int, None]
    events: list[CacheEvent]


class Options(TypedDict):
    sync: bool
    storm: int


class TimelineDocument(Envelope):
    kind: Literal["timeline"]
    version: Literal[1]
    duration_us: int
    lanes: list[Lane]
    calls: Calls
    spans: Spans
    misses: list[Miss]
    signatures: list[Signature]
    sites: list[Source]
    findings: list[TimelineFinding]
    cache: PersistentCache
    options: Options
