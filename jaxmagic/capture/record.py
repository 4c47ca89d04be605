"""The record of one cell run: plain Python data about what JAX did.

A `Capture` holds metadata only (avals, names, timings, jaxprs), never device
buffers: a cell that makes 1 GB arrays still gives a small capture. The model
layer turns it into JSON documents; nothing here knows about IPython or widgets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..units import plural

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # `<function f at 0x7f…>`: noise in a signature shown


@dataclass(frozen=True)
class SourceLocation:
    """A place in the user's source: where a function is defined or called."""

    file: str
    line: int
    column: int | None = None
    function: str | None = None
    code: str | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class ArgSpec:
    """One leaf of a jitted call's arguments, as JAX sees it for caching."""

    path: str  # pytree path, e.g. "x" or "params['w']"
    aval: str  # "f32[3,4]" as JAX prints it; for static args, the value's repr
    weak_type: bool = False
    static: bool = False
    donated: bool = False
    sharding: str | None = None


@dataclass(frozen=True)
class Signature:
    """The cache key of a call, in readable form."""

    args: tuple[ArgSpec, ...]

    @property
    def key(self) -> tuple:
        return tuple((a.path, a.aval, a.weak_type, a.static, a.sharding) for a in self.args)

    def __str__(self) -> str:
        parts = []
        for a in self.args:
            if a.static:  # shown without memory addresses (`<function f>`); the key keeps them
                parts.append(f"{a.path}={_ADDRESS.sub('', a.aval)}")
            else:
                parts.append(a.aval + ("{weak}" if a.weak_type else ""))
        return ", ".join(parts)


@dataclass
class Artifacts:
    """What JAX produced for one distinct (function, signature): shared by all calls with it.

    Lowered and compiled texts are rendered on first access: the objects are
    cheap to keep (JAX caches them anyway) while their text can be megabytes.
    """

    jaxpr: Any = None  # jax.core.ClosedJaxpr
    lowered: Any = None  # jax.stages.Lowered
    compiled: Any = None  # jax.stages.Compiled
    error: str | None = None  # why an artefact could not be obtained
    # Forward values (only with `values=True`): jaxpr Var -> {shape, dtype, min, max, mean, nan,
    # inf, value} of the first recorded call, plain Python data (capture/values/forward.py).
    values: dict[Any, dict] | None = None
    values_note: str | None = None  # why values are missing or partial
    # vmap batch dimensions (only for programs with vmap): jaxpr Var -> dim or None (capture/values/batching.py).
    batch_dims: dict[Any, int | None] | None = None
    batch_size: int | None = None
    batch_note: str | None = None
    # Each jaxpr input's name as the user wrote it (`model.hidden.kernel`) where a library's jit
    # wrapper made the call and its own names mean nothing to the user (capture/jit/user_names.py).
    input_names: tuple[str, ...] | None = None

    @property
    def lowered_text(self) -> str | None:
        return _text_or_none(self.lowered)

    @property
    def compiled_text(self) -> str | None:
        return _text_or_none(self.compiled)

    @property
    def cost_analysis(self) -> Any:
        return _call_or_none(self.compiled, "cost_analysis")

    @property
    def memory_analysis(self) -> Any:
        return _call_or_none(self.compiled, "memory_analysis")


def _call_or_none(obj: Any, method: str) -> Any:
    if obj is None:
        return None
    try:
        return getattr(obj, method)()
    except Exception:  # backend without the analysis: unknown, not an error
        return None


def _text_or_none(stage: Any) -> str | None:
    return None if stage is None else _call_or_none(stage, "as_text")


@dataclass(slots=True)
class JitCall:
    """One call of a jitted function made from Python during the capture."""

    index: int
    name: str
    # id() of the underlying jitted function, unique in the capture: tells same-named functions apart
    # (where a function the cell dropped had that id first, another number, odd: no object's id).
    function_id: int
    source: SourceLocation | None  # where the Python function is defined
    call_site: SourceLocation | None  # the user's line that made the call
    signature: Signature | None  # None: a cache hit after the per-function budget
    cache_hit: bool
    start: float  # time.perf_counter() seconds
    end: float
    # trace/lower/compile/execute seconds; None for a plain cache hit (see `durations`): a capture of
    # 100,000 calls keeps no dict per hit.
    phases: dict[str, float] | None = None
    miss_reason: Any = None
    artifacts: Artifacts | None = None
    error: str | None = None  # the exception the call raised, as "Type: message"
    explanations: tuple[str, ...] = ()  # JAX's own `TRACING CACHE MISS` records logged during the call
    ready: float | None = None  # outputs seen ready by this time (perf_counter; upper bound), None: unknown

    @property
    def durations(self) -> dict[str, float]:
        """Seconds in trace, lower, compile and execute (dispatch: the call's time minus the others)."""
        if self.phases is not None:
            return self.phases
        return {"trace": 0.0, "lower": 0.0, "compile": 0.0, "execute": self.end - self.start}

    @property
    def jaxpr(self) -> Any:
        return None if self.artifacts is None else self.artifacts.jaxpr

    @property
    def lowered_text(self) -> str | None:
        return None if self.artifacts is None else self.artifacts.lowered_text

    @property
    def compiled_text(self) -> str | None:
        return None if self.artifacts is None else self.artifacts.compiled_text


