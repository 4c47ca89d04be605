"""One findings list: every finding a view shows is on `Capture.findings`, as one type.

Findings come from three places, and all end on the capture's list (`record.Finding`: kind,
severity, message, source, call, function, key):

* the capture layer, while the cell runs or when it stops (baked globals, unrolled loops,
  trace-time prints, key reuse, NaN/Inf, warnings JAX gave, ...);
* `complete`, run once when a capture stops (the session's `finish`): what the calls show as a
  whole, recompile storms and compiling that dominates running. It needs the miss kinds of
  `model/reasons.py`, which is why it lives here and is handed to the session rather than
  imported by it (capture never imports the model);
* a view's own analyses, which need what only its document computes (a grad document's residual
  memory and gradient values, a sharding document's shards and collectives): `publish` adds
  them when that document is built, so `Capture.findings` after a view holds what it shows.

Views read the list through `findings_json`: every view shows the *general* findings (those of
no view's topic) after its own; `%%trace` shows every finding but other views' topics.
Thresholds that are view options (`--storm N`) stay options: `complete(capture, storm=N)`
replaces the storms found at another threshold.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..capture.record import Capture, Finding, JitCall, SourceLocation
from ..units import times_word
from .document import source_json

STORM_THRESHOLD = 5  # misses of one function (after its first compile) that make a recompile storm
COMPILE_DOMINATES_S = 0.2  # compile time of a function worth a finding when it exceeds its run time
_PHASES = ("trace", "lower", "compile")
CALL_KINDS = ("recompile_storm", "compile_dominates")  # what `complete` finds
SEVERITY_ORDER = {"bug": 0, "warning": 1, "info": 2}

# The topic of a kind that belongs to one view; a kind not listed is general (every view shows it).
TOPICS: dict[str, str] = {
    **dict.fromkeys(("key_reuse", "loop_reuse", "constant_key"), "keys"),
    **dict.fromkeys(
        (
            "nan_gradient",
            "inf_gradient",
            "vanishing_gradient",
            "exploding_gradient",
            "large_residual",
            "residual_memory",
        ),
        "grad",
    ),
    **dict.fromkeys(("resharding", "uneven", "large_all_gather", "replicated"), "sharding"),
}

_FIX_BY_KIND = {
    "shape": "pad or bucket inputs to a few fixed shapes",
    "dtype": "cast inputs to one dtype before the call",
    "weak_type": "pass arrays (jnp.asarray) rather than Python scalars",
    "static": "avoid changing static arguments in a loop",
    "pytree": "keep the argument structure the same across calls",
    "sharding": "place inputs with the same sharding every call",
    "new_function": "define and jit the function once, outside the loop",
    "new_wrapper": "make the jax.jit wrapper once and call it again",
    "donation": "use one donation setting per function",
    "context": "keep config flags and context managers the same around calls",
}


def topic(finding: Finding) -> str | None:
    """The view a finding belongs to ("keys", "grad", "sharding"), or None: general."""
    if finding.key is not None:
        return "keys"
    return TOPICS.get(finding.kind)


def lane_key(call: JitCall) -> tuple:
    """A function *definition* (name and source line): a lambda made anew on every iteration of a
    loop is one function with a miss per call. The timeline's lanes are the same groups."""
    src = call.source
    return (call.name, src.file, src.line) if src is not None else (call.name, call.function_id)


# ---------------------------------------------------------------------------------------------
# What the calls show as a whole.


@dataclass
class _Misses:
    """The cache misses of one function definition, in call order."""

    name: str
    source: SourceLocation | None
    calls: list[int] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    compile_s: float = 0.0


def complete(capture: Capture, storm: int = STORM_THRESHOLD) -> None:
    """Add recompile storms and compile-dominates findings to `capture.findings`, once per
    threshold. Reads only the calls that missed JAX's cache (a loop of 10,000 cache hits costs a
    filter, not a pass of work), and a lane's run time only where compiling took long."""
    if capture.settings.get("storm") == storm:
        return
    kept = [f for f in capture.findings if f.kind not in CALL_KINDS]
    capture.findings[:] = kept + call_findings(capture, storm)
    capture.settings["storm"] = storm


def call_findings(capture: Capture, storm: int) -> list[Finding]:
    """Recompile storms (`storm` misses of one function after its first compile) and functions
    whose compiling took longer than twice their running (from COMPILE_DOMINATES_S)."""
    from .reasons import miss_json

    calls = capture.calls
    lanes: dict[tuple, _Misses] = {}
    for call in [c for c in calls if not c.cache_hit]:
        key = lane_key(call)
        lane = lanes.get(key)
        if lane is None:
            lane = lanes[key] = _Misses(call.name, call.source)
        reason = call.miss_reason
        first = reason.first_call if reason else (not lane.calls and _first_of_lane(calls, call, key))
        kind = miss_json(
            call.index,
            reason.explanation if reason else None,
            reason.diff if reason else (),
            first_call=first,
            redefined=reason.redefined if reason else False,
            name=call.name.rsplit(".", 1)[-1],
            defined_line=call.source.line if call.source else None,
        )["kind"]
        lane.kinds[kind] = lane.kinds.get(kind, 0) + 1
        lane.calls.append(call.index)
        lane.compile_s += sum((call.phases or {}).get(p, 0.0) for p in _PHASES)
    out: list[Finding] = []
    slow = {key for key, lane in lanes.items() if lane.compile_s >= COMPILE_DOMINATES_S}
    run_s = _run_seconds(calls, slow) if slow else {}
    for key, lane in lanes.items():
        storm_finding = _storm(lane, storm)
        if storm_finding is not None:
            out.append(storm_finding)
        if key in slow and lane.compile_s > 2 * run_s.get(key, 0.0):
            out.append(
                Finding(
                    "compile_dominates",
                    f"{lane.name} spent {lane.compile_s:.2f} s compiling and "
                    f"{run_s.get(key, 0.0):.3f} s running: compiling dominates. Reuse compiled shapes, "
                    "or enable JAX's persistent compilation cache (jax.config.update("
                    "'jax_compilation_cache_dir', ...)) for programs that start often.",
                    source=lane.source,
                    severity="info",
                    call=lane.calls[0],
                    function=lane.name,
                )
            )
    return out


