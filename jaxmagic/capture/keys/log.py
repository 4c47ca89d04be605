"""The PRNG key events of one capture, collected while the cell runs.

This only appends: each eager random call (key_patch.py), each jitted call whose program
handles keys (its key arguments and results, by flat position) and each eager transform
that binds a program with key arguments becomes one event holding the key objects
themselves. Nothing is read from the device then, so asynchronous dispatch is untouched.
When the capture stops, `finish` hands the events to capture/keys/lineage.py, which reads
each key's data once and replays them into the tree.

Keys are identified by their data, not by the Python object: `key, sub = split(key)`
makes `sub` by indexing, which JAX does not report, but its words are row 1 of the split's
output. The same data therefore means the same random stream, whichever path it came by.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .. import jax_compat, source
from ..jaxpr_memo import JaxprMemo
from ..record import Finding, KeyRecord, SourceLocation
from . import flow as key_flow
from .lineage import MAX_NODES, EagerOp, Lineage, ProgramCall

MAX_NAMED = 1_000  # namespace names of keys looked at, per end of the cell
_ARRAY_TYPES = frozenset(
    {"ArrayImpl", "PRNGKeyArray", "PRNGKeyArrayImpl"}
)  # jax.Array types, by name: no isinstance per value
MAX_EVENTS = 50_000  # random calls and keyed jitted calls recorded per capture; later ones are counted


def _caller(frame: Any) -> tuple[tuple | None, str | None]:
    """(user line, library line that made the call) above a stand-in's frame."""
    via = None
    first = True
    while frame is not None:
        file = frame.f_code.co_filename
        if source.is_user_file(file):
            return (file, frame.f_lineno, frame.f_code.co_name), via
        if first and "/jax/" not in file.replace("\\", "/"):
            via = f"{key_flow._short_path(file)}:{frame.f_lineno} ({frame.f_code.co_name})"
        first = False
        frame = frame.f_back
    return None, via


def _concrete_int(value: Any) -> int | None:
    try:
        if np.ndim(value) == 0 and not hasattr(value, "aval") or type(value).__name__ == "ArrayImpl":
            return int(value)
    except Exception:  # boundary: any value of the user's
        pass
    return None


