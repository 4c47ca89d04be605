"""Namespace names bound to JAX functions we replace (`from jax import grad`, `from jax.random
import split`): rebound to the stand-ins for a capture, and back when it ends."""

from __future__ import annotations

import types
from contextlib import ExitStack
from typing import Any


def rebind_aliases(stack: ExitStack, namespace: dict, patched_of: dict[Any, Any]) -> None:
    """Point every namespace name bound to an original in `patched_of` at its stand-in.

    The undo is registered before the first rebinding, so an interrupted pass is undone
    too; a name the user rebinds during the capture keeps its new value. One pass, type
    test first: a notebook namespace holds arrays, which cannot be hashed.
    """
    aliases: list[tuple[str, Any, Any]] = []
    stack.callback(_restore, namespace, aliases)
    function = types.FunctionType
    found = [(name, value) for name, value in namespace.items() if type(value) is function and value in patched_of]
    for name, original in found:
        aliases.append((name, original, patched_of[original]))
        namespace[name] = patched_of[original]


def _restore(namespace: dict, aliases: list[tuple[str, Any, Any]]) -> None:
    for name, original, patched in aliases:
        if namespace.get(name) is patched:
            namespace[name] = original
