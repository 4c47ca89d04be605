"""Capture -> timeline document (docs/schema.md, `kind: "timeline"`): what `%%trace` shows.

Calls are stored as columns of integer microseconds since the capture started: a cell
can make 100,000 calls, and one JSON object per call would cost ten times as much.
Lanes group calls by function *definition* (name and source line), so a lambda made
anew on every iteration of a loop is one lane with a miss per call, which is the
story, not a thousand lanes of one call each.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..capture.jax_compat.monitoring import event_function
from ..capture.jit.monitoring import top_level
from ..capture.record import Capture, Event, Finding, JitCall
from ..schema.timeline import VERSION
from ..units import plural
from . import findings
from .document import envelope, source_json
from .findings import STORM_THRESHOLD
from .findings import lane_key as _lane_key

_PHASES = ("trace", "lower", "compile")


def _us(seconds: float, origin: float) -> int:
    return int(round((seconds - origin) * 1e6))


def _dur_us(seconds: float) -> int:
    return int(round(seconds * 1e6))


@dataclass
class _Lane:
    name: str
    origin: str
    source: Any = None
    calls: int = 0
    hits: int = 0
    misses: int = 0
    traces: int = 0
    compiles: int = 0
    phase_us: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_PHASES, 0))
    dispatch_us: int = 0
    device_us: int | None = None
    device_calls: int = 0
    miss_kinds: Counter = field(default_factory=Counter)
    first_call: int = -1

    def json(self, i: int) -> dict:
        return {
            "id": f"f{i}",
            "name": self.name,
            "origin": self.origin,
            "source": source_json(self.source),
            "calls": self.calls,
            "hits": self.hits,
            "misses": self.misses,
            "traces": self.traces,
            "compiles": self.compiles,
            "trace_us": self.phase_us["trace"],
            "lower_us": self.phase_us["lower"],
            "compile_us": self.phase_us["compile"],
            "dispatch_us": self.dispatch_us,
            "device_us": self.device_us,
            "device_calls": self.device_calls,
        }


class _Table:
    """Distinct items stored once, referred to by position."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._at: dict[Any, int] = {}

    def add(self, key: Any, make: Any) -> int:
        at = self._at.get(key)
        if at is None:
            at = self._at[key] = len(self.items)
            self.items.append(make())
        return at


def timeline_document(capture: Capture, storm: int = STORM_THRESHOLD) -> dict:
    """The timeline document of a capture; `storm` = misses of one function that make a recompile storm."""
    origin = capture.start
    calls = _CallColumns(origin)
    for call in capture.calls:
        calls.add(call)
    lanes, cols = calls.lanes, calls.cols
    spans = _spans(capture, lanes, calls.lane_at, origin)
    found = _findings(capture, cols, storm)
    n_calls = len(capture.calls)
    n_miss = sum(l.misses for l in lanes)
    n_compiles = sum(l.compiles for l in lanes)
    n_fns = sum(l.origin == "call" for l in lanes)
    title = (
        f"%%trace — {plural(n_calls, 'call')} of {plural(n_fns, 'jitted function')}, "
        f"{plural(n_miss, 'miss')}, {plural(n_compiles, 'compile')}"
    )
    notes = []
    if not capture.calls and not spans["lane"]:
        notes.append("nothing was recorded: the cell made no jitted call and JAX compiled nothing")
    return envelope(
        "timeline",
        VERSION,
        title,
        capture,
        notes,
        duration_us=_dur_us(max(0.0, capture.end - capture.start)),
        lanes=[lane.json(i) for i, lane in enumerate(lanes)],
        calls={**cols, "errors": calls.errors},
        spans=spans,
        misses=calls.misses,
        signatures=calls.signatures.items,
        sites=calls.sites.items,
        findings=found,
        cache=_persistent_cache(capture, cols, spans, origin),
        options={"storm": storm, "sync": bool(capture.settings.get("sync"))},
    )


