"""Capture -> grad document (kind "grad", docs/schema.md): what each differentiation saved and did.

Two origins, because JAX leaves two kinds of record:

* `origin: "split"`: an eager `jax.grad` & co. call carries JAX's exact vjp split
  (`capture/grads/split.py`): the forward and backward jaxprs become graph-document functions
  (built by `model.graph.function_graph`, so the graph viewer renders them unchanged), and the
  split's residuals, links and recomputed eqns are re-expressed as node and var ids of those
  graphs.
* `origin: "jit"`: a differentiation inside a recorded jitted call (a train step) has no split
  of its own; the whole jitted jaxpr is one graph, and `capture/grads/stacks.py` tells its eqns
  apart by name stack. Its eqn keys are joined to node ids by position: both number eqns in
  pre-order with sub-jaxprs in sorted param order, which is checked primitive by primitive.

Pure functions of a `Capture`: no IPython, no widgets; the result is plain JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax

from ..capture import jax_compat, source
from ..capture.grads.stacks import GradRegions, grad_regions
from ..capture.prefetch import PREFETCH
from ..capture.record import Artifacts, Capture, GradCall, JitCall
from ..schema.grad import VERSION
from ..units import bytes_text, plural
from . import findings
from .document import envelope, guarded, source_json
from .grad_findings import grad_findings
from .graph import (
    MAX_EQNS_PER_FUNCTION,
    _eqn_source,
    _function_entries,
    _open,
    function_graph,
    requested_text,
)
from .graph import prebuild as graph_prebuild
from .jaxpr_text import Printout
from .on_demand import OnDemand

CUSTOM_RULE_PRIMS = ("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr")
# A backward node linked by source span alone to more forward nodes than this gets their count, not
# their ids (`_link_json`): a highlight of hundreds of layers' ops says nothing the count does not.
MAX_LISTED_BY_SOURCE = 32

Path = tuple[int, ...]


# Said where a jitted step's gradients cannot be told apart (JAX 0.4 renames a jaxpr's values when
# it finishes tracing, so the values `grad` returned inside the step are not found in its program).
GRADIENT_LEAVES_UNAVAILABLE = (
    "which values of the program are the gradients of which leaves is not available on this JAX"
)


class _Graphs(NamedTuple):
    """How the document's graphs are built: cut at `max_eqns`; with `printouts` (a widget's), a
    big graph's jaxpr text is deferred and its printout kept there (model/graph.py)."""

    max_eqns: int
    printouts: dict[str, Printout] | None


def grad_document(capture: Capture, max_eqns: int = MAX_EQNS_PER_FUNCTION, on_demand: OnDemand | None = None) -> dict:
    """The `%%grad_graph` document for a capture: one entry per differentiation, in cell order.

    With `on_demand` (a widget's), a graph of more than HEAD_EQNS eqns carries the head of its
    jaxpr text only, the rest registered as its "jaxpr" request (the grad view's compact graphs
    show no text pane; their playback captions read the text where they have it)."""
    notes: list[str] = []
    graphs = _Graphs(max_eqns, {} if on_demand is not None else None)
    if on_demand is not None:
        on_demand.add("jaxpr", lambda fid: requested_text(graphs.printouts or {}, fid))
    timed: list[tuple[float, int, Any]] = []  # (start, order, builder) so both origins interleave in cell order
    _eager_builders(capture, graphs, notes, timed)
    claimed = _jit_builders(capture, graphs, notes, timed)
    _unclaimed_notes(capture, claimed, notes)
    entries = []
    for _, _, build in sorted(timed, key=lambda t: (t[0], t[1])):
        entry = guarded("a differentiation's graphs", lambda build=build: build(f"d{len(entries)}"), notes)
        if entry is not None:
            entries.append(entry)
    total = sum(e["residual_bytes"] for e in entries)
    if entries:
        title = f"%%grad_graph: {plural(len(entries), 'differentiation')}, {bytes_text(total)} of residuals"
    else:
        title = "%%grad_graph: nothing was differentiated in this cell"
    return envelope(
        "grad",
        VERSION,
        title,
        capture,
        notes,
        entries=entries,
        residual_bytes=total,
        values=_values_requested(capture),
        findings=_findings(capture, grad_findings(entries, total)),
    )


def _values_requested(capture: Capture) -> bool:
    """Whether the capture recorded values (`--values`): a grad call or a jitted call carries them."""
    return any(g.values is not None for g in capture.grads) or any(
        c.artifacts is not None and (c.artifacts.values is not None or c.artifacts.values_note) for c in capture.calls
    )


