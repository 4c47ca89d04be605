"""Many functions, one bounded view: which recorded functions a graph document draws.

A cell that jits a fresh wrapper of the same function on every iteration (`%timeit
jax.jit(f)(x)`) records thousands of functions that are one program to the user; a loop
that jits thousands of different functions records thousands of programs nobody opens at
once. Drawing each made documents of hundreds of megabytes. Here:

- entries with the same definition (name and source line), the same signature and the same
  program (the same jaxpr object, or the same printed jaxpr when printing is cheap) are one
  entry that counts its wrappers, calls and cache hits;
- past a budget (`MAX_GRAPHS` entries, `MAX_GRAPH_EQNS` eqns beyond the largest) an entry is
  listed (name, signature, counts, source) without its graph, which a widget loads when asked;
- past `MAX_LISTED` listed entries the rest are counted per definition in a note.

Pure functions of the capture's records: no IPython, no widgets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..capture import jax_compat
from ..capture.record import JitCall
from ..units import plural
from .document import source_json

MAX_GRAPHS = 40  # entries drawn in one document (the largest always is)
MAX_GRAPH_EQNS = 30_000  # eqns drawn beyond the largest entry's (about 90 bytes of state each)
MAX_LISTED = 4_000  # entries listed without a graph (about 250 bytes each); the rest are counted
FOLD_TEXT_EQNS = 2_000  # distinct jaxpr objects are compared by their printed text up to this size


@dataclass
class Entry:
    """One drawn or listed function: the calls of one or more wrappers of one program."""

    first: JitCall
    calls: list[JitCall]
    wrappers: set[int] = field(default_factory=set)
    n_eqns: int = 0
    fid: str = ""
    # {function_id: jitted functions the capture recorded as that one} (Capture.wrappers): a
    # `jax.jit(f)` made anew for the same f is recorded once, its wrappers counted.
    wrapper_counts: dict[int, int] = field(default_factory=dict)

    @property
    def n_wrappers(self) -> int:
        return sum(self.wrapper_counts.get(w, 1) for w in self.wrappers)

    def fields(self) -> dict:
        """What a function entry says about its calls (the same whether drawn or listed)."""
        return {
            "signature": str(self.first.signature),
            "source": source_json(self.first.source),
            "calls": len(self.calls),
            "cache_hits": sum(c.cache_hit for c in self.calls),
            "wrappers": self.n_wrappers,
        }

    def listing(self) -> dict:
        """The compact entry of a function listed without its graph."""
        return {"id": self.fid, "name": self.first.name, **self.fields(), "n_eqns": self.n_eqns}


def definition(call: JitCall) -> tuple:
    """Name and source line (as the timeline's lanes): a lambda made anew per iteration is one definition."""
    src = call.source
    return (call.name, src.file, src.line) if src is not None else (call.name, call.function_id)


def count_eqns(closed_jaxpr: Any, limit: int) -> int:
    """Eqns of a jaxpr and every sub-jaxpr, counted up to a little past `limit` (cheap: no printing)."""
    stack, total = [closed_jaxpr], 0
    while stack and total <= limit:
        item = stack.pop()
        for eqn in getattr(getattr(item, "jaxpr", item), "eqns", ()):
            total += 1
            stack.extend(sub for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False))
    return total


class _Programs:
    """Tells whether two recorded jaxprs are one program, printing each jaxpr at most once."""

    def __init__(self) -> None:
        self.texts: dict[int, str | None] = {}

    def text(self, jaxpr: Any) -> str | None:
        key = id(jaxpr)
        if key not in self.texts:
            small = count_eqns(jaxpr, FOLD_TEXT_EQNS) <= FOLD_TEXT_EQNS
            try:
                self.texts[key] = str(jaxpr) if small else None
            except Exception:  # a jaxpr JAX cannot print is compared by identity only
                self.texts[key] = None
        return self.texts[key]

    def same(self, a: JitCall, b: JitCall) -> bool:
        if a.jaxpr is b.jaxpr:
            return True
        if any(
            c.artifacts is not None and (c.artifacts.values is not None or c.artifacts.batch_dims is not None)
            for c in (a, b)
        ):
            return False  # recorded values or batch dims belong to one wrapper's run
        text = self.text(a.jaxpr)
        return text is not None and text == self.text(b.jaxpr)


def fold(entries: list[tuple[JitCall, list[JitCall]]], wrapper_counts: dict[int, int] | None = None) -> list[Entry]:
    """(first call, calls) per (wrapper, signature) -> one Entry per definition, signature and program,
    in the order of first calls. Entries without a jaxpr are never folded (each gets its note)."""
    programs = _Programs()
    folded: list[Entry] = []
    by_key: dict[tuple, list[Entry]] = {}
    for first, calls in entries:
        if first.jaxpr is not None and first.signature is not None:
            candidates = by_key.setdefault((definition(first), first.signature.key), [])
            match = next((e for e in candidates if programs.same(e.first, first)), None)
            if match is not None:
                match.calls.extend(calls)
                match.wrappers.add(first.function_id)
                continue
        entry = Entry(first, list(calls), {first.function_id}, wrapper_counts=wrapper_counts or {})
        if first.jaxpr is not None and first.signature is not None:
            by_key[(definition(first), first.signature.key)].append(entry)
        folded.append(entry)
    for entry in folded:
        entry.calls.sort(key=lambda c: c.index)
        if entry.first.jaxpr is not None:
            entry.n_eqns = count_eqns(entry.first.jaxpr, 10**9)
    return folded


def choose_drawn(entries: list[Entry], max_graphs: int | None, max_eqns: int = MAX_GRAPH_EQNS) -> set[int]:
    """Positions of the entries that get their graph: the largest, then others in order of first
    call while the document stays within `max_graphs` entries and `max_eqns` further eqns.
    `max_graphs=None` draws every entry (an export of the whole capture)."""
    drawable = [i for i, e in enumerate(entries) if e.first.jaxpr is not None]
    if max_graphs is None:
        return set(drawable)
    if not drawable or max_graphs < 1:
        return set()
    largest = max(drawable, key=lambda i: entries[i].n_eqns)
    drawn, total = {largest}, 0
    for i in drawable:
        if len(drawn) >= max_graphs:
            break
        if i not in drawn and total + entries[i].n_eqns <= max_eqns:
            drawn.add(i)
            total += entries[i].n_eqns
    return drawn


def listing(entries: list[Entry], max_listed: int = MAX_LISTED) -> tuple[list[dict], dict, list[str]]:
    """The listed entries' compact rows (up to `max_listed`), the `folded` summary's counts of the
    rest, and a note naming the definitions of those not listed."""
    rows = [e.listing() for e in entries[:max_listed]]
    rest = entries[max_listed:]
    notes = []
    if rest:
        by_name: dict[str, int] = {}
        for e in rest:
            by_name[e.first.name] = by_name.get(e.first.name, 0) + 1
        top = sorted(by_name.items(), key=lambda kv: -kv[1])
        shown = ", ".join(f"{name} ×{n:,}" for name, n in top[:8]) + (
            f" and {plural(len(top) - 8, 'more name')}" if len(top) > 8 else ""
        )
        notes.append(
            f"{plural(len(rest), 'more function')} recorded but not listed (the view lists "
            f"{max_listed:,}): {shown}; read them from the capture: cap.calls"
        )
    return rows, {"unlisted": len(rest), "unlisted_calls": sum(len(e.calls) for e in rest)}, notes
