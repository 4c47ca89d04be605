"""What JAX produced for one (function, signature): its jaxpr, Lowered and Compiled, via JAX's AOT API.

Taken right after the signature's first recorded call, these hit the caches the call filled
(well under 1 ms). Then, only when asked for: vmap batch dimensions (programs with vmap are
traced once more, so the user's Python inside them runs again: opt-in) and forward values (the
jaxpr evaluated again on this call's arguments). JAX events these fire are jaxmagic's own: the
recorder marks itself collecting meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..record import Artifacts

# Whether `Lowered.compile()` after a call compiles again (JAX 0.4) or hits the call's
# cache (0.5+): None until the first artefact compile in this process shows it.
_AOT_COMPILE_RECOMPILES: bool | None = None


class CompileFromCache:
    """`lowered.compile()` when JAX answers it from the cache the call filled, else None.

    JAX 0.5 and later do (0.01 ms); 0.4 compiles the program a second time, which would double
    the cell's compile time. The first compile jaxmagic asks for in a process tells which (no
    version check: `own_compiles` counts the backend compiles JAX reports meanwhile); after that,
    on such a JAX, compiled text and cost are left out with a note in `notes`.
    """

    def __init__(self, notes: list[str]):
        self.notes = notes
        self.own_compiles = 0  # backend compiles our artefact collection caused (the recorder counts)
        self._noted = False

    def __call__(self, lowered: Any) -> Any:
        global _AOT_COMPILE_RECOMPILES
        if _AOT_COMPILE_RECOMPILES:
            if not self._noted:
                self._noted = True
                self.notes.append(
                    "compiled HLO and XLA's cost figures are left out: this JAX version compiles a program "
                    "a second time to give them"
                )
            return None
        before = self.own_compiles
        compiled = lowered.compile()
        if _AOT_COMPILE_RECOMPILES is None:
            _AOT_COMPILE_RECOMPILES = self.own_compiles > before
        return compiled


def collect(
    fn: Any,
    args: tuple,
    kwargs: dict,
    execute_s: float,
    *,
    compile: Callable[[Any], Any],
    on_jaxpr: Callable[[Any], None],
    vmap_namespace: dict | None,
    values: bool,
    grads: bool,
) -> Artifacts:
    """The artefacts of jitted `fn` at this call's signature; a failure to get them is `error`.

    `on_jaxpr(closed_jaxpr)` notes the program for its findings; `vmap_namespace` (None: off) is
    where batch dimensions look for the user's names; `values` evaluates the jaxpr again for
    forward values, within a budget that grows with `grads` (a differentiated program's evaluation
    is worth more time).
    """
    from ..values import batching
    from ..values import forward as forward_values

    artifacts = Artifacts()
    traced = None
    try:
        traced = fn.trace(*args, **kwargs)
        artifacts.jaxpr = traced.jaxpr
        artifacts.lowered = traced.lower()
        artifacts.compiled = compile(artifacts.lowered)
    except Exception as exc:  # boundary: what JAX could not give is said in the artefacts, not raised
        artifacts.error = f"{type(exc).__name__}: {exc}"
    if artifacts.jaxpr is None:
        return artifacts
    on_jaxpr(artifacts.jaxpr)
    if vmap_namespace is not None:
        batch = batching.batch_info(fn, args, kwargs, artifacts.jaxpr, vmap_namespace)
        if batch is not None:
            artifacts.batch_dims, artifacts.batch_size, artifacts.batch_note = batch.dims, batch.size, batch.note
    if values:
        budget = forward_values.GRAD_TIME_BUDGET_S if grads else None
        artifacts.values, artifacts.values_note = forward_values.call_values(
            fn, traced, args, kwargs, execute_s, budget
        )
    return artifacts
