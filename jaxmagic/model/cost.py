"""Per-eqn cost estimates (flops, bytes) and XLA's whole-program figures, as plain JSON numbers.

The per-eqn model (docs/cost.md has the full table) follows XLA's own HloCostAnalysis
conventions wherever a jaxpr eqn maps onto one HLO op, so per-eqn figures add up to numbers
comparable with `compiled.cost_analysis()`:

* `dot_general`: 2 x batch x M x N x K, from the dimension numbers.
* `conv_general_dilated`: 2 x batch x output features x input features per group x the number
  of (output position, kernel tap) pairs that land on a real input element, per spatial dim
  (taps on padding or on lhs-dilation holes are not counted, as XLA does not count them).
* reductions: n - m binary ops for n input and m output elements.
* elementwise arithmetic, comparisons, selects, converts: one flop per output element;
  `integer_pow` the multiplies of repeated squaring (plus a divide for negative powers).
* transcendental functions (exp, log, tanh, sin, sqrt, rsqrt, pow, ...): no flops and one
  transcendental per output element (XLA's split); `logistic` 3 flops + 1, `exp2` 1 + 1.
* data movement (reshape, broadcast, transpose, slice, gather, concatenate, pad, ...): 0 flops.
* bytes: bytes of the eqn's var inputs and outputs (literals are folded into the op by XLA).
* owners of sub-jaxprs: the sum over their body; scan `length` times its body; cond the
  costliest branch (an upper bound, as XLA counts it); while unknown (None, trip count unknown);
  shard_map the body times the devices of its manual axes.

Every figure is an estimate of the program as written: XLA fuses, eliminates and rewrites ops,
so a node's figure says what the eqn asks for, not what the compiled code does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from math import prod
from typing import Any

from ..capture.jax_compat import hlo, sub_jaxprs
from ..units import plural

# one flop per output element
_ELEMENTWISE = frozenset(
    [
        "add",
        "add_any",
        "sub",
        "mul",
        "div",
        "rem",
        "max",
        "min",
        "neg",
        "abs",
        "sign",
        "floor",
        "ceil",
        "round",
        "nextafter",
        "copysign",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        "and",
        "or",
        "not",
        "xor",
        "shift_left",
        "shift_right_logical",
        "shift_right_arithmetic",
        "population_count",
        "clz",
        "select_n",
        "clamp",
        "convert_element_type",
        "is_finite",
        "square",
        "real",
        "imag",
        "conj",
        "complex",
        "reduce_precision",
    ]
)

# no flops, one transcendental per output element (XLA's HloCostAnalysis split)
_TRANSCENDENTAL = frozenset(
    [
        "exp",
        "log",
        "log1p",
        "expm1",
        "tanh",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "asinh",
        "acosh",
        "atanh",
        "atan2",
        "sqrt",
        "rsqrt",
        "cbrt",
        "pow",
        "erf",
        "erfc",
        "lgamma",
        "digamma",
        "igamma",
        "igammac",
        "igamma_grad_a",
        "random_gamma_grad",
        "bessel_i0e",
        "bessel_i1e",
    ]
)

# flops and transcendentals per output element, for functions XLA expands
# (JAX 0.12's `one_minus_square`, the tangent of tanh, is (1 + y) * (1 - y); its `log2` is a log times 1/log 2)
_EXPANDED = {"logistic": (3, 1), "exp2": (1, 1), "one_minus_square": (3, 0), "log2": (1, 1)}

# n - m binary ops for n input and m output elements
_REDUCTIONS = frozenset(
    [
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_and",
        "reduce_or",
        "reduce_xor",
        "argmax",
        "argmin",
    ]
)

# one op per output element: the sequential minimum of a cumulative scan
_CUMULATIVE = frozenset(["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])

# moves or reinterprets data: no arithmetic
_DATA_MOVEMENT = frozenset(
    [
        "reshape",
        "broadcast_in_dim",
        "transpose",
        "squeeze",
        "expand_dims",
        "slice",
        "dynamic_slice",
        "dynamic_update_slice",
        "gather",
        "concatenate",
        "pad",
        "rev",
        "copy",
        "copy_p",
        "iota",
        "device_put",
        "sharding_constraint",
        "bitcast_convert_type",
        "split",
        "select_and_gather_add",
        "stop_gradient",
        "optimization_barrier",
        "mesh_cast",
        "reshard",
        "pvary",
        "with_sharding_constraint",
        "tie_in",
        "empty",
        "full_like",
        "relayout",
        "with_memory_space_constraint",
        "reduced_vary_cast",
        "vary_unreduced_cast",
    ]
)

# combine one element per update element
_SCATTER = frozenset(
    [
        "scatter-add",
        "scatter_add",
        "scatter-mul",
        "scatter_mul",
        "scatter-min",
        "scatter_min",
        "scatter-max",
        "scatter_max",
    ]
)

_COLLECTIVES = frozenset(
    [
        "psum",
        "psum_invariant",
        "psum2",
        "pmax",
        "pmin",
        "ppermute",
        "all_gather",
        "all_to_all",
        "reduce_scatter",
        "psum_scatter",
        "pbroadcast",
        "pbroadcast_dynamic",
        "unreduced_pmax",
        "unreduced_pmin",
        "axis_index",
    ]
)


@dataclass
class Cost:
    """An eqn's estimated cost; None where it cannot be known (then `note` says why)."""

    flops: float | None
    bytes: int | None
    transcendentals: float | None = 0
    note: str | None = None

    def json(self) -> dict:
        """The node's `cost` field: plain JSON numbers, marked as an estimate."""
        out: dict[str, Any] = {"flops": _number(self.flops), "bytes": _number(self.bytes), "estimate": True}
        if self.transcendentals:
            out["transcendentals"] = _number(self.transcendentals)
        if self.note:
            out["note"] = self.note
        return out


