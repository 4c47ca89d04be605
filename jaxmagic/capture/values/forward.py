"""Forward values: a summary of the real value of every variable of one recorded call.

Asked for with `jaxmagic.capture(values=True)` / `%%jaxpr --values`. Right after the
first call of a (function, signature) returns, its recorded ClosedJaxpr is evaluated
again on that call's arguments by a small interpreter: each eqn is `primitive.bind`
on eager arrays, and call-like eqns (jit, closed_call, remat, custom_jvp/vjp) are
entered so the variables of their bodies get values too. Loops, cond and shard_map
are bound as a whole: their own outputs get values, their bodies' variables do not
(evaluating a body per iteration would need a second interpreter for each loop).

Only summaries are kept (plain Python numbers and strings), never arrays: each
intermediate is summarised on the host as soon as it is computed and dropped after
its last use. The evaluation never raises into the user's cell; whatever stops it
(a guard, a failure) becomes `values_note`, and the values found so far are kept.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from ...units import plural
from .. import jax_compat
from ..jit.signature import _as_set, _parameter_names
from ..keys import patch as key_patch

MAX_ARG_ELEMENTS = 1 << 24  # arguments larger than this (16.8M elements) are not evaluated twice
MAX_EQNS = 5_000  # bound eqns evaluated per call; past this the rest get no values
TIME_BUDGET_S = 2.0  # wall clock per call, checked between eqns
# With grads (`%%grad_graph --values`) the values are the point of the request, and the first
# evaluation of a train step compiles each primitive once (about 4 s for a 175-eqn transformer
# block step on 2 CPU cores, then 40 ms): a longer budget there.
GRAD_TIME_BUDGET_S = 10.0
MAX_PRINTED_ELEMENTS = 16  # arrays up to this size also get their printed value

# Call-like primitives whose body is evaluated eqn by eqn: primitive name -> param holding the body.
# Their semantics is "run the body on the operands", so entering them gives the same values.
_CALL_BODIES = {
    "jit": "jaxpr",
    "pjit": "jaxpr",
    "closed_call": "call_jaxpr",
    "call": "call_jaxpr",
    "core_call": "call_jaxpr",
    "remat2": "jaxpr",
    "checkpoint": "jaxpr",
    "remat": "jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vjp_call_jaxpr": "fun_jaxpr",
}


class _Stop(Exception):
    """A guard ended the evaluation; the message says which."""


def summarize(aval: Any, value: Any) -> dict:
    """{shape, dtype, min, max, mean, norm, nan, inf, value} of one array, as plain Python data.

    min/max/mean and the L2 norm (floats only) are over the finite elements only (null when there are none, and for
    non-numeric dtypes such as keys), so a summary is always valid JSON; `nan` and `inf`
    count the rest. `value` is numpy's printed text for arrays of at most 16 elements.
    """
    shape = [int(d) for d in getattr(aval, "shape", ())]
    dtype = getattr(aval, "dtype", None)
    summary: dict[str, Any] = {
        "shape": shape,
        "dtype": str(dtype),
        "min": None,
        "max": None,
        "mean": None,
        "norm": None,
        "nan": 0,
        "inf": 0,
        "value": None,
    }
    if dtype is not None and jax.numpy.issubdtype(dtype, jax.dtypes.extended):
        if jax.numpy.issubdtype(dtype, jax.dtypes.prng_key) and int(np.prod(shape)) <= MAX_PRINTED_ELEMENTS:
            summary["value"] = _printed(np.asarray(jax.random.key_data(value)))
        return summary
    array = np.asarray(value)
    if array.size <= MAX_PRINTED_ELEMENTS:
        summary["value"] = _printed(array)
    kind = array.dtype.kind
    if kind in "fc" or _is_ml_float(array.dtype):
        if kind != "f" and kind != "c":  # bfloat16, float8: numpy computes them in float32
            array = array.astype(np.float32)
        nan = np.isnan(array)
        inf = np.isinf(array)
        summary["nan"], summary["inf"] = int(nan.sum()), int(inf.sum())
        if kind == "c" or array.size == 0:
            return summary
        finite = array[~(nan | inf)] if summary["nan"] or summary["inf"] else array
        if finite.size:
            summary["min"], summary["max"] = float(finite.min()), float(finite.max())
            summary["mean"] = float(finite.mean(dtype=np.float64))
            summary["norm"] = float(np.sqrt(np.sum(np.square(finite, dtype=np.float64))))
    elif kind in "iub" and array.size:
        summary["min"], summary["max"] = int(array.min()), int(array.max())
        summary["mean"] = float(array.mean(dtype=np.float64))
    return summary


def _is_ml_float(dtype: np.dtype) -> bool:
    try:
        return bool(jax.numpy.issubdtype(dtype, np.floating))
    except (TypeError, ValueError):  # a dtype JAX does not know
        return False


def _printed(array: np.ndarray) -> str:
    return np.array2string(array, precision=6, max_line_width=200)


class _Interpreter:
    """Evaluates a jaxpr eqn by eqn, recording the summary of every variable it computes."""

    def __init__(self, deadline: float, max_eqns: int, budget_s: float):
        self.values: dict[Any, dict] = {}
        self.deadline = deadline
        self.budget_s = budget_s
        self.max_eqns = max_eqns
        self.bound = 0  # eqns evaluated with bind (entered call bodies do not count)
        self.whole: Counter = Counter()  # primitives with sub-jaxprs bound as a whole
        self.shared: dict[int, Any] = {}  # sub-jaxprs entered more than once, by id
        self.unsummarized = 0
        self._entered: set[int] = set()

    def run(self, jaxpr: Any, consts: Sequence[Any], args: Sequence[Any]) -> list:
        env: dict[Any, Any] = {}
        last_use = _last_uses(jaxpr)

        def write(var: Any, value: Any) -> None:
            if jax_compat.is_dropvar(var):
                return
            env[var] = value
            if var not in self.values:
                self._summarize(var, value)

        def read(atom: Any) -> Any:
            return jax_compat.literal_value(atom) if jax_compat.is_literal(atom) else env[atom]

        for var, value in zip(jaxpr.constvars, consts):
            write(var, value)
        for var, value in zip(jaxpr.invars, args):
            write(var, value)
        for index, eqn in enumerate(jaxpr.eqns):
            invals = [read(atom) for atom in eqn.invars]
            body = _call_body(eqn)
            if body is not None:
                sub_jaxpr, sub_consts = body
                if id(sub_jaxpr) in self._entered:
                    self.shared[id(sub_jaxpr)] = sub_jaxpr
                self._entered.add(id(sub_jaxpr))
                outs = self.run(sub_jaxpr, sub_consts, invals)
            else:
                if self.bound >= self.max_eqns:
                    raise _Stop(f"stopped after {plural(self.bound, 'eqn')} (limit {self.max_eqns})")
                if time.perf_counter() > self.deadline:
                    raise _Stop(f"stopped after {plural(self.bound, 'eqn')}: the {self.budget_s:g} s budget ran out")
                if jax_compat.has_sub_jaxprs(eqn):
                    self.whole[eqn.primitive.name] += 1
                outs = jax_compat.bind_eqn(eqn, invals)
                self.bound += 1
            for var, value in zip(eqn.outvars, outs):
                write(var, value)
            for atom in eqn.invars:  # drop what is no longer needed: intermediates do not pile up
                if not jax_compat.is_literal(atom) and last_use.get(atom) == index:
                    env.pop(atom, None)
        return [read(atom) for atom in jaxpr.outvars]

    def forget_shared(self) -> int:
        """Drop the values of variables bound in sub-jaxprs entered more than once.

        A jaxpr object shared by several eqns (an inner jit called twice with one signature)
        has one set of Var objects for all its uses: no single value is right for them.
        """
        dropped = 0
        for jaxpr in self.shared.values():
            for var in _bound_vars(jaxpr):
                dropped += self.values.pop(var, None) is not None
        return dropped

    def _summarize(self, var: Any, value: Any) -> None:
        try:
            self.values[var] = summarize(var.aval, value)
        except Exception:  # boundary: a value of the user's program we cannot summarize is counted and said
            self.unsummarized += 1


def _bound_vars(jaxpr: Any):
    """Every Var bound in `jaxpr` and in the sub-jaxprs of its eqns."""
    yield from jaxpr.constvars
    yield from jaxpr.invars
    for eqn in jaxpr.eqns:
        yield from eqn.outvars
        for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False, opened=True):
            yield from _bound_vars(sub)


def _last_uses(jaxpr: Any) -> dict[Any, int]:
    """Var -> index of the last eqn reading it (vars read by the jaxpr's outputs never expire)."""
    last: dict[Any, int] = {}
    for index, eqn in enumerate(jaxpr.eqns):
        for atom in eqn.invars:
            if not jax_compat.is_literal(atom):
                last[atom] = index
    for atom in jaxpr.outvars:
        if not jax_compat.is_literal(atom):
            last[atom] = len(jaxpr.eqns)
    return last


def _call_body(eqn: Any) -> tuple[Any, Sequence[Any]] | None:
    """(open jaxpr, consts) of a call-like eqn whose body maps its operands to its results."""
    param = _CALL_BODIES.get(eqn.primitive.name)
    if param is None:
        return None
    body = eqn.params.get(param)
    closed_type, open_type = jax_compat.jaxpr_types()
    if isinstance(body, closed_type):
        jaxpr, consts = body.jaxpr, body.consts
    elif isinstance(body, open_type) and not body.constvars:
        jaxpr, consts = body, ()
    else:
        return None
    if len(jaxpr.invars) != len(eqn.invars) or len(jaxpr.outvars) != len(eqn.outvars):
        return None  # not the plain call convention: bind it as a whole
    return jaxpr, consts


def _deleted(leaf: Any) -> bool:
    try:
        return bool(leaf.is_deleted())
    except Exception:  # boundary: any leaf of the user's arguments
        return False


def call_values(
    jitted: Any,
    traced: Any,
    args: tuple,
    kwargs: dict,
    call_seconds: float | None = None,
    budget_s: float | None = None,
) -> tuple[dict[Any, dict] | None, str | None]:
    """Values of one call `jitted(*args, **kwargs)` whose `jax.stages.Traced` is `traced`."""
    try:
        flat_args = call_arguments(jitted, traced, args, kwargs)
    except Exception as exc:  # boundary: the reason is said where the values would be
        flat_args, why = None, f"{type(exc).__name__}: {exc}"
    else:
        why = "they do not match the traced inputs"
    if flat_args is None:
        return None, f"no values: the call's arguments could not be flattened ({why})"
    return forward_values(traced.jaxpr, flat_args, call_seconds, budget_s)


def call_arguments(jitted: Any, traced: Any, args: tuple, kwargs: dict) -> list | None:
    """The values of the jaxpr's inputs for one call: JAX's hoisted constants, then the
    leaves of the non-static arguments, in JAX's order; None if they do not match `traced`."""
    info = jax_compat.jit_info(jitted)
    static_nums = _as_set(getattr(info, "static_argnums", ()))
    static_names = _as_set(getattr(info, "static_argnames", ()))
    names = _parameter_names(info)
    dynamic = tuple(
        a for i, a in enumerate(args) if i not in static_nums and not (i < len(names) and names[i] in static_names)
    )
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
    leaves, tree = jax.tree_util.tree_flatten((dynamic, dynamic_kwargs))
    in_tree = getattr(traced, "in_tree", None)
    if in_tree is not None and in_tree != tree:
        return None
    return [*jax_compat.traced_consts(traced), *leaves]


def forward_values(
    closed_jaxpr: Any,
    flat_args: Sequence[Any],
    call_seconds: float | None = None,
    budget_s: float | None = None,
    max_eqns: int | None = None,
    max_arg_elements: int | None = None,
) -> tuple[dict[Any, dict] | None, str | None]:
    """({Var: summary}, note) for one call of `closed_jaxpr` on `flat_args` (its invars, in order).

    Values are None when a guard skipped the evaluation, with the reason in the note. Never
    raises: a guard or failure midway keeps the values found so far and says why. Limits
    default to the module constants, read at call time.
    """
    values, note, _ = evaluate(closed_jaxpr, flat_args, call_seconds, budget_s, max_eqns, max_arg_elements)
    return values, note


def evaluate(
    closed_jaxpr: Any,
    flat_args: Sequence[Any],
    call_seconds: float | None = None,
    budget_s: float | None = None,
    max_eqns: int | None = None,
    max_arg_elements: int | None = None,
) -> tuple[dict[Any, dict] | None, str | None, list | None]:
    """`forward_values` plus the jaxpr's outputs (None unless the evaluation ran to the end).

    The outputs are what a caller chains into a second program (the backward pass of a vjp
    split reads the forward's residuals); they are arrays, so callers drop them promptly.
    """
    try:
        with key_patch.quiet():  # our evaluation's key operations are not the user's
            return _evaluate(
                closed_jaxpr,
                flat_args,
                call_seconds,
                TIME_BUDGET_S if budget_s is None else budget_s,
                MAX_EQNS if max_eqns is None else max_eqns,
                MAX_ARG_ELEMENTS if max_arg_elements is None else max_arg_elements,
            )
    except Exception as exc:  # boundary: the reason is said where the values would be
        return None, f"values could not be computed: {type(exc).__name__}: {exc}", None


def replay_refusal(closed_jaxpr: Any) -> str | None:
    """Why evaluating the program again would repeat something the user sees, or None: its side
    effects (prints, io), or a Python callback anywhere in it (a `pure_callback` has no effect, but
    it runs the user's Python: a dead one that JAX dropped would run, a live one run twice)."""
    effects = closed_jaxpr.effects or closed_jaxpr.jaxpr.effects
    if effects:
        names = ", ".join(sorted({type(e).__name__ for e in effects}))
        return f"the program has side effects ({names}: prints, callbacks or io) that evaluating it again would repeat"
    callback = jax_compat.python_callback_in(closed_jaxpr.jaxpr)
    if callback is not None:
        return f"the program calls back into Python ({callback}), which evaluating it again would call again"
    return None


def _evaluate(
    closed_jaxpr: Any,
    flat_args: Sequence[Any],
    call_seconds: float | None,
    budget_s: float,
    max_eqns: int,
    max_arg_elements: int,
) -> tuple[dict[Any, dict] | None, str | None, list | None]:
    jaxpr = closed_jaxpr.jaxpr
    refused = replay_refusal(closed_jaxpr)
    if refused:
        return None, f"no values: {refused}", None
    if len(flat_args) != len(jaxpr.invars):
        return None, f"no values: {len(flat_args)} arguments for {len(jaxpr.invars)} inputs", None
    if any(_deleted(leaf) for leaf in flat_args):
        return None, "no values: an argument was donated (the call deleted its buffer)", None
    elements = sum(int(np.prod(getattr(v.aval, "shape", ()))) for v in jaxpr.invars)
    if elements > max_arg_elements:
        return (
            None,
            (f"no values: the arguments have {elements:,} elements (values are computed up to {max_arg_elements:,})"),
            None,
        )
    if call_seconds is not None and call_seconds > budget_s:
        return (
            None,
            (
                f"no values: the call ran for {call_seconds:.1f} s; evaluating it again "
                f"would exceed the {budget_s:g} s budget"
            ),
            None,
        )
    interpreter = _Interpreter(time.perf_counter() + budget_s, max_eqns, budget_s)
    notes, outputs = [], None
    try:
        with (
            jax_compat.debug_checks_off(),
            jax_compat.compile_logs_off(),
        ):  # the user's jax_debug_nans guards their program, not this replay
            outputs = interpreter.run(jaxpr, closed_jaxpr.consts, flat_args)
    except _Stop as stop:
        notes.append(f"values are partial: {stop}")
    except Exception as exc:  # boundary: the user's program, evaluated again, may fail: said in a note
        notes.append(
            f"values are partial: evaluation failed after {plural(interpreter.bound, 'eqn')}: "
            f"{type(exc).__name__}: {exc}"
        )
    if interpreter.whole:
        names = ", ".join(sorted(interpreter.whole))
        notes.append(
            f"variables inside {names} bodies have no values (loops, cond and shard_map are evaluated as a whole)"
        )
    if interpreter.shared and interpreter.forget_shared():
        notes.append(
            "variables inside a sub-jaxpr used by several eqns (an inner jit called again with "
            "the same signature) have no values: they differ per use"
        )
    if interpreter.unsummarized:
        notes.append(f"{interpreter.unsummarized} variables could not be summarised")
    return interpreter.values, "; ".join(notes) or None, outputs