# ---------------------------------------------------------------------------------------------
# Eager differentiations: JAX's exact split.


def _split_gradients(split: Any, bwd: dict, leaf_paths: list) -> list[dict]:
    """Each differentiated leaf: its path as written, its aval, the backward output that is its gradient."""
    bwd_outs = bwd["groups"][0]["outvars"]
    cotangents = bwd.get("values") or {}
    grads_of = []
    for j, k in enumerate(split.diff_leaves):
        out = bwd_outs[j] if j < len(bwd_outs) else {}
        value = cotangents.get(out.get("var"))
        grads_of.append(
            {
                "path": leaf_paths[k],
                "aval": jax_compat.short_aval(split.forward.jaxpr.invars[k].aval),
                "output": j,
                "var": out.get("var"),
                **({"lit": out["lit"]} if "lit" in out else {}),
                **({"value": value} if value is not None else {}),
            }
        )
    return grads_of


def _split_entry(eid: str, calls: list[GradCall], graphs: _Graphs, notes: list[str]) -> dict:
    """A grad JAX split eagerly: forward and backward graphs, residuals, links and each leaf's gradient."""
    first = calls[0]
    split = first.split
    values = first.values
    fwd = _graph(
        f"{eid}-forward",
        f"forward of {first.name}",
        split.forward,
        first,
        len(calls),
        graphs,
        notes,
        None if values is None else Artifacts(values=values.forward, values_note=values.forward_note),
    )
    bwd = _graph(
        f"{eid}-backward",
        f"backward of {first.name}",
        split.backward,
        first,
        len(calls),
        graphs,
        notes,
        None if values is None else Artifacts(values=values.backward, values_note=values.backward_note),
    )
    fwd_ids, bwd_ids = _node_ids(split.forward, fwd), _node_ids(split.backward, bwd)
    leaf_paths = _leaf_paths(first, split)
    _name_inputs(fwd, leaf_paths)
    _name_inputs(
        bwd,
        [
            leaf_paths[r.producer[1]] if isinstance(r.producer, tuple) and r.producer[0] == "input" else None
            for r in split.residuals
        ],
    )

    fwd_user = _user_paths(split.links.forward_paths, split.links.nested, "forward", fwd_ids)
    bwd_user = _user_paths(split.links.backward_paths, split.links.nested, "backward", bwd_ids)
    custom_paths = {(i,) for i, eqn in enumerate(_open(split.user).eqns) if eqn.primitive.name in CUSTOM_RULE_PRIMS}
    user_ops = _user_ops(split.user, set(fwd_user.values()) | set(bwd_user.values()) | custom_paths)
    links = {
        "backward": _backward_to_forward(bwd_user, fwd_user, fwd, bwd, user_ops),
        "forward": {nid: _uid(p) for nid, p in fwd_user.items()},
        "backward_user": {nid: _uid(p) for nid, p in bwd_user.items()},
    }

    residuals = _split_residuals(split, fwd, bwd, fwd_ids, bwd_ids, fwd_user, leaf_paths)
    recomputed = [bwd_ids[p] for p in split.recomputed_paths if p in bwd_ids]
    grads_of = _split_gradients(split, bwd, leaf_paths)
    if fwd["truncated"] or bwd["truncated"]:
        notes.append(
            f"{first.name}: the forward or backward graph was cut at {graphs.max_eqns} eqns; residuals, links and "
            "recomputed eqns past the cut are left out"
        )
    return {
        "id": eid,
        "origin": "split",
        **_differentiation(first, calls),
        "n_out": split.n_out,
        "n_aux": split.n_aux,
        "forward": fwd,
        "backward": bwd,
        "residuals": residuals,
        "residual_bytes": sum(r["bytes"] for r in residuals),
        "user_ops": user_ops,
        "links": links,
        "recomputed": recomputed,
        "grads_of": grads_of,
        "cotangent": values.cotangent if values else None,
        "custom_rules": _custom_rules(split, sorted(custom_paths), fwd, bwd, fwd_user, bwd_user),
    }


def _differentiation(first: GradCall, calls: list[GradCall]) -> dict:
    """What an eager entry says of the differentiation itself: which transform, of what, where, how often."""
    return {
        "kind": first.kind,
        "name": first.name,
        "source": source_json(first.source),
        "call_site": source_json(first.call_site),
        "calls": len(calls),
        "argnums": list(first.argnums),
        "has_aux": first.has_aux,
        "batch": first.batch,
        "note": MODE_NOTES.get(first.kind),
    }


