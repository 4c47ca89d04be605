"""Capture -> graph document (kind "graph", docs/schema.md): one graph per function and signature.

Every eqn becomes a node, every jaxpr (root and each sub-jaxpr found in eqn params:
jit/pjit, cond branches, while cond/body, scan body, custom_jvp/vjp, remat, shard_map,
pallas_call, and any primitive that carries a jaxpr) becomes a group. Pure functions
of JAX objects: no IPython, no widgets.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from ..capture import jax_compat
from ..capture import source as capture_source
from ..capture.jax_compat.monitoring import jit_event_name
from ..capture.prefetch import PREFETCH
from ..capture.record import Artifacts, Capture, JitCall
from ..schema.graph import VERSION  # 2: optional levels, cost, repeats, values, batch
from ..units import bytes_text, plural
from . import findings, folding
from .cost import estimate_nodes, program_cost
from .document import envelope, guarded, source_json
from .edges import derive_edges  # noqa: F401  (re-exported: the schema's edge rule)
from .jaxpr_text import HEAD_EQNS, Printout, VarNames
from .levels import link_levels
from .on_demand import OnDemand
from .repeats import find_repeats

MAX_EQNS_PER_FUNCTION = 50_000  # past this a function's graph is cut and says so
MAX_PARAM_CHARS = 240
MAX_LEVEL_TEXT_BYTES = 4_000_000  # a StableHLO/HLO text above this stays in the capture, not the view
_JIT_PRIMITIVES = frozenset(("pjit", "jit"))  # JAX's printer names a jit's body like its call


def _open(jaxpr: Any) -> Any:
    return getattr(jaxpr, "jaxpr", jaxpr)


def _short(text: str) -> str:
    return text if len(text) <= MAX_PARAM_CHARS else text[: MAX_PARAM_CHARS - 1] + "…"


def _param_text(value: Any, group_ids: dict[int, str], memo: dict[int, tuple[Any, str]] | None = None) -> str:
    """A param's text for its node; a jaxpr param names its group.

    `memo` (one per graph, keyed by identity, the value kept alive) keeps the text of each
    param object: eqns share dtypes, precisions, shardings and layouts, and their `str` costs
    several µs (a 10k-eqn program has some 16k params, a few hundred distinct objects)."""
    if group_ids:
        if id(value) in group_ids:
            return f"<jaxpr {group_ids[id(value)]}>"
        if isinstance(value, (tuple, list)) and any(id(v) in group_ids for v in value):
            return "(" + ", ".join(_param_text(v, group_ids, memo) for v in value) + ")"
    if memo is not None:
        hit = memo.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
    try:
        text = _short(str(value))
    except Exception:  # boundary: a user's value whose str raises
        text = f"<{type(value).__name__}>"
    if memo is not None:
        memo[id(value)] = (value, text)
    return text


def _eqn_source(eqn: Any, memo: dict | None = None) -> dict | None:
    """The user's line that made the eqn: JAX's innermost non-JAX frame, unless that is a library's
    (Flax, Optax, ... in site-packages) and a frame of the user's own code (a cell, a script) called it.

    `memo` (one per graph) keeps the answer per innermost frame when that frame is the user's, and
    per innermost frame and user stack when it is a library's: a layer's eqns come from a few
    lines (an optimizer's update: thousands of eqns from a few of Optax's), and each answer reads
    the line's code (13 µs an eqn). Each node gets its own copy."""
    frame = jax_compat.user_frame(eqn.source_info)
    if frame is None:
        return None
    if not capture_source.is_user_file(frame.file_name):
        stack = jax_compat.user_stack(eqn.source_info)
        key = (frame.file_name, frame.start_line, frame.function_name, stack)
        if memo is not None and key in memo:
            src = memo[key]
        else:
            src = _called_from_user_code(frame, stack)
            if memo is not None:
                memo[key] = src
        if src is not None:
            return dict(src)  # else the library's own line, below
    elif memo is not None:
        key = (frame.file_name, frame.start_line, frame.start_column, frame.function_name)
        src = memo.get(key)
        if src is None:
            src = memo[key] = source_json(capture_source.location(*key))
        return dict(src) if src is not None else None
    loc = capture_source.location(frame.file_name, frame.start_line, frame.start_column, frame.function_name)
    return source_json(loc)


