"""The exact forward/backward split JAX makes for reverse mode, with every op linked to the user's op.

`grad_split(fn, args)` traces, never runs: the forward is the jaxpr of `jax.vjp`, whose extra
outputs are the residuals (the leaves of the vjp function, the same values
`jax.ad_checkpoint.print_saved_residuals` reports), and the backward is the jaxpr of that vjp
function applied to the residuals and the output cotangents. The two are JAX's own
programs, not a guess from names.

Links are exact, not by source line: the user's jaxpr is evaluated eqn by eqn inside
`jax.vjp`, each eqn under a name scope carrying its index. JAX carries that scope into every
eqn it derives (`jvp(tag3)` in the forward, `transpose(jvp(tag3))` in the backward), so reading
the scope back names the user eqn each derived eqn comes from; the scopes are then removed.
Bodies of nested jits and of `jax.checkpoint` are re-traced with the same tagging, so their
eqns link to the user's eqn inside the body (a path of eqn indices); other sub-jaxprs
(scan, cond, while, custom_jvp/custom_vjp rules) link to the eqn that holds them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

from jaxmagic.capture import jax_compat

from ... import strict

# A scope no user writes: the middle dot and the word make a collision with a real scope name
# (which would only mislink, never fail) practically impossible.
_TAG = "\u00b7jm-grad\u00b7"

_REMAT_SCOPE = jax_compat.REMAT_SCOPE  # the scope JAX names a checkpoint's recomputation by
_REMAT_PRIMITIVES = ("remat2", "checkpoint")

UserPath = tuple[int, ...]
"""Eqn indices into the user's jaxpr: (3,) is eqn 3; (3, 1) is eqn 1 of the body of eqn 3."""


@dataclasses.dataclass(frozen=True)
class Residual:
    """One value the forward pass saves for the backward pass (backward input `index`)."""

    index: int
    aval: str
    bytes: int
    producer: int | tuple[str, int]
    """Forward eqn index, or ("input", k) / ("const", k) / ("literal", 0) when passed straight through."""
    consumers: tuple[int, ...]
    """Top-level backward eqns reading it."""
    source: tuple[str, int, str] | None
    """(file, line, function) of the producer eqn's user frame."""
    link: int | None
    """The user eqn the producer comes from."""


@dataclasses.dataclass(frozen=True)
class GradLinks:
    """For each top-level eqn of `forward` / `backward`, the user eqn it comes from (None if none).

    `*_paths` give the finest user eqn (inside jitted/checkpointed bodies) for the same eqns;
    `nested` does it for eqns inside sub-jaxprs: key (side, path), path = (eqn index, sub-jaxpr
    number, eqn index, ...) with sub-jaxprs numbered in sorted param-name order.
    """

    forward: list[int | None]
    backward: list[int | None]
    forward_paths: list[UserPath | None]
    backward_paths: list[UserPath | None]
    nested: dict[tuple[str, tuple[int, ...]], UserPath]


@dataclasses.dataclass(frozen=True)
class GradSplit:
    """Jaxprs and metadata only: no array from the user's call is kept."""

    user: Any
    """ClosedJaxpr of the user's function on all flattened inputs (what links point into)."""
    forward: Any
    """ClosedJaxpr: inputs = every input leaf; outputs = outputs, aux outputs, residuals."""
    backward: Any
    """ClosedJaxpr: inputs = residuals, output cotangents; outputs = one cotangent per differentiated leaf."""
    diff_leaves: tuple[int, ...]
    """Indices (among the forward inputs) of the differentiated leaves, in backward output order."""
    n_out: int
    n_aux: int
    residuals: list[Residual]
    links: GradLinks
    recomputed: list[int]
    """Backward eqns that are or contain recomputed forward work (checkpoint/remat)."""
    recomputed_paths: list[tuple[int, ...]]
    """The recomputed eqns themselves, as backward paths (see `GradLinks.nested`)."""
    in_tree: Any
    out_tree: Any
    dynamic: tuple[int, ...] = ()
    """Indices (among `in_tree`'s leaves) of the leaves that are the programs' inputs, in order;
    the others (functions, strings an argument holds) are constants of the trace."""

    @property
    def n_primal_out(self) -> int:
        """Residual i of the backward is forward output `n_primal_out + i`."""
        return self.n_out + self.n_aux

    @property
    def residual_bytes(self) -> int:
        return sum(r.bytes for r in self.residuals)


