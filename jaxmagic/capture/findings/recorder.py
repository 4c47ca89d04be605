"""The findings a capture records about its programs: looked for once per definition, mostly at `stop`.

Baked-in constants, unrolled Python loops and out-of-bounds constant indices are read from a
program's jaxpr (capture/findings/program.py, index.py); `print` inside a traced function from
the print hook (trace_prints.py). What each needs right after the call is noted then (what the
function can reach, about 0.1 ms); the walk over the jaxpr waits for the capture's `stop`, so
it stays out of the user's loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..jit.functions import definition_site
from ..record import Capture, Finding, SourceLocation

TRACE_PRINT_MESSAGE = (
    "print() inside a jitted function runs only while JAX traces it: on the first call and "
    "on every recompile, never on cache hits, and it prints tracers, not values. Use "
    "jax.debug.print to print values on every call."
)


class ProgramFindings:
    """Jaxpr findings of a capture's programs, noted after each call and looked for at `finish`.

    `name_of(fn)` gives a recorded jitted function's name (the jit recorder's table).
    """

    def __init__(self, capture: Capture, name_of: Callable[[Any], str | None]):
        self.capture = capture
        self._name_of = name_of
        self._analysed: set = set()  # definitions whose jaxpr findings were looked for
        self._deferred: list[tuple[Any, Any, int, Any]] = []  # (fn, jaxpr, call, reach) for `finish`

    def note(self, fn: Any, closed_jaxpr: Any, index: int) -> None:
        """Globals frozen in as constants, Python loops unrolled, constant indices out of bounds.

        Once per definition (a `lambda` jitted anew each iteration reads the same globals; its
        globals and loops rarely differ between signatures, and the analysis costs about a tenth
        of a trace, 0.5 s at 50k eqns, so a storm would pay it each time). What the function can
        reach (globals, closures) is read now, right after the call, about 0.1 ms: a global
        reassigned later in the cell is exactly the stale-constant bug. The program's constants are
        matched against that snapshot at `finish`, with the loop analysis, which reads only the
        jaxpr: the walk stays out of the user's loop (tens of ms at 4k eqns, 70% of the cost).
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
        self._deferred.append((fn, closed_jaxpr, index, reach))

    def finish(self) -> None:
        """Look for every noted program's findings (last in `stop`: all else is recorded by then)."""
        deferred, self._deferred = self._deferred, []
        if not deferred:
            return
        from . import program

        for fn, closed_jaxpr, index, reach in deferred:
            kinds = (program.CONSTANTS, program.LOOPS) if reach is not None else (program.LOOPS,)
            try:
                self._add(fn, closed_jaxpr, index, kinds, reach)
            except Exception as exc:  # boundary: our failure never becomes the user's
                self.capture.notes.append(
                    f"baked constants and unrolled loops not checked: {type(exc).__name__}: {exc}"
                )
            self._add_index_findings(fn, closed_jaxpr, index)

    def _add(self, fn: Any, closed_jaxpr: Any, index: int, kinds: tuple[str, ...], reach: Any) -> None:
        from . import program

        found, notes = program.jaxpr_findings(fn, closed_jaxpr, kinds, reach=reach)
        name = self._name_of(fn)
        known = {(f.kind, f.message) for f in self.capture.findings}
        for f in found:
            if (f.kind, f.message) not in known:  # the same global seen again by a later signature
                self.capture.findings.append(dataclasses.replace(f, call=index, function=name))
        self.capture.notes.extend(notes)

    def _add_index_findings(self, fn: Any, closed_jaxpr: Any, index: int) -> None:
        """Constant indices outside the array, which JAX clamps or drops (capture/findings/index.py)."""
        from . import index as index_findings

        try:
            found = index_findings.index_findings(closed_jaxpr, self._name_of(fn))
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"out-of-bounds indices not checked: {type(exc).__name__}: {exc}")
            return
        self.capture.findings.extend(dataclasses.replace(f, call=index) for f in found)

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