def _called_from_user_code(frame: Any, stack: tuple) -> dict | None:
    """The innermost user frame of `stack` (outermost first) that called the library `frame`, with the
    library's frame beside it; None when the stack has no user frame with a line."""
    for file, line, function in reversed(stack):  # innermost first
        if not capture_source.is_user_file(file):
            continue
        src = source_json(capture_source.location(file, line, None, function))
        if src is not None:  # None: a frame without a line number
            src["lib"] = capture_source.library_frame_text(frame.file_name, frame.start_line, frame.function_name)
            return src
    return None


class _FunctionBuilder:
    """Walks one ClosedJaxpr into groups, nodes and vars."""

    def __init__(self, closed_jaxpr: Any, max_eqns: int):
        self.closed_jaxpr = closed_jaxpr
        self.names = VarNames()
        self.jit_names_like_call = jax_compat.printer_names_jit_bodies_like_calls()
        self.heads: list[tuple[str, str]] = []  # node i's binders (`k:f32[] l:f32[3]`) and primitive
        self.top_nodes: list[int] = []  # nodes walked after each top-level eqn (the text's head is cut there)
        self.groups: list[dict] = []
        self.nodes: list[dict] = []
        self.eqns: list[Any] = []  # node i's eqn (its cost estimate reads it)
        self.vars: list[dict] = []
        self.var_ids: dict[Any, str] = {}
        self._avals: dict[int, tuple[Any, str]] = {}  # id(aval) -> (aval, its text): a program has a few dozen
        self._sources: dict[tuple, dict | None] = {}
        self._params: dict[int, tuple[Any, str]] = {}  # id(param value) -> (value, its text)
        self._scopes: dict[int, tuple[Any, list[str]]] = {}  # id(name stack) -> (it, its path)
        self.max_eqns = max_eqns
        self.truncated = False
        self.root = self._group(_open(closed_jaxpr), owner=None, label="")

    def root_label(self, name: str) -> None:
        """The root group is labelled with the function's name (the walk does not need it)."""
        self.groups[0]["label"] = name

    def name_inputs(self, input_names: tuple[str, ...] | None) -> None:
        """The function's input ports carry their pytree paths: a leaf of a parameter dict is
        `params['layers'][0]['w']` to the user, where the jaxpr only says `b`. The capture's
        names (`model.hidden.kernel`, read from the user's own call of `nnx.jit` or
        `eqx.filter_jit`) come first; JAX's debug info names the library's arguments."""
        jaxpr = _open(self.closed_jaxpr)
        paths = (
            input_names if input_names and len(input_names) == len(jaxpr.invars) else jax_compat.argument_paths(jaxpr)
        )
        if paths is None:
            return
        by_id = {v["id"]: v for v in self.vars}
        for vid, path in zip(self.groups[0]["invars"], paths):
            if path:
                by_id[vid]["path"] = path

    def _aval(self, aval: Any) -> str:
        """`f32[8,32]`, once per aval object (JAX interns them; its text costs 2-6 µs a call).
        Keyed by identity, the aval kept alive: equal avals of some JAX versions print differently."""
        hit = self._avals.get(id(aval))
        if hit is not None and hit[0] is aval:
            return hit[1]
        text = jax_compat.short_aval(aval)
        self._avals[id(aval)] = (aval, text)
        return text

    def _scope(self, source_info: Any) -> list[str]:
        """The eqn's name-stack path, made once per NameStack object (JAX shares one among the eqns
        traced under the same scopes; a layer's eqns share a few). Each node gets its own list."""
        stack = getattr(source_info, "name_stack", None)
        hit = self._scopes.get(id(stack))
        if hit is None or hit[0] is not stack:
            hit = self._scopes[id(stack)] = (stack, jax_compat.name_stack_path(source_info))
        return list(hit[1])

    def _var(self, var: Any, group: str, definition: str, name: str | None = None, aval: str | None = None) -> str:
        vid = f"v{len(self.vars)}"
        self.vars.append(
            {
                "id": vid,
                "name": self.names.name(var) if name is None else name,
                "aval": self._aval(var.aval) if aval is None else aval,
                "group": group,
                "def": definition,
            }
        )
        if not jax_compat.is_dropvar(var):
            self.var_ids[var] = vid
        return vid

    def _operand(self, atom: Any) -> dict:
        if jax_compat.is_literal(atom):
            return {"lit": _short(str(jax_compat.literal_value(atom))), "aval": self._aval(atom.aval)}
        vid = self.var_ids.get(atom)
        if vid is None:  # a free var: should not happen in a closed jaxpr; keep the graph honest
            vid = self._var(atom, self.groups[-1]["id"], "free")
        return {"var": vid}

    def _group(self, jaxpr: Any, owner: str | None, label: str) -> str:
        gid = f"g{len(self.groups)}"
        group = {"id": gid, "node": owner, "label": label, "invars": [], "constvars": [], "outvars": [], "n_eqns": 0}
        self.groups.append(group)
        group["constvars"] = [self._var(v, gid, "const") for v in jaxpr.constvars]
        group["invars"] = [self._var(v, gid, "in") for v in jaxpr.invars]
        before = len(self.nodes)
        for eqn in jaxpr.eqns:
            if len(self.nodes) >= self.max_eqns:
                self.truncated = True
                break
            self._node(eqn, gid)
            if owner is None:
                self.top_nodes.append(len(self.nodes))
        group["outvars"] = [self._operand(v) for v in jaxpr.outvars]
        group["n_eqns"] = len(self.nodes) - before
        return gid

    def _node(self, eqn: Any, gid: str) -> None:
        """One eqn's node; its outputs' names and types are read once, for its text line and its vars."""
        nid = f"n{len(self.nodes)}"
        prim = eqn.primitive.name
        node: dict[str, Any] = {"id": nid, "group": gid, "prim": prim}
        self.nodes.append(node)
        self.eqns.append(eqn)
        node["scope"] = self._scope(eqn.source_info)
        node["ins"] = [self._operand(a) for a in eqn.invars]
        outvars = eqn.outvars
        var_names, names, avals, binders = self.names, [], [], []
        for v in outvars:  # one pass (a comprehension is a call of its own on Python 3.11)
            name, aval = var_names.name(v), self._aval(v.aval)
            names.append(name)
            avals.append(aval)
            binders.append(f"{name}:{aval}")
        self.heads.append((" ".join(binders), prim))
        node["line"] = None  # found in the text once it is printed (`text`)
        node["src"] = _eqn_source(eqn, self._sources)
        group_ids: dict[int, str] = {}
        subgroups = []
        for label, sub in jax_compat.sub_jaxprs(eqn):
            if prim in _JIT_PRIMITIVES and self.jit_names_like_call:
                inner = _open(sub)
                var_names.suggest(inner.invars, eqn.invars)
                var_names.suggest(inner.outvars, outvars)
            sub_gid = self._group(_open(sub), owner=nid, label=label)
            group_ids[id(sub)] = sub_gid
            subgroups.append(sub_gid)
        node["subgroups"] = subgroups
        memo = self._params
        node["params"] = {k: _param_text(v, group_ids, memo) for k, v in sorted(eqn.params.items())}
        node["outs"] = [self._var(v, gid, nid, n, a) for v, n, a in zip(outvars, names, avals)]

    def printout(self) -> Printout:
        """What prints the jaxpr with the graph's names later (a widget's "jaxpr" request)."""
        return Printout(self.closed_jaxpr, self.max_eqns, self.names, self.heads, self.top_nodes)

    def document(self) -> dict:
        return {
            "root": self.root,
            "groups": self.groups,
            "nodes": self.nodes,
            "vars": self.vars,
            "n_eqns": len(self.nodes),
            "truncated": self.truncated,
        }


