"""Link every eqn to the StableHLO ops and compiled HLO instructions made from it.

We match through what JAX and XLA write themselves, never by guessing from op kinds:

* JAX gives each op it lowers an MLIR location: a name (the name stack plus the primitive,
  `jit(f)/layer_0/transpose(jvp(mlp))/dot_general`) around the user's call site
  (`"cell.py":12:8 to :30`, innermost user frame first). `lowered.as_text(debug_info=True)`
  prints them as `loc(#locN)` references resolved at the end of the module.
* Ops lowered into a separate function (nested `jit`, a `scan` body, JAX's cached helpers) carry
  names relative to that function; ops inside `sdy.manual_computation` (shard_map) relative to it.
  XLA composes the caller's name in front when it inlines them and writes the result into HLO
  `metadata={op_name="..." stack_frame_id=N}` (older XLA: `source_file=`/`source_line=`), so an
  op's full name (caller names + its own) is the op_name of the HLO instructions made from it.

StableHLO. Eqns are visited in graph order (graph.py's depth-first order). The eqns of one jaxpr
are aligned, in text order, with the ops of the function or region span their jaxpr was lowered
into: JAX lowers eqns one after another, so an eqn's ops lie between its first op and the next
eqn's. An op is an eqn's when its name is exactly `<context>/<name stack>/<primitive>` (a
nested jit's call reads `jit(inner)`, or `jvp(jit(inner))` under a trailing transform) and its
user frame is the eqn's (an eqn without a user frame inherits its owner's, as JAX does). Where a
sub-jaxpr went (inline under some context such as `cond/branch_1_fun`, or into a called
function) is decided by which candidate holds most of its eqns; ties leave it unlinked. Guards
against taking a later eqn's op: eqns `jit` removes as dead code are skipped; an eqn is not
placed after an op of one of the next eqns; ops inside the regions of placed ops belong to their
bodies; an owner without ops of its own is placed by its body's first op. Primitives JAX lowers
through other primitives (`integer_pow` with y > 3 as `.../mul` ops) get those ops when they sit
at the eqn's position under its name and no eqn there has that primitive.

Ambiguity: eqns with the same primitive, name stack and source position ("twins": a Python loop
without name scopes) are resolved in order of appearance. Adjacent twins share the run of such
ops: in equal parts when they share JAX's cached lowering (same params and input avals), else by
the one cut that looks like separate lowerings (data flow, see `_segment`), else not at all.
HLO instructions carrying several twins' metadata are shared out by result shape (the two dots
of a matmul's gradient), or one each in text order when there is one per twin; otherwise the
twins get no HLO lines and a note counts them (XLA duplicates instructions into fusions, so
order alone would mislead).

Eqns that lower to nothing (dead code, empty jits, stop_gradient, no-op converts) get no lines.
Owner eqns (with sub-jaxprs) get their own ops only (the `call` of a nested jit, the `case` of a
cond, the `while` and helper ops of a scan), not their sub-eqns'; the front end can aggregate.
HLO lines include the fusion instructions calling the computations that hold an eqn's
instructions; `hlo_comp` names the fused computation (else the first one) holding them.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import combinations
from math import comb, prod
from typing import Any

from ..capture import jax_compat
from ..units import plural

Frame = tuple  # (file, line, column, end_line | None, end_column | None)


# The primitives JAX lowers through ops named for other primitives, and those names (`integer_pow`
# with y > 3 as `mul`s, y < -1 as a `div`; a psum's `add`): only these are ever taken as an eqn's
# internal ops. Any other foreign name is another eqn's (JAX 0.7 writes remat bodies at the remat's
# line, where a `sin` took the next remat's multiplies); an unknown lowering is left unlinked.
_LOWERED_THROUGH = {
    "integer_pow": frozenset({"mul", "div", "broadcast_in_dim"}),
    "psum": frozenset({"add"}),
    "psum2": frozenset({"add"}),
    "psum_invariant": frozenset({"add"}),
    "broadcast_in_dim": frozenset({"empty"}),
}


@dataclass
class LevelLinks:
    """Per-eqn links into the StableHLO and HLO texts; lists are aligned with graph order."""

    stablehlo_text: str | None
    stablehlo_note: str | None
    hlo_text: str | None
    hlo_note: str | None
    shlo: list[list[int]] = field(default_factory=list)  # 0-based line indices in stablehlo_text
    hlo: list[list[int]] = field(default_factory=list)  # 0-based line indices in hlo_text
    hlo_comp: list[str | None] = field(default_factory=list)  # HLO computation holding the eqn
    notes: list[str] = field(default_factory=list)

    def levels_json(self) -> dict:
        """The function's `levels` field of the graph document."""
        return {
            "stablehlo": {"text": self.stablehlo_text, "note": self.stablehlo_note},
            "hlo": {"text": self.hlo_text, "note": self.hlo_note},
        }

    def node_fields(self, index: int) -> dict:
        """The `shlo` / `hlo` / `hlo_comp` fields of the node at graph-order `index`."""
        return {"shlo": self.shlo[index], "hlo": self.hlo[index], "hlo_comp": self.hlo_comp[index]}

    def line_owners(self, level: str) -> dict[int, list[int]]:
        """Reverse map line -> graph-order eqn indices, built on demand ("stablehlo" or "hlo")."""
        per_eqn = self.shlo if level == "stablehlo" else self.hlo
        owners: dict[int, list[int]] = {}
        for i, lines in enumerate(per_eqn):
            for line in lines:
                owners.setdefault(line, []).append(i)
        return owners


def link_levels(closed_jaxpr: Any, lowered: Any, compiled: Any) -> LevelLinks:
    """Texts of both levels and, for every eqn in graph order, the lines made from it."""
    eqns = _collect_eqns(closed_jaxpr)
    n = len(eqns) - 1  # eqns[0] is the root pseudo-entry
    shlo_text, shlo_note = _text(lowered, "StableHLO", debug_info=True)
    hlo_text, hlo_note = _text(compiled, "HLO")
    links = LevelLinks(
        shlo_text, shlo_note, hlo_text, hlo_note, [[] for _ in range(n)], [[] for _ in range(n)], [None] * n
    )
    if shlo_text is None:
        if hlo_text is not None:
            links.notes.append("HLO lines are linked through StableHLO locations, which are missing")
        return links
    try:  # the texts' formats belong to JAX and XLA: a change there costs the links, never the document
        module = _StableHLO(shlo_text)
        if module.main is None:
            links.notes.append("no `main` function found in the StableHLO text: no lines linked")
            return links
        aligner = _Aligner(eqns, module)
        aligner.run()
    except Exception as exc:
        links.notes.append(f"StableHLO lines not linked: {type(exc).__name__}: {exc}")
        return links
    for i in range(n):
        hits = aligner.hits[i + 1]
        if hits:
            links.shlo[i] = sorted({module.start[f][p] for f, p, _ in hits})
    if hlo_text is not None:
        try:
            _link_hlo(links, eqns, module, aligner, hlo_text)
        except Exception as exc:
            links.hlo, links.hlo_comp = [[] for _ in range(n)], [None] * n
            links.notes.append(f"HLO lines not linked: {type(exc).__name__}: {exc}")
    return links


# ----------------------------------------------------------------------------- texts


def _text(stage: Any, what: str, debug_info: bool = False) -> tuple[str | None, str | None]:
    if stage is None:
        return None, f"no {what}: the function was not {'lowered' if debug_info else 'compiled'}"
    try:
        return (jax_compat.stablehlo_with_locations(stage) if debug_info else stage.as_text()), None
    except TypeError:  # a JAX without debug_info: text without locations cannot be linked
        try:
            return stage.as_text(), f"{what} printed without locations: no lines linked"
        except Exception as exc:
            return None, f"no {what}: {type(exc).__name__}: {exc}"
    except Exception as exc:
        return None, f"no {what}: {type(exc).__name__}: {exc}"


