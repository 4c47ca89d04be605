"""Differentiations during a capture: what the `jax.grad` & co. stand-ins (capture/grads/patch.py) report to.

Each differentiation runs exactly once and becomes one `GradCall` in `capture.grads` (the
`GradLog` records it, with JAX's forward/backward split when asked for); an eager grad's
gradients are then held for the NaN/Inf check at `stop`. Off the jitted-call path: costs
nothing per jitted call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import strict
from ..buffers import remembered_record_stub
from ..values.recorder import NanRecorder
from . import patch as grad_patch


def _keep_no_buffers(rec: Any) -> None:
    """The differentiation's split or tangent program from now on with its array constants stubbed (the
    copy `stop` keeps): the arrays the differentiated function closed over go when the cell drops it.
    The split cache (`GradLog`) and the NaN check keep the original while the function lives."""
    try:
        rec.split = remembered_record_stub(rec.split, "split")
        rec.tangent = remembered_record_stub(rec.tangent, "tangent")
    except Exception as exc:  # boundary: the originals are then stubbed at `stop`, as before
        strict.fallback("a differentiation's programs stubbed after the call", exc)


class GradRecorder:
    """The grad recorder of one capture: `grad_patch.set_recorder` takes it.

    `owner` is the jit recorder, whose flags say when JAX runs for jaxmagic itself (GradLog);
    `recording_call(frame)` gives the index of the recorded jitted call a frame runs inside.
    """

    def __init__(self, owner: Any, recording_call: Callable[[Any], int | None], nans: NanRecorder, split: bool):
        self._owner = owner
        self._recording_call = recording_call
        self._nans = nans
        self._split = split  # grads=True: eager reverse-mode grads get their forward/backward split
        self._log = grad_patch.GradLog(owner, recording_call)

    def record_grad(
        self, what: grad_patch.Differentiation, run: Any, args: tuple, kwargs: dict, primals: tuple, primal_kwargs: dict
    ) -> Any:
        """Run one differentiation (`run(*args, **kwargs)`, exactly once) and record it in `capture.grads`;
        `primals` are the differentiated function's arguments."""
        __tracebackhide__ = True
        grads = self._owner.capture.grads
        first = len(grads)
        out = self._log.record(what, run, args, kwargs, primals, primal_kwargs)
        if first < len(grads) and not grads[first].traced and grads[first].kind in ("grad", "value_and_grad"):
            self._nans.note_grad(grads[first], out, primals, primal_kwargs, self._split)
        for rec in grads[first:]:  # its values were read: the record keeps the programs' arrays stubbed
            _keep_no_buffers(rec)
        return out

    def release(self) -> None:
        """Drop the cache of splits (their programs hold the arrays a function closed over)."""
        self._log.release()
        self._log = grad_patch.GradLog(self._owner, self._recording_call)
