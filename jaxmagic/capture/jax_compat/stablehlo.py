"""StableHLO (MLIR) text as JAX prints it, read into plain structures: its functions, their ops
with their source locations, callees and enclosing regions, and `@main`'s shardings.

JAX gives each op it lowers an MLIR location: a name (the name stack plus the primitive,
`jit(f)/layer_0/transpose(jvp(mlp))/dot_general`) around the user's call site (`"cell.py":12:8
to :30`, innermost user frame first). `lowered.as_text(debug_info=True)` prints them as
`loc(#locN)` references resolved at the end of the module. These formats belong to JAX and
MLIR: this module is the one place that reads them (model/levels/ aligns the result to eqns).

Why text and not `Lowered.compiler_ir()` (an MLIR module with the same locations): the links are
line numbers in the text the view shows, which the IR does not know, and walking the IR costs
about as much as parsing the text (docs/design.md, "Level links").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import jax

from ... import strict

Frame = tuple  # (file, line, column, end_line | None, end_column | None)

_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_FILE_TAIL = re.compile(r":(\d+):(\d+)(?: to (\d+)?:(\d+))?")
_ALIAS = re.compile(r"#loc\d*")
_LOC_DEF = re.compile(r"(#loc\d*) = loc\((.*)\)$")
_CALLEE = re.compile(r'(?:^|[\s=])(?:func\.)?call @("(?:[^"\\]|\\.)*"|[\w.$\-]+)\(')
_FUNC = re.compile(r'^func\.func (?:\w+ )*@("(?:[^"\\]|\\.)*"|[\w.$\-]+)\(')
_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2}|\\|\")")
_SSA = re.compile(r"%[\w$.\-]+(?:[:#]\d+)?")
_CONSTANT = re.compile(r"%c(?:st)?(?:_\d+)?$")  # MLIR's names for constants: %cst, %c, %cst_3
# JAX's (public) flags that shape the locations it writes
_CANONICALIZATION_FLAG = "jax_hlo_source_file_canonicalization_regex"
_FULL_TRACEBACKS_FLAG = "jax_include_full_tracebacks_in_locations"


def lowered_text(lowered: Any) -> tuple[str | None, str | None]:
    """(StableHLO text with locations, note): the text is None, and the note says why, when there is none."""
    from . import stablehlo_with_locations  # the compat package's own printer (JAX 0.4 has no debug_info)

    if lowered is None:
        return None, "no StableHLO: the function was not lowered"
    try:
        return stablehlo_with_locations(lowered), None
    except TypeError:  # a JAX without debug_info: text without locations cannot be linked
        try:
            return lowered.as_text(), "StableHLO printed without locations: no lines linked"
        except Exception as exc:
            return None, f"no StableHLO: {type(exc).__name__}: {exc}"
    except Exception as exc:
        return None, f"no StableHLO: {type(exc).__name__}: {exc}"


def unescape(text: str) -> str:
    """An MLIR string literal's body with its escapes (`\\22`, `\\\\`, `\\"`) resolved."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: m.group(1) if m.group(1) in ("\\", '"') else chr(int(m.group(1), 16)), text)


def file_canonicaliser() -> Any:
    """JAX rewrites file names in locations with this (public) config regex: a function doing the same."""
    try:
        pattern = getattr(jax.config, _CANONICALIZATION_FLAG)
    except Exception:
        pattern = None
    if not pattern:
        return lambda name: name
    compiled = re.compile(pattern)
    return lambda name: compiled.sub("", name)


def _full_tracebacks() -> bool:
    try:
        return bool(getattr(jax.config, _FULL_TRACEBACKS_FLAG))
    except Exception:
        return False


class LocTable:
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
        except Exception as exc:  # a location form we do not know: unlinked, never wrong
            strict.fallback("StableHLO lines: a location form jaxmagic does not read", exc)
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
        """One location at s[i:] as a node: ("n", name, child), ("f", frame), ("r", alias),
        ("c", callee, caller), ("x", items) or ("u",); and where it ends."""
        if s.startswith('"', i):
            return self._parse_named(s, i)
        if s.startswith("#loc", i):
            m = _ALIAS.match(s, i)
            if m is None:
                raise ValueError(s[i : i + 40])
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

    def _parse_named(self, s: str, i: int) -> tuple[Any, int]:
        """A quoted location: a name around a child (`"name"(child)`), a file position, or a bare name."""
        m = _STRING.match(s, i)
        if m is None:  # an unterminated string
            raise ValueError(s[i : i + 40])
        text = unescape(m.group(1))
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


