"""Static out-of-bounds indices: a constant index outside the array, which JAX clamps or drops.

JAX does not raise on an out-of-bounds index inside a traced program: `x[7]` of a 5-element
array reads `x[4]` (a clamped `dynamic_slice` or gather), `x.at[7].set(v)` does nothing (the
scatter drops it), `x.at[7].get(mode="fill")` gives NaN, and a `dynamic_update_slice` whose
update does not fit is moved left until it does. When the index is a constant of the program
(a Literal, a constvar, or a few integer ops on them, like the `i < 0 ? i + n : i` JAX adds for
negative indices) the outcome is known from the jaxpr alone, so this module reports it with
what JAX does instead (kind "index_out_of_bounds", severity "warning").

Cost: one linear walk over the recorded jaxpr, each distinct sub-jaxpr once (and a nested
`jit` again only for each distinct set of constant arguments it gets); constants are folded
only while they are small (`MAX_ELEMENTS`), so a big program costs a dictionary lookup per eqn.
Nothing is traced, lowered or run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import jax_compat, source
from ..jaxpr_memo import JaxprMemo
from ..prefetch import PREFETCH
from ..record import Finding, SourceLocation

KIND = "index_out_of_bounds"
MAX_ELEMENTS = 4096  # constants folded up to this size; larger ones are treated as unknown
MAX_FINDINGS = 10  # per program
_CALLS = frozenset(
    {
        "pjit",
        "jit",
        "closed_call",
        "core_call",
        "remat",
        "checkpoint",
        "custom_jvp_call",
        "custom_vjp_call",
        "custom_vjp_call_jaxpr",
    }
)  # sub-jaxprs whose invars are the eqn's inputs


# -- folding constants ----------------------------------------------------------------------


def _broadcast_in_dim(x: np.ndarray, p: dict) -> np.ndarray:
    shape, dims = tuple(p["shape"]), tuple(p["broadcast_dimensions"])
    expanded = [1] * len(shape)
    for src, dst in enumerate(dims):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape)


def _select_n(pred: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    arrays = np.broadcast_arrays(pred.astype(np.int64), *cases)
    return np.choose(arrays[0], arrays[1:])


_FOLD = {
    "lt": lambda p, a, b: a < b,
    "le": lambda p, a, b: a <= b,
    "gt": lambda p, a, b: a > b,
    "ge": lambda p, a, b: a >= b,
    "eq": lambda p, a, b: a == b,
    "ne": lambda p, a, b: a != b,
    "add": lambda p, a, b: a + b,
    "sub": lambda p, a, b: a - b,
    "mul": lambda p, a, b: a * b,
    "neg": lambda p, a: -a,
    "max": lambda p, a, b: np.maximum(a, b),
    "min": lambda p, a, b: np.minimum(a, b),
    "and": lambda p, a, b: a & b,
    "or": lambda p, a, b: a | b,
    "not": lambda p, a: ~a,
    "clamp": lambda p, lo, x, hi: np.clip(x, lo, hi),
    "select_n": lambda p, *a: _select_n(*a),
    "broadcast_in_dim": lambda p, x, *rest: _broadcast_in_dim(x, p),
    "convert_element_type": lambda p, x: x.astype(p["new_dtype"]),
    "reshape": lambda p, x, *rest: x.reshape(tuple(p["new_sizes"])),
    "squeeze": lambda p, x: np.squeeze(x, axis=tuple(p["dimensions"])),
    "concatenate": lambda p, *xs: np.concatenate(xs, axis=p["dimension"]),
}
# Ops that carry the index the user wrote through to the one JAX uses (shape changes only).
_CARRY = frozenset({"broadcast_in_dim", "convert_element_type", "reshape", "squeeze", "concatenate"})


def _small(value: Any) -> np.ndarray | None:
    """An integer or boolean constant as a numpy array, when small; else None."""
    value = jax_compat.constant_value(value)
    try:
        arr = np.asarray(value)
    except Exception:  # boundary: a constant of any type (a key array, a user's object)
        return None
    if arr.size > MAX_ELEMENTS or arr.dtype.kind not in "iub":
        return None
    return arr


class _Walk:
    """One program's walk: constants known per var, the index as written per var, findings."""

    def __init__(self) -> None:
        self.found: list[tuple[dict, SourceLocation | None]] = []  # (what is wrong, the user's line)
        self.seen: dict = {}  # (id(jaxpr), owner, known inputs) walked -> its outputs' constant values

    def jaxpr(self, jaxpr: Any, known: dict, consts: dict, owner: int, outer: SourceLocation | None) -> list:
        """Walk one jaxpr: `known` {invar position: value}, `consts` {constvar: value}; each
        (jaxpr, constants it gets) once. Returns its outputs' constant values (None: not constant).
        `outer`: the user's line of the eqn that holds this jaxpr (a jnp function's own jit has none)."""
        key = (id(jaxpr), owner, tuple(sorted((i, v.tobytes(), v.shape, str(v.dtype)) for i, v in known.items())))
        if key in self.seen:
            return self.seen[key]
        self.seen[key] = [None] * len(jaxpr.outvars)
        if len(self.found) >= MAX_FINDINGS:
            return self.seen[key]
        values: dict = dict(consts)
        values.update({jaxpr.invars[i]: v for i, v in known.items() if i < len(jaxpr.invars)})
        written: dict = {}
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            subs = [sub for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False)]
            if name not in _FOLD and name not in _CHECKS and not subs:
                continue  # most eqns: nothing to fold, check or enter
            ins = [_atom(a, values) for a in eqn.invars]
            if name in _FOLD and all(v is not None for v in ins) and len(eqn.outvars) == 1:
                self._fold(eqn, name, ins, values, written)
            if name in _CHECKS:
                self._check(
                    eqn,
                    name,
                    outer,
                    ins,
                    [v if jax_compat.is_literal(a) else written.get(a, v) for a, v in zip(eqn.invars, ins)],
                )
            for sub in subs:
                inner = {i: v for i, v in enumerate(ins) if v is not None} if name in _CALLS else {}
                outs = self.closed(sub, inner, outer if name not in _CALLS else (_user_line(eqn) or outer))
                if name in _CALLS and len(outs) == len(eqn.outvars):  # a nested jit's constant results
                    values.update({var: v for var, v in zip(eqn.outvars, outs) if v is not None})
        outs = [_atom(a, values) for a in jaxpr.outvars]
        self.seen[key] = outs
        return outs

    def closed(self, sub: Any, known: dict, outer: SourceLocation | None = None) -> list:
        """A sub-jaxpr (closed or open) with the small constants it holds known (a ClosedJaxpr's;
        from JAX 0.11 a Jaxpr holds its own, and its `.jaxpr` is itself)."""
        jaxpr = getattr(sub, "jaxpr", sub)
        consts = {}
        for var, value in zip(jaxpr.constvars, getattr(sub, "consts", None) or ()):
            small = _small(value)
            if small is not None:
                consts[var] = small
        return self.jaxpr(jaxpr, known, consts, id(sub), outer)

    def _fold(self, eqn: Any, name: str, ins: list, values: dict, written: dict) -> None:
        try:
            out = np.asarray(_FOLD[name](eqn.params, *ins))
        except Exception:  # boundary: an op of the user's program numpy cannot fold stays unknown
            return
        if out.size > MAX_ELEMENTS:
            return
        var = eqn.outvars[0]
        values[var] = out
        if name == "select_n" and len(eqn.invars) == 3:  # JAX's `i < 0 ? i + n : i`: the index as written
            raw = eqn.invars[1]
            raw_value = ins[1]
            if raw_value is not None and ins[2] is not None and np.all((raw_value < 0) == ins[0].astype(bool)):
                written[var] = written.get(raw, raw_value) if not jax_compat.is_literal(raw) else raw_value
        elif name in _CARRY and any(not jax_compat.is_literal(a) and a in written for a in eqn.invars):
            carried = [written.get(a, v) if not jax_compat.is_literal(a) else v for a, v in zip(eqn.invars, ins)]
            try:
                written[var] = np.asarray(_FOLD[name](eqn.params, *carried))
            except Exception:  # boundary: as above, for a carried write
                pass

    def _check(self, eqn: Any, name: str, outer: SourceLocation | None, ins: list, shown: list) -> None:
        try:
            problem = _CHECKS[name](eqn, ins, shown)
        except Exception:  # params of a JAX we do not know: that eqn is not checked
            return
        if problem is None or len(self.found) >= MAX_FINDINGS:
            return
        where = _user_line(eqn) or outer
        key = (where, problem["index"], problem["axis"])  # `x[7]` under grad: the forward read and its transpose
        if all((w, p["index"], p["axis"]) != key for p, w in self.found):
            self.found.append((problem, where))


