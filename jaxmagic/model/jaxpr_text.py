"""The jaxpr as JAX prints it, and the text line where each eqn starts.

The text pane shows JAX's own printout; to highlight an eqn there we need its line.
JAX prints eqns depth-first with sub-jaxprs inline, each eqn starting with its binders
(`k:f32[] l:f32[3] = scan[`), so a forward search for the binders finds each one.
"""

from __future__ import annotations

import re
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
        """Line index of `eqn`, searching forward from the previous eqn's line."""
        binders = " ".join(outvar_texts)
        # One-line sub-jaxprs put eqns after "let ", so match after any whitespace.
        head = re.escape(binders) + " = " if binders else re.escape(prim) + r"\b"
        pattern = re.compile(r"(?:^|\s)" + head)
        for start, stop in ((self._cursor, len(self.lines)), (0, self._cursor)):
            for i in range(start, stop):
                if pattern.search(self.lines[i]):
                    self._cursor = i
                    return i
        return None
