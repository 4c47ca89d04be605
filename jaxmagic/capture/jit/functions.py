"""The jitted functions a capture has seen: one state each, found by id on every call.

A state is made once per function (not per call): its name, its definition's source, its calls
and misses, its artefacts per signature. Jitted functions JAX treats as one (`jax.jit(f)` made
anew each iteration: the same Python function and options, so JAX's own call cache serves
them all) share a state, counted in `wrappers`.

The table never decides how long a function lives: a jitted closure the cell drops (with the
arrays it closed over) is freed as without a capture. Ids are reused when an object dies, so each
function named by id is held by a weak reference whose callback forgets the id first (`keep_id`);
a further wrapper of a hot definition called once is counted and not named at all
(`hot_definition`). Only a function whose cache hits have taken the recorder's short path
`FAST_AFTER_HITS` times joins the routed call's fast path, which holds it (its table is keyed by
the function itself) until the capture stops. JAX's own jitted functions (`jnp.where`) are
remembered by identity and never recorded.
"""

from __future__ import annotations

import functools
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import jax_compat, source
from ..record import Artifacts, Signature, SourceLocation

# Cache hits get a signature (and a graph, for functions compiled before the capture)
# for this many calls per function; after that only misses do. Flattening the
# arguments of every call would cost more than JAX's own dispatch. A function whose
# cache holds a single program needs one (`FunctionTable.note_program`).
SIGNATURE_BUDGET_PER_FUNCTION = 8
# A hot function's cache hits take the recorder's short path (about 1 us more than the fast path)
# this many times before the fast path, which keeps the function alive until the capture stops,
# takes them: a closure jitted, called a few times and dropped is not kept.
FAST_AFTER_HITS = 4
_ONCE_SWEEP_MIN = 256  # `FunctionTable._once` is swept of dead wrappers at this size, then as it doubles


@dataclass
class FunctionState:
    """What is known of one jitted function during a capture (computed once, not per call)."""

    name: str
    source: SourceLocation | None
    calls: int = 0
    misses: int = 0
    function_id: int = 0  # id() of the jitted function, as JitCall.function_id
    artifacts: dict[tuple, Artifacts] = field(default_factory=dict)
    last_signature: Signature | None = None  # of the latest call with one: what a miss is compared with
    key_program: Any = None  # keys.flow.ProgramKeys of its latest program that handles PRNG keys
    wrappers: int = 1  # jitted functions JAX treats as this one (`jax.jit(f)` made anew for the same `f`)
    hot: bool = False  # its cache hits are recorded as rows, without a signature taken (`FunctionTable`)
    donates: bool = False  # it donates arguments: each call's donated arrays are noted (not the routed fast path)
    watched_hits: int = 0  # hot hits still to leave their outputs to the NaN check (`note_program`)
    # (first call index, signature, artefacts) from which every cache hit runs the one program JAX's
    # call cache holds, or (index, None, None) from where it holds several (`note_program`)
    hit_programs: list[tuple[int, Signature | None, Artifacts | None]] = field(default_factory=list)

    @classmethod
    def of(cls, fn: Any) -> FunctionState:
        return cls(name=function_name(fn), source=source.function_location(fn), function_id=id(fn))


def definition_key(fn: Any) -> tuple | None:
    """(Python function, jit's options): equal for two jitted functions JAX's call cache treats as one
    (it keys on the function and the options; the key here takes every option, so it is if anything
    stricter); None when either is unknown or unhashable (the function then stands alone)."""
    target = jax_compat.python_function(fn)
    options = jax_compat.jit_options(fn)
    if target is None or options is None:
        return None
    key = (target, options)
    try:
        hash(key)
    except TypeError:  # an unhashable option: the function stands alone, as documented
        return None
    return key


