"""The jaxpr as JAX prints it, and the text line where each eqn starts.

The text pane shows JAX's own printout; to highlight an eqn there we need its line.
JAX prints eqns depth-first with sub-jaxprs inline, each eqn starting with its binders
(`k:f32[] l:f32[3] = scan[`), so a forward search for the binders finds each one.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from .. import strict
from ..capture import jax_compat

# Jaxpr -> {max_eqns: (text, names, lines)}. JAX hands the same Jaxpr object to every call that
# hits its trace cache (a re-run cell, `document`/`to_html` of a capture, a listed function
# loaded later), and its printer is the largest part of a graph document (~20 µs an eqn).
# Weak keys: an entry goes with its jaxpr; the names' Vars are the jaxpr's own.
_PRINTED: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()


def forget_printed() -> None:
    """Drop every kept printout (benchmarks measure a first print with it)."""
    _PRINTED.clear()


class JaxprText:
    """Printed text of a jaxpr plus the printer's variable names."""

    def __init__(self, closed_jaxpr: Any, max_eqns: int | None = None):
        """`max_eqns`: print only the first that many top-level eqns (the graph keeps no more):
        JAX's printer takes about 0.14 ms an eqn, 2.5 minutes for a million."""
        self._cursor = 0
        jaxpr = closed_jaxpr.jaxpr
        cut = max_eqns is not None and len(jaxpr.eqns) > max_eqns
        key = max_eqns if cut else None
        try:
            kept = _PRINTED.get(jaxpr, {}).get(key)
        except TypeError:  # not weakly referenceable: print every time
            kept = None
        if kept is None:
            self._print(closed_jaxpr, max_eqns)
            try:
                _PRINTED.setdefault(jaxpr, {})[key] = (self.cut, self.text, self.names, self.lines)
            except TypeError:
                pass
        else:
            self.cut, self.text, self.names, self.lines = kept

    def _print(self, closed_jaxpr: Any, max_eqns: int | None) -> None:
        """JAX's own printout (its text and names) of the jaxpr, cut at `max_eqns` top-level eqns."""
        printer = jax_compat.jaxpr_pretty_printer()
        self.names: dict = {}
        jaxpr = closed_jaxpr.jaxpr
        self.cut = max_eqns is not None and len(jaxpr.eqns) > max_eqns
        if self.cut:
            try:
                jaxpr = jaxpr.replace(eqns=jaxpr.eqns[:max_eqns])
            except Exception:  # a Jaxpr without replace (old JAX): no text rather than hours of it
                printer, self.text = None, f"(the jaxpr has {len(jaxpr.eqns)} eqns: too many to print)"
        if printer is not None:
            try:
                self.text, self.names = printer(jaxpr)
            except Exception as exc:  # JAX's own text, without the names that link it to the graph
                strict.fallback("the jaxpr text with the graph's names", exc)
                self.text = str(closed_jaxpr) if not self.cut else f"(the jaxpr has {len(jaxpr.eqns)} eqns)"
        elif not self.cut:
            self.text = str(closed_jaxpr)
        self.lines = self.text.split("\n")

    def name(self, var: Any) -> str:
        if jax_compat.is_dropvar(var):
            return "_"
        name = self.names.get(var)
        return name if name is not None else str(var)

    def locate(self, eqn: Any, outvar_texts: Iterable[str], prim: str) -> int | None:
        """Line index of `eqn`, searching forward from the previous eqn's line.

        Plain substring search (a regex per eqn cost 0.1 ms each): the binders must
        start the line or follow whitespace, as in one-line jaxprs (`let a:f32[] = ...`).
        """
        binders = " ".join(outvar_texts)
        head = binders + " = " if binders else prim
        lines = self.lines
        for start, stop in ((self._cursor, len(lines)), (0, self._cursor)):
            for i in range(start, stop):
                if head in lines[i] and _starts_token(lines[i], head, needs_end=not binders):
                    self._cursor = i
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