def estimate_eqn(eqn: Any) -> tuple[float | None, int | None]:
    """(flops, bytes) of one eqn without sub-jaxprs; owners need `owner_cost` or `estimate_all`."""
    cost = eqn_cost(eqn)
    return cost.flops, cost.bytes


def eqn_cost(eqn: Any, sizes: dict[int, tuple[Any, int, int]] | None = None) -> Cost:
    """The documented per-primitive estimate of one eqn, sub-jaxprs not included.

    `sizes` (one per walk: `estimate_all`'s) keeps each aval's element count and bytes: a
    program has a few dozen distinct avals (JAX interns them) and tens of thousands of operands."""
    prim = eqn.primitive.name
    if sizes is None:
        sizes = {}
    out_elems = nbytes = 0
    for v in eqn.outvars:
        elements, size = _sizes(v.aval, sizes)
        out_elems += elements
        nbytes += size
    for v in eqn.invars:
        if type(v).__name__ != "Literal":
            nbytes += _sizes(v.aval, sizes)[1]
    rule = _RULES.get(prim)
    if rule is not None:
        return rule(eqn, nbytes)
    if prim in _ELEMENTWISE:
        return Cost(out_elems, nbytes)
    if prim in _TRANSCENDENTAL:
        return Cost(0, nbytes, out_elems)
    if prim in _EXPANDED:
        flops, trans = _EXPANDED[prim]
        return Cost(flops * out_elems, nbytes, trans * out_elems)
    if prim in _REDUCTIONS:
        in_elems = _elements(eqn.invars[0].aval)
        return Cost(max(in_elems - out_elems, 0), nbytes)
    if prim in _CUMULATIVE:
        return Cost(out_elems, nbytes, note="estimate: one op per element (XLA's windowed lowering does more)")
    if prim in _DATA_MOVEMENT:
        return Cost(0, nbytes)
    if prim in _SCATTER:
        updates = _elements(eqn.invars[-1].aval)
        return Cost(updates, nbytes)
    if prim in _COLLECTIVES:
        return Cost(None, nbytes, None, f"{prim}: a collective; its cost depends on the devices taking part")
    return Cost(None, nbytes, None, f"no cost model for `{prim}`")


def owner_cost(eqn: Any, subs: list[list[Cost]]) -> Cost:
    """An owner's cost from the costs of its sub-jaxprs' top-level eqns (in `sub_jaxprs` order).

    graph.py can call this in its walk; `estimate_all` does the whole walk itself.
    """
    prim = eqn.primitive.name
    if not subs:
        return eqn_cost(eqn)
    bodies = [_total(costs) for costs in subs]
    if prim == "while":
        return Cost(None, None, None, "while: the trip count is not known before running")
    if prim == "cond":
        flops = _max_or_none(b.flops for b in bodies)
        nbytes = _max_or_none(b.bytes for b in bodies)
        trans = _max_or_none(b.transcendentals for b in bodies)
        return Cost(flops, nbytes, trans, "upper bound: the costliest branch")
    total = _total(bodies)
    if prim == "scan":
        length = eqn.params.get("length")
        return _scaled(
            total,
            length,
            f"{plural(length, 'iteration')} of the body"
            if isinstance(length, int)
            else f"{length} iterations of the body",
        )
    if prim == "shard_map":
        devices = _manual_devices(eqn)
        if devices is None:
            return Cost(None, None, None, "shard_map: the number of devices is not known")
        return _scaled(total, devices, f"the body on each of {plural(devices, 'device')}")
    if prim == "pallas_call":
        return Cost(None, _io_bytes(eqn), None, "pallas_call: a hand-written kernel; its body is not costed")
    return total