def function_graph(
    fid: str,
    name: str,
    closed_jaxpr: Any,
    max_eqns: int = MAX_EQNS_PER_FUNCTION,
    artifacts: Artifacts | None = None,
    notes: list[str] | None = None,
    levels: bool | str = True,
    var_ids: dict | None = None,
    printouts: dict[str, Printout] | None = None,
) -> dict:
    """The graph of one jaxpr, without call statistics (used for any ClosedJaxpr).

    With the call's `artifacts`, also what the capture recorded about it: the linked
    StableHLO/HLO texts and XLA's cost figures, forward values and vmap batch dimensions
    (keyed by the jaxpr's Vars, joined here to var ids). What could not be linked is
    appended to `notes`. `levels=False` leaves the StableHLO/HLO texts out (a grad document's
    graphs carry values but are not programs of their own); `levels="deferred"` leaves them and
    XLA's program cost out and marks the function `deferred: ["levels"]`: a widget computes them
    when its view asks (`level_data`, model/on_demand.py). `var_ids`, when given, receives
    {jaxpr Var: var id} for callers that join their own records to the graph. `printouts`, when
    given (a widget's build), defers the text: a function of more than HEAD_EQNS eqns carries only
    the head of its jaxpr text, says `deferred: ["jaxpr"]`, and its `Printout` is put in
    `printouts[fid]` to answer the view's "jaxpr" request.
    """
    walked = _take_prebuilt(closed_jaxpr, max_eqns, printouts is not None)
    if walked is None:
        walked = _walk(closed_jaxpr, max_eqns, printouts is not None)
    builder, fn, printout, extras_notes = walked
    builder.root_label(name)
    builder.name_inputs(artifacts.input_names if artifacts is not None else None)
    if var_ids is not None:
        var_ids.update(builder.var_ids)
    fn.update(id=fid, name=name)
    if fn.get("deferred") and printouts is not None:
        printouts[fid] = printout
    notes = notes if notes is not None else []
    notes.extend(f"{name}: {note}" for note in extras_notes)
    extras: list[tuple[str, Callable[[], Any]]] = []
    if artifacts is not None:
        extras.append(("values and batch dimensions", lambda: _attach_var_data(fn, builder.var_ids, artifacts)))
        if levels == "deferred":
            if artifacts.lowered is not None:
                fn["deferred"] = [*fn.get("deferred", ()), "levels"]
        elif levels:
            extras.append(("StableHLO/HLO links", lambda: _attach_levels(fn, closed_jaxpr, artifacts, notes)))
    for what, attach in extras:
        try:
            attach()
        except Exception as exc:  # boundary: one extra left out is said in a note; the graph stays
            notes.append(f"{name}: {what} left out: {type(exc).__name__}: {exc}")
    return fn