# ----------------------------------------------------------------------------- eqns


@dataclass(slots=True)
class _Eqn:
    prim: str
    ns: str  # name stack relative to the eqn's jaxpr, as JAX writes it into op names
    rel: str  # ns + "/" + prim: the tail of every op name lowered from the eqn
    frame: Frame | None  # innermost user frame; an eqn without one inherits its owner's (JAX does too)
    subs: list[list[int]]  # for each sub-jaxpr (param order), the indices of its top-level eqns
    own_frame: bool = True  # False: `frame` is inherited; JAX writes it only when lowering inline
    live: bool = True  # False: removed by the dead-code elimination `jit` runs before lowering, or no op
    obj: Any = None  # the JAX eqn, to compare twins' params and input avals


def _collect_eqns(closed_jaxpr: Any) -> list[_Eqn]:
    """Index 0 is a pseudo-eqn whose single sub-jaxpr is the root; eqn i of graph order is index i+1."""
    from .graph import sub_jaxprs  # here, not at the top: graph.py imports this module

    canon = _canonicaliser()
    root = _Eqn("", "", "", None, [])
    eqns = [root]
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    kept = _kept(jaxpr)

    def walk(jaxpr: Any, inherited: Frame | None, live: bool) -> list[int]:
        ids = []
        for eqn in jaxpr.eqns:
            prim = eqn.primitive.name
            ns = jax_compat.lowered_name_stack_text(eqn.source_info)
            own = _eqn_frame(eqn, canon)
            frame = own or inherited
            alive = (
                live
                and (kept is None or id(eqn) in kept or any(id(v) in kept for v in eqn.outvars))
                and not (prim == "integer_pow" and eqn.params.get("y") == 1)
            )  # JAX 0.4 keeps `x ** 1`: lowered to x, no op
            info = _Eqn(prim, ns, f"{ns}/{prim}" if ns else prim, frame, [], own is not None, alive, eqn)
            ids.append(len(eqns))
            eqns.append(info)
            for _, sub in sub_jaxprs(eqn):
                info.subs.append(walk(getattr(sub, "jaxpr", sub), frame, alive))
        return ids

    root.subs.append(walk(jaxpr, None, True))
    return eqns


def _same_lowering(a: Any, b: Any) -> bool:
    """Whether two eqns share JAX's cached lowering key (primitive, params, input avals)."""
    try:
        return (
            a.primitive is b.primitive
            and [v.aval for v in a.invars] == [v.aval for v in b.invars]
            and bool(a.params == b.params)
        )
    except Exception:  # params that cannot be compared (arrays): assume they differ
        return False


def _kept(jaxpr: Any) -> set[int] | None:
    """ids of the eqns (and their outvars) that survive `jit`'s dead-code elimination, or None.

    The eliminated program keeps the surviving eqn objects; an owner whose sub-jaxpr shrank is
    a new eqn but keeps its output vars, hence both.
    """
    from .graph import sub_jaxprs

    pruned = jax_compat.dce_jaxpr(jaxpr)
    if pruned is None:
        return None
    kept: set[int] = set()

    def walk(jaxpr: Any) -> None:
        for eqn in jaxpr.eqns:
            kept.add(id(eqn))
            kept.update(id(v) for v in eqn.outvars)
            for _, sub in sub_jaxprs(eqn):
                walk(getattr(sub, "jaxpr", sub))

    walk(pruned)
    return kept


def _eqn_frame(eqn: Any, canon: Any) -> Frame | None:
    frame = jax_compat.user_frame(eqn.source_info)
    if frame is None:
        return None
    return (
        canon(frame.file_name),
        frame.start_line,
        frame.start_column,
        getattr(frame, "end_line", None),
        getattr(frame, "end_column", None),
    )


def _canonicaliser() -> Any:
    """JAX rewrites file names in locations with this (public) config regex; do the same."""
    import jax

    try:
        pattern = jax.config.jax_hlo_source_file_canonicalization_regex
    except Exception:
        pattern = None
    if not pattern:
        return lambda name: name
    compiled = re.compile(pattern)
    return lambda name: compiled.sub("", name)


# ----------------------------------------------------------------------------- StableHLO

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_FILE_TAIL = re.compile(r":(\d+):(\d+)(?: to (\d+)?:(\d+))?")
_ALIAS = re.compile(r"#loc\d*")
_LOC_DEF = re.compile(r"(#loc\d*) = loc\((.*)\)$")
_CALLEE = re.compile(r'(?:^|[\s=])(?:func\.)?call @("(?:[^"\\]|\\.)*"|[\w.$\-]+)\(')
_FUNC = re.compile(r'^func\.func (?:\w+ )*@("(?:[^"\\]|\\.)*"|[\w.$\-]+)\(')
_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2}|\\|\")")
_SSA = re.compile(r"%[\w$.\-]+(?:[:#]\d+)?")
_CONSTANT = re.compile(r"%c(?:st)?(?:_\d+)?$")  # MLIR's names for constants: %cst, %c, %cst_3


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: m.group(1) if m.group(1) in ("\\", '"') else chr(int(m.group(1), 16)), text)


class _LocTable:
    """MLIR location aliases (`#locN = loc(...)`) resolved to (op name, innermost frame)."""

    def __init__(self, defs: dict[str, str]):
        self.defs = defs
        self.parsed: dict[str, Any] = {}
        self.cache: dict[str, tuple[str | None, Frame | None]] = {}
        # With full tracebacks (JAX's default) frames are NameLoc(function, file) nodes; without,
        # an op's name wraps the file location directly. Tell the two apart once.
        self.full_tracebacks = _full_tracebacks() or any("callsite(" in body for body in defs.values())

    def info(self, body: str) -> tuple[str | None, Frame | None]:
        """(op name, frame) of an op's `loc(...)` body: an alias or an inline location."""
        if body in self.cache:
            return self.cache[body]
        try:
            node, _ = self._parse(body, 0)
            result = self._info(node)
        except Exception:  # a location form we do not know: unlinked, never wrong
            result = (None, None)
        self.cache[body] = result
        return result

    def _node(self, alias: str) -> Any:
        node = self.parsed.get(alias)
        if node is None:
            body = self.defs.get(alias)
            node = ("u",) if body is None else self._parse(body, 0)[0]
            self.parsed[alias] = node
        return node

    def _parse(self, s: str, i: int) -> tuple[Any, int]:
        if s.startswith('"', i):
            m = _STRING.match(s, i)
            text = _unescape(m.group(1))
            i = m.end()
            if s.startswith("(", i):
                child, i = self._parse(s, i + 1)
                return ("n", text, child), i + 1
            tail = _FILE_TAIL.match(s, i)
            if tail:
                line, col = int(tail.group(1)), int(tail.group(2))
                end_col = tail.group(4)
                end_line = int(tail.group(3)) if tail.group(3) else (line if end_col else None)
                return ("f", (text, line, col, end_line, int(end_col) if end_col else None)), tail.end()
            return ("n", text, ("u",)), i
        if s.startswith("#loc", i):
            m = _ALIAS.match(s, i)
            return ("r", m.group()), m.end()
        if s.startswith("unknown", i):
            return ("u",), i + 7
        if s.startswith("callsite(", i):
            callee, i = self._parse(s, i + 9)
            if not s.startswith(" at ", i):
                raise ValueError(s)
            caller, i = self._parse(s, i + 4)
            return ("c", callee, caller), i + 1
        if s.startswith("fused", i):
            i = s.index("[", i) + 1
            items = []
            while not s.startswith("]", i):
                item, i = self._parse(s, i)
                items.append(item)
                if s.startswith(", ", i):
                    i += 2
            return ("x", items), i + 1
        raise ValueError(s[i : i + 40])

    def _deref(self, node: Any) -> Any:
        while node[0] == "r":
            node = self._node(node[1])
        return node

    def _frame(self, node: Any) -> Frame | None:
        node = self._deref(node)
        kind = node[0]
        if kind == "f":
            return node[1]
        if kind == "n":
            return self._frame(node[2])
        if kind == "c":
            return self._frame(node[1])
        if kind == "x":
            for item in node[1]:
                frame = self._frame(item)
                if frame is not None:
                    return frame
        return None

    def _info(self, node: Any) -> tuple[str | None, Frame | None]:
        node = self._deref(node)
        kind = node[0]
        if kind == "n":
            name, child = node[1], self._deref(node[2])
            if name.endswith(":"):  # JAX's `prim:` marker around the real name
                return self._info(child)
            if child[0] == "f" and self.full_tracebacks:  # a frame: Python function name + position
                return None, child[1]
            return name, self._frame(child)
        if kind == "c":
            return self._info(node[1])[0], self._frame(node[1])
        if kind == "f":
            return None, node[1]
        if kind == "x":
            for item in node[1]:
                name, frame = self._info(item)
                if name is not None or frame is not None:
                    return name, frame
        return None, None