def _atom(atom: Any, values: dict) -> np.ndarray | None:
    if jax_compat.is_literal(atom):
        return _small(jax_compat.literal_value(atom))
    return values.get(atom)


# -- the checks -------------------------------------------------------------------------------


def _mode(eqn: Any) -> str:
    mode = eqn.params.get("mode")
    return str(getattr(mode, "name", mode) or "")


def _gather_fill(eqn: Any, dtype: Any) -> str:
    fill = eqn.params.get("fill_value")
    if fill is not None:
        return repr(fill)
    kind = np.dtype(dtype).kind  # JAX's defaults for mode="fill" (lax.slicing `_gather_fill`)
    if kind in "fc":
        return "NaN"
    if kind == "i":
        return f"{np.iinfo(dtype).min} (the dtype's minimum)"
    if kind == "u":
        return f"{np.iinfo(dtype).max} (the dtype's maximum)"
    return "True" if kind == "b" else "its fill value"


def _dynamic_slice(eqn: Any, ins: list, shown: list) -> dict | None:
    operand = eqn.invars[0].aval
    sizes = tuple(eqn.params["slice_sizes"])
    return _starts_problem("dynamic_slice", operand.shape, sizes, ins[1:], shown[1:], "clamp")


def _dynamic_update_slice(eqn: Any, ins: list, shown: list) -> dict | None:
    operand, update = eqn.invars[0].aval, eqn.invars[1].aval
    return _starts_problem("dynamic_update_slice", operand.shape, tuple(update.shape), ins[2:], shown[2:], "move")