MODE_NOTES = {
    "jvp": "forward mode: tangents are pushed forward alongside the outputs, in one pass; no residuals are saved",
    "linearize": (
        "forward mode: JAX evaluates the primal part of this program now and keeps the tangent part as "
        "the linear function it returns"
    ),
    "jacfwd": (
        "forward mode: the tangent part runs once per element of the differentiated inputs (JAX vmaps it "
        "over the standard basis)"
    ),
    "jacrev": (
        "reverse mode: the backward runs once per element of the output (JAX vmaps it over the standard "
        "basis of cotangents)"
    ),
    "hessian": (
        "forward over reverse: this program is the jvp of the gradient; its tangent part runs once per "
        "element of the differentiated inputs (JAX vmaps it), each run giving one row of the Hessian"
    ),
}


def _tangent_entry(eid: str, calls: list[GradCall], graphs: _Graphs, notes: list[str]) -> dict:
    """Forward mode (`jvp`, `linearize`, `jacfwd`): one program, each node a primal or a tangent op.

    A node is `tangent` when a tangent input reaches it through the graph's operands (inside
    call-like sub-jaxprs, through the positions they bind); other nodes compute the primal.
    """
    first = calls[0]
    tp = first.tangent
    program = _graph(f"{eid}-program", f"jvp of {first.name}", tp.program, first, len(calls), graphs, notes)
    roots = program["groups"][0]
    tangent_in = set(roots["invars"][tp.n_inputs :])
    roles = _tangent_roles(program, tangent_in)
    leaf_paths = _traced_paths(tp)
    specs = [a for a in first.args if not a.static]
    if len(specs) == tp.n_inputs:
        leaf_paths = [a.path for a in specs]
    _name_inputs(program, [*leaf_paths, *(f"tangent of {leaf_paths[k]}" for k in tp.diff_leaves)])
    counts = {"primal": 0, "tangent": 0}
    for role in roles.values():
        counts[role] += 1
    return {
        "id": eid,
        "origin": "tangent",
        **_differentiation(first, calls),
        "program": program,
        "roles": roles,
        "n_inputs": tp.n_inputs,
        "n_out": tp.n_out,
        "tangents_of": [
            {"path": leaf_paths[k], "var": roots["invars"][tp.n_inputs + j]} for j, k in enumerate(tp.diff_leaves)
        ],
        "residual_bytes": 0,
        "totals": {"n_primal": counts["primal"], "n_tangent": counts["tangent"]},
    }


def _tangent_roles(fn: dict, tangent_in: set[str]) -> dict[str, str]:
    """Node id -> "tangent" if a tangent input flows into it, else "primal".

    Group by group in evaluation order: a sub-group's inputs take the tangent-ness of its owner's
    operands by position, and the owner's outputs that of the sub-group's outputs when the arities
    match (a jitted body holds both parts of its jvp); otherwise a tangent operand makes them all
    tangent.
    """
    tangent = set(tangent_in)
    groups = {g["id"]: g for g in fn["groups"]}
    members: dict[str, list[dict]] = {}
    for node in fn["nodes"]:
        members.setdefault(node["group"], []).append(node)
    roles: dict[str, str] = {}
    _tangent_roles_of_group(fn["root"], members, groups, tangent, roles)
    return roles


def _tangent_roles_of_group(
    gid: str, members: dict[str, list[dict]], groups: dict[str, dict], tangent: set, roles: dict[str, str]
) -> None:
    """`_tangent_roles`' walk, in evaluation order (a module function: a recursive closure is a
    reference cycle, kept until Python's cyclic collector runs)."""
    for node in members.get(gid, []):
        ins = [op.get("var") for op in node["ins"]]
        hot = any(v in tangent for v in ins if v)
        outs_from_body: set[str] | None = None
        for sub in node["subgroups"]:
            group = groups[sub]
            if len(group["invars"]) == len(ins):
                tangent.update(b for b, v in zip(group["invars"], ins) if v in tangent)
            elif hot:
                tangent.update(group["invars"])
            _tangent_roles_of_group(sub, members, groups, tangent, roles)
            outvars = [o.get("var") for o in group["outvars"]]
            if len(outvars) == len(node["outs"]) and len(node["subgroups"]) == 1:
                outs_from_body = {o for o, v in zip(node["outs"], outvars) if v in tangent}
        roles[node["id"]] = "tangent" if hot else "primal"
        tangent.update(outs_from_body if outs_from_body is not None else node["outs"] if hot else ())


