"""The findings a capture records about its programs: looked for once per definition, mostly at `stop`.

Baked-in constants, unrolled Python loops and out-of-bounds constant indices are read from a
program's jaxpr (capture/findings/program.py, index.py); `print` inside a traced function from
the print hook (trace_prints.py). What each needs right after the call is taken then (what the
function can reach, about 0.1 ms, and the program's array constants matched against it), so that
nothing kept until `stop` holds an array or a function the cell drops; the walks over the jaxpr's
structure wait for the capture's `stop`, so they stay out of the user's loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..buffers import remembered_stub
from ..jit.functions import definition_site
from ..record import Capture, Finding, SourceLocation

TRACE_PRINT_MESSAGE = (
    "print() inside a jitted function runs only while JAX traces it: on the first call and "
    "on every recompile, never on cache hits, and it prints tracers, not values. Use "
    "jax.debug.print to print values on every call."
)


@dataclass
class _Deferred:
    """One program noted for `ProgramFindings.finish`: none of the user's arrays or functions held."""

    index: int  # the call it was first recorded in
    name: str | None  # the jitted function's name in the capture
    pending: Any  # program.PendingFindings
    index_found: list[Finding] | None = None  # out-of-bounds indices, when looked for at once


class ProgramFindings:
    """Jaxpr findings of a capture's programs, noted after each call and looked for at `finish`.

    `name_of(fn)` gives a recorded jitted function's name (the jit recorder's table).
    """

    def __init__(self, capture: Capture, name_of: Callable[[Any], str | None]):
        self.capture = capture
        self._name_of = name_of
        self._analysed: set = set()  # definitions whose jaxpr findings were looked for
        self._deferred: list[_Deferred] = []  # for `finish`, in the order of the calls

    def note(self, fn: Any, closed_jaxpr: Any, index: int) -> None:
        """Globals frozen in as constants, Python loops unrolled, constant indices out of bounds.

        Once per definition (a `lambda` jitted anew each iteration reads the same globals; its
        globals and loops rarely differ between signatures, and the analysis costs about a tenth
        of a trace, 0.5 s at 50k eqns, so a storm would pay it each time). What the function can
        reach (globals, closures) is read now, right after the call, about 0.1 ms: a global
        reassigned later in the cell is exactly the stale-constant bug. The program's array
        constants are matched against it now too, so that nothing kept until `finish` holds an
        array or a function of the user's (`program.PendingFindings`); the walks that read only
        the jaxpr (unrolled loops, scalar literals) wait for `finish`, out of the user's loop (tens
        of ms at 4k eqns). A program holding arrays has its out-of-bounds constant indices, which
        read the constants' values, looked for now.
        """
        key = definition_site(fn) or id(fn)  # jitted functions made anew from one `lambda`: once
        if key in self._analysed:
            return
        self._analysed.add(key)
        from . import program

        try:
            reach = program.constants_reach(fn)
        except Exception as exc:  # boundary: our failure never becomes the user's; that analysis is left out
            self.capture.notes.append(f"{self._name_of(fn)}: constants not checked: {type(exc).__name__}: {exc}")
            reach = None
        kept = remembered_stub(closed_jaxpr)
        deferred = _Deferred(index, self._name_of(fn), program.pending_findings(fn, closed_jaxpr, kept, reach))
        if kept is not closed_jaxpr:
            deferred.index_found = self._index_findings(closed_jaxpr, deferred.name, index)
        self._deferred.append(deferred)

    def finish(self) -> None:
        """Look for every noted program's findings (last in `stop`: all else is recorded by then)."""
        deferred, self._deferred = self._deferred, []
        for item in deferred:
            try:
                self._add(item)
            except Exception as exc:  # boundary: our failure never becomes the user's
                self.capture.notes.append(
                    f"baked constants and unrolled loops not checked: {type(exc).__name__}: {exc}"
                )
            if item.index_found is None:
                item.index_found = self._index_findings(item.pending.program(), item.name, item.index)
            self.capture.findings.extend(item.index_found)

    def _add(self, item: _Deferred) -> None:
        from . import program

        found, notes = program.finish_pending(item.pending)
        known = {(f.kind, f.message) for f in self.capture.findings}
        for f in found:
            if (f.kind, f.message) not in known:  # the same global seen again by a later signature
                self.capture.findings.append(dataclasses.replace(f, call=item.index, function=item.name))
        self.capture.notes.extend(notes)

    def _index_findings(self, closed_jaxpr: Any, name: str | None, index: int) -> list[Finding]:
        """Constant indices outside the array, which JAX clamps or drops (capture/findings/index.py)."""
        from . import index as index_findings

        try:
            found = index_findings.index_findings(closed_jaxpr, name)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"out-of-bounds indices not checked: {type(exc).__name__}: {exc}")
            return []
        return [dataclasses.replace(f, call=index) for f in found]

    def on_trace_print(self, index: int, where: SourceLocation | None) -> None:
        """A `print` ran while JAX traced recorded call `index` (trace_prints.py): one finding per line."""
        key = (where.file, where.line) if where else None
        if any(
            f.kind == "trace_time_print" and (f.source.file, f.source.line) == key
            for f in self.capture.findings
            if f.source is not None
        ):
            return
        self.capture.findings.append(
            Finding(
                kind="trace_time_print",
                severity="warning",
                source=where,
                call=index,
                message=TRACE_PRINT_MESSAGE,
            )
        )