def grad_split(
    fn: Callable, args: tuple, kwargs: dict | None = None, argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> GradSplit:
    """Trace `fn(*args, **kwargs)` differentiated in `args[argnums]` and split it as `jax.vjp` does.

    `args` may be arrays or `jax.ShapeDtypeStruct`s: only avals are used. With `has_aux`, `fn`
    returns `(output, aux)` and aux is carried through the forward, not differentiated.
    """
    kwargs = kwargs or {}
    argnum_tuple = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    all_leaves, in_tree = jax.tree_util.tree_flatten((tuple(args), kwargs))
    dynamic, leaves, diff_leaves = _traced_inputs(all_leaves, _leaf_indices(args, kwargs, argnum_tuple))
    trees: dict[str, Any] = {}

    def flat_fn(*flat: Any) -> list:
        call_args, call_kwargs = jax.tree_util.tree_unflatten(in_tree, _with_static(all_leaves, dynamic, flat))
        result = fn(*call_args, **call_kwargs)
        out, aux = result if has_aux else (result, ())
        out_leaves, trees["out"] = jax.tree_util.tree_flatten(out)
        aux_leaves, trees["aux"] = jax.tree_util.tree_flatten(aux)
        return [*out_leaves, *aux_leaves]

    user = jax.make_jaxpr(flat_fn)(*leaves)
    n_out, n_aux = trees["out"].num_leaves, trees["aux"].num_leaves

    def forward_fn(*flat: Any) -> tuple[list, list]:
        def of_diff(*diff: Any) -> Any:
            full = list(flat)
            for k, value in zip(diff_leaves, diff):
                full[k] = value
            outs = _tagged_eval(user, full, ())
            return (outs[:n_out], outs[n_out:]) if has_aux else outs[:n_out]

        diff_in = [flat[k] for k in diff_leaves]
        if has_aux:
            out, vjp_fn, aux = jax.vjp(of_diff, *diff_in, has_aux=True)
        else:
            (out, vjp_fn), aux = jax.vjp(of_diff, *diff_in), []
        res, trees["vjp"] = jax.tree_util.tree_flatten(vjp_fn)
        return [*out, *aux], res

    tagged_forward, out_shapes = jax.make_jaxpr(forward_fn, return_shape=True)(*leaves)
    res_shapes = out_shapes[1]

    def backward_fn(res: list, cts: list) -> list:
        vjp_fn = jax.tree_util.tree_unflatten(trees["vjp"], res)
        return list(vjp_fn(list(cts)))

    ct_shapes = [_cotangent_shape(v.aval) for v in user.jaxpr.outvars[:n_out]]
    tagged_backward = jax.make_jaxpr(backward_fn)(list(res_shapes), ct_shapes)

    nested: dict[tuple[str, tuple[int, ...]], UserPath] = {}
    forward_paths = _top_paths(tagged_forward.jaxpr, "forward", nested)
    backward_paths = _top_paths(tagged_backward.jaxpr, "backward", nested)
    recomputed_paths = sorted(_recomputed(tagged_backward.jaxpr, ()))
    forward, backward = _without_unread_residuals(
        _strip_closed(tagged_forward), _strip_closed(tagged_backward), n_out + n_aux, len(res_shapes)
    )
    links = GradLinks(
        forward=[p[0] if p else None for p in forward_paths],
        backward=[p[0] if p else None for p in backward_paths],
        forward_paths=forward_paths,
        backward_paths=backward_paths,
        nested=nested,
    )
    return GradSplit(
        user=user,
        forward=forward,
        backward=backward,
        diff_leaves=tuple(diff_leaves),
        n_out=n_out,
        n_aux=n_aux,
        residuals=_residuals(forward, backward, n_out + n_aux, links),
        links=links,
        recomputed=sorted({p[0] for p in recomputed_paths}),
        recomputed_paths=recomputed_paths,
        in_tree=in_tree,
        out_tree=trees["out"],
        dynamic=dynamic,
    )


@dataclasses.dataclass(frozen=True)
class TangentProgram:
    """Forward mode (`jvp`, `linearize`, `jacfwd`): one program computing outputs and their tangents."""

    program: Any
    """ClosedJaxpr: inputs = every input leaf, then one tangent per differentiated leaf;
    outputs = the outputs, then their tangents."""
    n_inputs: int
    diff_leaves: tuple[int, ...]
    n_out: int
    in_tree: Any
    dynamic: tuple[int, ...] = ()
    """As `GradSplit.dynamic`."""


def tangent_program(
    fn: Callable, args: tuple, kwargs: dict | None = None, argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> TangentProgram:
    """Trace `jax.jvp` of `fn` in `args[argnums]` (avals only, like `grad_split`).

    There is no backward pass in forward mode: JAX pushes tangents forward alongside the
    primal computation, and this is that one program. `linearize` is the same program split
    into a primal part evaluated now and a linear part kept; `jacfwd` runs the tangent part
    once per input element (vmapped).
    """
    kwargs = kwargs or {}
    argnum_tuple = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    all_leaves, in_tree = jax.tree_util.tree_flatten((tuple(args), kwargs))
    dynamic, leaves, diff_leaves = _traced_inputs(all_leaves, _leaf_indices(args, kwargs, argnum_tuple))
    n = len(leaves)
    trees: dict[str, Any] = {}

    def jvp_fn(*flat_and_tangents: Any) -> list:
        flat, tangents = list(flat_and_tangents[:n]), list(flat_and_tangents[n:])

        def of_diff(*diff: Any) -> list:
            full = list(flat)
            for k, value in zip(diff_leaves, diff):
                full[k] = value
            call_args, call_kwargs = jax.tree_util.tree_unflatten(in_tree, _with_static(all_leaves, dynamic, full))
            result = fn(*call_args, **call_kwargs)
            out = result[0] if has_aux else result
            out_leaves, trees["out"] = jax.tree_util.tree_flatten(out)
            return out_leaves

        outs, out_tangents = jax.jvp(of_diff, [flat[k] for k in diff_leaves], tangents)
        return [*outs, *out_tangents]

    tangent_shapes = [
        _cotangent_shape(jax_compat.aval_of(leaves[k]) if isinstance(leaves[k], jax.Array) else leaves[k])
        for k in diff_leaves
    ]
    program = jax.make_jaxpr(jvp_fn)(*leaves, *tangent_shapes)
    return TangentProgram(
        program=program,
        n_inputs=n,
        diff_leaves=tuple(diff_leaves),
        n_out=trees["out"].num_leaves,
        in_tree=in_tree,
        dynamic=dynamic,
    )


def is_traced_leaf(leaf: Any) -> bool:
    """True for a leaf JAX can trace (an array, its abstract value, a Python or NumPy number).

    A library differentiates with other leaves among the arguments: Equinox's `filter_grad`
    passes the model's non-array part (activation functions, `custom_jvp` objects) as an
    argument it does not differentiate. Those are constants of the trace, as they are to JAX.
    """
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct, int, float, complex))