def _custom_rules(
    split: Any, paths: list[Path], fwd: dict, bwd: dict, fwd_user: dict[str, Path], bwd_user: dict[str, Path]
) -> list[dict]:
    """The user's `custom_jvp` / `custom_vjp` functions and the nodes their rules became.

    JAX inlines the rules: the forward holds the jvp rule's (or custom_vjp fwd rule's) eqns under
    the user op's tag. A custom_vjp bwd rule runs at transpose time, outside any tag, so its nodes
    are found by source: nodes whose user line lies inside the bwd function's own code.
    """
    user = _open(split.user)
    out = []
    for path in paths:
        eqn = user.eqns[path[0]]
        rules = [
            f
            for f in (
                _rule_function(eqn.params.get(k))
                for k in ("jvp_jaxpr_fun", "jvp_jaxpr_thunk", "fwd_jaxpr_thunk", "bwd")
            )
            if f is not None and source.is_user_file(f.__code__.co_filename)
        ]  # not JAX's own wrappers
        names = [getattr(f, "__qualname__", getattr(f, "__name__", "")) for f in rules if f is not None]
        spans = [span for span in map(_code_span, rules) if span is not None]
        backward = [nid for nid, p in bwd_user.items() if p[:1] == path]
        backward += [n["id"] for n in bwd["nodes"] if n["id"] not in bwd_user and _inside(n["src"], spans)]
        out.append(
            {
                "user": _uid(path),
                "prim": eqn.primitive.name,
                "rules": [n for n in names if n and not n.startswith("<")],
                "forward": [nid for nid, p in fwd_user.items() if p[:1] == path],
                "backward": backward,
            }
        )
    return out


def _rule_function(wrapped: Any) -> Any:
    """The user's Python function inside JAX's `WrappedFun` (its `.f`, unwrapped), or None.

    JAX 0.4 keeps a custom_vjp's bwd rule as the WrappedFun's bound `call_wrapped`: its `__self__`.
    """
    fn = getattr(wrapped, "f", None)
    if fn is None:
        fn = getattr(getattr(wrapped, "__self__", None), "f", None)
    while fn is not None and hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn if callable(fn) and hasattr(fn, "__code__") else None


def _code_span(fn: Any) -> tuple[str, int, int] | None:
    if fn is None:
        return None
    code = fn.__code__
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return (code.co_filename, min(lines, default=code.co_firstlineno), max(lines, default=code.co_firstlineno))


def _inside(src: dict | None, spans: list[tuple[str, int, int]]) -> bool:
    return src is not None and any(src["file"] == f and lo <= src["line"] <= hi for f, lo, hi in spans)


def _graph(
    fid: str,
    name: str,
    closed: Any,
    call: GradCall,
    calls: int,
    graphs: _Graphs,
    notes: list[str],
    values: Artifacts | None = None,
) -> dict:
    fn = function_graph(
        fid, name, closed, graphs.max_eqns, artifacts=values, notes=notes, levels=False, printouts=graphs.printouts
    )
    fn.update(
        signature=", ".join(jax_compat.short_aval(a) for a in closed.in_avals),
        source=source_json(call.source),
        calls=calls,
    )
    return fn


def _node_paths(closed: Any, limit: int) -> list[Path]:
    """Path of each eqn in `function_graph`'s node order: (i,) top level, (i, k, j, ...) for eqn j of the
    k-th sub-jaxpr (sorted param order) of eqn i: the path form of `GradLinks.nested`."""
    out: list[Path] = []
    _add_node_paths(_open(closed), (), out, limit)
    return out


def _add_node_paths(jaxpr: Any, prefix: Path, out: list[Path], limit: int) -> None:
    """`_node_paths`' walk (a module function: a recursive closure is a reference cycle)."""
    for i, eqn in enumerate(jaxpr.eqns):
        if len(out) >= limit:
            return
        out.append((*prefix, i))
        for k, (_, sub) in enumerate(jax_compat.sub_jaxprs(eqn, opened=True)):
            _add_node_paths(sub, (*prefix, i, k), out, limit)


def _node_ids(closed: Any, fn: dict) -> dict[Path, str]:
    return {path: node["id"] for path, node in zip(_node_paths(closed, len(fn["nodes"])), fn["nodes"])}


def _user_paths(top: list, nested: dict, side: str, ids: dict[Path, str]) -> dict[str, Path]:
    """Node id -> the user eqn path it comes from, for the nodes that have one."""
    out = {}
    for path, nid in ids.items():
        user = top[path[0]] if len(path) == 1 else nested.get((side, path))
        if user is not None:
            out[nid] = tuple(user)
    return out


def _uid(path: Path) -> str:
    return "u" + ".".join(map(str, path))