class _CallColumns:
    """The calls as columns (one list per field, one row per call), with their lanes, signatures, sites and misses.

    Columns, not one dict per call: a loop of 100,000 calls stays a few lists of ints on the wire."""

    def __init__(self, origin: float) -> None:
        self.origin = origin
        self.lanes: list[_Lane] = []
        self.lane_at: dict[tuple, int] = {}
        self.signatures, self.sites = _Table(), _Table()
        self._signature_at: dict[int, int] = {}  # id(Signature) -> its row: a loop's hits share one object
        self.cols: dict[str, list] = {k: [] for k in ("lane", "start", "end", "hit", "ready", "sig", "miss", "site")}
        self.errors: dict[str, str] = {}
        self.misses: list[dict] = []

    def lane_of(self, call: JitCall) -> tuple[int, _Lane]:
        key = _lane_key(call)
        li = self.lane_at.get(key)
        if li is None:
            li = self.lane_at[key] = len(self.lanes)
            self.lanes.append(_Lane(call.name, "call", call.source, first_call=call.index))
        return li, self.lanes[li]

    def _signature_row(self, sig: Any) -> int:
        """The signature's row in `signatures` (-1: not recorded). Looked up by object first: the
        cache hits of a loop share one Signature, whose key a step of 1,000 leaves makes long."""
        if sig is None:
            return -1
        at = self._signature_at.get(id(sig))
        if at is None:  # the capture holds every Signature while this runs: ids are not reused
            at = self._signature_at[id(sig)] = self.signatures.add(sig.key, lambda: _signature_json(sig))
        return at

    def add(self, call: JitCall) -> None:
        li, lane = self.lane_of(call)
        lane.calls += 1
        phases = call.phases  # None for a plain cache hit
        compile_s = sum(phases.get(p, 0.0) for p in _PHASES) if phases else 0.0
        lane.dispatch_us += _dur_us(max(0.0, call.end - call.start - compile_s))
        if call.ready is not None:
            lane.device_us = (lane.device_us or 0) + _dur_us(max(0.0, call.ready - call.start - compile_s))
            lane.device_calls += 1
        cols, origin = self.cols, self.origin
        cols["lane"].append(li)
        cols["start"].append(_us(call.start, origin))
        cols["end"].append(_us(call.end, origin))
        cols["hit"].append(1 if call.cache_hit else 0)
        cols["ready"].append(None if call.ready is None else _us(call.ready, origin))
        cols["sig"].append(self._signature_row(call.signature))
        site = call.call_site
        cols["site"].append(
            -1 if site is None else self.sites.add((site.file, site.line), lambda s=site: source_json(s))
        )
        if call.error is not None:
            self.errors[str(call.index)] = call.error
        if call.cache_hit:
            lane.hits += 1
            cols["miss"].append(-1)
        else:
            lane.misses += 1
            miss = _miss(call, lane)
            lane.miss_kinds[miss["kind"]] += 1
            cols["miss"].append(len(self.misses))
            self.misses.append(miss)


def _miss(call: JitCall, lane: _Lane) -> dict:
    """Why a call missed: JAX's explanation joined with the signature diff (model/reasons.py)."""
    from .reasons import miss_json

    reason = call.miss_reason
    return miss_json(
        call.index,
        reason.explanation if reason else None,
        reason.diff if reason else (),
        first_call=reason.first_call if reason else lane.calls == 1,
        redefined=reason.redefined if reason else False,
        name=call.name.rsplit(".", 1)[-1],
        defined_line=call.source.line if call.source else None,
    )


def _signature_json(sig: Any) -> dict:
    return {
        "text": str(sig),
        "args": [
            {"path": a.path, "aval": a.aval, "weak": a.weak_type, "static": a.static, "sharding": a.sharding}
            for a in sig.args
        ],
    }


