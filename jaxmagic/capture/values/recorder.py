"""NaN and Inf during a capture: outputs held weakly as calls return, checked when the capture stops.

Reading an output while the cell runs would wait for the device; so each fully recorded call's
float outputs and arguments, each sampled cache hit's outputs and each eager grad's gradients
are held by weak reference (capture/values/nan_check.py `NanWatch`) and read at `stop`, with the
arrays the cell bound anew in its namespace. A failure here is a capture note, never the user's.
"""

from __future__ import annotations

from typing import Any

from ..quiet_gc import paused_gc
from ..record import Capture


class NanRecorder:
    """The NaN/Inf bookkeeping of one capture (`nan_check` is imported on first use: most cells never need it)."""

    def __init__(self, capture: Capture, namespace: dict):
        self.capture = capture
        self.namespace = namespace
        self._watch: Any = None  # nan_check.NanWatch, made at the first call it notes
        self._names_before: dict[str, Any] | None = None

    def watch(self) -> Any:
        """The capture's `NanWatch`, made on first use."""
        if self._watch is None:
            from . import nan_check

            self._watch = nan_check.NanWatch()
        return self._watch

    def snapshot_names(self) -> None:
        """Names bound before the cell (by identity): arrays the cell binds are checked at `check`."""
        try:
            from . import nan_check

            self._names_before = nan_check.names_before(self.namespace)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"the cell's arrays not checked for NaN/Inf: {type(exc).__name__}: {exc}")
            self._names_before = None

    def note_call(
        self, index: int, rows: list, fn: Any, args: tuple, kwargs: dict, out: Any, keep_arguments: bool = True
    ) -> None:
        """Hold a call's float outputs and arguments weakly, to check them at `check` (`rows[index]`:
        the call's row, absent when recording it failed); `keep_arguments`: small ones strongly too."""
        try:
            name = rows[index].name
            with paused_gc():  # a weak reference per leaf: a train step's thousand would start a collection
                self.watch().note_call(index, name, fn, args, kwargs, out, keep_arguments)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"outputs of call {index} not checked for NaN/Inf: {type(exc).__name__}: {exc}")

    def note_grad(self, rec: Any, out: Any, primals: tuple, primal_kwargs: dict, grads_on: bool) -> None:
        """An eager grad's gradients, checked at `check`; with its split (%%grad_graph, `grads_on`)
        the origin is searched."""
        try:
            if rec.split is not None:
                why = None
            elif not grads_on:
                why = "its forward/backward split is traced only under %%grad_graph (jaxmagic.capture(grads=True))"
            else:
                why = f"it has no forward/backward split ({rec.error or 'not traced'})"
            self.watch().note_grad(rec.index, rec.name, rec.kind, out, rec.split, primals, primal_kwargs, why)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"gradients of {rec.name} not checked for NaN/Inf: {type(exc).__name__}: {exc}")

    def check(self) -> None:
        """NaN/Inf in the outputs still alive and ready (nan_check.py), and what the user's
        jax_debug_nans/infs stopped at; the weak references are dropped."""
        watch, self._watch = self._watch, None
        before, self._names_before = self._names_before, None
        capture = self.capture
        if watch is None and not capture.calls and not capture.grads:
            return  # no jitted call and no grad: the cell's arrays are an earlier story
        from . import nan_check

        bound = nan_check.bound_arrays(self.namespace, before) if before is not None else []
        (watch or nan_check.NanWatch()).check(capture, bound)
        del bound
        known = {(f.kind, f.message) for f in capture.findings}
        capture.findings.extend(f for f in nan_check.debug_findings(capture) if (f.kind, f.message) not in known)