def _full_tracebacks() -> bool:
    import jax

    try:
        return bool(jax.config.jax_include_full_tracebacks_in_locations)
    except Exception:
        return False


def _norm(name: str) -> tuple[str, str]:
    """(op name as an eqn's name reads, its primitive), from the name JAX wrote.

    A nested jit's call is named `ctx/jit(inner)` (`jit` is the primitive). Under a transform
    whose frame ends the eqn's name stack, JAX wraps that part too: `ctx/jvp(jit(inner))` is the
    call of an eqn whose name stack ends in `jvp()`, so it reads `ctx/jvp()/jit`.
    """
    cut = name.rfind("/") + 1
    last = name[cut:]
    if not last.endswith(")") or last.find("(") <= 0:
        return name, last
    wrappers = []
    core = last
    while True:
        paren = core.find("(")
        if paren <= 0 or not core.endswith(")"):
            break
        inner = core[paren + 1 : -1]
        if inner.endswith(")") and inner.find("(") > 0:
            wrappers.append(core[:paren])
            core = inner
        else:
            core = core[:paren]
            break
    if not wrappers:
        return name[:cut] + core, core
    frames = "(".join(wrappers) + "()" + ")" * (len(wrappers) - 1)
    return f"{name[:cut]}{frames}/{core}", core


def _root_of_ops(ops: list[tuple], locs: Any) -> str | None:
    """The name context of `main`'s ops where its `return` has none (JAX 0.4 lowers to
    `jit(f)/jit(main)/sin` with an unknown return location): the part before `/jit(main)/`."""
    for op in ops:
        name = locs.info(op[1])[0]
        if name and "/jit(main)/" in name:
            return name[: name.index("/jit(main)/") + len("/jit(main)")]
    return None


class _StableHLO:
    """The ops of a StableHLO module, per function, in text order (multi-line ops at their first line)."""

    def __init__(self, text: str):
        lines = text.split("\n")
        defs: dict[str, str] = {}
        for line in lines:
            if line.startswith("#loc"):
                m = _LOC_DEF.match(line)
                if m:
                    defs[m.group(1)] = m.group(2)
        locs = _LocTable(defs)
        self.lines = lines
        self.func_names: list[str] = []
        raw: list[list[tuple]] = []  # per func: (start, loc body, container start or -1, callee)
        stack: list[tuple[str, int, int]] = []  # (kind, start line, container start line)
        pending = -1  # a statement line without a location: the start of a multi-line op
        func = -1
        container = -1
        self.root_name: str | None = None
        # func -> its ops' names as JAX 0.4 wrote them (absolute, as XLA's HLO metadata reads them)
        self.absolute: dict[int, list[str | None]] = {}
        return_loc: str | None = None
        for i, line in enumerate(lines):
            s = line.strip()
            if not s or s[0] == "#" or s[0] == "^":
                continue
            if s[0] == "}":
                if s[-1] == "{":  # `}, {` or `} do {`: the next region of the same op
                    continue
                if not stack:
                    continue
                kind, start, outer = stack.pop()
                if kind == "op":
                    raw[func].append((start, _trailing_loc(s), outer, _callee(lines[start]), _parent(stack)))
                    container = outer
                elif kind == "func":
                    func = -1
                continue
            if s[-1] == "{":
                if s.startswith("func.func"):
                    m = _FUNC.match(s)
                    self.func_names.append(_unescape(m.group(1).strip('"')) if m else f"?{i}")
                    raw.append([])
                    func = len(raw) - 1
                    stack.append(("func", i, -1))
                    container = -1
                elif s.startswith("module"):
                    stack.append(("module", i, -1))
                else:
                    start = i if (pending < 0 or s[0] in '%"') else pending
                    stack.append(("op", start, container))
                    if "sdy.manual_computation(" in lines[start]:
                        container = start
                pending = -1
                continue
            body = _trailing_loc(s)
            if body is None:
                pending = i
                continue
            pending = -1
            if func >= 0:
                if s.startswith("return ") or s == "return":
                    if self.func_names[func] == "main":
                        return_loc = body
                    continue
                raw[func].append((i, body, container, _callee(s) if "call @" in s else None, _parent(stack)))
        self.main = self.func_names.index("main") if "main" in self.func_names else None
        if return_loc is not None:
            self.root_name = locs.info(return_loc)[0]
        if self.root_name is None and self.main is not None:
            self.root_name = _root_of_ops(raw[self.main], locs)
        self._build(raw, locs)

    def inside(self, func: int, p: int, regions: set[int]) -> bool:
        """Whether op p lies in the region of one of the ops at positions `regions`."""
        parent = self.parent[func][p]
        while parent >= 0:
            if parent in regions:
                return True
            parent = self.parent[func][parent]
        return False

    def _build(self, raw: list[list[tuple]], locs: _LocTable) -> None:
        # per func, arrays indexed by position (ops sorted by start line)
        self.start: list[list[int]] = []
        self.name: list[list[str | None]] = []  # name within the function (containers composed)
        self.norm: list[list[str | None]] = []
        self.frame: list[list[Frame | None]] = []
        self.callee: list[list[int | None]] = []
        self.calls: list[list[int]] = []  # positions of call ops
        self.index: list[dict[tuple, list[int]]] = []  # (last part, file, line, col) -> positions
        self.parent: list[list[int]] = []  # position of the op whose region holds each op, or -1
        func_index = {name: k for k, name in enumerate(self.func_names)}
        for ops in raw:
            ops.sort()
            by_start = {op[0]: k for k, op in enumerate(ops)}
            names: list[str | None] = []
            norms: list[str | None] = []
            frames: list[Frame | None] = []
            callees: list[int | None] = []
            calls: list[int] = []
            index: dict[tuple, list[int]] = {}
            self.parent.append([by_start.get(op[4], -1) for op in ops])
            for k, (start, body, outer, callee, _) in enumerate(ops):  # noqa: B007
                name, frame = locs.info(body) if body is not None else (None, None)
                if name is not None and outer >= 0:  # relative to the manual computation around it
                    outer_name = names[by_start[outer]] if outer in by_start else None
                    if outer_name is not None:
                        name = f"{outer_name}/{name}"
                names.append(name)
                frames.append(frame)
                target = func_index.get(callee) if callee is not None else None
                callees.append(target)
                if target is not None:
                    calls.append(k)
                if name is None:
                    norms.append(None)
                    continue
                norm, last = _norm(name)
                norms.append(norm)
                key = (last,) + (frame[:3] if frame is not None else (None, None, None))
                index.setdefault(key, []).append(k)
            self.start.append([op[0] for op in ops])
            self.name.append(names)
            self.norm.append(norms)
            self.frame.append(frames)
            self.callee.append(callees)
            self.calls.append(calls)
            self.index.append(index)
        if self.root_name is not None and self.root_name.endswith("/jit(main)"):
            self._relative_to_callers()

    def _relative_to_callers(self) -> None:
        """Name each called function's ops relative to the function, as JAX 0.5 and later write them.

        JAX 0.4 writes absolute names in a called function too: the first caller's context, then
        `jit(inner)/` for a nested jit (`jit(f)/jit(main)/encoder/layer0/jit(inner)/mul`, where
        0.5 writes `mul`), so an eqn of the callee's jaxpr would match none of its ops.
        """
        self.absolute = {func: list(names) for func, names in enumerate(self.name)}
        first_call: dict[int, str] = {}
        for func, callees in enumerate(self.callee):
            for p, target in enumerate(callees):
                name = self.name[func][p]
                if target is not None and target != func and name is not None:
                    first_call.setdefault(target, name)
        for func, caller in first_call.items():
            ctx = caller[: caller.rfind("/") + 1]
            own = f"jit({self.func_names[func]})/"
            index: dict[tuple, list[int]] = {}
            for p, name in enumerate(self.name[func]):
                if name == caller:  # an op at the call's own location (a constant): no eqn of the callee's
                    self.name[func][p] = self.norm[func][p] = None
                    continue
                if name is not None and ctx and name.startswith(ctx):
                    name = name[len(ctx) :]
                    name = name[len(own) :] if name.startswith(own) else name
                    self.name[func][p] = name
                    self.norm[func][p] = _norm(name)[0]
                if self.norm[func][p] is not None:
                    frame = self.frame[func][p]
                    key = (_norm(name)[1],) + (frame[:3] if frame is not None else (None, None, None))
                    index.setdefault(key, []).append(p)
            self.index[func] = index