def _traced_inputs(leaves: list, diff: list[int]) -> tuple[tuple[int, ...], list, list[int]]:
    """(indices of the traced leaves, those leaves, `diff` as positions among them)."""
    dynamic = tuple(i for i, leaf in enumerate(leaves) if is_traced_leaf(leaf))
    position = {k: j for j, k in enumerate(dynamic)}
    return dynamic, [leaves[i] for i in dynamic], [position[k] for k in diff if k in position]


def _with_static(leaves: list, dynamic: tuple[int, ...], traced: Any) -> list:
    """All the leaves again: `traced` at the `dynamic` positions, the constants elsewhere."""
    full = list(leaves)
    for k, value in zip(dynamic, traced):
        full[k] = value
    return full


def _leaf_indices(args: tuple, kwargs: dict, argnums: tuple[int, ...]) -> list[int]:
    """Flat indices (in the order of `tree_flatten((args, kwargs))`) of the leaves of `args[argnums]`."""
    counts = [len(jax.tree_util.tree_leaves(a)) for a in args]
    starts = np.cumsum([0, *counts])
    out: list[int] = []
    for n in argnums:
        n = n % len(args)
        out.extend(range(starts[n], starts[n] + counts[n]))
    return out


def _cotangent_shape(aval: Any) -> jax.ShapeDtypeStruct:
    """An output's cotangent type: the output's own, float0 for integer and bool outputs."""
    dtype = aval.dtype if jax.numpy.issubdtype(aval.dtype, jax.numpy.inexact) else jax.dtypes.float0
    return jax.ShapeDtypeStruct(aval.shape, dtype)


# ---------------------------------------------------------------------------------------------
# Tagged evaluation: the user's eqns bound one by one, each under a scope naming its path.


def _tag(path: UserPath) -> str:
    return _TAG + ".".join(map(str, path))


def _is_tag(name: str) -> bool:
    return name.startswith(_TAG)


def _tagged_eval(closed: Any, args: list, prefix: UserPath) -> list:
    jaxpr = closed.jaxpr
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))

    def read(atom: Any) -> Any:
        return jax_compat.literal_value(atom) if jax_compat.is_literal(atom) else env[atom]

    for i, eqn in enumerate(jaxpr.eqns):
        path = (*prefix, i)
        eqn = _retagged_body(eqn, path)
        with jax_compat.scoped_user_context(eqn.source_info, _tag(path)):
            outs = jax_compat.bind_eqn(eqn, [read(a) for a in eqn.invars])
        env.update(zip(eqn.outvars, outs))
    return [read(a) for a in jaxpr.outvars]