def definition_site(fn: Any) -> tuple | None:
    """Where the jitted Python function's code is: functions made anew from one `lambda` share it."""
    code = getattr(jax_compat.python_function(fn), "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno, code.co_name)


def function_name(fn: Any) -> str:
    """The jitted function's name; a jitted bound method by its object's class (`MLP.apply` for
    `jax.jit(model.apply)`, where the method's own name says `Module.apply`)."""
    target = getattr(fn, "__wrapped__", fn)
    owner = getattr(target, "__self__", None)
    name = getattr(target, "__name__", None)
    if owner is not None and name and not isinstance(owner, (type, types.ModuleType)):
        return f"{type(owner).__name__}.{name}"
    return getattr(target, "__qualname__", None) or getattr(fn, "__name__", "<jitted>")


def _drop_entry(entries: dict, key: int, ref: weakref.ref) -> None:
    """The object of `ref` died: its entry goes (only its own, never a later object's of the same id)."""
    if entries.get(key) is ref:
        del entries[key]


def _identity(value: Any) -> Any:
    return value


class FunctionTable:
    """Every jitted function seen in one capture, by id, and which of them are hot.

    `hot`: functions whose cache hits are recorded as rows, without their arguments flattened
    (JAX holds the one program they run, or past the signature budget); `fast`: the hot ones
    whose cache hits need only a row, which the jitted type's routed call records itself
    (capture/jit/patch.py `FastPath`); `jax_own`: jitted functions JAX itself defines, passed
    through unrecorded. The recorder reads these dicts directly.
    """

    def __init__(self, bind_call: Callable[[Any], Callable[..., Any] | None] = lambda fn: None) -> None:
        self.functions: dict[int, FunctionState] = {}
        self.hot: dict[int, FunctionState] = {}
        # jitted function -> (state, JAX's call bound to it, `bind_call`). Keyed by the function
        # itself (its hash is its identity; no `id()` call per hit), so only functions the table
        # keeps alive anyway are in it (`settle_fast`).
        self.fast: dict[Any, tuple[FunctionState, Callable[..., Any]]] = {}
        self._bind_call = bind_call
        self.jax_own: dict[int, Any] = {}  # id -> weak reference (`_remember_jax_own`)
        # One state per definition as JAX's own call cache keys it (the Python function and jit's
        # options): a `jax.jit(f)` made anew each iteration is one function called many times.
        self.by_definition: dict[tuple, FunctionState] = {}  # keyed by (id of the Python function, options)
        self._definitions: dict[tuple, int] = {}  # definition site -> jitted functions made there, called
        self._made: list[FunctionState] = []  # every state made, its function dead or alive (`wrapper_counts`)
        # Every `function_id` given: `id(fn)`, unless a function that died took it first (`state_of`).
        self._function_ids: set[int] = set()
        # Every registered jitted function by id, weakly: its callback forgets the id (`keep_id`).
        self._weak: dict[int, weakref.ref] = {}
        # Called with the state of each registered function that dies during the capture: what others
        # keep per function (`CallSignatures`' last arguments key, which holds jit's view of its
        # parameters, defaults included) goes with it.
        self.on_forget: list[Callable[[FunctionState], None]] = []
        self._kept: list = []  # functions of a type that takes no weak reference: alive until `release`
        # Ids registered as further wrappers of a hot definition (`hot_definition`): never on the fast
        # path, whose bound call would keep them alive (typically called once: `jax.jit(f)(x)` in a loop).
        self._further: set[int] = set()
        # Hot functions not yet on the fast path: id -> cache hits seen on the short path (`note_hit`).
        self.young: dict[int, int] = {}
        # Wrappers of a hot definition called once so far: counted, not registered (`hot_definition`);
        # a plain weak reference each (no callback), the dead ones swept when the dict doubles.
        self._once: dict[int, weakref.ref] = {}
        self._sweep_at = _ONCE_SWEEP_MIN
        # Python function (by id) -> (its weak reference, jit's options, state): a wrapper's
        # definition found without building and hashing its key (`_definition_of`).
        self._by_target: dict[int, tuple[Any, tuple, FunctionState]] = {}
        self._user_targets: dict[int, Any] = {}  # ids of the user's Python functions behind jitted ones (weakly)
        self._targets: dict[int, Any] = {}  # id of a Python function in a key -> its weak reference (`_key_of`)
        self._target_keys: dict[int, list[tuple]] = {}  # id of a Python function -> its keys in `by_definition`

    def name_of(self, fn: Any) -> str | None:
        state = self.functions.get(id(fn))
        return state.name if state is not None else None

    def state_of(self, fn: Any) -> tuple[FunctionState, bool]:
        """The state of a jitted function seen for the first time, and whether it is new: shared with
        an earlier jitted function of the same Python function and jit options (what JAX's own call
        cache keys on, so the earlier one's compiled program serves both), counted in `wrappers`."""
        key = self._key_of(fn)
        state = self.by_definition.get(key) if key is not None else None
        once = self._once.pop(id(fn), None)
        if state is not None:
            if once is None or once() is not fn:  # a wrapper `hot_definition` counted already is not counted again
                state.wrappers += 1
        else:
            state = FunctionState.of(fn)
            if state.function_id in self._function_ids:  # an earlier function's, dead now: its id was reused
                state.function_id = 2 * len(self._function_ids) + 1  # odd: never an object's id (aligned)
            self._function_ids.add(state.function_id)
            self._made.append(state)
            if key is not None:
                self.by_definition[key] = state
                self._target_keys.setdefault(key[0], []).append(key)
        self.functions[id(fn)] = state
        self.keep_id(fn)
        return state, state.wrappers == 1

    def _key_of(self, fn: Any) -> tuple | None:
        """`definition_key(fn)` with the Python function by id: the key keeps neither it nor the arrays
        it closes over alive; a weak reference forgets its entries when it dies (`_forget_target`)."""
        key = definition_key(fn)
        if key is None:
            return None
        target = key[0]
        if id(target) not in self._targets:
            try:
                self._targets[id(target)] = weakref.ref(target, functools.partial(self._forget_target, id(target)))
            except TypeError:  # no weak reference to this type: kept alive instead
                self._targets[id(target)] = target
                self._kept.append(target)
        return (id(target), key[1])

    def _forget_target(self, target_id: int, ref: weakref.ref) -> None:
        """A Python function behind a recorded jitted one died: its id no longer names it (callback)."""
        if self._targets.get(target_id) is not ref:
            return
        del self._targets[target_id]
        self._by_target.pop(target_id, None)
        for key in self._target_keys.pop(target_id, ()):
            self.by_definition.pop(key, None)

    def count_call(self, fn: Any, state: FunctionState) -> None:
        """One more call of `fn`; past the signature budget its cache hits take the fast paths."""
        state.calls += 1
        if state.calls >= SIGNATURE_BUDGET_PER_FUNCTION:
            self._make_hot(fn, state)

    def note_program(
        self, fn: Any, state: FunctionState, index: int, signature: Signature, artifacts: Artifacts | None
    ) -> None:
        """After call `index` of `fn` was recorded with `signature`: what its later cache hits run.

        When JAX's call cache holds one compiled program for `fn`, a later call that compiles
        nothing can only hit that program: its signature and artefacts are this call's, so taking
        them again tells nothing. The function is hot at once (a loop's step: 7 calls fewer
        recorded in full), each hit still given this signature; the hits the signature budget
        would have recorded in full still leave their outputs to the NaN check (`watched_hits`),
        without their arguments kept. With several programs (a miss added one) a hit's program is
        not known: later hits get no signature, and the budget applies.
        """
        programs = state.hit_programs
        known = jax_compat.cached_programs(fn) == 1
        if not known and not programs:
            return
        if not programs or programs[-1][1] is not (signature if known else None):
            programs.append((index, signature, artifacts) if known else (index, None, None))
        if known and not state.hot:
            state.watched_hits = max(0, SIGNATURE_BUDGET_PER_FUNCTION - state.calls)
            self._make_hot(fn, state)
        elif not known and state.hot and state.calls < SIGNATURE_BUDGET_PER_FUNCTION:
            state.hot, state.watched_hits = False, 0  # hot only by its one program: the budget again
            self.hot.pop(id(fn), None)
            self.young.pop(id(fn), None)
            if self.fast:
                self.fast.pop(fn, None)

    def _make_hot(self, fn: Any, state: FunctionState) -> None:
        """Let `fn`'s later cache hits be recorded as rows (no signature taken, no artefacts)."""
        state.hot = True
        self.hot[id(fn)] = state  # later cache hits take the recorder's short path
        self.settle_fast(fn, state)

    def settle_fast(self, fn: Any, state: FunctionState) -> None:
        """Whether `fn`'s cache hits take the routed call's fast path (capture/jit/patch.py): a hot
        function whose calls need nothing but a row. Not when its program handles keys (each call
        joins the key tree), it donates (each call's donated arrays are noted) or hits are still
        watched for NaN: those take the recorder's short path. Nor a further wrapper of a hot definition
        (`hot_definition`): the bound call would keep it alive (it is called once, typically:
        `jax.jit(f)(x)` in a loop). Nor, until its short-path hits reach FAST_AFTER_HITS (`note_hit`),
        a function young on the path: a closure jitted, called a few times and dropped dies as it would
        without the capture."""
        call = None
        key = id(fn)
        if (
            state.hot
            and state.key_program is None
            and not state.donates
            and key in self.functions
            and key not in self._further
        ):
            hits = self.young.setdefault(key, 0)
            if hits >= FAST_AFTER_HITS and not state.watched_hits:
                del self.young[key]
                call = self._bind_call(fn)
        else:
            self.young.pop(key, None)
        if call is not None:
            self.fast[fn] = (state, call)
        elif self.fast:  # empty where the type is not keyed by identity (`bind_call` gives None)
            self.fast.pop(fn, None)

    def note_hit(self, fn: Any, state: FunctionState) -> None:
        """A cache hit of a young hot function on the recorder's short path: one more towards the fast path."""
        key = id(fn)
        hits = self.young.get(key)
        if hits is not None:
            self.young[key] = hits + 1
            if hits + 1 >= FAST_AFTER_HITS:
                self.settle_fast(fn, state)

    def hot_definition(self, fn: Any) -> FunctionState | None:
        """The state of a hot function when `fn`, not registered, is another jitted function of its
        definition (`jax.jit(f)` made anew each iteration): `fn`'s calls are then that function's.

        Such a wrapper is typically called once and dropped, so its first call only counts it
        (`_once`: a plain weak reference, which costs its death nothing): registering it by id with
        a callback to forget it cost about 2 us of a ~50 us iteration of JAX's jit tutorial loop
        (bench/trace.py `jit_per_iteration`). A second call registers it, so its later hits take
        the recorder's short path (a lookup by id) instead of finding the definition again.
        """
        if not self.by_definition or id(fn) in self.functions:
            return None
        state = self._definition_of(fn)
        if state is None or not state.hot:
            return None
        once = self._once.get(id(fn))
        if once is not None and once() is fn:  # its second call: registered from now on
            del self._once[id(fn)]
            self.functions[id(fn)] = self.hot[id(fn)] = state
            self._further.add(id(fn))
            self.keep_id(fn)
            return state
        state.wrappers += 1
        self._remember_once(fn, state)
        return state

    def _definition_of(self, fn: Any) -> FunctionState | None:
        """The state recorded for `fn`'s definition (its Python function and jit's options), if any."""
        target = jax_compat.python_function(fn)
        entry = self._by_target.get(id(target)) if target is not None else None
        if entry is not None and entry[0]() is target:
            try:
                if jax_compat.jit_options(fn) == entry[1]:
                    return entry[2]
            except Exception:  # an option that cannot be compared: the key's own way says
                pass
        return self._definition_by_key(fn)

    def _definition_by_key(self, fn: Any) -> FunctionState | None:
        key = self._key_of(fn)
        if key is None:
            return None
        state = self.by_definition.get(key)
        target = self._targets.get(key[0])
        if state is not None and isinstance(target, weakref.ref):  # forgotten with its target
            self._by_target[key[0]] = (target, key[1], state)
        return state

    def _remember_once(self, fn: Any, state: FunctionState) -> None:
        """Note that `fn` was counted, without keeping it alive; dead notes are swept as the dict doubles."""
        once = self._once
        if len(once) >= self._sweep_at:
            for key in [key for key, ref in once.items() if ref() is None]:
                del once[key]
            self._sweep_at = max(_ONCE_SWEEP_MIN, 2 * len(once))
        try:
            once[id(fn)] = weakref.ref(fn)
        except TypeError:  # no weak reference to this type: registered and kept alive instead
            self.functions[id(fn)] = self.hot[id(fn)] = state
            self._further.add(id(fn))
            self._kept.append(fn)

    def keep_id(self, fn: Any) -> None:
        """Make sure `fn`'s id means `fn` for the rest of the capture, without keeping `fn` alive.

        A jitted closure the cell drops frees the arrays it closed over at once, as without a capture
        (JAX's own tests check it); thousands kept alive (and JAX's objects behind each) would also
        make Python's garbage collector walk them again and again (+30% on each call of a loop that
        jits anew). A weak reference drops its id from the tables when it dies, before another object
        can take that id; where JAX's type takes no weak reference, the function is kept alive.
        """
        key = id(fn)
        try:
            self._weak[key] = weakref.ref(fn, functools.partial(self._forget_function, key))
        except TypeError:  # no weak reference to this type: kept alive instead, as documented
            self._kept.append(fn)

    def _forget_function(self, key: int, ref: weakref.ref) -> None:
        """A function registered by `keep_id` died: its id no longer names it (weakref callback)."""
        if self._weak.get(key) is ref:
            del self._weak[key]
            state = self.functions.pop(key, None)
            self.hot.pop(key, None)
            self.young.pop(key, None)
            self._further.discard(key)
            if state is not None:
                for forget in self.on_forget:
                    forget(state)

    def is_jax_own(self, fn: Any) -> bool:
        """True for a jitted function JAX itself defines; remembered by identity (ids are reused)."""
        known = self.jax_own.get(id(fn))
        if known is not None:
            if known() is fn:
                return True
            del self.jax_own[id(fn)]  # that function is gone and its id taken by another
        traced = jax_compat.python_function(fn)
        if traced is not None and id(traced) in self._user_targets and self._user_targets[id(traced)]() is traced:
            return False  # `jax.jit(f)` made anew for an `f` already known to be the user's
        # No Python function at all: JAX's eager dispatch of a primitive or a `jit_p` bind
        # (`_pjit_call_impl` makes such C++ jitted callables itself).
        if traced is not None and not source.is_jax_function(traced):
            self._remember_user_target(traced)
            return False
        self._remember_jax_own(fn)
        return True

    def _remember_jax_own(self, fn: Any) -> None:
        """Note `fn` as JAX's own by a weak reference: the callables JAX's eager dispatch makes for a
        program (`_pjit_call_impl`) hold its jaxpr and the arrays it closed over, and live only as long
        as JAX caches that program; its module-level ops are alive anyway."""
        key = id(fn)
        try:
            self.jax_own[key] = weakref.ref(fn, functools.partial(_drop_entry, self.jax_own, key))
        except TypeError:  # no weak reference to this type: kept alive until the capture stops
            self.jax_own[key] = functools.partial(_identity, fn)

    def seen_definition_before(self, fn: Any) -> bool:
        """True when another jitted function made from the same `def`/`lambda` was called before.

        Asked once per function, on its first call (a new state): counted by definition site, not by
        id, since the earlier one may be dead by now and its id taken by `fn`."""
        code = getattr(jax_compat.python_function(fn), "__code__", None)
        if code is None:
            return False
        site = (code.co_filename, code.co_firstlineno, code.co_name)
        seen = self._definitions.get(site, 0) > 0
        self._definitions[site] = self._definitions.get(site, 0) + 1
        return seen

    def wrapper_counts(self) -> dict[int, int]:
        """{function_id: jitted functions JAX treats as it} for the definitions made more than once."""
        return {state.function_id: state.wrappers for state in self._made if state.wrappers > 1}

    def _remember_user_target(self, target: Any) -> None:
        """Note a Python function behind a jitted one as the user's, weakly (forgotten when it dies)."""
        try:
            ref = weakref.ref(target, functools.partial(self._forget_user_target, id(target)))
        except TypeError:  # no weak reference to this type: not remembered (found again next time)
            return
        self._user_targets[id(target)] = ref

    def _forget_user_target(self, target_id: int, ref: weakref.ref) -> None:
        if self._user_targets.get(target_id) is ref:
            del self._user_targets[target_id]

    def release(self) -> None:
        """Let go of the cell's jitted functions (they live as long as the cell keeps them) and of
        JAX's own helpers (`_pjit_call_impl`'s hold programs with constants)."""
        self._kept.clear()
        self._made.clear()
        self._function_ids.clear()
        self.on_forget.clear()
        self.fast.clear()  # it holds its functions too
        self._weak.clear()  # later deaths find no entry: their callbacks do nothing
        self._further.clear()
        self.young.clear()
        self._once.clear()
        self._by_target.clear()
        self.by_definition.clear()
        self._targets.clear()
        self._target_keys.clear()
        self._user_targets.clear()
        self.jax_own.clear()