class _Walked(NamedTuple):
    """What a function's graph owes to its jaxpr alone."""

    builder: _FunctionBuilder
    fn: dict  # the function's document, without its id, name and call data
    printout: Printout
    notes: list[str]  # extras left out (repeated layers, cost estimates), each with why


def _walk(closed_jaxpr: Any, max_eqns: int, defer_text: bool) -> _Walked:
    """What a function's graph owes to its jaxpr alone: the walk, the text (its head when deferred),
    repeated layers and cost estimates. Safe to run off the main thread (`prebuild`)."""
    builder = _FunctionBuilder(closed_jaxpr, max_eqns)
    printout = builder.printout()
    deferred = defer_text and len(builder.nodes) > HEAD_EQNS
    text, lines = printout.text(whole=not deferred)
    for node, line in zip(builder.nodes, lines):
        node["line"] = line
    fn = {"id": "", "name": "", "signature": "", "source": None, "calls": 0, "cache_hits": 0, "text": text}
    fn.update(builder.document())
    if deferred:
        fn["deferred"] = ["jaxpr"]
    fn["repeats"] = []
    notes: list[str] = []
    # Everything past the graph itself is extra: a failure there costs that extra, with a note.
    for what, attach in (
        ("repeated layers", lambda: fn.update(repeats=find_repeats(fn))),
        ("cost estimates", lambda: _attach_costs(fn, builder.eqns)),
    ):
        try:
            attach()
        except Exception as exc:  # boundary: one extra left out is said in a note; the graph stays
            notes.append(f"{what} left out: {type(exc).__name__}: {exc}")
    return _Walked(builder, fn, printout, notes)


def prebuild(closed_jaxpr: Any) -> None:
    """Start the graph of a program a widget will draw while XLA compiles it (capture/prefetch.py):
    the walk a widget's `function_graph` would do after the cell, with its defaults."""
    PREFETCH.submit("graph", closed_jaxpr, lambda jaxpr: _walk(jaxpr, MAX_EQNS_PER_FUNCTION, True))


def _take_prebuilt(closed_jaxpr: Any, max_eqns: int, defer_text: bool) -> _Walked | None:
    if max_eqns != MAX_EQNS_PER_FUNCTION or not defer_text:
        return None
    ready, walked = PREFETCH.take("graph", closed_jaxpr)
    return walked if ready else None


def _attach_costs(fn: dict, eqns: list[Any]) -> None:
    """Per-eqn cost estimates (docs/cost.md) of the nodes, from the eqns the graph was built from."""
    for node, cost in zip(fn["nodes"], estimate_nodes(eqns, fn["nodes"])):
        node["cost"] = cost.json()


