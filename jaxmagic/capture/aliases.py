"""Namespace names bound to JAX functions we replace (`from jax import jit`, `from jax.random
import split`): rebound to the stand-ins for a capture, and back to JAX's own when it ends."""

from __future__ import annotations

import types
from contextlib import ExitStack
from typing import Any


def rebind_aliases(stack: ExitStack, namespace: dict, patched_of: dict[Any, Any]) -> None:
    """Point every namespace name bound to an original in `patched_of` at its stand-in; when the
    capture ends, every name bound to a stand-in, including names the cell bound itself
    (`from jax import jit` inside a magic cell), gets JAX's own function back.

    The undo is registered before the first rebinding, so an interrupted pass is undone too.
    One pass each way, type test first: a notebook namespace holds arrays, which cannot be hashed.
    """
    original_of = {patched: original for original, patched in patched_of.items()}
    stack.callback(_restore, namespace, original_of)
    function = types.FunctionType
    for name, value in list(namespace.items()):
        if type(value) is function and value in patched_of:
            namespace[name] = patched_of[value]


def _restore(namespace: dict, original_of: dict[Any, Any]) -> None:
    function = types.FunctionType
    for name, value in list(namespace.items()):
        if type(value) is function and value in original_of:
            namespace[name] = original_of[value]
