"""Answers that depend on a jaxpr object alone, remembered while JAX keeps that object.

JAX hands back the same ClosedJaxpr for a function and signature it traced before, so a
cell run again (a training cell, a benchmark, `%timeit`) would redo the same walk over the
same program at every capture's end. A `JaxprMemo` keeps one answer per live jaxpr: keyed
by id and checked by identity through a weak reference, dropped when JAX drops the jaxpr,
so an answer is never served for another object that later takes the same id, and the memo
never keeps a jaxpr (or what it closed over) alive. What is stored must itself hold no
device buffer and no user object: callers store texts, source frames, sizes and weak
references.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def _drop(entries: dict, key: int, ref: weakref.ref) -> None:
    """The jaxpr of `ref` died: its entry goes (only its own, never a later object's of the same id)."""
    entry = entries.get(key)
    if entry is not None and entry[0] is ref:
        del entries[key]


class JaxprMemo(Generic[T]):
    """{live jaxpr: answer}: `get(jaxpr, compute)` computes once per jaxpr object."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref, T]] = {}

    def get(self, jaxpr: Any, compute: Callable[[Any], T]) -> T:
        """`compute(jaxpr)`, or the answer it gave for this very object before."""
        key = id(jaxpr)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is jaxpr:
            return entry[1]
        answer = compute(jaxpr)
        try:
            ref = weakref.ref(jaxpr, functools.partial(_drop, self._entries, key))
        except TypeError:  # not weak-referenceable on this JAX: computed every time
            return answer
        self._entries[key] = (ref, answer)
        return answer

    def forget(self, jaxpr: Any) -> None:
        """Drop the answer for `jaxpr` (one that turned out stale: a weak reference in it died)."""
        entry = self._entries.get(id(jaxpr))
        if entry is not None and entry[0]() is jaxpr:
            del self._entries[id(jaxpr)]

    def __len__(self) -> int:
        return len(self._entries)