def estimate_all(closed_jaxpr: Any, limit: int | None = None) -> list[Cost]:
    """Costs of every eqn in graph order (graph.py's depth-first order); owners aggregate their bodies.

    `limit`: stop after that many (the graph of a huge program keeps only its first eqns).
    """
    out: list[Cost] = []
    _estimate_body(getattr(closed_jaxpr, "jaxpr", closed_jaxpr), out, {}, limit)
    return out


def _estimate_body(jaxpr: Any, out: list[Cost], sizes: dict, limit: int | None) -> list[Cost]:
    """`estimate_all`'s walk: appends each eqn's cost to `out`, returns the body's top-level ones (a
    module function: a recursive closure is a reference cycle, kept until the cyclic collector runs)."""
    top = []
    for eqn in jaxpr.eqns:
        if limit is not None and len(out) >= limit:
            break
        index = len(out)
        out.append(Cost(None, None))  # placeholder: the owner's slot precedes its body's eqns
        subs = [_estimate_body(sub, out, sizes, limit) for _, sub in sub_jaxprs(eqn, opened=True)]
        cost = owner_cost(eqn, subs) if subs else eqn_cost(eqn, sizes)
        out[index] = cost
        top.append(cost)
    return top


def estimate_nodes(eqns: list[Any], nodes: list[dict]) -> list[Cost]:
    """`estimate_all` for a built graph: the costs of its nodes from their eqns (`eqns[i]` is node i's),
    with the graph's own nesting (each node's `subgroups`), so the jaxpr is not walked a second time."""
    members: dict[str, list[int]] = {}  # group id -> its own (top-level) nodes
    for i, node in enumerate(nodes):
        members.setdefault(node["group"], []).append(i)
    costs: list[Any] = [None] * len(nodes)
    sizes: dict[int, tuple[Any, int, int]] = {}
    for i in range(len(nodes) - 1, -1, -1):  # a body's nodes come after their owner's
        subgroups = nodes[i]["subgroups"]
        if subgroups:
            costs[i] = owner_cost(eqns[i], [[costs[j] for j in members.get(g, ())] for g in subgroups])
        else:
            costs[i] = eqn_cost(eqns[i], sizes)
    return costs


def program_cost(compiled: Any) -> dict:
    """XLA's whole-program figures as plain JSON numbers: the function's `cost` field."""
    if compiled is None:
        return {"program": None, "memory": None, "note": "not compiled: no XLA cost figures"}
    program, failure = hlo.cost_analysis(compiled)  # XLA's analyses are read on the capture side
    notes = [failure] if failure else []
    if program is not None:
        program = {name: _number(value) for name, value in program.items()}
    elif not notes:
        notes.append("this backend gives no cost analysis")
    memory, failure = hlo.memory_analysis(compiled)
    if failure:
        notes.append(failure)
    if memory is None and not any("memory" in n for n in notes):
        notes.append("this backend gives no memory analysis")
    return {"program": program, "memory": memory, "note": "; ".join(notes) or None}


# ----------------------------------------------------------------------------- rules


def _dot_general(eqn: Any, nbytes: int) -> Cost:
    (lhs_contract, _), (lhs_batch, _) = eqn.params["dimension_numbers"]
    lhs = eqn.invars[0].aval.shape
    contracted = prod(lhs[d] for d in lhs_contract)
    out = _elements(eqn.outvars[0].aval)  # batch x M x N
    return Cost(2 * out * contracted, nbytes)