def _op_facts(line: str) -> tuple[set, set, str]:
    """(SSA values an op line defines, values it uses, op kind) of a StableHLO op line."""
    line = line.strip()
    results, eq, rest = line.partition(" = ")
    if not eq:
        results, rest = "", line
    uses = {m.split("#")[0] for m in _SSA.findall(rest)}
    defined = {m.split(":")[0] for m in _SSA.findall(results)}
    kind = rest.split(" ", 1)[0].split("(", 1)[0].strip('"')
    return defined, uses, kind


_MAX_SEGMENTATIONS = 4096


def _segment(
    facts: list[tuple[set, set, str]],
    sizes_equal: list[tuple[int, int]],
    parts: int,
    fed_by_run: list[bool] | None = None,
) -> list[list[int]] | None:
    """The only way to cut ops into `parts` consecutive groups that look like separate lowerings.

    A lowering's ops feed its last op (every earlier op's value is used later in the group), its
    inner values are used by no other lowering, and twins' last ops are of one kind; `sizes_equal`
    pairs of twins share a lowering, so equal sizes. A twin whose inputs all come from twins of the
    run (`fed_by_run`) uses no value from outside the run but constants.
    Returns group index lists, or None when no cut or several fit.
    """
    n = len(facts)
    in_run = set().union(*(f[0] for f in facts)) if facts else set()
    if parts > n or comb(n - 1, parts - 1) > _MAX_SEGMENTATIONS:
        return None
    found = None
    for cuts in combinations(range(1, n), parts - 1):
        bounds = (0, *cuts, n)
        groups = [list(range(bounds[k], bounds[k + 1])) for k in range(parts)]
        if len({facts[g[-1]][2] for g in groups}) != 1:
            continue
        if any(len(groups[a]) != len(groups[b]) for a, b in sizes_equal):
            continue
        if not all(_feeds_last(facts, g) for g in groups):
            continue
        if _uses_foreign_internals(facts, groups):
            continue
        if fed_by_run and any(
            fed and any(not _CONSTANT.match(v) for i in g for v in facts[i][1] - in_run)
            for fed, g in zip(fed_by_run, groups)
        ):
            continue
        if found is not None:
            return None
        found = groups
    return found


def _uses_foreign_internals(facts: list[tuple[set, set, str]], groups: list[list[int]]) -> bool:
    """Whether a group uses a value another group consumes itself (an internal of another lowering)."""
    internal: list[set[str]] = []
    for g in groups:
        inside: set[str] = set()
        for i in g:
            inside |= facts[i][1]
        internal.append({v for i in g[:-1] for v in facts[i][0] if v in inside})
    for k, g in enumerate(groups):
        uses = set().union(*(facts[i][1] for i in g))
        if any(uses & internal[j] for j in range(len(groups)) if j != k):
            return True
    return False


def _feeds_last(facts: list[tuple[set, set, str]], group: list[int]) -> bool:
    later: set[str] = set()
    for i in reversed(group):
        if i != group[-1] and not (facts[i][0] & later):
            return False
        later |= facts[i][1]
    return True


def _parent(stack: list[tuple[str, int, int]]) -> int:
    """Start line of the innermost op whose region we are in (-1: the function body itself)."""
    for kind, start, _ in reversed(stack):
        if kind != "op":
            return -1
        return start
    return -1


def _trailing_loc(s: str) -> str | None:
    if s[-1] != ")":
        return None
    at = s.rfind(" loc(")
    if at < 0:
        return s[4:-1] if s.startswith("loc(") else None
    return s[at + 5 : -1]


def _callee(line: str) -> str | None:
    m = _CALLEE.search(line)
    return _unescape(m.group(1).strip('"')) if m else None


# ----------------------------------------------------------------------------- alignment


_LOOKAHEAD = 4  # how many following eqns (not twins of placed ones) `_overtakes` checks


def _join(a: str | None, b: str) -> str | None:
    if a is None:
        return None
    return f"{a}/{b}" if a and b else (a or b)


