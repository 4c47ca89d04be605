"""What jit does before and while lowering: its dead-code elimination, the StableHLO text with locations."""

from __future__ import annotations

import sys
from typing import Any

from ... import strict


def dce_jaxpr(jaxpr: Any) -> Any:
    """`jaxpr` after the dead-code elimination `jit` applies before lowering, or None if unavailable.

    Eqns whose outputs are unused lower to nothing; knowing them keeps a dead eqn from taking
    the ops of a live twin when eqns are linked to StableHLO lines (model/levels/).
    """
    try:
        from jax._src.interpreters import partial_eval as pe

        return pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))[0]
    except Exception as exc:
        strict.fallback("dead eqns told from live twins when linking StableHLO lines", exc)
        return None


def stablehlo_with_locations(lowered: Any) -> str:
    """The StableHLO of `lowered` with its source locations (`loc(...)`): what links its lines to eqns.

    `Lowered.as_text(debug_info=True)` where JAX has it (0.5 and later); before that, `as_text()`
    leaves the locations out, and the lowered MLIR module prints them itself. Raises TypeError
    when neither is available (the caller says the text cannot be linked).
    """
    try:
        return lowered.as_text(debug_info=True)
    except TypeError:
        pass
    module = lowered.compiler_ir("stablehlo")
    printer = getattr(getattr(module, "operation", None), "get_asm", None)
    if printer is None:
        raise TypeError("this JAX prints StableHLO without locations")
    return printer(enable_debug_info=True)


# How far up from a `jax.monitoring` listener JAX's lowering of a jitted call keeps its jaxpr: the
# listener, the event's context manager, the lowering cache, `lower_sharding_computation`, `_pjit_lower`.
_MAX_LOWERING_FRAMES = 12


def jaxpr_being_lowered() -> Any:
    """The (closed) jaxpr of the jitted call JAX is lowering now, read from its lowering's frames, or None.

    Called from a listener of the lowering's end (a monitoring event), it lets work on the
    program start while XLA compiles it (which releases the GIL). The object is the one
    `jitted.trace(*args).jaxpr` returns afterwards: pjit's `jaxpr` parameter, the nearest frame's
    local `jaxpr` in a frame without a `closed_jaxpr` (the lowering's own frames hold the pruned
    program there, and on JAX 0.10 its open body as `jaxpr`; from JAX 0.11 one `Jaxpr` type holds
    its consts, so both types are taken). Reading frames never runs the user's code; where a JAX
    keeps it under other names the answer is None and nothing starts early.
    """
    from .jaxprs import jaxpr_types

    types = jaxpr_types()
    frame = sys._getframe(1)
    for _ in range(_MAX_LOWERING_FRAMES):
        if frame is None:
            return None
        local = frame.f_locals if frame.f_code.co_name != "<module>" else {}
        value = local.get("jaxpr")
        if isinstance(value, types) and "closed_jaxpr" not in local:
            return value
        frame = frame.f_back
    return None
