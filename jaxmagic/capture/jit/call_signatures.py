"""A recorded call's signature, named as the user wrote it, and why the call missed JAX's cache.

Taken on misses and on each function's first calls only (capture/jit/recorder.py): flattening
the arguments costs more than JAX's own dispatch. A call whose arguments' pytree, avals,
shardings and jit options equal the previous call's reuses its signature (`concrete_key`); the
leaves are named through the user's own call when a library's jit wrapper made it
(`user_names`); a miss gets JAX's explanation and the signature diff (`miss.py`), and JAX's
explanations are turned off past `cache_log.EXPLAIN_LIMIT` misses of one function or definition.
"""

from __future__ import annotations

import sys
from typing import Any

from .. import source
from ..record import Signature, SourceLocation
from . import cache_log, miss, user_names
from .functions import FunctionState, FunctionTable, definition_site
from .signature import concrete_key, signature_of


def _in_user_code(where: SourceLocation | None) -> bool:
    return where is not None and source.is_user_file(where.file)


class CallSignatures:
    """Signatures and miss reasons of one capture's calls; `notes` receives what is said once."""

    def __init__(self, table: FunctionTable, log: cache_log.CacheLog, notes: list[str]):
        self._table = table
        self._cache_log = log
        self._notes = notes
        self._explain_stopped = False
        self._site_misses: dict[Any, int] = {}  # misses of jitted functions by their code's definition site
        # id(state) -> (concrete_key, Signature) of its latest signature taken (`_raw_signature`); the
        # key holds jit's options of the user's function: dropped at `release`.
        self._raw: dict[int, tuple[tuple, Signature]] = {}
        table.on_forget.append(self._forget)

    def _forget(self, state: FunctionState) -> None:
        """A function of `state` died: its key (jit's options, the defaults of its parameters) goes too."""
        self._raw.pop(id(state), None)

    def release(self) -> None:
        self._raw.clear()

    def of_call(
        self, fn: Any, args: tuple, kwargs: dict, state: FunctionState
    ) -> tuple[Signature, list, dict[str, str]]:
        """The call's signature and dynamic leaves, its leaves named as the user wrote them
        (and {library's path: user's name} for those renamed: the graph and JAX's miss
        explanation then use the same names).

        When a library's wrapper (`nnx.jit`, `eqx.filter_jit`) made the jitted call, the user's
        own call a few frames up names the arrays (`user_names`), and the function the user wrote
        behind the wrapper gives the definition shown, where the traced function is the library's.
        """
        signature, leaves = self._raw_signature(fn, args, kwargs, state)
        entry = user_names.user_entry(sys._getframe())
        if entry is None:
            return signature, leaves, {}
        if entry.function is not None and state.calls == 1 and not _in_user_code(state.source):
            state.source = source.function_location(entry.function)
            state.name = getattr(entry.function, "__qualname__", None) or state.name
        named = user_names.renamed(signature, user_names.leaf_names(entry, leaves))
        renames = {a.path: b.path for a, b in zip(signature.args, named.args) if a.path != b.path}
        return named, leaves, renames

    def _raw_signature(self, fn: Any, args: tuple, kwargs: dict, state: FunctionState) -> tuple[Signature, list]:
        """`signature_of` and the dynamic leaves; the function's previous signature again when this
        call's `concrete_key` equals the previous one's (a loop's first calls: 8 leaves, 56 us -> 12)."""
        quick = concrete_key(fn, args, kwargs)
        if quick is not None:
            known = self._raw.get(id(state))
            if known is not None and known[0] == quick[0]:
                return known[1], quick[1]
        leaves: list = []
        signature = signature_of(fn, args, kwargs, leaves)
        if quick is not None:
            self._raw[id(state)] = (quick[0], signature)
        return signature, leaves

    def miss_reason(
        self,
        fn: Any,
        state: FunctionState,
        explanations: tuple[str, ...],
        signature: Signature,
        renames: dict[str, str],
        call_site: SourceLocation | None,
        new_function: bool,
    ) -> Any:
        """Why JAX traced or compiled this call, in the user's terms (capture/jit/miss.py)."""
        state.misses += 1
        reason = user_names.reason_in_user_terms(
            miss.miss_reason(
                fn,
                state.name,
                explanations,
                state.last_signature,
                signature,
                redefined=new_function and self._table.seen_definition_before(fn),
            ),
            renames,
            call_site,
        )
        self._guard_explain_cost(state, fn)
        return reason

    def _guard_explain_cost(self, state: FunctionState, fn: Any) -> None:
        """JAX's explanation looks through its cached entries on each miss (~37 us each): quadratic in
        a storm of one function's shapes, or of functions made anew from one `lambda` (each one new
        to JAX, each compiled). Past `EXPLAIN_LIMIT` misses of either, explanations go off."""
        if self._explain_stopped:
            return
        site = definition_site(fn)
        site_misses = self._site_misses[site] = self._site_misses.get(site, 0) + 1
        if state.misses > cache_log.EXPLAIN_LIMIT:
            why = f"{state.name} missed the cache more than {cache_log.EXPLAIN_LIMIT} times"
        elif site is not None and site_misses > cache_log.EXPLAIN_LIMIT:
            why = (
                f"more than {cache_log.EXPLAIN_LIMIT} jitted functions made from the code at "
                f"{site[0]}:{site[1]} were compiled"
            )
        else:
            return
        self._explain_stopped = True
        if self._cache_log.explain_off():
            self._notes.append(
                f"{why}: JAX's own explanations were turned off for the rest of the cell (their cost grows "
                "with every cached entry); later reasons come from jaxmagic's comparison of signatures"
            )