@dataclass
class FuncOps:
    """The ops of one function in text order (multi-line ops at their first line), as columns by position."""

    start: list[int] = field(default_factory=list)  # 0-based line of each op
    name: list[str | None] = field(default_factory=list)  # its location's name, as JAX wrote it
    frame: list[Frame | None] = field(default_factory=list)  # its innermost user frame
    callee: list[str | None] = field(default_factory=list)  # the function it calls, by name
    parent: list[int] = field(default_factory=list)  # position of the op whose region holds it, or -1
    container: list[int] = field(default_factory=list)  # position of the `sdy.manual_computation` around it, or -1


@dataclass
class Module:
    """A StableHLO module: its lines, its functions' ops and the name context of `main`'s ops."""

    lines: list[str]
    func_names: list[str]
    funcs: list[FuncOps]
    main: int | None  # index of `main` in func_names
    root_name: str | None  # the location name of main's `return` (the name context of its ops)


def parse_module(text: str) -> Module:
    """The functions of a StableHLO text with locations, each with its ops (see `FuncOps`)."""
    lines = text.split("\n")
    locs = LocTable(_location_aliases(lines))
    scan = _Scanner(lines)
    scan.run()
    funcs = [_resolve(ops, locs) for ops in scan.raw]
    main = scan.func_names.index("main") if "main" in scan.func_names else None
    root_name = locs.info(scan.return_loc)[0] if scan.return_loc is not None else None
    if root_name is None and main is not None:
        root_name = _root_of_ops(funcs[main])
    return Module(lines, scan.func_names, funcs, main, root_name)


def _location_aliases(lines: list[str]) -> dict[str, str]:
    defs: dict[str, str] = {}
    for line in lines:
        if line.startswith("#loc"):
            m = _LOC_DEF.match(line)
            if m:
                defs[m.group(1)] = m.group(2)
    return defs


class _Scanner:
    """One pass over the lines: per function, (start line, loc body, container start or -1, callee,
    parent start or -1) of each op, and the location of `main`'s `return`."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.func_names: list[str] = []
        self.raw: list[list[tuple]] = []
        self.return_loc: str | None = None
        self.stack: list[tuple[str, int, int]] = []  # (kind, start line, container start line)
        self.func = -1
        self.container = -1

    def run(self) -> None:
        pending = -1  # a statement line without a location: the start of a multi-line op
        for i, line in enumerate(self.lines):
            s = line.strip()
            if not s or s[0] == "#" or s[0] == "^":
                continue
            if s[0] == "}":
                self._close(s)
                continue
            if s[-1] == "{":
                self._open(s, i, pending)
                pending = -1
                continue
            body = _trailing_loc(s)
            if body is None:
                pending = i
                continue
            pending = -1
            if self.func >= 0:
                self._statement(s, i, body)

    def _close(self, s: str) -> None:
        if s[-1] == "{" or not self.stack:  # `}, {` or `} do {`: the next region of the same op
            return
        kind, start, outer = self.stack.pop()
        if kind == "op":
            self.raw[self.func].append(
                (start, _trailing_loc(s), outer, _callee(self.lines[start]), _parent(self.stack))
            )
            self.container = outer
        elif kind == "func":
            self.func = -1

    def _open(self, s: str, i: int, pending: int) -> None:
        if s.startswith("func.func"):
            m = _FUNC.match(s)
            self.func_names.append(unescape(m.group(1).strip('"')) if m else f"?{i}")
            self.raw.append([])
            self.func = len(self.raw) - 1
            self.stack.append(("func", i, -1))
            self.container = -1
        elif s.startswith("module"):
            self.stack.append(("module", i, -1))
        else:
            start = i if (pending < 0 or s[0] in '%"') else pending
            self.stack.append(("op", start, self.container))
            if "sdy.manual_computation(" in self.lines[start]:
                self.container = start

    def _statement(self, s: str, i: int, body: str) -> None:
        if s.startswith("return ") or s == "return":
            if self.func_names[self.func] == "main":
                self.return_loc = body
            return
        callee = _callee(s) if "call @" in s else None
        self.raw[self.func].append((i, body, self.container, callee, _parent(self.stack)))


def _resolve(ops: list[tuple], locs: LocTable) -> FuncOps:
    """One function's raw ops sorted by line, with names and frames read from their locations."""
    ops.sort()
    by_start = {op[0]: k for k, op in enumerate(ops)}
    out = FuncOps()
    for start, body, outer, callee, parent in ops:
        name, frame = locs.info(body) if body is not None else (None, None)
        out.start.append(start)
        out.name.append(name)
        out.frame.append(frame)
        out.callee.append(callee)
        out.parent.append(by_start.get(parent, -1))
        out.container.append(by_start.get(outer, -1))
    return out


def _root_of_ops(ops: FuncOps) -> str | None:
    """The name context of `main`'s ops where its `return` has none (JAX 0.4 lowers to
    `jit(f)/jit(main)/sin` with an unknown return location): the part before `/jit(main)/`."""
    for name in ops.name:
        if name and "/jit(main)/" in name:
            return name[: name.index("/jit(main)/") + len("/jit(main)")]
    return None


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
    return unescape(m.group(1).strip('"')) if m else None