def _user_ops(user: Any, paths: set[Path]) -> list[dict]:
    """The user's eqns that links point at: a path names eqn p[-1] of the `jaxpr` bodies along p."""
    out = []
    for path in sorted(paths):
        try:
            eqn = _open(user).eqns[path[0]]
            for i in path[1:]:
                eqn = _open(eqn.params["jaxpr"]).eqns[i]
        except (KeyError, IndexError):
            continue
        out.append(
            {
                "id": _uid(path),
                "path": list(path),
                "prim": eqn.primitive.name,
                "scope": jax_compat.name_stack_path(eqn.source_info),
                "src": _eqn_source(eqn),
            }
        )
    return out


def _backward_to_forward(
    bwd_user: dict[str, Path], fwd_user: dict[str, Path], fwd: dict, bwd: dict, user_ops: list[dict]
) -> dict[str, str]:
    """The forward node each backward node differentiates: among the forward nodes of the same user eqn,
    the one doing the user's own primitive (the `tanh` rather than its `1 - y`), else the one with the
    backward node's primitive, else the first. A user eqn with no forward node falls back to its holder."""
    by_user: dict[Path, list[dict]] = {}
    fwd_nodes = {n["id"]: n for n in fwd["nodes"]}
    for nid, path in fwd_user.items():
        by_user.setdefault(path, []).append(fwd_nodes[nid])
    user_prim = {tuple(u["path"]): u["prim"] for u in user_ops}
    bwd_prim = {n["id"]: n["prim"] for n in bwd["nodes"]}
    out = {}
    for nid, path in bwd_user.items():
        while path and path not in by_user:
            path = path[:-1]
        if not path:
            continue
        candidates = by_user[path]
        pick = (
            next((n for n in candidates if n["prim"] == user_prim.get(path)), None)
            or next((n for n in candidates if n["prim"] == bwd_prim[nid]), None)
            or candidates[0]
        )
        out[nid] = pick["id"]
    return out


def _split_residuals(
    split: Any,
    fwd: dict,
    bwd: dict,
    fwd_ids: dict[Path, str],
    bwd_ids: dict[Path, str],
    fwd_user: dict[str, Path],
    leaf_paths: list[str],
) -> list[dict]:
    """One record per value saved (a value JAX hands to the backward twice is stored once)."""
    fj = split.forward.jaxpr
    fwd_outs, bwd_ins = fwd["groups"][0]["outvars"], bwd["groups"][0]["invars"]
    fwd_nodes = {n["id"]: n for n in fwd["nodes"]}
    records: dict[Any, dict] = {}
    for r in split.residuals:
        atom = fj.outvars[split.n_primal_out + r.index]
        key = ("literal", r.index) if jax_compat.is_literal(atom) else atom
        operand = fwd_outs[split.n_primal_out + r.index] if split.n_primal_out + r.index < len(fwd_outs) else {}
        record = records.get(key)
        if record is None:
            producer: Any
            if isinstance(r.producer, int):
                producer = fwd_ids.get((r.producer,))
            elif r.producer[0] == "input":
                producer = {"input": r.producer[1], "path": leaf_paths[r.producer[1]]}
            elif r.producer[0] == "literal":
                producer = {"literal": operand.get("lit", "")}
            else:
                producer = {"const": r.producer[1]}
            record = records[key] = {
                "id": f"r{len(records)}",
                "aval": r.aval,
                "bytes": r.bytes,
                "producer": producer,
                "forward_var": operand.get("var"),
                "backward_vars": [],
                "consumers": [],
                "source": fwd_nodes[producer]["src"] if isinstance(producer, str) else None,
                "user": _uid(fwd_user[producer]) if isinstance(producer, str) and producer in fwd_user else None,
            }
        if r.index < len(bwd_ins):
            record["backward_vars"].append(bwd_ins[r.index])
        for c in r.consumers:
            nid = bwd_ids.get((c,))
            if nid is not None and nid not in record["consumers"]:
                record["consumers"].append(nid)
    return list(records.values())


def _leaf_paths(call: GradCall, split: Any) -> list[str]:
    """Pytree path of every input leaf (`params['w1']`): the call's own argument specs (named by the
    function's parameters) where they cover the leaves, else positions in the split's input tree
    (`args[0]['w1']`)."""
    specs = [a for a in call.args if not a.static]
    if len(specs) == len(split.dynamic):
        return [a.path for a in specs]
    out = _traced_paths(split)
    if len(specs) == len(split.diff_leaves):  # specs of the differentiated arguments only
        for k, spec in zip(split.diff_leaves, specs):
            out[k] = spec.path
    return out


