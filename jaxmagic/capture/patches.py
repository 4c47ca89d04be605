"""Replacing an attribute of JAX's for the length of a capture, and giving it back.

The undo gives JAX's object back only where the attribute still holds jaxmagic's stand-in. A cell
that replaces it itself (`jax.jit = counting_jit`, `jax.random.normal = my_normal`) keeps its
own replacement after the cell, exactly as without the magic.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any


def replace_attribute(stack: ExitStack, owner: Any, name: str, stand_in: Any) -> Any:
    """Set `owner.name` to `stand_in` until `stack` unwinds; return what was there.

    The undo is registered before the attribute is set, so an interrupt between the two still
    finds it (and, finding JAX's own object there, changes nothing).
    """
    original = getattr(owner, name)
    stack.callback(_give_back, owner, name, stand_in, original)
    setattr(owner, name, stand_in)
    return original


def _give_back(owner: Any, name: str, stand_in: Any, original: Any) -> None:
    if getattr(owner, name, None) is stand_in:
        setattr(owner, name, original)