def _first_of_lane(calls: list[JitCall], call: JitCall, key: tuple) -> bool:
    """No earlier call of the same definition (a miss JAX gave no reason for)."""
    return not any(lane_key(c) == key for c in calls[: call.index])


def _storm(lane: _Misses, storm: int) -> Finding | None:
    recompiles = len(lane.calls) - (1 if lane.kinds.get("first") else 0)
    if recompiles < storm:
        return None
    kinds = sorted(((k, n) for k, n in lane.kinds.items() if k != "first"), key=lambda kn: -kn[1])
    why = ", ".join(f"{n} × {k.replace('_', ' ')}" for k, n in kinds)
    fix = _FIX_BY_KIND.get(kinds[0][0]) if kinds else None
    return Finding(
        "recompile_storm",
        f"{lane.name} was compiled {times_word(len(lane.calls))} in this cell ({why})" + (f": {fix}." if fix else "."),
        source=lane.source,
        severity="bug",
        call=lane.calls[0],
        function=lane.name,
    )


def _run_seconds(calls: list[JitCall], keys: set[tuple]) -> dict[tuple, float]:
    """Run time of each definition in `keys`: device time where any call's outputs were seen
    ready, else dispatch time (as the timeline's lanes count it)."""
    dispatch: dict[tuple, float] = {}
    device: dict[tuple, float] = {}
    for call in calls:
        key = lane_key(call)
        if key not in keys:
            continue
        compile_s = sum(call.phases.get(p, 0.0) for p in _PHASES) if call.phases else 0.0
        dispatch[key] = dispatch.get(key, 0.0) + max(0.0, call.end - call.start - compile_s)
        if call.ready is not None:
            device[key] = device.get(key, 0.0) + max(0.0, call.ready - call.start - compile_s)
    return {key: device.get(key, dispatch[key]) for key in dispatch}


# ---------------------------------------------------------------------------------------------
# A view's own findings, and what views read.


def publish(capture: Capture, found: Iterable[dict], topic_name: str) -> None:
    """Add a document's own findings (dicts as its view shows them) to `capture.findings`, once:
    a document built twice (a re-drawn view, `to_html` after the magic) adds nothing new."""
    known = {(f.kind, f.message) for f in capture.findings}
    for item in found:
        kind, message = str(item.get("kind")), str(item.get("message"))
        if (kind, message) in known:
            continue
        known.add((kind, message))
        TOPICS.setdefault(kind, topic_name)
        capture.findings.append(
            Finding(kind, message, source=_location(item.get("source")), severity=str(item.get("severity") or "info"))
        )


def _location(src: Any) -> SourceLocation | None:
    if not isinstance(src, dict) or not src.get("file"):
        return None
    return SourceLocation(
        file=src["file"],
        line=int(src.get("line") or 0),
        column=src.get("col"),
        function=src.get("func") or None,
        code=src.get("code"),
    )


def finding_json(f: Finding) -> dict:
    """The one JSON shape of a finding (docs/schema.md, Finding); views add their anchors."""
    return {
        "kind": f.kind,
        "severity": f.severity,
        "message": f.message,
        "source": source_json(f.source),
        "function": f.function,
        "call": f.call,
    }


def general(capture: Capture) -> list[Finding]:
    """The findings of no view's topic, most severe first (stable within a severity)."""
    return sorted((f for f in capture.findings if topic(f) is None), key=lambda f: SEVERITY_ORDER.get(f.severity, 3))


def by_severity(found: list[dict]) -> list[dict]:
    """Bugs, then warnings, then infos; the order within each kept."""
    return sorted(found, key=lambda f: SEVERITY_ORDER.get(f.get("severity", ""), 3))


def graph_findings(capture: Capture, functions: list[dict], fid_of_call: dict[int, str]) -> list[dict]:
    """The general findings as a graph document shows them: each with the drawn function (`fn`)
    of its call and, where one of that function's eqns comes from the finding's line, the first
    such node (`node`), which the view frames and selects when the finding is picked."""
    out = []
    drawn = {fn["id"]: fn for fn in functions}
    for f in general(capture):
        item = finding_json(f)
        fid = fid_of_call.get(f.call) if f.call is not None else None
        fn = drawn.get(fid) if fid is not None else None
        if fn is None and f.function is not None:
            fn = next((g for g in functions if g.get("name") == f.function), None)
        item["fn"] = fn["id"] if fn is not None else None
        item["node"] = _node_at(fn, f.source) if fn is not None else None
        out.append(item)
    return out


def _node_at(fn: dict, source: SourceLocation | None) -> str | None:
    """The node of `fn` made at `source`: the first at its line and column (the op a NaN's origin
    names), else the first at its line."""
    if source is None:
        return None
    on_line = None
    for node in fn.get("nodes") or []:
        src = node.get("src")
        if src and src.get("line") == source.line and src.get("file") == source.file:
            if source.column is None or src.get("col") == source.column:
                return node["id"]
            on_line = on_line or node["id"]
    return on_line