def _retagged_body(eqn: Any, path: UserPath) -> Any:
    """`eqn` with its jitted or checkpointed body re-traced with tags, so links reach inside it.

    Only bodies that re-trace to the same types with no new constants are swapped; anything
    else keeps its body and links to the eqn that holds it.
    """
    body = eqn.params.get("jaxpr")
    closed_type, open_type = jax_compat.jaxpr_types()
    if eqn.primitive.name not in ("jit", "pjit", "remat2", "checkpoint") or body is None:
        return eqn
    closed = body if isinstance(body, closed_type) else closed_type(body, ()) if isinstance(body, open_type) else None
    if closed is None or (isinstance(body, open_type) and body.constvars):
        return eqn
    try:
        shapes = [
            jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=getattr(a, "weak_type", False)) for a in closed.in_avals
        ]
        retraced = jax.make_jaxpr(lambda *xs: _tagged_eval(closed, list(xs), path))(*shapes)
    except Exception as exc:  # the sub-program's eqns then keep JAX's scopes, untagged
        strict.fallback("the eqn paths of a sub-program in a split gradient", exc)
        return eqn
    if retraced.consts or retraced.in_avals != closed.in_avals or retraced.out_avals != closed.out_avals:
        return eqn
    new_body = retraced if isinstance(body, closed_type) else retraced.jaxpr
    return eqn.replace(params={**eqn.params, "jaxpr": new_body})


# ---------------------------------------------------------------------------------------------
# Reading the tags back, and removing them.


def _open_subs(eqn: Any) -> Iterator[Any]:
    """Open jaxprs held in an eqn's params, in sorted param-name order (as the printer walks them)."""
    return (sub for _, sub in jax_compat.sub_jaxprs(eqn, opened=True))


def _own_path(eqn: Any) -> UserPath | None:
    """The user path named by the innermost tag in the eqn's own name stack."""
    tags = [
        name
        for is_transform, name in jax_compat.name_stack_entries(eqn.source_info)
        if not is_transform and _is_tag(name)
    ]
    if not tags:
        return None
    return tuple(int(p) for p in tags[-1][len(_TAG) :].split("."))


def _top_paths(jaxpr: Any, side: str, nested: dict) -> list[UserPath | None]:
    """Links of the top-level eqns; eqns inside sub-jaxprs go to `nested`, inheriting the holder's link."""
    paths: list[UserPath | None] = []
    for i, eqn in enumerate(jaxpr.eqns):
        path = _own_path(eqn)
        paths.append(path)
        for k, sub in enumerate(_open_subs(eqn)):
            _nested_paths(sub, (i, k), path, side, nested)
    return paths


def _nested_paths(inner: Any, where: tuple[int, ...], inherited: UserPath | None, side: str, nested: dict) -> None:
    """`_top_paths` inside a sub-jaxpr (a module function: a recursive closure is a reference cycle)."""
    for i, eqn in enumerate(inner.eqns):
        path = _own_path(eqn)
        # Inside a re-tagged body, tags name the full path; an untagged eqn belongs to the holder.
        path = path if path is not None and (inherited is None or path[: len(inherited)] == inherited) else inherited
        if path is not None:
            nested[(side, (*where, i))] = path
        for k, sub in enumerate(_open_subs(eqn)):
            _nested_paths(sub, (*where, i, k), path, side, nested)


def _recomputed(jaxpr: Any, where: tuple[int, ...], state: str = "top") -> Iterator[tuple[int, ...]]:
    """Backward eqns that redo forward work (leaf eqns, as paths).

    At the top of the backward, linear work always sits under `transpose(...)`; a tagged eqn
    without it is a primal op evaluated again, which only checkpoint/remat makes JAX do.
    Inside a remat body name stacks restart: JAX puts the recomputation under the
    `rematted_computation` scope and the transposed work under none. `state` is "top",
    "remat" (a remat body), "linear" or "recompute" (inherited from the holder).
    """
    for i, eqn in enumerate(jaxpr.eqns):
        entries = jax_compat.name_stack_entries(eqn.source_info)
        if state == "top":
            again = any(not t and _is_tag(name) for t, name in entries) and not any(
                t and name == "transpose" for t, name in entries
            )
        elif state == "remat":
            again = any(not t and name == _REMAT_SCOPE for t, name in entries)
        else:
            again = state == "recompute"
        subs = list(_open_subs(eqn))
        if again and not subs:
            yield (*where, i)
        inner = "recompute" if again else "remat" if eqn.primitive.name in _REMAT_PRIMITIVES else "linear"
        for k, sub in enumerate(subs):
            yield from _recomputed(sub, (*where, i, k), inner)


