"""`kind: "grad"`: what `%%grad_graph` records, one entry per differentiation in cell order.

Every graph in it is a graph `Function` (jaxmagic/schema/graph.py), so the graph viewer draws
it unchanged. Prose: docs/schema.md, "Grad documents".
"""

from typing import Literal, Union

from ._typing import NotRequired, TypedDict
from .common import Envelope, NodeSource, Source, ValueSummary
from .graph import Function

KIND = "grad"
VERSION = 1
READS = (1,)


class InputProducer(TypedDict):
    input: int
    path: str


class ConstProducer(TypedDict):
    const: int


class LiteralProducer(TypedDict):
    literal: str


class SplitResidual(TypedDict):
    """A value the forward saves for the backward."""

    id: str
    aval: str
    bytes: int
    producer: Union[str, InputProducer, ConstProducer, LiteralProducer]
    forward_var: Union[str, None]
    backward_vars: list[str]
    consumers: list[str]
    source: Union[NodeSource, None]
    user: Union[str, None]


class UserOp(TypedDict):
    """An eqn of the user's function's jaxpr (`path`: eqn indices into nested jit/remat bodies)."""

    id: str
    path: list[int]
    prim: str
    scope: list[str]
    src: Union[NodeSource, None]


class Links(TypedDict):
    backward: dict[str, str]
    forward: dict[str, str]
    backward_user: dict[str, str]


class GradOf(TypedDict):
    path: str
    aval: str
    output: int
    var: Union[str, None]
    lit: NotRequired[str]
    value: NotRequired[ValueSummary]


class CustomRule(TypedDict):
    user: str
    prim: Literal["custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"]  # the last: JAX 0.4
    rules: list[str]
    forward: list[str]
    backward: list[str]


class _EntryBase(TypedDict):
    id: str
    name: str
    source: Union[Source, None]
    call_site: Union[Source, None]
    calls: int
    residual_bytes: int


class SplitEntry(_EntryBase):
    """An eager reverse-mode differentiation: JAX's exact vjp split."""

    origin: Literal["split"]
    kind: Literal["grad", "value_and_grad", "vjp", "jacrev"]
    argnums: list[int]
    has_aux: bool
    batch: Union[str, None]
    note: Union[str, None]
    n_out: int
    n_aux: int
    forward: Function
    backward: Function
    residuals: list[SplitResidual]
    user_ops: list[UserOp]
    links: Links
    recomputed: list[str]
    grads_of: list[GradOf]
    custom_rules: list[CustomRule]
    cotangent: Union[str, None]


class TangentOf(TypedDict):
    path: str
    var: str


class TangentTotals(TypedDict):
    n_primal: int
    n_tangent: int


class TangentEntry(_EntryBase):
    """Forward mode: one program pushing tangents alongside the outputs."""

    origin: Literal["tangent"]
    kind: Literal["jvp", "linearize", "jacfwd", "hessian"]
    argnums: list[int]
    has_aux: bool
    batch: Union[str, None]
    note: str
    program: Function
    roles: dict[str, Literal["primal", "tangent"]]
    n_inputs: int
    n_out: int
    tangents_of: list[TangentOf]
    totals: TangentTotals


class JitResidual(TypedDict):
    id: str
    aval: str
    bytes: int
    origin: Literal["forward", "input"]
    producer: Union[str, None]
    consumers: list[str]
    source: Union[NodeSource, None]


class JitLink(TypedDict):
    forward: list[str]
    kind: Literal["exact", "by_source"]
    source: str
    n_forward: NotRequired[int]  # by_source to more than MAX_LISTED_BY_SOURCE nodes: counted, `forward` empty


class Region(TypedDict):
    """One differentiation inside a jitted program, found by its name stacks."""

    index: int
    prefix: str
    occurrence: int
    container: Union[str, None]
    n_forward: int
    n_backward: int
    n_recomputed: int
    residuals: list[JitResidual]
    residual_bytes: int
    links: dict[str, JitLink]
    recomputed: list[str]


class GradSite(TypedDict):
    kind: str
    name: str
    site: Union[Source, None]
    batch: Union[str, None]
    count: int


class JitGrad(TypedDict):
    path: str
    aval: str
    var: Union[str, None]
    site: int
    value: NotRequired[ValueSummary]


class JitTotals(TypedDict):
    n_regions: int
    n_residuals: int
    n_forward: int
    n_backward: int
    n_other: int
    n_unknown: int
    n_recomputed: int


class JitEntry(_EntryBase):
    """A jitted program (a train step) whose jaxpr carries forward/backward name stacks."""

    origin: Literal["jit"]
    program: Function
    roles: dict[str, Literal["forward", "backward", "other", "unknown"]]
    regions: list[Region]
    grad_calls: int
    grad_sites: list[GradSite]
    grads_of: list[JitGrad]
    totals: JitTotals


Entry = Union[SplitEntry, TangentEntry, JitEntry]


class GradFinding(TypedDict):
    """A grad finding (model/grad_findings.py), or a general one (`function`, `call` then present)."""

    kind: str
    severity: Literal["info", "warning", "bug"]
    message: str
    entry: Union[str, None]
    residual: Union[str, None]
    source: Union[Source, None]
    node: NotRequired[Union[str, None]]
    graph: NotRequired[Union[Literal["forward", "backward", "program"], None]]
    path: NotRequired[Union[str, None]]
    function: NotRequired[Union[str, None]]
    call: NotRequired[Union[int, None]]


class GradDocument(Envelope):
    kind: Literal["grad"]
    version: Literal[1]
    entries: list[Entry]
    residual_bytes: int
    values: bool
    findings: list[GradFinding]