def _name_inputs(graph: dict, paths: Sequence[str | None]) -> None:
    """Name a split program's input ports as the user wrote them (`w`, `params['layers'][0]['w']`).

    The programs are traced from flat leaf lists, so JAX's debug info calls their inputs
    `flat[0]`, `res[1]`; the paths of the differentiated function's bound arguments replace
    those. An input without a path of its own (a residual made by the forward, a cotangent)
    keeps JAX's name.
    """
    by_id = {v["id"]: v for v in graph["vars"]}
    for vid, path in zip(graph["groups"][0]["invars"], paths):
        if path:
            by_id[vid]["path"] = path


def _traced_paths(program: Any) -> list[str]:
    """Positional paths (`args[0]['w1']`) of the leaves a split or tangent program takes as inputs."""
    paths = _positional_paths(program.in_tree)
    return [paths[i] for i in program.dynamic]


def _positional_paths(in_tree: Any) -> list[str]:
    n = in_tree.num_leaves
    placeholder = jax.tree_util.tree_unflatten(in_tree, list(range(n)))
    out = []
    for keys, _ in jax.tree_util.tree_flatten_with_path(placeholder)[0]:
        where, rest = keys[0], keys[1:]
        if getattr(where, "idx", None) == 0:  # positional arguments
            head = f"args[{rest[0].idx}]"
        else:
            head = str(getattr(rest[0], "key", rest[0]))
        out.append(head + jax.tree_util.keystr(tuple(rest[1:])))
    return out


# ---------------------------------------------------------------------------------------------
# Differentiations inside a recorded jitted call: roles by name stack.


def _eager_builders(capture: Capture, graphs: _Graphs, notes: list[str], timed: list) -> None:
    """Builders for the grads JAX split (or linearized) eagerly; a note for each that left no graph."""
    # (kind, split, batch): grad and vjp of one function share JAX's split but are entries of their own, and
    # so are per-example calls
    splits: dict[tuple, list[GradCall]] = {}
    tangents: dict[tuple, list[GradCall]] = {}  # the same for forward mode's tangent programs
    missing: dict[tuple, int] = {}  # (kind, name, site, error) -> calls with no split and no entry
    for call in capture.grads:
        if call.split is not None:
            splits.setdefault((call.kind, id(call.split), call.batch), []).append(call)
        elif call.tangent is not None:
            tangents.setdefault((call.kind, id(call.tangent), call.batch), []).append(call)
        elif not call.traced:
            key = (call.kind, call.name, _at(call.call_site), call.error)
            missing[key] = missing.get(key, 0) + 1
    for (kind, name, site, error), count in missing.items():
        if error and any(error in note for note in capture.notes):
            continue  # the capture already said why
        notes.append(
            f"{kind} of {name}{site}{f' ({count} calls)' if count > 1 else ''}: no graph{f': {error}' if error else ''}"
        )
    for calls in splits.values():
        timed.append((calls[0].start, len(timed), lambda eid, calls=calls: _split_entry(eid, calls, graphs, notes)))
    for calls in tangents.values():
        timed.append((calls[0].start, len(timed), lambda eid, calls=calls: _tangent_entry(eid, calls, graphs, notes)))


def prebuild(closed_jaxpr: Any) -> None:
    """Start what `%%grad_graph` needs of a program while XLA compiles it (capture/prefetch.py): its
    graph walk, as `%%jaxpr`'s, and its forward/backward regions."""
    graph_prebuild(closed_jaxpr)
    PREFETCH.submit("regions", closed_jaxpr, grad_regions)


def _regions(closed_jaxpr: Any) -> GradRegions:
    """The program's regions, found while XLA compiled it when they were started then."""
    ready, regions = PREFETCH.take("regions", closed_jaxpr)
    return regions if ready else grad_regions(closed_jaxpr)


def _jit_builders(capture: Capture, graphs: _Graphs, notes: list[str], timed: list) -> set[int]:
    """Builders for jitted steps that differentiate inside; returns the ids of the grads they account for."""
    jit_entries, _ = _function_entries(capture)
    claimed: set[int] = set()
    for first, calls in jit_entries:
        indices = {c.index for c in calls}
        traced = [g for g in capture.grads if g.traced and g.split is None and g.call in indices]
        if first.jaxpr is None:
            continue
        regions = _regions(first.jaxpr)
        if not regions.by_name_stack:
            if traced:
                claimed.update(id(g) for g in traced)
                notes.append(
                    f"{first.name}: {len(traced)} differentiation(s) ran inside it, but its jaxpr carries no "
                    "jvp/transpose name stacks, so forward and backward cannot be told apart there"
                )
            continue
        claimed.update(id(g) for g in traced)
        timed.append(
            (
                first.start,
                len(timed),
                lambda eid, first=first, calls=calls, regions=regions, traced=traced: _jit_entry(
                    eid, first, calls, regions, traced, graphs, notes
                ),
            )
        )
    return claimed