class _Aligner:
    """Assigns StableHLO ops to eqns; `hits[e]` = [(func, position, caller prefix)]."""

    def __init__(self, eqns: list[_Eqn], module: _StableHLO):
        self.eqns = eqns
        self.m = module
        self.hits: list[list[tuple[int, int, str]]] = [[] for _ in eqns]
        self.claims: dict[tuple, dict[int, int]] = {}  # function instance -> {position: eqn}
        self._cand_cache: dict[tuple[int, int], list[int]] = {}
        self._frame_prims: dict[Any, set[str]] = {}  # primitives of all eqns, per source position
        for info in eqns[1:]:
            self._frame_prims.setdefault(info.frame[:3] if info.frame else None, set()).add(info.prim)
        # primitives of live eqns with no op at their own position: JAX wrote their ops elsewhere (JAX 0.7
        # writes a remat or loop body's ops at the owner's position), so an op named so may be theirs
        at = {key for index in module.index for key in index}
        self._displaced = {
            info.prim
            for info in eqns[1:]
            if info.live and info.frame is not None and (info.prim,) + info.frame[:3] not in at
        }
        self._owners_at: dict[Any, list[int]] | None = None  # `_twin_owner_prims`

    def run(self) -> None:
        main = self.m.main
        self.align(self.eqns[0].subs[0], (main, "", None), self.m.root_name, 0, len(self.m.start[main]))

    # An eqn's ops in a function (by primitive and frame), and whether an op's frame is the eqn's.
    # An eqn without a user frame of its own has its owner's frame when lowered inline and none
    # in a function of its own (a nested jit's body from library code): both are accepted.
    def _candidates(self, e: int, func: int) -> list[int]:
        info = self.eqns[e]
        cache_key = (e, func)
        found = self._cand_cache.get(cache_key)
        if found is not None:
            return found
        frame = info.frame
        index = self.m.index[func]
        found = index.get((info.prim,) + (frame[:3] if frame is not None else (None, None, None)), [])
        if not info.own_frame and frame is not None:
            bare = index.get((info.prim, None, None, None))
            if bare:
                found = sorted(found + bare)
        self._cand_cache[cache_key] = found
        return found

    def _same_frame(self, e: int, func: int, p: int) -> bool:
        info = self.eqns[e]
        a, b = info.frame, self.m.frame[func][p]
        if a is None or b is None:
            return a is b or (b is None and not info.own_frame)
        if a[:3] != b[:3]:
            return False
        return a[3] is None or b[3] is None or (a[3], a[4]) == (b[3], b[4])

    def _first(
        self,
        e: int,
        func: int,
        claimed: dict,
        ctx: str | None,
        lo: int,
        hi: int,
        exclude: set[str] | None = None,
        blocked: set[int] | None = None,
    ) -> int | None:
        """The first unclaimed op in [lo, hi) named for eqn e: exactly `ctx/rel`, or (ctx None) any `.../rel`.

        Ops named in `exclude` and ops inside the regions of ops at `blocked` positions (bodies of
        eqns placed before) are passed over.
        """
        cands = self._candidates(e, func)
        if not cands:
            return None
        rel = self.eqns[e].rel
        want = None if ctx is None else (f"{ctx}/{rel}" if ctx else rel)
        norms = self.m.norm[func]
        for k in range(bisect_left(cands, lo), len(cands)):
            p = cands[k]
            if p >= hi:
                break
            if p in claimed or not self._same_frame(e, func, p):
                continue
            n = norms[p]
            if (
                (n == want if want is not None else (n == rel or n.endswith("/" + rel)))
                and (exclude is None or self.m.name[func][p] not in exclude)
                and not (blocked and self.m.inside(func, p, blocked))
            ):
                return p
        return None

    def _overtakes(
        self,
        ids: list[int],
        k: int,
        func: int,
        claimed: dict,
        ctx: str | None,
        lo: int,
        p: int,
        placed: set[tuple],
        placed_names: set[str],
        regions: set[int],
    ) -> bool:
        """True if one of the next few eqns has an op before p.

        Eqns lower in order, so eqn k's first op cannot follow a later eqn's: then eqn k made no
        ops here (a no-op convert, say) and p belongs to a later twin with the same name. Twins of
        eqn k and of eqns already placed (whose further ops may lie before p) are no evidence. An
        owner without ops of its own counts by its body's first op.
        """
        checked = 0
        for other in ids[k + 1 : k + 1 + 8 * _LOOKAHEAD]:
            o = self.eqns[other]
            if self._twins(ids[k], other) or (o.rel, o.frame) in placed:
                continue
            checked += 1
            if checked > _LOOKAHEAD:
                break
            if self._first(other, func, claimed, ctx, lo, p, None, regions) is not None:
                return True
            if o.subs and self._proxy(other, func, claimed, ctx, lo, p, placed_names, placed, regions) is not None:
                return True
        return False

    def _claim(self, e: int, fi: tuple, claimed: dict, p: int) -> None:
        claimed[p] = e
        self.hits[e].append((fi[0], p, fi[1]))

    def align(self, ids: list[int], fi: tuple, ctx: str | None, lo: int, hi: int) -> None:
        """Align one jaxpr's eqns with the ops at positions [lo, hi) of a function instance."""
        func = fi[0]
        claimed = self.claims.setdefault(fi, {})
        ids = [e for e in ids if self.eqns[e].live]
        runs: list[list[int]] = []  # adjacent twins (same name and frame) form one run
        for e in ids:
            if runs and not self.eqns[e].subs and self._twins(runs[-1][-1], e):
                runs[-1].append(e)
            else:
                runs.append([e])
        starts: dict[int, int] = {}
        chunks: dict[int, list[int]] = {}  # twins' ops, shared out by _split
        cur, pending = lo, None
        position = {e: k for k, e in enumerate(ids)}
        placed: set[tuple] = set()  # (name, frame) of eqns placed so far and their bodies': no evidence
        proxies: dict[int, int] = {}  # owners placed by their body's first op (they claim nothing there)
        placed_names: set[str] = set()  # op names (as written) of placed eqns: further such ops are theirs
        regions: set[int] = set()  # placed ops: what lies in their regions is their eqns' bodies
        frame_prims = self._frame_prims
        last_frame: Any = None
        earlier: set = set()  # source positions of the eqns (and bodies) before the current one
        for k_run, run in enumerate(runs):
            if k_run:
                for x in runs[k_run - 1]:
                    frames = [self.eqns[x].frame] + [f for _, f in self._descendant_keys(x)]
                    earlier.update(f[:3] if f else None for f in frames)
            e = run[0]
            info = self.eqns[e]
            if not info.subs and ctx is not None and info.frame != last_frame:
                inner = self._internals(
                    e,
                    func,
                    claimed,
                    _join(ctx, info.ns),
                    cur,
                    hi,
                    frame_prims,
                    regions,
                    earlier - {info.frame[:3] if info.frame else None},
                )
                if inner:
                    if pending is not None:
                        self._split(pending[0], pending[1], inner[0], func, claimed, starts, chunks)
                        pending = None
                    if len(run) == 1:
                        starts[e], chunks[e] = inner[0], inner
                    else:
                        self._share(run, inner, func, starts, chunks)
                    placed.add((info.rel, info.frame))
                    last_frame = info.frame
                    cur = inner[-1] + 1
                    continue
            p = self._first(e, func, claimed, ctx, cur, hi, None, regions)
            if (
                p is not None
                and p > cur
                and self._overtakes(ids, position[e], func, claimed, ctx, cur, p, placed, placed_names, regions)
            ):
                p = None
            if p is not None and self.eqns[e].subs:
                # an owner's own ops come before its inline body; an op named for it after its body's
                # first op is a later twin's (a constant of a second remat on the same line, say)
                q = self._proxy(e, func, claimed, ctx, cur, p, placed_names, placed, regions)
                if q is not None:
                    p = None
            if p is None:
                if self.eqns[e].subs:  # an owner without ops of its own: its body's first op bounds it
                    q = self._proxy(e, func, claimed, ctx, cur, hi, placed_names, placed, regions)
                    if q is not None:
                        proxies[e] = q
                        placed.update(self._descendant_keys(e))
                        cur = q + 1
                continue
            if pending is not None:
                self._split(pending[0], pending[1], p, func, claimed, starts, chunks)
            pending = (run, p) if len(run) > 1 else None
            starts[e] = p
            regions.add(p)
            placed.add((self.eqns[e].rel, self.eqns[e].frame))
            placed.update(self._descendant_keys(e))
            placed_names.add(self.m.name[func][p])
            last_frame = info.frame
            cur = p + 1
        if pending is not None:
            self._split(pending[0], pending[1], hi, func, claimed, starts, chunks)
        ends: dict[int, int] = {}
        nxt = hi
        for e in reversed(ids):
            ends[e] = nxt
            if e in starts:
                nxt = starts[e]
            elif e in proxies:
                nxt = proxies[e]
        unmatched = {(self.eqns[e].prim, self.eqns[e].frame) for e in ids if e not in starts}
        prev = lo
        norms = self.m.norm[func]
        for e in ids:
            info = self.eqns[e]
            p, end = starts.get(e), ends[e]
            ectx = ctx
            if p is not None:
                name = norms[p]
                ectx = name[: len(name) - len(info.rel) - 1] if len(name) > len(info.rel) else ""
                if e in chunks:
                    for q in chunks[e]:
                        self._claim(e, fi, claimed, q)
                else:
                    cands = self._candidates(e, func)
                    for k in range(bisect_left(cands, p), len(cands)):
                        q = cands[k]
                        if q >= end:
                            break
                        if q not in claimed and norms[q] == name and self._same_frame(e, func, q):
                            self._claim(e, fi, claimed, q)
            if info.subs:
                kmin = _join(ectx, info.ns)
                self._bodies(e, fi, claimed, kmin, prev, end, unmatched)
                if kmin is not None and p is not None:  # placed by an op of its own, not by its body
                    self._leftovers(e, fi, claimed, kmin, prev, end, unmatched)
            if p is not None:
                prev = p + 1
            elif e in proxies:
                prev = proxies[e] + 1

    def _twin_owner_prims(self, e: int) -> set[str]:
        """Primitives in the bodies of the other owners at owner e's source position (two remats on
        one line): JAX 0.7 writes those bodies at that position, so an op so named may be theirs."""
        if self._owners_at is None:  # source position -> owners there, built once per program
            self._owners_at = {}
            for o, info in enumerate(self.eqns):
                if info.subs and info.live:
                    self._owners_at.setdefault(info.frame[:3] if info.frame else None, []).append(o)
        frame = self.eqns[e].frame[:3] if self.eqns[e].frame else None
        prims: set[str] = set()
        for o in self._owners_at.get(frame, ()):
            if o != e:
                prims |= {rel[rel.rfind("/") + 1 :] for rel, _ in self._descendant_keys(o)}
        return prims

    def _proxy(
        self,
        e: int,
        func: int,
        claimed: dict,
        ctx: str | None,
        lo: int,
        hi: int,
        exclude: set[str],
        ambiguous: set[tuple] | None = None,
        blocked: set[int] | None = None,
    ) -> int | None:
        """Where the body of an owner without ops of its own starts (its first body eqn's first op).

        Without it an op-less owner's span would run to the next placed sibling and swallow the
        ops of an op-less twin next to it (`relu(relu(x))`: two custom_jvp_calls on one line).
        Body eqns whose (name, frame) is in `ambiguous` (an earlier eqn's body has the same) are
        skipped: their ops could be the earlier one's.
        """
        kmin = _join(ctx, self.eqns[e].ns)
        head = None if kmin is None else (kmin + "/" if kmin else "")
        for ids in self.eqns[e].subs:
            for b in [s for s in ids if self.eqns[s].live][:3]:
                if ambiguous is not None and (self.eqns[b].rel, self.eqns[b].frame) in ambiguous:
                    continue
                q = self._first(b, func, claimed, None, lo, hi, exclude, blocked)
                if q is not None and (head is None or self.m.norm[func][q].startswith(head)):
                    return q
                if self.eqns[b].subs:
                    q = self._proxy(b, func, claimed, kmin, lo, hi, exclude, ambiguous, blocked)
                    if q is not None:
                        return q
        return None

    def _internals(
        self,
        e: int,
        func: int,
        claimed: dict,
        head: str,
        lo: int,
        hi: int,
        frame_prims: dict[Any, set[str]],
        regions: set[int],
        before: set,
    ) -> list[int]:
        """Ops of an eqn JAX lowered through other primitives, or [] if it made none.

        `integer_pow` with y > 3 lowers to multiplies named `.../mul`: ops from `lo` on, at the
        eqn's own frame, named `<ctx>/<name stack>/<p>` where p is the eqn's primitive or one no other
        eqn of the program with that frame has, up to the first named op that is not such. Only
        called when the previous placed eqn has another frame; ops at the positions of earlier eqns
        (`before`: a scan's loop, an unplaced owner's body) are passed over until the first op of ours.
        """
        info = self.eqns[e]
        others = (frame_prims.get(info.frame[:3] if info.frame else None, set()) | self._displaced) - {info.prim}
        helpers = _LOWERED_THROUGH.get(info.prim, frozenset())
        prefix = head + "/" if head else ""
        norms, frames = self.m.norm[func], self.m.frame[func]
        found: list[int] = []
        foreign = False
        for p in range(lo, hi):
            n = norms[p]
            if n is None or p in claimed or self.m.inside(func, p, regions):
                continue
            last = n[n.rfind("/") + 1 :]
            if (
                frames[p] is None
                or info.frame is None
                or not self._same_frame(e, func, p)
                or not n.startswith(prefix)
                or "/" in n[len(prefix) :]
                or last in others
                or (last != info.prim and last not in helpers)
            ):
                if not found and frames[p] is not None and frames[p][:3] in before:
                    continue
                break
            foreign = foreign or last != info.prim
            found.append(p)
        return found if foreign else []

    def _descendant_keys(self, e: int) -> set[tuple]:
        keys = set()
        todo = [s for ids in self.eqns[e].subs for s in ids]
        while todo:
            s = todo.pop()
            keys.add((self.eqns[s].rel, self.eqns[s].frame))
            todo.extend(x for ids in self.eqns[s].subs for x in ids)
        return keys

    def _twins(self, a: int, b: int) -> bool:
        x, y = self.eqns[a], self.eqns[b]
        return x.rel == y.rel and x.frame == y.frame and not x.subs

    def _split(self, run: list[int], p: int, bound: int, func: int, claimed: dict, starts: dict, chunks: dict) -> None:
        """Share the ops named like a run of adjacent twins, [p, bound), out among them in order.

        Twins with the same params and input avals share one cached lowering, so they made equally
        many ops: equal runs. Otherwise the single cut that looks like separate lowerings (see
        `_segment`) is taken; with none or several, no twin gets ops (never a wrong one).
        """
        norms = self.m.norm[func]
        name = norms[p]
        cands = self._candidates(run[0], func)
        ops = []
        for k in range(bisect_left(cands, p), len(cands)):
            q = cands[k]
            if q >= bound:
                break
            if q not in claimed and norms[q] == name and self._same_frame(run[0], func, q):
                ops.append(q)
        del starts[run[0]]
        self._share(run, ops, func, starts, chunks)

    def _share(self, run: list[int], ops: list[int], func: int, starts: dict, chunks: dict) -> None:
        """Give each twin of a run its consecutive group of `ops` (see `_split`), or none at all."""
        objs = [self.eqns[e].obj for e in run]
        same = [(a, b) for a in range(len(run)) for b in range(a + 1, len(run)) if _same_lowering(objs[a], objs[b])]
        groups: list[list[int]] | None = None
        if len(ops) % len(run) == 0 and len(same) == len(run) * (len(run) - 1) // 2:
            size = len(ops) // len(run)
            groups = [ops[k * size : (k + 1) * size] for k in range(len(run))]
        else:
            lines = self.m.lines
            made = {id(v) for o in objs for v in o.outvars}
            fed = [all(id(v) in made for v in o.invars if type(v).__name__ != "Literal") for o in objs]
            cut = _segment([_op_facts(lines[self.m.start[func][q]]) for q in ops], same, len(run), fed)
            groups = None if cut is None else [[ops[i] for i in g] for g in cut]
        if groups is None:
            return
        for e, group in zip(run, groups):
            starts[e] = group[0]
            chunks[e] = group

    def _foreign(self, func: int, p: int, unmatched: set) -> bool:
        """An op that may belong to a sibling eqn we could not place: never claim it for another."""
        norm = self.m.norm[func][p]
        frame = self.m.frame[func][p]
        last = norm[norm.rfind("/") + 1 :]
        return any(prim == last and (f is None or frame is None or f[:3] == frame[:3]) for prim, f in unmatched)

    def _bodies(self, e: int, fi: tuple, claimed: dict, kmin: str | None, lo: int, hi: int, unmatched: set) -> None:
        func, prefix = fi[0], fi[1]
        m = self.m
        callees: list[tuple] = []  # function instances: (func, caller's full name, (caller instance, call op))
        calls = m.calls[func]
        for k in range(bisect_left(calls, lo), len(calls)):
            p = calls[k]
            if p >= hi:
                break
            owner = claimed.get(p)
            if owner == e or (
                owner is None
                and m.name[func][p] is not None
                and self._same_frame(e, func, p)
                and not self._foreign(func, p, unmatched)
            ):
                caller = m.name[func][p]
                callees.append((m.callee[func][p], f"{prefix}/{caller}" if prefix else caller, (fi, p)))
        used: set = set()
        for ids in self.eqns[e].subs:
            ids = [s for s in ids if self.eqns[s].live]
            if not ids:
                continue
            votes: dict[tuple, int] = {}
            for s in ids:
                seen = set()
                rel = self.eqns[s].rel
                cands = self._candidates(s, func)
                for k in range(bisect_left(cands, lo), len(cands)):
                    p = cands[k]
                    if p >= hi:
                        break
                    if p in claimed or not self._same_frame(s, func, p):
                        continue
                    n = m.norm[func][p]
                    if n == rel:
                        x = ""
                    elif n.endswith("/" + rel):
                        x = n[: len(n) - len(rel) - 1]
                    else:
                        continue
                    if kmin is None or x == kmin or (x.startswith(kmin + "/") if kmin else True):
                        seen.add(("inline", x))
                for instance in callees:
                    callee = instance[0]
                    taken = self.claims.get(instance, {})
                    if any(
                        m.norm[callee][p] == rel and p not in taken and self._same_frame(s, callee, p)
                        for p in self._candidates(s, callee)
                    ):
                        seen.add(("call", instance))
                for option in seen:
                    votes[option] = votes.get(option, 0) + 1
            ranked = sorted(((n, o) for o, n in votes.items() if o not in used), key=lambda t: -t[0])
            if not ranked or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
                continue  # nothing, or a tie: leave this sub-jaxpr unlinked rather than guess
            option = ranked[0][1]
            used.add(option)
            if option[0] == "inline":
                self.align(ids, fi, option[1], lo, hi)
            else:
                self.align(ids, option[1], "", 0, len(m.start[option[1][0]]))

    def _leftovers(self, e: int, fi: tuple, claimed: dict, kmin: str, lo: int, hi: int, unmatched: set) -> None:
        """Ops an owner's lowering emits itself (a scan's `while`, counters, helper calls).

        Only ops named with no primitive that some eqn at the same source position has: those
        could be such an eqn's (a body eqn of a later owner on the same line, say); nor one of the
        owner's own body eqns has (JAX 0.7 writes a while loop's body ops at the loop's position); nor
        one of an eqn JAX wrote elsewhere than its own position (`_displaced`).
        """
        func = fi[0]
        names = self.m.norm[func]
        head = kmin + "/" if kmin else ""
        info = self.eqns[e]
        taken = self._frame_prims.get(info.frame[:3] if info.frame else None, set()) - {info.prim}
        taken = taken | {rel[rel.rfind("/") + 1 :] for rel, _ in self._descendant_keys(e)}
        # nor one whose eqns have no op at their own position: JAX 0.7 writes a remat body's ops at the
        # remat's line, so a second remat on that line would take the first one's body ops
        taken = taken | self._displaced | self._twin_owner_prims(e)
        for p in range(lo, hi):
            n = names[p]
            if (
                n is None
                or p in claimed
                or not n.startswith(head)
                or n == kmin
                or not self._same_frame(e, func, p)
                or self._foreign(func, p, unmatched)
                or n[n.rfind("/") + 1 :] in taken
            ):  # could be an eqn's with that primitive
                continue
            self._claim(e, fi, claimed, p)