def level_data(name: str, closed_jaxpr: Any, artifacts: Artifacts, n_nodes: int) -> dict:
    """The linked StableHLO / HLO texts of one function, each node's lines in them, and XLA's
    whole-program cost: what `_attach_levels` puts in a document, as one JSON value (also the
    answer to a view's "levels" request). Node lists follow the graph's node order."""
    notes: list[str] = []
    if artifacts.lowered is None:
        return {"levels": None, "shlo": None, "hlo": None, "hlo_comp": None, "cost": None, "notes": notes}
    links = link_levels(closed_jaxpr, artifacts.lowered, artifacts.compiled)
    levels = links.levels_json()
    keep_lines = {}
    for level, what, where in (
        ("stablehlo", "lowered StableHLO", "lowered_text"),
        ("hlo", "compiled HLO", "compiled_text"),
    ):
        text = levels[level]["text"]
        keep_lines[level] = text is not None and len(text) <= MAX_LEVEL_TEXT_BYTES
        if text is not None and not keep_lines[level]:
            levels[level] = {
                "text": None,
                "note": (
                    f"the {what} is {bytes_text(len(text))} ({text.count(chr(10)) + 1:,} lines), more than a "
                    f"view should carry; read it from the capture: cap.calls[i].{where}"
                ),
            }
    n = min(n_nodes, len(links.shlo))
    notes.extend(f"{name}: {note}" for note in links.notes)
    return {
        "levels": levels,
        "shlo": [links.shlo[i] if keep_lines["stablehlo"] else [] for i in range(n)],
        "hlo": [links.hlo[i] if keep_lines["hlo"] else [] for i in range(n)],
        "hlo_comp": [links.hlo_comp[i] for i in range(n)],
        "cost": program_cost(artifacts.compiled),
        "notes": notes,
    }


def _requested_levels(sources: dict[str, Any], fid: str) -> dict:
    """A view's "levels" request for function `fid` of its document (graph_document's `on_demand`)."""
    if fid not in sources:
        raise ValueError(f"the document has no function {fid!r} with levels to load")
    return level_data(*sources[fid])


def requested_text(printouts: dict[str, Printout], fid: str) -> dict:
    """A view's "jaxpr" request for function `fid`: its whole text and each node's line in it."""
    if fid not in printouts:
        raise ValueError(f"the document has no function {fid!r} with a jaxpr text to load")
    return printouts[fid].data()


def _attach_levels(fn: dict, closed_jaxpr: Any, artifacts: Artifacts, notes: list[str]) -> None:
    """Linked StableHLO / HLO texts and XLA's whole-program cost, when the call was lowered."""
    if artifacts.lowered is None:
        return
    data = level_data(fn["name"], closed_jaxpr, artifacts, len(fn["nodes"]))
    fn["levels"] = data["levels"]
    for i, node in enumerate(fn["nodes"][: len(data["shlo"])]):
        node["shlo"], node["hlo"], node["hlo_comp"] = data["shlo"][i], data["hlo"][i], data["hlo_comp"][i]
    notes.extend(data["notes"])
    fn["cost"] = data["cost"]


def _attach_var_data(fn: dict, var_ids: dict, artifacts: Artifacts) -> None:
    """Values (forward mode) and batch dims (vmap mode) by var id, when they were recorded."""
    if artifacts.values is not None or artifacts.values_note:
        recorded = artifacts.values or {}
        fn["values"] = (
            {vid: _json_safe(recorded[var]) for var, vid in var_ids.items() if var in recorded}
            if artifacts.values is not None
            else None
        )
        fn["values_note"] = artifacts.values_note
    if artifacts.batch_dims is not None or artifacts.batch_note:
        dims = artifacts.batch_dims
        fn["batch"] = {vid: dims.get(var) for var, vid in var_ids.items()} if dims is not None else None
        fn["batch_size"] = artifacts.batch_size
        fn["batch_note"] = artifacts.batch_note