@dataclass
class Event:
    """A phase reported by `jax.monitoring`: trace, lower, compile (with wall-clock span)."""

    name: str  # JAX's event name, e.g. /jax/core/compile/backend_compile_duration
    phase: str  # "trace" | "lower" | "compile" | "cache" | "other"
    fun_name: str | None
    start: float
    end: float
    call_index: int | None  # the JitCall during which it fired, if any


@dataclass(frozen=True)
class Finding:
    """Something the user should know, tied to a source line."""

    kind: str
    message: str
    source: SourceLocation | None = None
    severity: str = "warning"  # "info" | "warning" | "bug"
    call: int | None = None  # the call it was seen in, if any
    function: str | None = None  # the jitted function it concerns, if any
    key: int | None = None  # the KeyRecord (Capture.keys index) it concerns, for PRNG key findings


@dataclass(frozen=True)
class CellError:
    """The exception the captured code raised (the capture keeps everything before it)."""

    type: str
    message: str
    source: SourceLocation | None


@dataclass
class GradCall:
    """One differentiation the cell made: a call of a function `jax.grad` & co. returned, or of
    `jax.vjp` / `jax.jvp` / `jax.linearize` themselves.

    Eager ones (no JAX trace running) carry JAX's exact forward/backward split of the
    function at this call's avals (`capture/grads/split.py`; shared by calls with the same function
    and avals). Ones made while JAX traces (inside a jitted train step, under vmap) carry no
    split: their eqns are part of the enclosing program, whose recorded jaxpr tells forward
    from backward by name stack (`capture/grads/stacks.py`); `call` is the recorded jitted call
    they ran inside, when there is one.
    """

    index: int
    kind: str  # "grad" | "value_and_grad" | "vjp" | "jvp" | "linearize" | "jacrev" | "jacfwd"
    name: str  # the differentiated function's qualified name
    source: SourceLocation | None  # where the differentiated function is defined
    call_site: SourceLocation | None  # the user's line that made the call
    argnums: tuple[int, ...]
    has_aux: bool
    args: tuple[ArgSpec, ...]  # avals of the call's arguments (metadata only)
    traced: bool  # made while JAX was tracing (inside jit, vmap, scan...): no split of its own
    call: int | None = None  # index of the recorded jitted call it ran inside, if any
    batch: str | None = None  # "vmap over 32" when made under vmap (per-example gradients)
    split: Any = None  # grads.GradSplit for eager reverse mode; None when traced or when splitting failed
    tangent: Any = None  # grads.TangentProgram for eager forward mode (jvp, linearize, jacfwd)
    error: str | None = None  # why there is no split, when there should be one
    inside: int | None = None  # index of the differentiation whose call this one ran in (grad of grad)
    # Inside a recorded jitted call: (path, aval, jaxpr Var) of each gradient leaf in that call's jaxpr.
    gradient_vars: tuple = ()
    values: Any = None  # grad_values.GradValues of the first call with this split (only with values=True)
    start: float = 0.0
    end: float = 0.0


@dataclass
class KeyUse:
    """One operation on a PRNG key: a sampler drawing from it, a split, a fold_in... (docs/schema.md, Use)."""

    kind: str  # sampler | split | fold_in | clone | data | wrap
    name: str  # the jax.random function: "normal", "split"...
    consuming: bool  # samplers and splits consume a key; fold_in, clone and key_data do not
    shape: tuple[int, ...] | None = None  # what a sampler drew
    dtype: str | None = None
    times: int | None = 1  # repeats per program call (loop trip counts); None: a while loop, unknown
    source: SourceLocation | None = None  # the user's line
    via: str | None = None  # the library line in between (`flax/linen/stochastic.py:70 (__call__)`)
    call: int | None = None  # the recorded jitted call it ran in
    function: str | None = None
    loop: str | None = None  # "scan ×1000" / "while" / "while condition"
    branch: str | None = None  # "cond branch 1 of 2"
    order: int = 0  # sequence number over the capture