# ----------------------------------------------------------------------------- HLO

_HLO_META = re.compile(rb'op_name="([^"\\\n]*(?:\\.[^"\\\n]*)*)"([^}\n]*)')
_HLO_COMP = re.compile(rb"\n(?:ENTRY )?%([^\s(]+) ")
_HLO_SHAPE = re.compile(rb" = ([a-z][a-z0-9]*)\[([0-9,]*)\]")
_HLO_FUSION = re.compile(rb" fusion\([^\n]*?calls=%([\w.\-]+)")
_HLO_FRAME_ID = re.compile(rb"stack_frame_id=(\d+)")
_HLO_SOURCE = re.compile(rb'source_file="([^"]*)" source_line=(\d+)(?: source_end_line=\d+)?(?: source_column=(\d+))?')


class _HLO:
    """HLO instructions grouped by (op_name, rest of metadata), with their computations."""

    def __init__(self, text: str):
        import numpy as np

        data = text.encode()
        newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        self.frames = _hlo_frames(data)
        found = [(m.start(), m.group(1, 2)) for m in _HLO_META.finditer(data)]
        positions = np.fromiter((p for p, _ in found), dtype=np.int64, count=len(found))
        keys = [k for _, k in found]
        lines = np.searchsorted(newlines, positions).tolist()
        groups: dict[tuple[bytes, bytes], list[int]] = {}
        for key, line in zip(keys, lines):
            group = groups.get(key)
            if group is None:
                groups[key] = [line]
            else:
                group.append(line)
        # op_name -> [(group key, frame (file, line, col) | None, lines)]
        self.by_name: dict[str, list[tuple[tuple, tuple | None, list[int]]]] = {}
        for (name, rest), group in groups.items():
            text_name = _unescape(name.decode(errors="replace"))
            self.by_name.setdefault(text_name, []).append(((name, rest), self._frame_of(rest), group))
        comp_pos = [(m.start(1), m.group(1).decode(errors="replace")) for m in _HLO_COMP.finditer(data)]
        comp_lines = np.searchsorted(newlines, np.asarray([p for p, _ in comp_pos], dtype=np.int64)).tolist()
        self.comp_lines: list[int] = comp_lines
        self._comp_array = np.asarray(comp_lines, dtype=np.int64)
        self.comp_names: list[str] = [name for _, name in comp_pos]
        self._closure: dict[int, list[int]] = {}
        self._data, self._newlines = data, newlines
        fusion_pos = [(m.start(1), m.group(1).decode(errors="replace")) for m in _HLO_FUSION.finditer(data)]
        fusion_lines = np.searchsorted(newlines, np.asarray([p for p, _ in fusion_pos], dtype=np.int64)).tolist()
        self.fusion_callers: dict[str, list[int]] = {}
        for (_, callee), line in zip(fusion_pos, fusion_lines):
            self.fusion_callers.setdefault(callee, []).append(line)

    def _frame_of(self, rest: bytes) -> tuple | None:
        m = _HLO_FRAME_ID.search(rest)
        if m:
            return self.frames.get(int(m.group(1)))
        m = _HLO_SOURCE.search(rest)
        if m:
            col = int(m.group(3)) if m.group(3) else None
            return (m.group(1).decode(errors="replace"), int(m.group(2)), col)
        return None

    def computations(self, lines: list[int]) -> list[int]:
        """Indices of the computations holding these lines (sorted, distinct)."""
        import numpy as np

        found = np.unique(np.searchsorted(self._comp_array, np.asarray(lines, dtype=np.int64), side="right") - 1)
        return [int(c) for c in found if c >= 0]

    def fusion_closure(self, comp: int) -> list[int]:
        """Lines of the fusion instructions calling computation `comp`, up through nested fusions."""
        cached = self._closure.get(comp)
        if cached is not None:
            return cached
        self._closure[comp] = []  # guards against cycles while we compute
        result: list[int] = []
        for line in self.fusion_callers.get(self.comp_names[comp], ()):
            result.append(line)
            for outer in self.computations([line]):
                if outer != comp:
                    result.extend(self.fusion_closure(outer))
        self._closure[comp] = result
        return result

    def result_shape(self, line: int) -> tuple[str, tuple[int, ...]] | None:
        """("f32", (2, 8)) for `%x = f32[2,8]{1,0} op(...)`; None for tuples and non-instructions."""
        start = int(self._newlines[line - 1]) + 1 if line > 0 else 0
        end = int(self._newlines[line]) if line < len(self._newlines) else len(self._data)
        m = _HLO_SHAPE.search(self._data, start, end)
        if m is None:
            return None
        dims = m.group(2)
        return m.group(1).decode(), tuple(int(d) for d in dims.split(b",")) if dims else ()