def _unclaimed_notes(capture: Capture, claimed: set[int], notes: list[str]) -> None:
    """Say where the traced grads no entry accounts for went: nested in another grad, or in an unrecorded trace."""
    nested = [
        (g, capture.grads[g.inside])
        for g in capture.grads
        if g.traced and g.split is None and g.inside is not None and id(g) not in claimed
    ]
    for g, outer in nested:
        notes.append(
            f"{g.kind} of {g.name}{_at(g.call_site)} ran inside {outer.kind} of {outer.name}"
            f"{_at(outer.call_site)}: its ops are part of that differentiation's graphs"
        )
    claimed.update(id(g) for g, _ in nested)
    stray = [g for g in capture.grads if g.traced and g.split is None and id(g) not in claimed]
    if stray:
        where = ", ".join(
            sorted({f"{g.kind} of {g.name}{_at(g.call_site)}" + (f" ({g.batch})" if g.batch else "") for g in stray})[
                :5
            ]
        )
        notes.append(
            f"{len(stray)} differentiation(s) ran while JAX traced something other than a recorded jitted "
            f"call (no graph of their own): {where}"
        )


def _jit_entry(
    eid: str,
    first: JitCall,
    calls: list[JitCall],
    regions: GradRegions,
    traced: list[GradCall],
    graphs: _Graphs,
    notes: list[str],
) -> dict | None:
    """A jitted step that differentiates inside: its program graph with each eqn's role, regions and links."""
    var_ids: dict = {}
    program = _jit_program(eid, first, calls, graphs, notes, var_ids)
    node_of = _jit_nodes(first, program, regions, notes)
    if node_of is None:
        return None
    if program["truncated"]:
        notes.append(
            f"{first.name}: the program graph was cut at {graphs.max_eqns} eqns; roles, residuals and links past "
            "the cut are left out"
        )
    roles = {node_of[k]: e.role for k, e in regions.eqns.items() if k in node_of}
    out_regions = [_jit_region(region, regions, node_of, program) for region in regions.regions]
    notes.extend(f"{first.name}: {note}" for note in regions.notes)
    grads_of = _gradient_leaves(traced, var_ids, program.get("values") or {})
    if traced and not grads_of and not jax_compat.tracer_vars():
        notes.append(f"{first.name}: {GRADIENT_LEAVES_UNAVAILABLE}")
    counts = {role: 0 for role in ("forward", "backward", "other", "unknown")}
    for role in roles.values():
        counts[role] = counts.get(role, 0) + 1
    return {
        "id": eid,
        "origin": "jit",
        "name": first.name,
        "source": source_json(first.source),
        "call_site": source_json(first.call_site),
        "calls": len(calls),
        "program": program,
        "roles": roles,
        "regions": out_regions,
        "grad_calls": len(traced),
        "grad_sites": _grad_sites(traced),
        "grads_of": grads_of,
        "residual_bytes": sum(r["residual_bytes"] for r in out_regions),
        "totals": {
            "n_regions": len(out_regions),
            "n_residuals": sum(len(r["residuals"]) for r in out_regions),
            **{f"n_{role}": n for role, n in counts.items()},
            "n_recomputed": sum(r["n_recomputed"] for r in out_regions),
        },
    }


def _jit_program(
    eid: str, first: JitCall, calls: list[JitCall], graphs: _Graphs, notes: list[str], var_ids: dict
) -> dict:
    """The step's program graph (as %%jaxpr draws it, without level links), with its calls counted."""
    program = function_graph(
        f"{eid}-program",
        first.name,
        first.jaxpr,
        graphs.max_eqns,
        artifacts=first.artifacts,
        notes=notes,
        levels=False,
        var_ids=var_ids,
        printouts=graphs.printouts,
    )
    program.update(
        signature=str(first.signature),
        source=source_json(first.source),
        calls=len(calls),
        cache_hits=sum(c.cache_hit for c in calls),
    )
    return program