@dataclass
class KeyRecord:
    """One PRNG key (or key array) the cell touched, with its parent and uses (docs/schema.md, KeyNode)."""

    id: int
    parent: int | None
    how: str  # seed | input | constant | wrap | split | row | fold_in | clone | loop | loop_out | mixed
    label: str
    detail: str
    shape: tuple[int, ...] = ()
    count: int | None = 1  # keys it stands for per program call (loop trip count); None: unknown
    index: int | None = None  # row of the parent key array
    typed: bool | None = None
    impl: str | None = None
    data: tuple[int, ...] | None = None  # key data words, when seen from Python
    made: list[SourceLocation] = field(default_factory=list)
    call: int | None = None
    function: str | None = None
    loop: str | None = None
    uses: list[KeyUse] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # namespace names bound to it when the cell ended
    consumed: int | None = 0  # consuming uses, repeats and whole-array uses included; None: unbounded (a while loop)
    state: str = "unused"  # unused | consumed | reused


@dataclass
class Capture:
    """Everything recorded about one cell (or one `with jaxmagic.capture()` block)."""

    calls: list[JitCall] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    arrays: list[Any] = field(default_factory=list)  # sharding.ArrayRecord (with shardings=True / %%sharding)
    meshes: list[Any] = field(default_factory=list)  # sharding.MeshRecord: meshes bound or set in the cell
    devices: list[tuple[int, str, str]] = field(default_factory=list)  # (id, platform, device kind), %%sharding
    keys: list[KeyRecord] = field(default_factory=list)  # PRNG key lineage, parents first
    findings: list[Finding] = field(default_factory=list)
    grads: list[GradCall] = field(default_factory=list)  # differentiations, in order
    error: CellError | None = None
    notes: list[str] = field(default_factory=list)
    # JAX's cache log records kept during the capture: (kind, text, perf_counter time); kind is
    # "miss" (tracing cache), "persistent_miss" or "persistent_hit" (capture/jit/cache_log.py).
    logs: list[tuple[str, str, float]] = field(default_factory=list)
    # How the capture ran: {"sync": waited for outputs after each call, "persistent_cache_dir": JAX's}.
    settings: dict[str, Any] = field(default_factory=dict)
    # {function_id: how many jitted functions were recorded as that one}, where more than one: a
    # `jax.jit(f)` made anew for the same `f` and options is the function JAX's call cache keys (its
    # calls carry the first one's function_id; the cell made this many).
    wrappers: dict[int, int] = field(default_factory=dict)
    jax_version: str = ""
    backend: str = ""
    start: float = 0.0
    end: float = 0.0

    def summary(self) -> str:
        names = sorted({c.name for c in self.calls})
        hits = sum(c.cache_hit for c in self.calls)
        text = (
            f"{plural(len(self.calls), 'jitted call')} ({plural(hits, 'cache hit')}) to "
            f"{plural(len(names), 'function')}"
        )
        if names:
            text += ": " + ", ".join(names)
        if self.error is not None:
            text += f"; raised {self.error.type}"
        return text

    def __repr__(self) -> str:
        return f"<jaxmagic.Capture: {self.summary()}>"


@dataclass(frozen=True)
class Change:
    """One difference that made a call miss the cache: which argument, what, from what to what.

    Parsed from JAX's `jax_explain_cache_misses` text (capture/jax_compat/explain.py) or found by
    comparing two `Signature`s (capture/jit/signature.py); both use these same kinds so the
    model can tell whether they agree.
    """

    path: str  # argument name and pytree path (`x`, `params['w']`); a config name for "context";
    #            "args"/"kwargs" for the whole positional/keyword list, "" for the argument list as a whole
    kind: str  # shape | dtype | weak_type | static | pytree | sharding | donation | context | unknown
    before: str | None  # as JAX prints it; None: absent there (pytree) or not known
    after: str | None


@dataclass(frozen=True)
class ConstantStub:
    """What a capture keeps of a constant a program closed over: its type and size, not its value.

    A jitted function that closes over a 1 GB array bakes that array into its jaxpr's consts; a
    capture that kept the jaxpr as JAX made it would keep the array alive after the user dropped
    it. Everything that needs the value (findings about baked constants, `--values`, the key
    lineage) has run when the capture stops; what is shown later reads only shapes and dtypes.
    """

    shape: tuple[int, ...]
    dtype: Any
    nbytes: int
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        size = 1
        for n in self.shape:
            size *= n
        return size

    def __repr__(self) -> str:
        return f"<constant {self.dtype}{list(self.shape)}, {self.nbytes} bytes, not kept>"