def _hlo_frames(data: bytes) -> dict[int, tuple]:
    """stack_frame_id -> (file, line, column) of its innermost location, from the module's tables."""
    head_end = data.find(b"\n%")
    entry = data.find(b"\nENTRY")
    head = data[: min(x for x in (head_end, entry, len(data)) if x >= 0)].decode(errors="replace")
    section = ""
    files: dict[int, str] = {}
    locations: dict[int, tuple] = {}
    frames: dict[int, tuple] = {}
    for line in head.split("\n"):
        if line in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = line
            continue
        first, _, rest = line.partition(" ")
        if not first.isdigit():
            continue
        key = int(first)
        if section == "FileNames":
            m = _STRING.match(rest)
            if m:
                files[key] = _unescape(m.group(1))
        elif section == "FileLocations":
            fields = dict(re.findall(r"(\w+)=(\d+)", rest))
            if "file_name_id" in fields and "line" in fields:
                locations[key] = (
                    int(fields["file_name_id"]),
                    int(fields["line"]),
                    int(fields["column"]) if "column" in fields else None,
                )
        elif section == "StackFrames":
            m = re.search(r"file_location_id=(\d+)", rest)
            if m and int(m.group(1)) in locations:
                file_id, line_no, col = locations[int(m.group(1))]
                frames[key] = (files.get(file_id), line_no, col)
    return frames