def _jit_nodes(first: JitCall, program: dict, regions: GradRegions, notes: list[str]) -> dict[tuple, str] | None:
    """Each eqn path of the name-stack roles -> its graph node id; None (with a note) when the two walks disagree."""
    node_of: dict[tuple, str] = {}
    for key, node in zip(regions.eqns, program["nodes"]):
        if node["prim"] != regions.eqns[key].primitive:
            notes.append(
                f"{first.name}: the eqn walk of the graph and of the name-stack roles disagree at "
                f"{node['id']} ({node['prim']} vs {regions.eqns[key].primitive}); no grad entry"
            )
            return None
        node_of[key] = node["id"]
    return node_of


def _jit_region(region: Any, regions: GradRegions, node_of: dict[tuple, str], program: dict) -> dict:
    """One forward/backward region of the step: its residuals, links and recomputed eqns as node ids."""
    residuals = []
    for n, index in enumerate(region.residuals):
        r = regions.residuals[index]
        producer = node_of.get(r.producer) if r.producer is not None else None
        residuals.append(
            {
                "id": f"r{region.index}.{n}",
                "aval": r.aval,
                "bytes": r.nbytes,
                "origin": r.origin,
                "producer": producer,
                "consumers": [node_of[c] for c in r.consumers if c in node_of],
                "source": _node_src(program, producer),
            }
        )
    members = set(region.backward)
    drawn: dict[int, list[str]] = {}  # id(candidates) -> their node ids: one list per source position
    links = {}
    for b, link in regions.links.items():
        if b in members and b in node_of:
            forward = drawn.get(id(link.forward))
            if forward is None:
                forward = drawn[id(link.forward)] = [node_of[f] for f in link.forward if f in node_of]
            links[node_of[b]] = _link_json(link.kind, forward, link.source)
    recomputed = [node_of[k] for k in region.backward if k in node_of and regions.eqns[k].recomputed]
    owner = region.container[:-1] if region.container else None
    return {
        "index": region.index,
        "prefix": region.prefix,
        "occurrence": region.occurrence,
        "container": node_of.get(owner) if owner else None,
        "n_forward": len(region.forward),
        "n_backward": len(region.backward),
        "n_recomputed": region.recomputed,
        "residuals": residuals,
        "residual_bytes": region.residual_bytes,
        "links": links,
        "recomputed": recomputed,
    }


def _link_json(kind: str, forward: list[str], source: str | None) -> dict:
    """A backward node's link; by source span alone to more than MAX_LISTED_BY_SOURCE forward nodes
    (a loop's line: every layer's op), they are counted, not listed: which one it is, JAX does not
    record, and thousands of backward nodes each listing thousands made the document quadratic."""
    if kind == "by_source" and len(forward) > MAX_LISTED_BY_SOURCE:
        return {"forward": [], "kind": kind, "source": source, "n_forward": len(forward)}
    return {"forward": forward, "kind": kind, "source": source}


def _grad_sites(traced: list[GradCall]) -> list[dict]:
    """The grads traced inside the step, one entry per (kind, name, line) with how many times it ran."""
    sites: dict[tuple, dict] = {}
    for g in traced:
        site = source_json(g.call_site)
        key = (g.kind, g.name, None if site is None else (site["file"], site["line"]))
        entry = sites.setdefault(key, {"kind": g.kind, "name": g.name, "site": site, "batch": g.batch, "count": 0})
        entry["count"] += 1
    return list(sites.values())


def _gradient_leaves(traced: list[GradCall], var_ids: dict, values: dict) -> list[dict]:
    """The gradient leaves each grad returned while the step was traced, as program vars (with values if read)."""
    grads_of = []
    for g in traced:
        for path, aval, var in g.gradient_vars:
            vid = var_ids.get(var)
            if vid is not None:
                grads_of.append(
                    {
                        "path": path,
                        "aval": aval,
                        "var": vid,
                        "site": g.index,
                        **({"value": values[vid]} if vid in values else {}),
                    }
                )
    return grads_of


def _node_src(fn: dict, nid: str | None) -> dict | None:
    if nid is None:
        return None
    return fn["nodes"][int(nid[1:])]["src"]


def _at(site: Any) -> str:
    return f" at {site.file}:{site.line}" if site is not None else ""


def _findings(capture: Capture, own: list[dict]) -> list[dict]:
    """The document's own findings, put on `capture.findings` too (one list: model/findings.py),
    then the general ones (a NaN a jitted call returned, a float64 JAX truncated...)."""
    findings.publish(capture, own, "grad")
    # A NaN/Inf the view's values already place (nan_gradient, with its node) is not said twice.
    placed = {kind.split("_")[0] for kind in (f.get("kind") for f in own) if kind in ("nan_gradient", "inf_gradient")}
    return own + [
        {**findings.finding_json(f), "entry": None, "residual": None}
        for f in findings.general(capture)
        if f.kind not in placed
    ]