def op_values(line: str) -> tuple[set, set, str]:
    """(SSA values an op line defines, values it uses, op kind) of a StableHLO op line."""
    line = line.strip()
    results, eq, rest = line.partition(" = ")
    if not eq:
        results, rest = "", line
    uses = {m.split("#")[0] for m in _SSA.findall(rest)}
    defined = {m.split(":")[0] for m in _SSA.findall(results)}
    kind = rest.split(" ", 1)[0].split("(", 1)[0].strip('"')
    return defined, uses, kind


def is_constant_value(value: str) -> bool:
    """Whether an SSA value name is one MLIR gives constants (`%cst`, `%c`, `%cst_3`)."""
    return _CONSTANT.match(value) is not None


# ---------------------------------------------------------------------------------------------
# Shardings written into `@main`'s signature (Shardy `#sdy.sharding<...>`, GSPMD `mhlo.sharding`).


_MAIN = re.compile(r"func\.func\s+public\s+@main\((.*?)\)\s*->\s*\((.*?)\)\s*(?:attributes|\{)", re.S)


def main_shardings(lowered_text: str | None) -> dict[str, list[str | None]]:
    """{"args": [...], "results": [...]}: each `@main` parameter's and result's sharding attribute
    text (Shardy `#sdy.sharding<...>` or GSPMD `{devices=...}`), None where it has none."""
    out: dict[str, list[str | None]] = {"args": [], "results": []}
    if not lowered_text:
        return out
    m = _MAIN.search(lowered_text)
    if not m:
        return out
    for key, block in (("args", m.group(1)), ("results", m.group(2))):
        out[key] = [_sharding_attribute(part) for part in _split_top(block)]
    return out


def _sharding_attribute(attributes: str) -> str | None:
    """The sharding in one parameter's or result's attribute text (`{mhlo.sharding = "..."}`), or None."""
    sdy = re.search(r"sdy\.sharding\s*=\s*(#sdy\.sharding<.*?>)(?=[,}])", attributes)
    mhlo = re.search(r'mhlo\.sharding\s*=\s*"([^"]*)"', attributes)
    return sdy.group(1) if sdy else mhlo.group(1) if mhlo else None


def main_shardings_of(lowered: Any) -> dict[str, list[str | None]] | None:
    """`main_shardings` of a `Lowered` without printing its module: only `@main`'s argument and
    result attributes are printed (1.5 ms where the whole StableHLO text of a 3.9k-eqn program
    takes 19 ms, and grows with it). None where the MLIR module is not reachable this way (the
    caller reads the text)."""
    try:
        module = lowered.compiler_ir("stablehlo")
        main = next(
            op
            for op in module.body.operations
            if op.operation.name == "func.func" and str(op.attributes["sym_name"]) == '"main"'
        )
        attrs = main.attributes
        function_type = attrs["function_type"].value
        counts = {"args": len(function_type.inputs), "results": len(function_type.results)}
        out: dict[str, list[str | None]] = {}
        for key, name in (("args", "arg_attrs"), ("results", "res_attrs")):
            texts = [str(d) for d in attrs[name]] if name in attrs else ["{}"] * counts[key]
            out[key] = [_sharding_attribute(text) for text in texts]
        return out
    except Exception:  # boundary: another MLIR binding or no module: the text is read instead
        return None


_MODULE_COUNTS = re.compile(r"mhlo\.num_(partitions|replicas)\s*=\s*(\d+)")


def module_device_count(lowered_text: str | None) -> int | None:
    """How many devices the lowered module runs on (its `mhlo.num_partitions` times
    `mhlo.num_replicas`, which JAX writes on the module line), or None where it says neither."""
    head = (lowered_text or "")[:4096]  # the attributes are on the module's first line
    counts = {kind: int(n) for kind, n in _MODULE_COUNTS.findall(head)}
    if not counts:
        return None
    return counts.get("partitions", 1) * counts.get("replicas", 1)


def _split_top(block: str) -> list[str]:
    """`block` split at commas outside brackets, braces, angle brackets and quotes."""
    parts, depth, quote, cur = [], 0, False, []
    for ch in block:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "([{<":
            depth += 1
        elif not quote and ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def sdy_dims(text: str | None) -> list[list[str]] | None:
    """Axis names per dimension of a Shardy sharding: `[{"x"}, {}]` -> [["x"], []]."""
    if not text or not text.startswith("#sdy.sharding"):
        return None
    m = re.search(r"\[(.*)\]", text)
    if not m:
        return None
    return [re.findall(r'"([^"]+)"', dim) for dim in re.findall(r"\{([^}]*)\}", m.group(1))]