def _starts_problem(op: str, shape: tuple, sizes: tuple, starts: list, shown: list, does: str) -> dict | None:
    for axis, (start, written) in enumerate(zip(starts, shown)):
        if start is None or start.size != 1:
            continue
        s, size, dim = int(start.reshape(())), sizes[axis], shape[axis]
        if s < 0 or s + size > dim:
            return {
                "op": op,
                "shape": shape,
                "axis": axis,
                "index": int(np.asarray(written).reshape(())),
                "held": s,
                "size": size,
                "does": does,
                "to": min(max(s, 0), dim - size),
            }
    return None


def _index_problem(
    op: str, shape: tuple, indices: np.ndarray, shown: np.ndarray, dims: tuple, sizes: dict, mode: str, fill: str | None
) -> dict | None:
    """The first index vector (last axis of `indices`) outside `shape`, for gather and scatter."""
    vectors = indices.reshape(-1, indices.shape[-1]) if indices.ndim else indices.reshape(1, 1)
    written = np.asarray(shown).reshape(vectors.shape) if np.size(shown) == vectors.size else vectors
    bad_total = 0
    first = None
    for row, raw in zip(vectors, written):
        for k, d in enumerate(dims):
            i, size = int(row[k]), sizes.get(d, 1)
            if i < 0 or i + size > shape[d]:
                bad_total += 1
                if first is None:
                    first = {
                        "axis": d,
                        "index": int(raw[k]),
                        "held": i,
                        "size": size,
                        "to": min(max(i, 0), shape[d] - size),
                    }
                break
    if first is None:
        return None
    if "FILL_OR_DROP" in mode:
        does = "fill" if fill is not None else "drop"
    elif "CLIP" in mode or (op == "gather" and "PROMISE_IN_BOUNDS" in mode):
        does = "clamp"
    else:  # a scatter that promised in-bounds indices: XLA skips the update
        does = "drop"
    return {"op": op, "shape": shape, **first, "does": does, "fill": fill, "count": bad_total, "of": len(vectors)}


def _gather(eqn: Any, ins: list, shown: list) -> dict | None:
    indices = ins[1]
    if indices is None:
        return None
    operand = eqn.invars[0].aval
    dn = eqn.params["dimension_numbers"]
    if getattr(dn, "operand_batching_dims", ()):
        return None
    dims = tuple(dn.start_index_map)
    sizes = dict(enumerate(eqn.params["slice_sizes"]))
    mode = _mode(eqn)
    return _index_problem(
        "gather",
        tuple(operand.shape),
        indices,
        shown[1],
        dims,
        sizes,
        mode,
        _gather_fill(eqn, operand.dtype) if "FILL_OR_DROP" in mode else None,
    )


