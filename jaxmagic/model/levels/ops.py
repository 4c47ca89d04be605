"""The StableHLO module's ops as the aligner searches them: names relative to their function,
read as eqns read (`_norm`), and indexed by primitive and source position."""

from __future__ import annotations

from ...capture.jax_compat import stablehlo
from ...capture.jax_compat.stablehlo import Frame


def norm_name(name: str) -> tuple[str, str]:
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


def _index_key(last: str, frame: Frame | None) -> tuple:
    return (last,) + (frame[:3] if frame is not None else (None, None, None))


class OpTable:
    """The ops of a StableHLO module, per function, as columns by position (ops sorted by start line)."""

    def __init__(self, module: stablehlo.Module):
        self.lines = module.lines
        self.func_names = module.func_names
        self.main = module.main
        self.root_name = module.root_name
        self.start: list[list[int]] = []
        self.name: list[list[str | None]] = []  # name within the function (containers composed)
        self.norm: list[list[str | None]] = []
        self.frame: list[list[Frame | None]] = []
        self.callee: list[list[int | None]] = []
        self.calls: list[list[int]] = []  # positions of call ops
        self.index: list[dict[tuple, list[int]]] = []  # (last part, file, line, col) -> positions
        self.parent: list[list[int]] = []  # position of the op whose region holds each op, or -1
        # func -> its ops' names as JAX 0.4 wrote them (absolute, as XLA's HLO metadata reads them)
        self.absolute: dict[int, list[str | None]] = {}
        func_index = {name: k for k, name in enumerate(self.func_names)}
        for ops in module.funcs:
            self._add(ops, func_index)
        if self.root_name is not None and self.root_name.endswith("/jit(main)"):
            self._relative_to_callers()

    def _add(self, ops: stablehlo.FuncOps, func_index: dict[str, int]) -> None:
        names: list[str | None] = []
        norms: list[str | None] = []
        callees: list[int | None] = []
        calls: list[int] = []
        index: dict[tuple, list[int]] = {}
        for k, (name, frame, callee, outer) in enumerate(zip(ops.name, ops.frame, ops.callee, ops.container)):
            if name is not None and outer >= 0:  # relative to the manual computation around it
                outer_name = names[outer]
                if outer_name is not None:
                    name = f"{outer_name}/{name}"
            names.append(name)
            target = func_index.get(callee) if callee is not None else None
            callees.append(target)
            if target is not None:
                calls.append(k)
            if name is None:
                norms.append(None)
                continue
            norm, last = norm_name(name)
            norms.append(norm)
            index.setdefault(_index_key(last, frame), []).append(k)
        self.start.append(ops.start)
        self.name.append(names)
        self.norm.append(norms)
        self.frame.append(ops.frame)
        self.callee.append(callees)
        self.calls.append(calls)
        self.index.append(index)
        self.parent.append(ops.parent)

    def inside(self, func: int, p: int, regions: set[int]) -> bool:
        """Whether op p lies in the region of one of the ops at positions `regions`."""
        parent = self.parent[func][p]
        while parent >= 0:
            if parent in regions:
                return True
            parent = self.parent[func][parent]
        return False

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
            self._rename_callee(func, caller)

    def _rename_callee(self, func: int, caller: str) -> None:
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
                self.norm[func][p] = norm_name(name)[0]
            if self.norm[func][p] is not None and name is not None:
                index.setdefault(_index_key(norm_name(name)[1], self.frame[func][p]), []).append(p)
        self.index[func] = index


def op_table(text: str) -> OpTable:
    """The op table of a StableHLO text with locations."""
    return OpTable(stablehlo.parse_module(text))