class _Drawn:
    """What the key lineage keeps of a sampler's output: its shape and dtype, never the array
    (four 256 MiB samples would otherwise stay alive until the cell ends)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, value: Any) -> None:
        shape = getattr(value, "shape", None)
        self.shape = tuple(shape) if shape is not None else None
        self.dtype = getattr(value, "dtype", None)


class KeyLog:
    """Collects key events during a capture and turns them into `KeyRecord`s when it stops."""

    def __init__(self) -> None:
        self._thread = threading.get_ident()  # the cell's thread (the session makes the log there)
        self._events: list[EagerOp | ProgramCall] = []
        self._names_before: list[tuple[str, Any]] = []  # (name, key object) bound when the cell started
        self._names_after: list[tuple[str, Any]] = []  # ... and when it ended
        self._order = 0
        self.dropped = 0
        self._programs: dict[int, Any] = {}  # id(artifacts) -> ProgramKeys (or None: no keys)
        self._seed_words: dict[tuple, Any] = {}

    # -- while the cell runs -------------------------------------------------------------
    def on_random(self, name: str, kind: str, args: tuple, kwargs: dict, out: Any, frame: Any) -> None:
        if threading.get_ident() != self._thread:
            return  # another thread's keys are not this cell's
        if len(self._events) >= MAX_EVENTS:
            self.dropped += 1
            return
        first = args[0] if args else next(iter(kwargs.values()), None)
        extra = None
        if kind == "split":
            extra = args[1] if len(args) > 1 else kwargs.get("num", 2)
        elif kind == "fold_in":
            extra = _concrete_int(args[1] if len(args) > 1 else kwargs.get("data"))
        elif kind == "seed":
            extra = _concrete_int(first)
        where, via = _caller(frame)
        if kind in ("sampler", "data"):  # the lineage reads only the shape and dtype of what was drawn
            out = _Drawn(out)
        self._order += 1
        self._events.append(EagerOp(self._order, name, kind, first, out, extra, where, via))

    def on_eval(self, primitive: Any, args: tuple, params: dict, out: Any) -> None:
        """A program bound outside any jit with key arguments (an eager vmap, scan, cond)."""
        if threading.get_ident() != self._thread or not any(key_flow.might_hold_keys(a) for a in args):
            return
        if len(self._events) >= MAX_EVENTS:
            self.dropped += 1
            return
        outs = list(out) if primitive.multiple_results else [out]
        program = key_flow.primitive_keys(
            primitive,
            params,
            [jax_compat.aval_of(a) for a in args],
            [jax_compat.aval_of(o) for o in outs],
            jax_compat.source_info_now(),
        )
        if program.empty or not program.uses and not program.outputs:
            return
        name = str(params.get("name") or primitive.name)
        name = None if name.startswith("_") else name  # a jax.random sampler: the use names it
        self._order += 1
        self._events.append(
            ProgramCall(
                self._order,
                None,
                name,
                program,
                {i: args[i] for i in program.inputs},
                {i: outs[i] for i in program.outputs},
                None,
            )
        )

    def program(self, artifacts: Any) -> Any:
        """The key flow of a recorded program, read once per signature (None: it handles no keys)."""
        key = id(artifacts)
        if key not in self._programs:
            program = None
            jaxpr = getattr(artifacts, "jaxpr", None)
            if jaxpr is not None and _MENTIONS_KEYS.get(jaxpr, _mentions_keys):
                program = key_flow.program_keys(jaxpr)
                if program.empty:
                    program = None
            self._programs[key] = (artifacts, program)  # artifacts kept: its id stays unique
        return self._programs[key][1]

    def on_call(
        self, index: int, name: str, program: Any, leaves: list | tuple, site: SourceLocation | None, out: Any
    ) -> None:
        if len(self._events) >= MAX_EVENTS:
            self.dropped += 1
            return
        if isinstance(leaves, tuple):  # (fn, args, kwargs) of a cache hit: flattened only now
            from ..jit.signature import dynamic_leaves

            leaves = dynamic_leaves(*leaves)
        inputs = {i: leaves[i] for i in program.inputs if i < len(leaves)}
        outputs: dict[int, Any] = {}
        if program.outputs:
            import jax

            flat = jax.tree_util.tree_leaves(out)
            outputs = {i: flat[i] for i in program.outputs if i < len(flat)}
        self._order += 1
        self._events.append(ProgramCall(self._order, index, name, program, inputs, outputs, site))

    # -- when the capture stops ---------------------------------------------------------------
    def note_names(self, namespace: dict, before: bool) -> None:
        """Keys bound to names in the namespace, when the cell starts (`before`) or ends: the
        tree names its roots from earlier cells and the keys the cell leaves behind by them."""
        found = self._names_before if before else self._names_after
        try:
            for name, value in list(namespace.items()):
                if len(found) >= MAX_NAMED:
                    break
                if (
                    not name.startswith("_")
                    and type(value).__name__ in _ARRAY_TYPES
                    and key_flow.might_hold_keys(value)
                ):
                    found.append((name, value))
        except Exception:  # a namespace that cannot be walked names nothing
            pass

    def finish(self) -> tuple[list[KeyRecord], list[Finding], list[str]]:
        """The lineage, its findings and notes; drops every key object held."""
        events, self._events = self._events, []
        named, self._names_before, self._names_after = (self._names_before, self._names_after), [], []
        self._programs.clear()
        if not events:
            return [], [], []
        builder = Lineage(self.seed_words)
        builder.names_before(named[0])
        notes = []
        for event in events:
            if len(builder.nodes) >= MAX_NODES:
                notes.append(f"the key lineage stops after {MAX_NODES} keys; later random calls are not drawn")
                break
            try:
                if isinstance(event, EagerOp):
                    builder.op(event)
                else:
                    builder.call(event)
            except Exception as exc:  # one odd event loses its keys, not the lineage
                notes.append(f"a key operation was not recorded: {type(exc).__name__}: {exc}")
        if self.dropped:
            notes.append(f"{self.dropped} more random calls were not recorded (the first {MAX_EVENTS} were)")
        builder.names_after(named[1])
        records, findings = builder.finish()
        return records, findings, notes + sorted(builder.notes)

    def seed_words(self, seed: int, impl: str | None) -> Any:
        """The data of `key(seed)`, from JAX itself (once per seed and implementation)."""
        key = (seed, impl)
        if key not in self._seed_words:
            import jax

            try:
                made = jax.random.key(seed, impl=impl) if impl else jax.random.key(seed)
                self._seed_words[key] = key_flow.key_words(made)[1]
            except Exception:  # boundary: a seed or key implementation of the user's JAX will not make
                self._seed_words[key] = None
        return self._seed_words[key]


# Whether a jaxpr handles keys at all, per live jaxpr object: JAX hands back the same jaxpr for a
# signature it traced before, so a training cell run again walks nothing (0.45 ms at a 4-layer
# transformer step's first call in every cell, bench/trace.py's loop).
_MENTIONS_KEYS: JaxprMemo[bool] = JaxprMemo()


def _mentions_keys(closed_jaxpr: Any) -> bool:
    """Cheap test before the full walk: a key-typed or key-data-shaped variable, or a random primitive."""
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    for var in (*jaxpr.invars, *jaxpr.outvars, *getattr(jaxpr, "constvars", ())):
        aval = getattr(var, "aval", None)
        if key_flow._is_key_dtype(getattr(aval, "dtype", None)) or key_flow._is_raw_key_data(aval):
            return True
    return _has_random_primitive(jaxpr)


def _has_random_primitive(jaxpr: Any) -> bool:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name.startswith("random_"):
            return True
        for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False, opened=True):
            if _has_random_primitive(sub):
                return True
    return False
