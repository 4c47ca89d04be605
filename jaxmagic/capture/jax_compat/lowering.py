"""What jit does before and while lowering: its dead-code elimination, the StableHLO text with locations."""

from __future__ import annotations

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