def _json_safe(summary: dict) -> dict:
    """NaN/Inf are not JSON: a summary carries them as counts, never as numbers."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in summary.items()}


def _function_entries(capture: Capture) -> tuple[list[tuple[JitCall, list[JitCall]]], Counter]:
    """Group calls by (function, signature), first call first; count calls with no signature.

    `function_id` is an id(): once a wrapper made in a loop is freed, the next one may get the
    same id, so a call whose recorded program differs from its group's starts a group of its own
    (a call recorded without a jaxpr joins the latest group of its id and signature). A cache hit
    recorded without its signature joins its function's group when the function has one signature."""
    order: dict[tuple, list[JitCall]] = {}
    latest: dict[tuple, tuple] = {}
    unattributed: Counter = Counter()
    signatures: dict[int, set] = {}  # function id -> its signature keys so far
    keys: dict[int, tuple] = {}  # id(Signature) -> its key: a loop's cache hits share one Signature
    for call in capture.calls:
        sig = call.signature
        if sig is None:  # a cache hit recorded as a row only: the signature is known if unique
            known = signatures.get(call.function_id, ())
            if len(known) == 1:
                order[latest[(call.function_id, next(iter(known)))]].append(call)
            else:
                unattributed[call.name] += 1
            continue
        sig_key = keys.get(id(sig))
        if sig_key is None:  # the capture holds every Signature meanwhile: ids are not reused
            sig_key = keys[id(sig)] = sig.key
        signatures.setdefault(call.function_id, set()).add(sig_key)
        key = (call.function_id, sig_key)
        group = latest.get(key)
        jaxpr = call.jaxpr
        if group is None or (
            jaxpr is not None and order[group][0].jaxpr is not None and order[group][0].jaxpr is not jaxpr
        ):
            group = latest[key] = (*key, len(order))
        order.setdefault(group, []).append(call)
    return [(calls[0], calls) for calls in order.values()], unattributed


def graph_document(
    capture: Capture,
    max_eqns: int = MAX_EQNS_PER_FUNCTION,
    on_demand: OnDemand | None = None,
    max_graphs: int | None = folding.MAX_GRAPHS,
) -> dict:
    """The `%%jaxpr` document for a capture.

    With `on_demand` (a widget's), each function's StableHLO/HLO texts, links and XLA cost are
    left out and registered as its "levels" request: a cell's output never waits for them.
    Wrappers of one definition, signature and program are one function (`wrappers` counts them);
    past `max_graphs` functions (or folding.MAX_GRAPH_EQNS eqns) the rest are `listed` without
    their graphs, which a widget loads with its "function" request (model/folding.py);
    `max_graphs=None` draws every function (an export of the whole capture)."""
    notes: list[str] = []
    level_sources: dict[str, Any] = {}
    printouts: dict[str, Printout] = {}
    drawable, unattributed = _drawable_entries(capture, notes)
    drawn = folding.choose_drawn(drawable, max_graphs)
    by_id = {entry.fid: entry for entry in drawable}
    build = _function_builder(max_eqns, on_demand, level_sources, printouts)
    functions = []
    for i, entry in enumerate(drawable):
        fn = build(entry, notes) if i in drawn else None
        if fn is not None:
            functions.append(fn)
    listed, folded, listing_notes = folding.listing([e for i, e in enumerate(drawable) if i not in drawn])
    notes.extend(listing_notes)
    folded.update(
        wrappers=sum(e.n_wrappers - 1 for e in drawable),
        folded_functions=sum(e.n_wrappers > 1 for e in drawable),
        listed=len(listed),
        functions=len(drawable),
        calls=sum(len(e.calls) for e in drawable),
        listed_graphs="on request" if on_demand is not None else "not in this page",
    )
    if on_demand is not None and listed:
        on_demand.add("function", lambda fid: _requested_function(by_id, fid, build))
    notes.extend(_side_notes(capture, unattributed))
    if on_demand is not None and (level_sources or listed):
        on_demand.add("levels", lambda fid: _requested_levels(level_sources, fid))
    if on_demand is not None and (printouts or listed):
        on_demand.add("jaxpr", lambda fid: requested_text(printouts, fid))
    found = findings.graph_findings(
        capture, functions, {c.index: e.fid for e in drawable for c in e.calls} if capture.findings else {}
    )
    title = _graph_title(functions, listed, folded)
    if folded["wrappers"] or listed or folded["unlisted"]:
        return envelope(
            "graph", VERSION, title, capture, notes, functions=functions, listed=listed, folded=folded, findings=found
        )
    return envelope("graph", VERSION, title, capture, notes, functions=functions, findings=found)