def _strip_closed(closed: Any) -> Any:
    closed_type, _ = jax_compat.jaxpr_types()
    return closed_type(_strip(closed.jaxpr), closed.consts)


def _strip(jaxpr: Any) -> Any:
    """`jaxpr` with our tag scopes removed from every eqn, sub-jaxprs included."""
    eqns = []
    for eqn in jaxpr.eqns:
        params = {k: _strip_value(v) for k, v in eqn.params.items()}
        changed = any(params[k] is not eqn.params[k] for k in params)
        eqns.append(
            eqn.replace(
                source_info=jax_compat.drop_scopes(eqn.source_info, _is_tag), **({"params": params} if changed else {})
            )
        )
    return jaxpr.replace(eqns=eqns)


def _strip_value(value: Any) -> Any:
    """A param value with the jaxprs it holds stripped (`_strip`); anything else as it is."""
    closed_type, open_type = jax_compat.jaxpr_types()
    if isinstance(value, closed_type):
        return closed_type(_strip(value.jaxpr), value.consts)
    if isinstance(value, open_type):
        return _strip(value)
    if isinstance(value, tuple) and any(isinstance(v, (closed_type, open_type)) for v in value):
        return tuple(_strip_value(v) for v in value)
    return value


# ---------------------------------------------------------------------------------------------
# Residual records.


def _without_unread_residuals(forward: Any, backward: Any, n_primal_out: int, n_res: int) -> tuple[Any, Any]:
    """The split without the residuals its backward never reads.

    JAX 0.4's `custom_vjp` keeps the rule's primal output among the vjp function's leaves although
    the backward rule never reads it; `jax.ad_checkpoint.saved_residuals` leaves it out and XLA drops
    it, so it is not memory saved for the backward and is not shown as such. Later JAX have none.
    """
    fj, bj = forward.jaxpr, backward.jaxpr
    read = {id(atom) for eqn in bj.eqns for atom in eqn.invars} | {id(atom) for atom in bj.outvars}
    keep = [k for k, var in enumerate(bj.invars[:n_res]) if id(var) in read]
    if len(keep) == n_res:
        return forward, backward
    res_outs = fj.outvars[n_primal_out:]
    return (
        jax_compat.with_vars(forward, outvars=[*fj.outvars[:n_primal_out], *(res_outs[k] for k in keep)]),
        jax_compat.with_vars(backward, invars=[*(bj.invars[k] for k in keep), *bj.invars[n_res:]]),
    )


def _residuals(forward: Any, backward: Any, n_primal_out: int, links: GradLinks) -> list[Residual]:
    fj, bj = forward.jaxpr, backward.jaxpr
    producers: dict[Any, int] = {v: i for i, e in enumerate(fj.eqns) for v in e.outvars}
    inputs = {v: k for k, v in enumerate(fj.invars)}
    consts = {v: k for k, v in enumerate(fj.constvars)}
    readers: dict[Any, list[int]] = {}
    for i, eqn in enumerate(bj.eqns):
        for atom in eqn.invars:
            if not jax_compat.is_literal(atom) and i not in readers.setdefault(atom, []):
                readers[atom].append(i)
    records = []
    residual_outs = fj.outvars[n_primal_out:]
    for index, (atom, invar) in enumerate(zip(residual_outs, bj.invars)):
        aval = atom.aval
        producer: int | tuple[str, int]
        if jax_compat.is_literal(atom):
            producer = ("literal", 0)
        elif atom in producers:
            producer = producers[atom]
        elif atom in inputs:
            producer = ("input", inputs[atom])
        else:
            producer = ("const", consts.get(atom, -1))
        eqn_index = producer if isinstance(producer, int) else None
        frame = None if eqn_index is None else jax_compat.user_frame(fj.eqns[eqn_index].source_info)
        records.append(
            Residual(
                index=index,
                aval=jax_compat.short_aval(aval),
                bytes=_nbytes(aval),
                producer=producer,
                consumers=tuple(readers.get(invar, ())),
                source=None if frame is None else (frame.file_name, frame.start_line, frame.function_name),
                link=None if eqn_index is None else links.forward[eqn_index],
            )
        )
    return records


def _nbytes(aval: Any) -> int:
    try:
        return int(np.prod(aval.shape, dtype=np.int64)) * np.dtype(aval.dtype).itemsize
    except Exception:  # float0 and extended dtypes carry no data we can size
        return 0