def _scatter(eqn: Any, ins: list, shown: list) -> dict | None:
    indices = ins[1]
    if indices is None:
        return None
    operand, updates = eqn.invars[0].aval, eqn.invars[2].aval
    dn = eqn.params["dimension_numbers"]
    if getattr(dn, "operand_batching_dims", ()):
        return None
    skipped = set(dn.inserted_window_dims)
    window = [d for d in range(len(operand.shape)) if d not in skipped]
    sizes = {d: updates.shape[w] for d, w in zip(window, dn.update_window_dims)}
    return _index_problem(
        eqn.primitive.name,
        tuple(operand.shape),
        indices,
        shown[1],
        tuple(dn.scatter_dims_to_operand_dims),
        sizes,
        _mode(eqn),
        None,
    )


_CHECKS = {
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "gather": _gather,
    "scatter": _scatter,
    "scatter-add": _scatter,
    "scatter_add": _scatter,
    "scatter-mul": _scatter,
    "scatter_mul": _scatter,
    "scatter-min": _scatter,
    "scatter_min": _scatter,
    "scatter-max": _scatter,
    "scatter_max": _scatter,
    "scatter_sub": _scatter,
    "scatter-sub": _scatter,
}


# -- the finding --------------------------------------------------------------------------------


def _user_line(eqn: Any) -> SourceLocation | None:
    frames = [f for f in jax_compat.user_stack(eqn.source_info) if source.is_user_file(f[0])]
    return source.location(frames[-1][0], frames[-1][1], None, frames[-1][2]) if frames else None


_DOES = {
    "clamp": "JAX clamps it to {to} instead of raising, so the program {reads} {to} on that axis",
    "move": "JAX clamps the start to {to} instead of raising, so the update lands at {to}",
    "fill": "JAX returns the fill value {fill} there instead of raising",
    "drop": "JAX drops that update instead of raising: the array is left unchanged there",
}


def _message(p: dict, where: SourceLocation | None, function: str) -> str:
    code = (where.code or "").strip() if where is not None else ""
    at = f" at `{code}`" if code else ""
    what = "slice start" if p["size"] != 1 else "index"
    size = f" (a window of {p['size']})" if p["size"] != 1 else ""
    count = f" ({p['count']} of {p['of']} indices are out of bounds)" if p.get("of", 1) > 1 else ""
    negative = (
        f" (as the program holds it: JAX's indexing adds the axis size {p['shape'][p['axis']]} to a "
        "negative index first)"
        if p["index"] < 0 and p["index"] == p["held"]
        else ""
    )
    reads = (
        "writes element"
        if p["op"].startswith("scatter")
        else "reads from element"
        if p["size"] == 1
        else "reads the window starting at"
    )
    text = (
        f"{function}: out-of-bounds {what} {p['index']}{negative} on axis {p['axis']} of an array of shape "
        f"{tuple(p['shape'])}{size}{at}{count}: " + _DOES[p["does"]].format(reads=reads, **p) + ". "
    )
    if p["op"].startswith("scatter") or p["does"] == "fill":
        text += (
            "Check the index; .at[i] (and jnp.take) take mode= to choose what happens out of bounds "
            "('drop', 'fill' with fill_value=, 'clip', 'promise_in_bounds')."
        )
    else:
        text += "Check the index (JAX indexes without bounds checks); x.at[i].get(mode='fill') makes it visible."
    return text


_SEEN: JaxprMemo[list[tuple[dict, SourceLocation | None]]] = JaxprMemo()


def index_problems(closed_jaxpr: Any) -> list[tuple[dict, SourceLocation | None]]:
    """Every static out-of-bounds index of the program with where it is: the walk over the jaxpr
    alone, also what the prefetch thread computes while XLA compiles it (capture/prefetch.py)."""
    walk = _Walk()
    walk.closed(closed_jaxpr, {})
    return walk.found


def _compute(closed_jaxpr: Any) -> list[tuple[dict, SourceLocation | None]]:
    """The walk the prefetch thread did while XLA compiled the program, else done now."""
    ready, found = PREFETCH.take("index", closed_jaxpr)
    return found if ready else index_problems(closed_jaxpr)


def index_findings(closed_jaxpr: Any, function: str | None = None) -> list[Finding]:
    """The static out-of-bounds indices of one recorded program (the walk remembered per live jaxpr)."""
    name = function or "a jitted function"
    return [
        Finding(kind=KIND, severity="warning", source=where, message=_message(problem, where, name), function=function)
        for problem, where in _SEEN.get(closed_jaxpr, _compute)
    ]