def _spans(capture: Capture, lanes: list[_Lane], lane_at: dict, origin: float) -> dict:
    """Phase spans: those inside a recorded call go to its lane; the others get a lane per name."""
    spans = {k: [] for k in ("lane", "call", "phase", "start", "end")}
    lane_of_call = {}
    by_name: dict[str, list[int]] = {}
    for i, lane in enumerate(lanes):
        by_name.setdefault(lane.name, []).append(i)
    for call in capture.calls:
        lane_of_call[call.index] = lane_at[_lane_key(call)]
    timed = [e for e in capture.events if e.phase in _PHASES]
    inside = [(e.call_index, e) for e in timed if e.call_index is not None and e.call_index in lane_of_call]
    outside = top_level([e for e in timed if e.call_index is None or e.call_index not in lane_of_call])
    by_call: dict[int, list[Event]] = {}
    for index, e in inside:
        by_call.setdefault(index, []).append(e)
    chosen: list[tuple[Event, int, int]] = []
    for index, events in by_call.items():
        li = lane_of_call[index]
        for e in top_level(events) if len(events) > 3 else events:
            chosen.append((e, li, index))
    for e in outside:
        name = event_function(e.fun_name)
        short = name.rsplit(".", 1)[-1]
        match = by_name.get(name) or [i for i, l in enumerate(lanes) if l.name.rsplit(".", 1)[-1] == short]
        if len(match) == 1:
            li = match[0]
        else:
            key = ("events", name)
            li = lane_at.get(key)
            if li is None:
                li = lane_at[key] = len(lanes)
                lanes.append(_Lane(name, "events"))
                by_name.setdefault(name, []).append(li)
        chosen.append((e, li, -1))
    chosen.sort(key=lambda t: t[0].start)
    for e, li, index in chosen:
        lane = lanes[li]
        lane.phase_us[e.phase] += _dur_us(e.end - e.start)
        if e.phase == "compile":
            lane.compiles += 1
        elif e.phase == "trace":
            lane.traces += 1
        spans["lane"].append(li)
        spans["call"].append(index)
        spans["phase"].append(e.phase)
        spans["start"].append(_us(e.start, origin))
        spans["end"].append(_us(e.end, origin))
    return spans


def _persistent_cache(capture: Capture, cols: dict, spans: dict, origin: float) -> dict:
    """Persistent-cache hits and misses, each on the lane of the compile that asked the cache.

    An event inside a recorded call goes to that call's lane; one outside (an eager op, a
    library's jit) to the lane of the compile span it fired in.
    """
    hits = misses = 0
    saved = None
    events = []
    lane_of = cols["lane"]
    compiles = sorted(
        (start, end, lane)
        for start, end, lane, phase in zip(spans["start"], spans["end"], spans["lane"], spans["phase"])
        if phase == "compile"
    )
    compile_starts = [c[0] for c in compiles]
    for e in capture.events:
        kind = "hit" if e.name.endswith("/cache_hits") else "miss" if e.name.endswith("/cache_misses") else None
        if e.name.endswith("compile_time_saved_sec"):
            # JAX reports a negative "saving" when retrieval took longer than the compile: not a saving.
            saved = (saved or 0) + max(0, _dur_us(e.end - e.start))
        if kind is None:
            continue
        hits += kind == "hit"
        misses += kind == "miss"
        t = _us(e.start, origin)
        if e.call_index is not None and e.call_index < len(lane_of):
            lane = lane_of[e.call_index]
        else:
            at = bisect.bisect_right(compile_starts, t) - 1
            lane = compiles[at][2] if at >= 0 and t <= compiles[at][1] else -1
        events.append({"t": t, "lane": lane, "kind": kind})
    enabled = bool(capture.settings.get("persistent_cache_dir")) or bool(hits or misses)
    return {
        "enabled": enabled,
        "hits": hits,
        "misses": misses,
        "saved_us": saved if enabled else None,
        "events": events,
    }


def _findings(capture: Capture, cols: dict, storm: int) -> list[dict]:
    """Every finding on the capture but other views' topics (model/findings.py), with its lane and
    calls: a recompile storm names every miss of its function, another finding its call."""
    findings.complete(capture, storm)
    lane_of = cols["lane"]
    misses_of_lane: dict[int, list[int]] = {}
    for index, li in enumerate(lane_of):
        if cols["miss"][index] >= 0:
            misses_of_lane.setdefault(li, []).append(index)
    out = []
    for f in capture.findings:
        if findings.topic(f) not in (None, "keys"):
            continue
        item = _finding_json(f, lane_of)
        if f.kind == "recompile_storm" and item["lane"] is not None:
            item["calls"] = misses_of_lane.get(item["lane"], item["calls"])
        out.append(item)
    return findings.by_severity(out)


def _finding_json(f: Finding, lane_of: list[int]) -> dict:
    call = f.call if f.call is not None and 0 <= f.call < len(lane_of) else None
    return {
        **findings.finding_json(f),
        "lane": None if call is None else lane_of[call],
        "calls": [] if call is None else [call],
    }
