"""The jaxpr as JAX prints it, and the text line where each eqn starts.

The text pane shows JAX's own printout; to highlight an eqn there we need its line.
JAX prints eqns depth-first with sub-jaxprs inline, each eqn starting with its binders
(`k:f32[] l:f32[3] = scan[`), so a forward search for the binders finds each one.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..capture import jax_compat


class JaxprText:
    """Printed text of a jaxpr plus the printer's variable names."""

    def __init__(self, closed_jaxpr: Any):
        printer = jax_compat.jaxpr_pretty_printer()
        self.names: dict = {}
        if printer is not None:
            try:
                self.text, self.names = printer(closed_jaxpr.jaxpr)
            except Exception:
                self.text = str(closed_jaxpr)
        else:
            self.text = str(closed_jaxpr)
        self.lines = self.text.split("\n")
        self._cursor = 0

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
        for start, stop in ((self._cursor, len(self.lines)), (0, self._cursor)):
            for i in range(start, stop):
                if _starts_token(self.lines[i], head, needs_end=not binders):
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