def _conv(eqn: Any, nbytes: int) -> Cost:
    p = eqn.params
    lhs, rhs = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
    out = eqn.outvars[0].aval.shape
    dn = p["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    batch = out[out_spec[0]]
    out_features = out[out_spec[1]]
    in_per_group = rhs[rhs_spec[1]]
    n_spatial = len(lhs_spec) - 2
    strides = p.get("window_strides") or (1,) * n_spatial
    padding = p.get("padding") or ((0, 0),) * n_spatial
    lhs_dil = p.get("lhs_dilation") or (1,) * n_spatial
    rhs_dil = p.get("rhs_dilation") or (1,) * n_spatial
    taps = 1
    for i in range(n_spatial):
        taps *= _valid_taps(
            lhs[lhs_spec[2 + i]],
            rhs[rhs_spec[2 + i]],
            out[out_spec[2 + i]],
            strides[i],
            padding[i][0],
            lhs_dil[i],
            rhs_dil[i],
        )
    return Cost(2 * batch * out_features * in_per_group * taps, nbytes)


def _valid_taps(size: int, window: int, out_size: int, stride: int, pad_low: int, lhs_dil: int, rhs_dil: int) -> int:
    """(output position, kernel tap) pairs of one spatial dim that read a real input element."""
    dilated = (size - 1) * lhs_dil + 1 if size > 0 else 0
    count = 0
    for o in range(out_size):
        base = o * stride - pad_low
        for t in range(window):
            pos = base + t * rhs_dil
            if 0 <= pos < dilated and pos % lhs_dil == 0:
                count += 1
    return count


def _integer_pow(eqn: Any, nbytes: int) -> Cost:
    y = int(eqn.params["y"])
    n = abs(y)
    muls = 0 if n < 2 else n.bit_length() - 1 + bin(n).count("1") - 1
    ops = muls + (1 if y < 0 else 0)
    return Cost(ops * _elements(eqn.outvars[0].aval), nbytes)


def _sort(eqn: Any, nbytes: int) -> Cost:
    shape = eqn.invars[0].aval.shape
    dim = eqn.params.get("dimension", len(shape) - 1)
    length = shape[dim] if shape else 1
    depth = max(length - 1, 0).bit_length()  # ceil(log2(length))
    return Cost(
        _elements(eqn.invars[0].aval) * depth,
        nbytes,
        note="estimate: n x ceil(log2 length) comparisons (XLA's count differs)",
    )


def _reduce_window(eqn: Any, nbytes: int) -> Cost:
    dims = eqn.params.get("window_dimensions")
    window = prod(dims) if dims else 1
    return Cost(_elements(eqn.outvars[0].aval) * max(window - 1, 0), nbytes)


def _polynomial(eqn: Any, nbytes: int) -> Cost:
    """JAX 0.12's `polynomial(x, *coeffs)`, by Horner's rule: a multiply and an add per coefficient past the first."""
    return Cost(2 * max(len(eqn.invars) - 2, 0) * _elements(eqn.outvars[0].aval), nbytes)


_RULES: dict[str, Callable[[Any, int], Cost]] = {
    "dot_general": _dot_general,
    "conv_general_dilated": _conv,
    "integer_pow": _integer_pow,
    "sort": _sort,
    "reduce_window_sum": _reduce_window,
    "reduce_window_max": _reduce_window,
    "reduce_window_min": _reduce_window,
    "polynomial": _polynomial,
}


# ----------------------------------------------------------------------------- helpers


def _elements(aval: Any) -> int:
    shape = getattr(aval, "shape", ())
    try:
        return int(prod(shape))
    except TypeError:  # symbolic dimensions
        return 0


def _aval_bytes(aval: Any) -> int:
    dtype = getattr(aval, "dtype", None)
    itemsize = getattr(dtype, "itemsize", None)
    if itemsize is None:  # tokens, PRNG keys of extended dtypes
        return 0
    return _elements(aval) * int(itemsize)


def _sizes(aval: Any, memo: dict[int, tuple[Any, int, int]]) -> tuple[int, int]:
    """(elements, bytes) of an aval, once per aval object (keyed by identity, the aval kept alive)."""
    hit = memo.get(id(aval))
    if hit is None or hit[0] is not aval:
        hit = memo[id(aval)] = (aval, _elements(aval), _aval_bytes(aval))
    return hit[1], hit[2]


def _io_bytes(eqn: Any) -> int:
    total = sum(_aval_bytes(v.aval) for v in eqn.outvars)
    for v in eqn.invars:
        if type(v).__name__ != "Literal":
            total += _aval_bytes(v.aval)
    return total


def _total(costs: Iterable[Cost]) -> Cost:
    flops: float | None = 0
    nbytes: int | None = 0
    trans: float | None = 0
    note = None
    for c in costs:
        flops = None if flops is None or c.flops is None else flops + c.flops
        nbytes = None if nbytes is None or c.bytes is None else nbytes + c.bytes
        trans = None if trans is None or c.transcendentals is None else trans + c.transcendentals
        if c.flops is None and note is None:
            note = f"unknown, because: {c.note}" if c.note else "unknown part"
    return Cost(flops, nbytes, trans, note)


def _scaled(cost: Cost, factor: Any, why: str) -> Cost:
    if not isinstance(factor, int):
        return Cost(None, None, None, f"unknown multiplier for {why}")
    mul = lambda x: None if x is None else x * factor
    note = why if cost.note is None else f"{why}; {cost.note}"
    return Cost(mul(cost.flops), mul(cost.bytes), mul(cost.transcendentals), note)


def _max_or_none(values: Iterable[Any]) -> Any:
    values = list(values)
    return None if any(v is None for v in values) else max(values, default=0)


def _manual_devices(eqn: Any) -> int | None:
    mesh = eqn.params.get("mesh")
    axes = eqn.params.get("manual_axes") or eqn.params.get("newly_manual_axes")
    try:
        shape = dict(mesh.shape)
        if axes is None:
            return int(prod(shape.values()))
        return int(prod(shape[a] for a in axes))
    except Exception:  # boundary: a mesh-like object of the user's, or an axis it lacks
        return None


def _number(value: Any) -> Any:
    """A JSON-safe number: integral floats as ints, NaN/inf as None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return int(value) if value.is_integer() else value
    return value
