"""Forward, backward and the rest of one recorded jaxpr, told apart by JAX's name stacks.

A jitted train step is one jaxpr mixing the forward pass, the backward pass and the optimizer.
Since the vjp split (`capture/grads/split.py`) is not available there, the only record of which eqn
belongs where is the name stack JAX writes while differentiating: forward eqns are traced under
`jvp(...)`, their transposes under `transpose(jvp(...))` (user scopes nest inside:
`transpose(jvp(layer_3))/mlp`). This module reads those stacks, nothing else: where no eqn
carries them (an older JAX, stripped stacks, or no differentiation) every eqn is "unknown" and a
note says so, because guessing from primitives would put wrong facts in front of users.

Eqn keys. An eqn is named by the path that reaches it: `(i,)` is eqn `i` of the top-level jaxpr,
`(i, "jaxpr", j)` is eqn `j` of the sub-jaxpr in param `jaxpr` of eqn `i`, and so on; a param
holding a tuple of jaxprs is labelled `branches[1]`. Params are visited in sorted key order, the
order JAX prints them and the graph document numbers its groups in.

Nesting. A sub-jaxpr's eqns carry stacks relative to their owner (the body of a `jit` eqn traced
under `jvp` has empty stacks), so an eqn's effective stack is its owners' stacks followed by its
own. A differentiation is identified by its outermost `jvp`/`transpose` entry: the container it
was written in, the scopes before it, and its occurrence there (a forward eqn after a backward
one of the same wrapper starts the next occurrence: two `grad` calls in one step are two regions).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxmagic.capture import jax_compat

EqnKey = tuple  # (int, str, int, str, ..., int): see the module docstring

FORWARD, BACKWARD, OTHER, UNKNOWN = "forward", "backward", "other", "unknown"
_AD_TRANSFORMS = frozenset({"jvp", "transpose"})
# JAX evaluates the saved-nothing part of a checkpointed function again under this scope
# (`jax_compat.REMAT_SCOPE`) while transposing it: these are the recomputed forward eqns.
_REMAT_SCOPE = jax_compat.REMAT_SCOPE


@dataclasses.dataclass(frozen=True)
class EqnRole:
    """What one eqn is in the differentiation it belongs to."""

    key: EqnKey
    primitive: str
    role: str  # forward | backward | other | unknown
    region: int | None  # index into GradRegions.regions
    recomputed: bool  # a forward eqn evaluated again in the backward pass (jax.checkpoint)
    scope: tuple[str, ...]  # user scopes inside the jvp/transpose wrappers
    source: str  # "file:line:col (function)" of the user's frame, "" when unknown
    name_stack: str  # the effective name stack as JAX prints it


@dataclasses.dataclass(frozen=True)
class Residual:
    """A value the backward pass of a region reads from outside itself.

    `origin` "forward": produced by a forward eqn of the region (`producer` is its key);
    "input": an argument, constant or a value computed outside the region (`producer` is the
    key of that eqn, or None for a jaxpr input). Both are what `jax.ad_checkpoint.saved_residuals`
    lists ("output of ..." and "from the argument ...").
    """

    region: int
    aval: str
    nbytes: int
    origin: str
    producer: EqnKey | None
    consumers: tuple[EqnKey, ...]
    container: tuple  # path of the jaxpr the variable lives in (() = top level)


@dataclasses.dataclass(frozen=True)
class GradLink:
    """The forward eqn(s) a backward eqn most likely differentiates.

    Candidates share the backward eqn's user source span (file, lines and columns) and scope path
    inside the wrappers. `kind` "exact": one candidate, or the backward eqn reads the output of
    exactly those candidates (a residual); "by_source": several candidates remain, all listed.
    """

    backward: EqnKey
    forward: tuple[EqnKey, ...]
    kind: str
    source: str


@dataclasses.dataclass
class GradRegion:
    """One differentiation: the eqns under one occurrence of one outermost jvp/transpose wrapper."""

    index: int
    container: tuple  # path of the jaxpr whose trace held the wrapper
    prefix: str  # scopes and transforms before the wrapper, as JAX prints them ("" when none)
    occurrence: int  # 0 for the first differentiation with this container and prefix
    forward: list[EqnKey] = dataclasses.field(default_factory=list)
    backward: list[EqnKey] = dataclasses.field(default_factory=list)
    residuals: list[int] = dataclasses.field(default_factory=list)  # indices into GradRegions.residuals
    residual_bytes: int = 0
    recomputed: int = 0  # backward eqns that evaluate forward eqns again (jax.checkpoint)


@dataclasses.dataclass
class GradRegions:
    """Roles of every eqn of a jaxpr (and its sub-jaxprs), differentiations, residuals, links."""

    eqns: dict[EqnKey, EqnRole]
    regions: list[GradRegion]
    residuals: list[Residual]
    links: dict[EqnKey, GradLink]
    by_name_stack: bool  # False: no eqn carried jvp/transpose; every role is "unknown"
    notes: list[str]

    @property
    def residual_bytes(self) -> int:
        return sum(r.nbytes for r in self.residuals)

    def keys(self, role: str, region: int | None = None) -> list[EqnKey]:
        """Keys of the eqns with `role` (in one region when given), in pre-order."""
        return [k for k, e in self.eqns.items() if e.role == role and (region is None or e.region == region)]

    def to_dict(self) -> dict:
        """Plain JSON-ready form (keys become lists) for the model layer."""

        def eqn(e: EqnRole) -> dict:
            d = dataclasses.asdict(e)
            d["key"] = list(e.key)
            d["scope"] = list(e.scope)
            return d

        return {
            "by_name_stack": self.by_name_stack,
            "notes": list(self.notes),
            "residual_bytes": self.residual_bytes,
            "eqns": [eqn(e) for e in self.eqns.values()],
            "regions": [
                {
                    "index": r.index,
                    "container": list(r.container),
                    "prefix": r.prefix,
                    "occurrence": r.occurrence,
                    "forward": [list(k) for k in r.forward],
                    "backward": [list(k) for k in r.backward],
                    "residuals": list(r.residuals),
                    "residual_bytes": r.residual_bytes,
                    "recomputed": r.recomputed,
                }
                for r in self.regions
            ],
            "residuals": [
                {
                    "region": r.region,
                    "aval": r.aval,
                    "bytes": r.nbytes,
                    "origin": r.origin,
                    "producer": None if r.producer is None else list(r.producer),
                    "consumers": [list(c) for c in r.consumers],
                    "container": list(r.container),
                }
                for r in self.residuals
            ],
            "links": [
                {
                    "backward": list(l.backward),
                    "forward": [list(k) for k in l.forward],
                    "kind": l.kind,
                    "source": l.source,
                }
                for l in self.links.values()
            ],
        }


def _stack_text(entries: tuple[tuple[bool, str], ...]) -> str:
    """A name stack as JAX prints it: a transform wraps the entry after it (`transpose(jvp(a))/b`)."""
    parts: list[str] = []
    for is_transform, name in reversed(entries):
        if is_transform:
            if parts:
                parts[-1] = f"{name}({parts[-1]})"
            else:
                parts.append(f"{name}()")
        else:
            parts.append(name)
    return "/".join(reversed(parts))


def _nbytes(aval: Any) -> int:
    try:
        return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize
    except Exception:  # tokens, keys with extended dtypes...
        return 0


def _source(source_info: Any) -> tuple[tuple | None, str]:
    frame = jax_compat.user_frame(source_info)
    if frame is None:
        return None, ""
    # The whole span, not only its start: in `h @ w + b` both ops start at `h`, and only where
    # they end tells the matmul from the add.
    column = getattr(frame, "start_column", 0)
    position = (
        frame.file_name,
        frame.start_line,
        column,
        getattr(frame, "end_line", 0),
        getattr(frame, "end_column", 0),
    )
    return position, f"{frame.file_name}:{frame.start_line}:{column} ({frame.function_name})"


@dataclasses.dataclass
class _Walk:
    """State of one pre-order walk (kept in one object so the recursion passes one argument)."""

    eqns: dict = dataclasses.field(default_factory=dict)
    regions: list = dataclasses.field(default_factory=list)
    # (container, prefix) -> [region index, saw a backward eqn]
    current: dict = dataclasses.field(default_factory=dict)
    positions: dict = dataclasses.field(default_factory=dict)  # key -> (file, line, col) or None
    levels: list = dataclasses.field(default_factory=list)  # (container path, jaxpr, owner key | None)
    saw_ad: bool = False


def _stack_role(stack: tuple) -> tuple:
    """(role, container, prefix, recomputed, scope, stack text) of an effective name stack."""
    wrapper = next((j for j, (t, n, _) in enumerate(stack) if t and n in _AD_TRANSFORMS), None)
    text = _stack_text(tuple((t, n) for t, n, _ in stack))
    if wrapper is None:
        return OTHER, None, "", False, (), text
    role = BACKWARD if stack[wrapper][1] == "transpose" else FORWARD
    inner = stack[wrapper + 1 :]
    recomputed = role == BACKWARD and any(not t and n == _REMAT_SCOPE for t, n, _ in inner)
    scope = tuple(n for t, n, _ in inner if not t and n != _REMAT_SCOPE)
    return (role, stack[wrapper][2], _stack_text(tuple((t, n) for t, n, _ in stack[:wrapper])), recomputed, scope, text)


def _classify(state: _Walk, jaxpr: Any, path: tuple, inherited: tuple, owner: EqnKey | None) -> None:
    """Roles of `jaxpr`'s eqns; `inherited` is the owners' effective stack as (is_transform, name, container).

    Eqns of one jaxpr share a few name stacks (one per scope): each is read once (`seen`)."""
    state.levels.append((path, jaxpr, owner))
    seen: dict[tuple, tuple] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        key = (*path, i)
        entries = jax_compat.name_stack_entries(eqn.source_info)
        known = seen.get(entries)
        if known is None:
            stack = inherited + tuple((t, n, path) for t, n in entries)
            known = seen[entries] = (stack, *_stack_role(stack))
        stack, role, container, prefix, recomputed, scope, text = known
        region = None
        if container is not None:
            state.saw_ad = True
            region = _region(state, container, prefix, role)
        position, source = _source(eqn.source_info)
        state.positions[key] = position
        state.eqns[key] = EqnRole(key, eqn.primitive.name, role, region, recomputed, scope, source, text)
        if eqn.params:
            for label, sub in jax_compat.sub_jaxprs(eqn, opened=True):
                _classify(state, sub, (*key, label), stack, key)


def _region(state: _Walk, container: tuple, prefix: str, role: str) -> int:
    """The region an eqn of this wrapper belongs to: a forward eqn after a backward one opens a new one."""
    slot = state.current.get((container, prefix))
    if slot is None or (role == FORWARD and slot[1]):
        occurrence = 0 if slot is None else state.regions[slot[0]].occurrence + 1
        state.regions.append(GradRegion(len(state.regions), container, prefix, occurrence))
        slot = state.current[(container, prefix)] = [len(state.regions) - 1, False]
    if role == BACKWARD:
        slot[1] = True
    return slot[0]


def _residuals(state: _Walk) -> list[Residual]:
    """Values read by a region's backward eqns and not computed by that region's backward pass.

    Found per jaxpr level: a backward eqn inside a sub-jaxpr whose owner is a backward eqn of the
    same region reads the owner's operands, already counted at the owner's level.
    """
    found: dict[tuple, dict] = {}  # (region, container, id(var)) -> record
    for path, jaxpr, owner in state.levels:
        producer: dict[int, EqnKey] = {}
        owner_role = state.eqns[owner] if owner is not None else None
        for i, eqn in enumerate(jaxpr.eqns):
            key = (*path, i)
            role = state.eqns[key]
            if role.role == BACKWARD:
                for var in eqn.invars:
                    if jax_compat.is_literal(var):
                        continue
                    source = producer.get(id(var))
                    source_role = state.eqns[source] if source is not None else None
                    if source_role is not None and source_role.role == BACKWARD and source_role.region == role.region:
                        continue  # computed by this backward pass
                    if (
                        source is None
                        and owner_role is not None
                        and owner_role.role == BACKWARD
                        and owner_role.region == role.region
                    ):
                        continue  # an operand of the owner, counted one level up
                    origin = (
                        "forward"
                        if source_role is not None and source_role.role == FORWARD and source_role.region == role.region
                        else "input"
                    )
                    record = found.setdefault(
                        (role.region, path, id(var)),
                        {
                            "region": role.region,
                            "aval": var.aval,
                            "origin": origin,
                            "producer": source,
                            "consumers": [],
                            "container": path,
                        },
                    )
                    record["consumers"].append(key)
            for var in eqn.outvars:
                producer[id(var)] = key
    return [
        Residual(
            r["region"],
            jax_compat.short_aval(r["aval"]),
            _nbytes(r["aval"]),
            r["origin"],
            r["producer"],
            tuple(r["consumers"]),
            r["container"],
        )
        for r in found.values()
    ]


def _links(state: _Walk, residuals: list[Residual]) -> dict[EqnKey, GradLink]:
    grouped: dict[tuple, list[EqnKey]] = {}
    for key, role in state.eqns.items():
        position = state.positions[key]
        if role.role == FORWARD and position is not None:
            grouped.setdefault((role.region, position, role.scope), []).append(key)
    # one tuple per source position, shared by every backward eqn linked to all of it (a loop's line:
    # thousands of backward eqns, each by that line's thousand forward eqns, held once)
    by_position = {k: tuple(v) for k, v in grouped.items()}
    reads: dict[EqnKey, set] = {}
    for residual in residuals:
        if residual.origin == "forward":
            for consumer in residual.consumers:
                reads.setdefault(consumer, set()).add(residual.producer)
    links: dict[EqnKey, GradLink] = {}
    for key, role in state.eqns.items():
        position = state.positions[key]
        if role.role != BACKWARD or position is None:
            continue
        candidates = by_position.get((role.region, position, role.scope))
        if not candidates:
            continue
        if len(candidates) == 1:
            links[key] = GradLink(key, candidates, "exact", role.source)
            continue
        read = reads.get(key, ())
        confirmed = tuple(c for c in candidates if c in read) if read else ()
        links[key] = (
            GradLink(key, confirmed, "exact", role.source)
            if confirmed
            else GradLink(key, candidates, "by_source", role.source)
        )
    return links


def grad_regions(closed_jaxpr: Any) -> GradRegions:
    """Forward/backward/other role of every eqn of `closed_jaxpr`, its differentiations and residuals."""
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    state = _Walk()
    _classify(state, jaxpr, (), (), None)
    if not state.saw_ad:
        eqns = {k: dataclasses.replace(e, role=UNKNOWN) for k, e in state.eqns.items()}
        note = (
            "no eqn carries jvp(...) or transpose(...) in its name stack: nothing is differentiated here, or "
            "this JAX does not record it; forward and backward are not told apart"
        )
        return GradRegions(eqns, [], [], {}, False, [note])
    residuals = _residuals(state)
    for index, residual in enumerate(residuals):
        region = state.regions[residual.region]
        region.residuals.append(index)
        region.residual_bytes += residual.nbytes
    for key, role in state.eqns.items():
        if role.region is not None:
            region = state.regions[role.region]
            (region.forward if role.role == FORWARD else region.backward).append(key)
            region.recomputed += role.recomputed
    notes = []
    if any(r.backward for r in state.regions) and any(r.forward and not r.backward for r in state.regions):
        notes.append(
            "some differentiations have no backward eqns (forward mode, jax.jvp, or a gradient that was not taken)"
        )
    return GradRegions(state.eqns, state.regions, residuals, _links(state, residuals), True, notes)