def _drawable_entries(capture: Capture, notes: list[str]) -> tuple[list[folding.Entry], dict[str, int]]:
    """The capture's functions folded per definition, each with an id; a note for each with no jaxpr."""
    raw, unattributed = _function_entries(capture)
    entries = folding.fold(raw, capture.wrappers)
    for entry in entries:
        if entry.first.jaxpr is None:
            first = entry.first
            why = first.error or (first.artifacts.error if first.artifacts else None) or "no jaxpr was recorded"
            notes.append(f"{first.name}({first.signature}): no graph: {why}")
    drawable = [e for e in entries if e.first.jaxpr is not None]
    for i, entry in enumerate(drawable):
        entry.fid = f"f{i}"
    return drawable, unattributed


def _function_builder(
    max_eqns: int, on_demand: OnDemand | None, level_sources: dict[str, Any], printouts: dict[str, Printout]
) -> Callable[[folding.Entry, list[str]], dict | None]:
    """How one entry's graph is built, for the document and for a widget's later "function" request.

    With `on_demand`, levels and the jaxpr text are deferred and what they need is kept in
    `level_sources` and `printouts`."""

    def build(entry: folding.Entry, notes: list[str]) -> dict | None:
        first = entry.first
        fn = guarded(
            f"{first.name}({first.signature})",
            lambda: function_graph(
                entry.fid,
                first.name,
                first.jaxpr,
                max_eqns,
                artifacts=first.artifacts,
                notes=notes,
                levels="deferred" if on_demand is not None else True,
                printouts=printouts if on_demand is not None else None,
            ),
            notes,
        )
        if fn is None:
            return None
        if fn.get("deferred"):
            level_sources[entry.fid] = (first.name, first.jaxpr, first.artifacts, len(fn["nodes"]))
        fn.update(entry.fields())
        if fn["truncated"]:
            notes.append(f"{first.name}: only the first {max_eqns} eqns are shown")
        return fn

    return build


def _graph_title(functions: list[dict], listed: list, folded: dict) -> str:
    """'%%jaxpr: 2 functions, 1,234 eqns drawn, 3 more functions listed' (or what nothing recorded means)."""
    if not functions:
        return "%%jaxpr: nothing was recorded: the cell made no calls to jitted functions"
    n_eqns = sum(f["n_eqns"] for f in functions)
    title = f"%%jaxpr: {plural(len(functions), 'function')}, {plural(n_eqns, 'eqn')}"
    if listed or folded["unlisted"]:
        title += f" drawn, {plural(len(listed) + folded['unlisted'], 'more function')} listed"
    return title


def _side_notes(capture: Capture, unattributed: dict[str, int]) -> list[str]:
    """What the document draws no graph of: cache hits recorded without their signature, and
    programs compiled outside the recorded calls (JAX's and libraries' own jits)."""
    out: list[str] = []
    for name, count in list(unattributed.items())[:8]:
        out.append(
            f"{name}: {count} further cache hits, recorded without their signature "
            "(JAX's cache held several programs for it; signatures are taken on misses and on a function's first calls)"
        )
    if len(unattributed) > 8:
        out.append(
            f"{plural(len(unattributed) - 8, 'more function')} made further cache hits, recorded "
            "without their signature"
        )
    eager = {jit_event_name(name) for name in jax_compat.primitive_names()}  # jnp.arange etc. run eagerly
    outside = sorted(
        {
            e.fun_name
            for e in capture.events
            if e.phase == "compile" and e.call_index is None and e.fun_name and e.fun_name not in eager
        }
    )
    if outside:
        shown = ", ".join(outside[:8]) + (f" and {len(outside) - 8} more" if len(outside) > 8 else "")
        out.append(
            f"Also compiled in this cell, outside the recorded calls (no graph): {shown}. These are "
            "jitted functions reached through other references: JAX's and libraries' own jits, "
            "or methods of objects made before the cell"
        )
    return out


def _requested_function(entries: dict[str, Any], fid: str, build: Any) -> dict:
    """A view's "function" request: the graph of a function its document lists without one,
    built as the document builds the ones it draws (its notes come with it)."""
    entry = entries.get(fid)
    if entry is None:
        raise ValueError(f"the document has no function {fid!r} to load")
    notes: list[str] = []
    fn = build(entry, notes)
    if fn is None:
        raise ValueError(f"jaxmagic could not draw {entry.first.name}: " + "; ".join(notes))
    fn["notes"] = notes
    return fn
