"""Differentiations during a capture: what the `jax.grad` & co. stand-ins (capture/grads/patch.py) report to.

Each differentiation runs exactly once and becomes one `GradCall` in `capture.grads` (the
`GradLog` records it, with JAX's forward/backward split when asked for); an eager grad's
gradients are then held for the NaN/Inf check at `stop`. Off the jitted-call path: costs
nothing per jitted call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..values.recorder import NanRecorder
from . import patch as grad_patch


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
        return out

    def release(self) -> None:
        """Drop the cache of splits (their programs hold the arrays a function closed over)."""
        self._log = grad_patch.GradLog(self._owner, self._recording_call)
