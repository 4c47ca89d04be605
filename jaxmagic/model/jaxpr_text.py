"""The jaxpr as JAX prints it, the names of its variables, and the text line where each eqn starts.

The text pane shows JAX's own printout; to highlight an eqn there we need its line.
JAX prints eqns depth-first with sub-jaxprs inline, each eqn starting with its binders
(`k:f32[] l:f32[3] = scan[`), so a forward search for the binders finds each one.

The graph names variables itself (`VarNames`), in the order JAX's printer would, and the text
is printed later with those names: a widget's document carries the graph at once and the text
when its pane asks (docs/design.md, "Deferred artifacts"); the two always agree.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any

from .. import strict
from ..capture import jax_compat

# Jaxpr -> {(max_eqns, named): (cut, text, lines)}. JAX hands the same Jaxpr object to every call
# that hits its trace cache (a re-run cell, `document`/`to_html` of a capture, a listed function
# loaded later), and its printer is the largest part of a graph document (~20 µs an eqn). The
# names a graph gives a jaxpr are the same every time (VarNames, one walk order), so one printout
# serves each. Weak keys: an entry goes with its jaxpr.
_PRINTED: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()
HEAD_EQNS = 150  # a widget's function past this many eqns carries the text of its first ones, the rest on request


def forget_printed() -> None:
    """Drop every kept printout (benchmarks measure a first print with it)."""
    _PRINTED.clear()


class VarNames:
    """{Var: name} given as JAX's printer gives them: fresh names a, b, c, ... in the order the
    printer first meets each variable, a dropped output `_`, and a jitted call's inner inputs and
    outputs named like the outer ones they stand for (JAX's `suggest_same_var_names`)."""

    def __init__(self) -> None:
        self.names: dict[Any, str] = {}
        self.count = 0  # fresh names given so far: the printer continues from here

    def name(self, var: Any) -> str:
        name = self.names.get(var)
        if name is None:
            if jax_compat.is_dropvar(var):
                return "_"
            name = self.names[var] = jax_compat.var_name(self.count)
            self.count += 1
        return name

    def suggest(self, for_vars: Sequence[Any], like_vars: Sequence[Any]) -> None:
        """Name each of `for_vars` like its partner in `like_vars` (a literal partner, or one
        already used, leaves it to a fresh name later), as JAX's printer does for `jit`'s body."""
        if len(for_vars) != len(like_vars):
            return
        used: set = set()
        for for_var, like_var in zip(for_vars, like_vars):
            if jax_compat.is_literal(like_var) or jax_compat.is_literal(for_var) or like_var in used:
                continue
            if for_var not in self.names:
                used.add(like_var)
                self.names[for_var] = self.name(like_var)


class JaxprText:
    """Printed text of a jaxpr, with the given names (or the printer's own)."""

    def __init__(self, closed_jaxpr: Any, max_eqns: int | None = None, names: VarNames | None = None):
        """`max_eqns`: print only the first that many top-level eqns (the graph keeps no more):
        JAX's printer takes about 0.14 ms an eqn, 2.5 minutes for a million."""
        jaxpr = closed_jaxpr.jaxpr
        cut = max_eqns is not None and len(jaxpr.eqns) > max_eqns
        key = (max_eqns if cut else None, names is not None)
        try:
            kept = _PRINTED.get(jaxpr, {}).get(key)
        except TypeError:  # not weakly referenceable: print every time
            kept = None
        if kept is None:
            self._print(closed_jaxpr, max_eqns, names)
            try:
                _PRINTED.setdefault(jaxpr, {})[key] = (self.cut, self.text, self.lines)
            except TypeError:
                pass
        else:
            self.cut, self.text, self.lines = kept

    def _print(self, closed_jaxpr: Any, max_eqns: int | None, names: VarNames | None) -> None:
        """JAX's own printout of the jaxpr, cut at `max_eqns` top-level eqns."""
        printer = jax_compat.jaxpr_pretty_printer()
        jaxpr = closed_jaxpr.jaxpr
        self.cut = max_eqns is not None and len(jaxpr.eqns) > max_eqns
        if self.cut:
            try:
                jaxpr = jaxpr.replace(eqns=jaxpr.eqns[:max_eqns])
            except Exception:  # a Jaxpr without replace (old JAX): no text rather than hours of it
                printer, self.text = None, f"(the jaxpr has {len(jaxpr.eqns)} eqns: too many to print)"
        if printer is not None:
            try:
                self.text = printer(jaxpr, names.names, names.count)[0] if names else printer(jaxpr)[0]
            except Exception as exc:  # JAX's own text, without the names that link it to the graph
                strict.fallback("the jaxpr text with the graph's names", exc)
                self.text = str(closed_jaxpr) if not self.cut else f"(the jaxpr has {len(jaxpr.eqns)} eqns)"
        elif not self.cut:
            self.text = str(closed_jaxpr)
        self.lines = self.text.split("\n")

    def node_lines(self, heads: Iterable[tuple[str, str]]) -> list[int | None]:
        """The line of each eqn, given each one's binders (`k:f32[] l:f32[3]`) and primitive in
        printing order: a forward search from the previous eqn's line.

        Plain substring search (a regex per eqn cost 0.1 ms each): the binders must
        start the line or follow whitespace, as in one-line jaxprs (`let a:f32[] = ...`).
        """
        lines, cursor, found = self.lines, 0, []
        for binders, prim in heads:
            head = binders + " = " if binders else prim
            at = _find(lines, head, cursor, len(lines), not binders)
            if at is None:
                at = _find(lines, head, 0, cursor, not binders)
            if at is not None:
                cursor = at
            found.append(at)
        return found


def _find(lines: list[str], head: str, start: int, stop: int, needs_end: bool) -> int | None:
    for i in range(start, stop):
        if head in lines[i] and _starts_token(lines[i], head, needs_end):
            return i
    return None


def _starts_token(line: str, head: str, needs_end: bool) -> bool:
    at = line.find(head)
    while at != -1:
        before_ok = at == 0 or line[at - 1].isspace()
        end = at + len(head)
        after_ok = not needs_end or end == len(line) or not (line[end].isalnum() or line[end] == "_")
        if before_ok and after_ok:
            return True
        at = line.find(head, at + 1)
    return False


class Printout:
    """A function's jaxpr text as its graph names it: the whole text, or its head, with the
    line of each node in it."""

    def __init__(self, closed_jaxpr: Any, max_eqns: int, names: VarNames, heads: list, top_nodes: list[int]):
        self.closed_jaxpr, self.max_eqns, self.names = closed_jaxpr, max_eqns, names
        self.heads, self.top_nodes = heads, top_nodes

    def head_eqns(self) -> int:
        """How many top-level eqns the head prints: those holding at most HEAD_EQNS eqns in all."""
        return sum(1 for n in self.top_nodes if n <= HEAD_EQNS)

    def text(self, whole: bool = True) -> tuple[str, list[int | None]]:
        """(text, line of each node; None where not in it). Not `whole`: only the head's eqns,
        whose lines are those of the whole text (it begins the same)."""
        if whole:
            printed = JaxprText(self.closed_jaxpr, self.max_eqns, self.names)
            return printed.text, printed.node_lines(self.heads)
        n_top = self.head_eqns()
        if not n_top:
            return "", [None] * len(self.heads)
        printed = JaxprText(self.closed_jaxpr, n_top, self.names)
        n_nodes = self.top_nodes[n_top - 1]
        lines = printed.node_lines(self.heads[:n_nodes]) + [None] * (len(self.heads) - n_nodes)
        return _without_ending(printed.lines), lines

    def data(self) -> dict:
        """The answer to a view's "jaxpr" request: the whole text and every node's line."""
        text, lines = self.text()
        return {"text": text, "lines": lines}


def _without_ending(lines: list[str]) -> str:
    """A head's text: its lines up to the top level's `in (...)` (the jaxpr's outputs, made by eqns
    the head leaves out), then `…` where the rest of the eqns would be."""
    ends = [i for i, line in enumerate(lines) if line.startswith("  in (")]
    return "\n".join([*lines[: ends[-1] if ends else len(lines)], "    …"])
