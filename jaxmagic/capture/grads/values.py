"""Gradient values: the real cotangents of one differentiation, summarised per variable.

Asked for with `%%grad_graph --values` / `jaxmagic.capture(grads=True, values=True)`. Right
after an eager `jax.grad` or `jax.value_and_grad` call returns, the exact vjp split
(`capture/grads/split.py`) is evaluated on that call's arguments by the forward-values interpreter
(`capture/values/forward.py`): the forward jaxpr on the input leaves, then the backward jaxpr on the
forward's residuals and the seed cotangent JAX itself uses for `grad` (1.0 of the output's
dtype). Every variable of both gets a summary; the backward's outputs are the gradients of
the differentiated leaves, the numbers `jax.grad` returned.

Only summaries are kept. The residual arrays live between the two evaluations and are
dropped before this returns. `jax.vjp` is not evaluated: its cotangent is whatever the cell
later passes to the vjp function, which the capture does not see being chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from ..values import forward as values

SEEDED_KINDS = ("grad", "value_and_grad")  # the backward's seed is fixed by JAX: 1.0
SEED_TEXT = "1.0, the seed jax.grad uses for the scalar output"
VJP_NOTE = (
    "no gradient values for jax.vjp: the backward pass runs on the cotangent the cell passes to "
    "the vjp function, which the capture does not see"
)


@dataclass(frozen=True)
class GradValues:
    """Summaries ({jaxpr Var: summary}) of the split's forward and backward variables."""

    forward: dict[Any, dict] | None
    backward: dict[Any, dict] | None  # the cotangents
    forward_note: str | None
    backward_note: str | None
    cotangent: str | None  # what seeded the backward pass


def split_values(kind: str, split: Any, primals: tuple, primal_kwargs: dict) -> GradValues:
    """Evaluate `split` (a `grads.GradSplit`) on the call's own arguments. Never raises."""
    if kind not in SEEDED_KINDS:
        return GradValues(None, None, VJP_NOTE, VJP_NOTE, None)
    try:
        return _split_values(split, primals, primal_kwargs)
    except Exception as exc:  # boundary: the reason is said where the values would be
        why = f"gradient values could not be computed: {type(exc).__name__}: {exc}"
        return GradValues(None, None, why, why, None)


def _split_values(split: Any, primals: tuple, primal_kwargs: dict) -> GradValues:
    all_leaves = jax.tree_util.tree_leaves((tuple(primals), primal_kwargs))
    leaves = [all_leaves[i] for i in split.dynamic]
    del all_leaves
    forward, forward_note, outputs = values.evaluate(split.forward, leaves, budget_s=values.GRAD_TIME_BUDGET_S)
    if outputs is None:
        why = "the forward pass could not be evaluated" + (f" ({forward_note})" if forward_note else "")
        return GradValues(forward, None, forward_note, f"no cotangents: {why}", None)
    residuals = outputs[split.n_primal_out :]
    del outputs
    seeds = [jnp.ones(v.aval.shape, v.aval.dtype) for v in split.backward.jaxpr.invars[len(residuals) :]]
    backward, backward_note, _ = values.evaluate(
        split.backward, [*residuals, *seeds], budget_s=values.GRAD_TIME_BUDGET_S
    )
    return GradValues(forward, backward, forward_note, backward_note, SEED_TEXT)
