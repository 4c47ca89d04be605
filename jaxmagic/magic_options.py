"""Reading a magic line's options, and where `-n VAR` may put a capture.

Every mistake here is a `UsageError`: IPython shows it as one line of usage and the cell does not
run. A capture stored under a name must never replace something of the user's without being
asked to (`--force`): replacing `jax`, `print` or a function the cell defines breaks the next
cell in a way that points nowhere near the cause.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import types
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import parse_argstring

from .capture.record import Capture


def parse_options(magic_fn: Callable, magic: str, line: str) -> Any:
    """`parse_argstring`, with an unreadable line (an unbalanced quote) a usage error too."""
    try:
        return parse_argstring(magic_fn, line)
    except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
        raise UsageError(f"%%{magic}: cannot read the options {line!r} ({exc})") from None


def check_name(name: str | None, body: str, namespace: dict, force: bool) -> None:
    """Refuse a `-n` name that is not a variable name, or that would replace something else."""
    if name is None:
        return
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"-n/--name takes a Python variable name for the capture, got {name!r}")
    if force:
        return
    taken = _what_is_there(name, body, namespace)
    if taken is not None:
        raise UsageError(f"-n {name} would replace {taken}: choose another name, or add --force to replace it")


def _what_is_there(name: str, body: str, namespace: dict) -> str | None:
    """What storing a capture as `name` would replace, in words, or None (free, or an older capture)."""
    if name in namespace:
        value = namespace[name]
        if isinstance(value, Capture):
            return None  # the same cell run again, or another capture: replacing it is the point
        if isinstance(value, types.ModuleType):
            return f"the module {name!r}"
        return f"your {type(value).__name__} {name!r}"
    if hasattr(builtins, name):
        return f"the builtin {name!r}"
    if name in names_bound(body):
        return f"the {name!r} this cell binds"
    return None


def names_bound(body: str) -> set[str]:
    """Names a cell binds at its top level (assignments, defs, classes, imports, loop targets).

    Inside functions, lambdas and classes names are local and are not counted. A body Python
    cannot parse (IPython syntax such as `!ls`) binds nothing we can tell.
    """
    try:
        tree = ast.parse(body)
    except (SyntaxError, ValueError):
        return set()
    bound: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        pending.extend(ast.iter_child_nodes(node))
    return bound