def _link_hlo(links: LevelLinks, eqns: list[_Eqn], module: _StableHLO, aligner: _Aligner, text: str) -> None:
    """HLO instructions whose metadata (op_name, frame) is that of an eqn's StableHLO ops."""
    hlo = _HLO(text)
    requests: dict[tuple, list[int]] = {}  # HLO group -> eqns (graph order) whose ops carry its metadata
    group_lines: dict[tuple, list[int]] = {}
    frame_ok: dict[tuple, bool] = {}
    for e in range(1, len(eqns)):
        hits = aligner.hits[e]
        if not hits:
            continue
        frame = eqns[e].frame
        wanted: set = set()
        for func, p, prefix in hits:
            name = module.name[func][p]
            absolute = module.absolute.get(func)
            if absolute is not None and absolute[p] is not None:  # JAX 0.4: HLO reads the absolute name
                wanted.add(absolute[p])
                continue
            wanted.add(f"{prefix}/{name}" if prefix else name)
        for name in wanted:
            for key, hframe, lines in hlo.by_name.get(name, ()):
                if hframe is not None and frame is not None:
                    ok = frame_ok.get((hframe, frame))
                    if ok is None:
                        ok = frame_ok[(hframe, frame)] = _hlo_frame_matches(hframe, frame)
                    if not ok:
                        continue
                owners = requests.setdefault(key, [])
                if not owners or owners[-1] != e:
                    owners.append(e)
                group_lines[key] = lines
    per_eqn: dict[int, list[list[int]]] = {}
    unresolved = 0
    for key, owners in requests.items():
        lines = group_lines[key]
        if len(owners) == 1:
            per_eqn.setdefault(owners[0], []).append(lines)
            continue
        shares = _share_out(hlo, [eqns[e] for e in owners], lines)
        if shares is None:
            unresolved += len(owners)
            continue
        for e, share in zip(owners, shares):
            if share:
                per_eqn.setdefault(e, []).append(share)
    comps_of: dict[int, list[int]] = {}  # id(line list) -> computations, once per HLO group
    for e, parts in per_eqn.items():
        lines = parts[0] if len(parts) == 1 else sorted(set().union(*parts))
        found: set[int] = set()
        for part in parts:
            comps_part = comps_of.get(id(part))
            if comps_part is None:
                comps_part = comps_of[id(part)] = hlo.computations(part)
            found.update(comps_part)
        comps = sorted(found)
        extra = [line for c in comps for line in hlo.fusion_closure(c)]
        links.hlo[e - 1] = sorted(set(lines).union(extra)) if extra else list(lines)
        # name the fused computation when there is one (a reduction's `to_apply` region comes first in the text)
        fused = [c for c in comps if hlo.comp_names[c] in hlo.fusion_callers]
        chosen = fused[0] if fused else (comps[0] if comps else -1)
        links.hlo_comp[e - 1] = hlo.comp_names[chosen] if chosen >= 0 else None
    if unresolved:
        # Said where it matters, the HLO pane (not the top of the view), in a reader's words: XLA labels each
        # instruction with the op, scope and line it came from, and these ops share all three with another.
        them = "it" if unresolved == 1 else "them"
        said = (
            f"{plural(unresolved, 'op')} of this function came from the same line as another op of the same "
            f"kind, so XLA's labels cannot tell their instructions apart: selecting {them} marks no HLO line."
        )
        links.hlo_note = f"{links.hlo_note} {said}" if links.hlo_note else said


def _share_out(hlo: _HLO, twins: list[_Eqn], lines: list[int]) -> list[list[int]] | None:
    """Instructions with the metadata of several eqns (twins), shared out, or None.

    An instruction whose result shape is an output shape of exactly one twin is that twin's (the
    two dots of a matmul's gradient differ so); failing that, one whose element type and count
    are (XLA reshapes freely). Otherwise, with one instruction per twin (no duplication by
    fusion), in order of appearance. Anything else stays unassigned.
    """
    shapes = [_out_shapes(t.obj) for t in twins]
    counts = [{(dtype, prod(dims)) for dtype, dims in x} for x in shapes]
    shares: list[list[int]] = [[] for _ in twins]
    if all(shapes) and len({frozenset(x) for x in shapes}) > 1:  # else no shape tells them apart
        for line in lines:
            shape = hlo.result_shape(line)
            if shape is None:
                continue
            owners = [k for k, x in enumerate(shapes) if shape in x]
            if not owners:
                count = (shape[0], prod(shape[1]))
                owners = [k for k, x in enumerate(counts) if count in x]
            if len(owners) == 1:
                shares[owners[0]].append(line)
        if any(shares):
            return shares
    if len(lines) == len(twins):
        return [[line] for line in lines]
    return None


_HLO_DTYPES = {"bool": "pred", "bfloat16": "bf16"}


def _out_shapes(eqn: Any) -> set[tuple[str, tuple[int, ...]]]:
    """Output avals of an eqn as HLO writes them: `f32[2,8]` -> ("f32", (2, 8))."""
    shapes = set()
    try:
        for var in eqn.outvars:
            dtype = var.aval.dtype.name
            short = _HLO_DTYPES.get(dtype)
            if short is None:
                m = re.fullmatch(r"(float|int|uint|complex)(\d+)", dtype)
                if m is None:
                    continue
                short = {"float": "f", "int": "s", "uint": "u", "complex": "c"}[m.group(1)] + m.group(2)
            shapes.add((short, tuple(int(d) for d in var.aval.shape)))
    except Exception:
        return set()
    return shapes


def _hlo_frame_matches(hframe: tuple, frame: Frame) -> bool:
    file, line, col = hframe
    if file is not None and file != frame[0]:
        return False
    return line == frame[1] and (col is None or col == frame[2])
