"""Findings that only the jaxpr shows: globals frozen into the program, Python loops unrolled.

Both are pure functions of a jitted function and the ClosedJaxpr JAX traced for it
(`fn.trace(*args).jaxpr`, which the capture session already holds); they never trace,
lower or run anything.

* `baked_constants`: an array the function reads from a global, a closure cell or a
  `functools.partial` becomes a constant of the jaxpr (a constvar of a ClosedJaxpr, or a
  Literal with `jax_use_simplified_jaxpr_constants`). Its value is the one at trace time:
  assigning the global later changes nothing until JAX traces again, and a big one bloats
  the program. We name it by finding the same object among the values the function's code
  can reach (identity for jax arrays; memory or a dtype-converted copy for numpy), so the
  small constants JAX makes itself (`jnp.array([1., 2.])` inside the function, helpers'
  tables) are never named and, below `min_unnamed_bytes`, never reported.
* `unrolled_loops`: a Python `for`/`while` loop inside a traced function runs its body once
  per iteration, so the jaxpr holds the body's eqns k times, all attributed to the same user
  lines. We group eqns by their chain of user frames (a helper called from twenty lines is
  twenty chains; called twenty times from one loop line it is one), ask whether the chain's
  eqns are k copies of one primitive mix, and whether the copies feed each other (a
  dependency path through two copies or more), which a loop does and a `jax.tree.map` over
  many parameters does not. Independent copies count only on a line inside a loop statement
  or comprehension (read with `ast` from the source in linecache), and then suggest vmap.
  The source also names the loop (its header line) and merges the lines of one body.
"""

from __future__ import annotations

import ast
import functools
import linecache
import math
import types
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from ...units import bytes_text
from .. import jax_compat, source
from ..jaxpr_memo import JaxprMemo
from ..prefetch import PREFETCH
from ..record import Finding, SourceLocation

MIN_UNNAMED_BYTES = 1 << 20  # an array constant no user name matches is reported from this size
MIN_REPEATS = 10  # a loop is reported from this many iterations...
MIN_LOOP_EQNS = 50  # ...and this many eqns in all (sub-jaxprs included)
WARN_LOOP_EQNS = 1000  # from this many eqns an unrolled loop is a warning, below it info
MAX_LOOP_FINDINGS = 5  # per jaxpr tree: the biggest loops; more would bury everything else
MAX_REACH_DEPTH = 3  # helper functions followed from the jitted function, for names of globals
MAX_CONTAINER_LEAVES = 10_000  # a global pytree larger than this is not searched for arrays
_TRIVIAL_SCALARS = frozenset({0.0, 1.0, -1.0})  # as literals these are everywhere: never "probably" a global


# -- jaxpr walking --------------------------------------------------------------------------


def _walk(closed_jaxpr: Any) -> list[tuple[Any, tuple]]:
    """(open jaxpr, its consts) for the root and each distinct sub-jaxpr, each once."""
    closed_type, _ = jax_compat.jaxpr_types()
    return [
        (getattr(item, "jaxpr", item), tuple(jax_compat.constant_value(c) for c in item.consts))
        if isinstance(item, closed_type)
        else (item, ())
        for item in jax_compat.distinct_jaxprs(closed_jaxpr)
    ]


@functools.lru_cache(maxsize=4096)
def _is_user_file(file: str) -> bool:
    return source.is_user_file(file)


def _stack(eqn: Any) -> tuple[tuple[str, int, str], ...]:
    """The eqn's chain of user frames, outermost first; library frames (flax, optax...) left out.

    JAX's own notion of user code keeps site-packages; ours does not, so a loop over
    flax layers is attributed to the user's line, not to flax's.
    """
    return tuple(f for f in jax_compat.user_stack(eqn.source_info) if _is_user_file(f[0]))


def _location(frame: tuple[str, int, str] | None) -> SourceLocation | None:
    return None if frame is None else source.location(frame[0], frame[1], None, frame[2])


# -- names the function can reach ---------------------------------------------------------


def _code_names(code: types.CodeType) -> set[str]:
    """Global and attribute names a code object uses, nested functions and lambdas included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _is_array(value: Any) -> bool:
    return isinstance(value, (jax.Array, np.ndarray))


def _is_scalar(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, float, complex, np.number))


class _Reach:
    """Arrays and scalars a traced function can read without taking them as arguments.

    Each gets a label ("W", "params['w']", "self.table") and how it is reached
    ("global", "closure variable", "global read by helper"). The first label found wins:
    the function's own names before its helpers'.
    """

    def __init__(self) -> None:
        self.arrays: dict[int, tuple[str, str, Any]] = {}
        self.numpy: list[tuple[str, str, np.ndarray]] = []
        self.scalars: list[tuple[str, str, Any]] = []
        self._functions: set[int] = set()

    def drop_arrays(self) -> None:
        """Forget the arrays once matched (`pending_findings`): they may be the cell's, freed as it drops them."""
        self.arrays.clear()
        self.numpy.clear()

    # values
    def add(self, value: Any, label: str, how: str, names: set[str], depth: int) -> None:
        if _is_array(value):
            if id(value) not in self.arrays:
                self.arrays[id(value)] = (label, how, value)
                if isinstance(value, np.ndarray):
                    self.numpy.append((label, how, value))
        elif _is_scalar(value):
            if all(label != s[0] for s in self.scalars):
                self.scalars.append((label, how, value))
        elif isinstance(value, type):
            return
        elif isinstance(value, types.ModuleType):
            user_module = _is_user_file(getattr(value, "__file__", None) or "")
            for name in names:
                attr = value.__dict__.get(name)
                if _is_array(attr) or (user_module and _is_scalar(attr)):
                    self.add(attr, f"{label}.{name}", how, names, depth)
        elif callable(value) and (
            isinstance(value, (types.FunctionType, types.MethodType, functools.partial))
            or jax_compat.is_jitted_function(value)
        ):
            if depth < MAX_REACH_DEPTH:
                self.function(value, depth + 1, via=label)
        else:
            self._container(value, label, how, names, depth)

    def _container(self, value: Any, label: str, how: str, names: set[str], depth: int) -> None:
        """Leaves of a pytree (dict of params, equinox module) and attributes the code names."""
        if isinstance(value, (dict, list, tuple)) and len(value) > MAX_CONTAINER_LEAVES:
            return
        try:
            leaves, _ = jax.tree_util.tree_flatten_with_path(value)
        except Exception:  # boundary: a user's object JAX cannot flatten: its attributes are still read
            leaves = []
        if len(leaves) <= MAX_CONTAINER_LEAVES:
            for path, leaf in leaves:
                if path and (_is_array(leaf) or _is_scalar(leaf)):
                    self.add(leaf, label + jax.tree_util.keystr(path), how, names, depth)
        attrs = getattr(value, "__dict__", None)
        if isinstance(attrs, dict) and depth < MAX_REACH_DEPTH:
            for name in names & attrs.keys():
                self.add(attrs[name], f"{label}.{name}", how, names, depth + 1)

    # functions
    def function(self, fn: Any, depth: int = 0, via: str | None = None) -> None:
        """Names reachable from `fn`: through jit/grad wrappers, partials, bound methods, closures."""
        owner = None
        for _ in range(10):
            if id(fn) in self._functions:
                return
            self._functions.add(id(fn))
            if isinstance(fn, functools.partial):
                for i, arg in enumerate(fn.args):
                    self.add(arg, f"partial argument {i}", "bound with functools.partial", set(), depth)
                for key, arg in fn.keywords.items():
                    self.add(arg, key, "bound with functools.partial", set(), depth)
                fn = fn.func
            elif isinstance(fn, types.MethodType):
                owner, fn = fn.__self__, fn.__func__
            elif getattr(fn, "__wrapped__", None) is not None:
                fn = fn.__wrapped__
            else:
                break
        code = getattr(fn, "__code__", None)
        if code is None:  # a callable object: its pytree leaves and its __call__
            call = getattr(type(fn), "__call__", None)  # noqa: B004
            call_code = getattr(call, "__code__", None)
            if owner is None and call is not None and isinstance(call_code, types.CodeType):
                self._container(fn, "self", "attribute of the jitted callable", _code_names(call_code), depth)
                self.function(types.MethodType(call, fn), depth, via)
            return
        user = _is_user_file(code.co_filename)
        if not user:  # a library wrapper without __wrapped__: follow the callables it closes over
            for cell in getattr(fn, "__closure__", None) or ():
                inner = _cell(cell)
                if callable(inner) and not isinstance(inner, type) and depth < MAX_REACH_DEPTH:
                    self.function(inner, depth + 1, via)
            return
        names = _code_names(code)
        read_by = "" if via is None else f" read by {getattr(fn, '__qualname__', via)}"
        if owner is not None:
            self._container(owner, "self", "attribute" + read_by, names, depth)
        globals_ = getattr(fn, "__globals__", {}) or {}
        for name in sorted(names):
            if name in globals_:
                self.add(globals_[name], name, "global" + read_by, names, depth)
        for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
            value = _cell(cell)
            if value is not None:
                self.add(value, name, "closure variable" + read_by, names, depth)


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell: the variable was not assigned yet
        return None


# -- baked constants ----------------------------------------------------------------------


def _first_uses(jaxpr: Any, wanted: Iterable[Any]) -> dict[Any, Any]:
    """{var: the first eqn reading it} for the `wanted` vars, in one pass over the eqns."""
    left = set(wanted)
    found: dict[Any, Any] = {}
    for eqn in jaxpr.eqns:
        if not left:
            break
        for v in eqn.invars:
            if not jax_compat.is_literal(v) and v in left:
                found[v] = eqn
                left.discard(v)
    return found


def _refine(eqn: Any, var: Any, firsts: dict[int, tuple[Any, dict]], depth: int = 0) -> Any:
    """The eqn itself, or inside a call-like eqn (jit, remat) the first eqn of its body reading `var`.

    The use inside a nested jit is the line that reads the global; the outer eqn is only
    the line that calls the nested function. `firsts` remembers each body's first uses of all its
    inputs and each eqn's input positions (one pass each: a nested jit fed 560 constants is walked
    once, not 560 times).
    """
    if depth >= 8:
        return eqn
    for _, inner in jax_compat.sub_jaxprs(eqn, ordered=False, opened=True):
        if len(inner.invars) == len(eqn.invars):
            if id(eqn) not in firsts:
                firsts[id(eqn)] = (eqn, {id(v): i for i, v in reversed(list(enumerate(eqn.invars)))})
            inner_var = inner.invars[firsts[id(eqn)][1][id(var)]]
            if id(inner) not in firsts:
                firsts[id(inner)] = (inner, _first_uses(inner, inner.invars))  # `inner` kept: ids stay unique
            deeper = firsts[id(inner)][1].get(inner_var)
            if deeper is not None:
                deeper = _refine(deeper, inner_var, firsts, depth + 1)
                if _stack(deeper):
                    return deeper
    return eqn


def _canonical_dtype(dtype: Any) -> Any:
    try:
        return jax.dtypes.canonicalize_dtype(dtype)
    except Exception:  # boundary: a dtype of the user's JAX cannot canonicalize stays as given
        return dtype


def _match(value: Any, reach: _Reach) -> tuple[str, str] | None:
    """The user's name for a constant: the same array, a numpy view of it, or its converted copy."""
    named = reach.arrays.get(id(value))
    if named is not None:
        return named[0], named[1]
    if not isinstance(value, np.ndarray):
        return None
    base = value.base
    for _ in range(4):
        if base is None:
            break
        named = reach.arrays.get(id(base))
        if named is not None:
            return named[0], named[1]
        base = getattr(base, "base", None)
    for label, how, candidate in reach.numpy:
        if candidate.shape == value.shape and np.may_share_memory(candidate, value):
            return label, how
    for label, how, candidate in reach.numpy:  # float64 -> float32 when x64 is off: a new array
        if (
            candidate.shape == value.shape
            and value.size >= 2
            and candidate.dtype != value.dtype
            and _canonical_dtype(candidate.dtype) == value.dtype
            and np.array_equal(candidate.astype(value.dtype), value)
        ):
            return label, how
    return None


def _nbytes(value: Any) -> int:
    try:
        return int(value.nbytes)
    except Exception:  # boundary: any value of the user's
        return 0


def _function_name(fn: Any) -> str:
    target = jax_compat.python_function(fn) or fn
    return getattr(target, "__qualname__", None) or getattr(fn, "__name__", None) or "the function"


def _scalar_key(value: Any) -> tuple[float, float] | None:
    """A scalar at float32 precision, the precision a literal keeps; None for NaN."""
    try:
        z = complex(np.asarray(value).item())
    except Exception:  # boundary: any value of the user's
        return None
    if math.isnan(z.real) or math.isnan(z.imag):
        return None
    return float(np.float32(z.real)), float(np.float32(z.imag))


def _constants(closed_jaxpr: Any) -> Iterator[tuple[Any, str, Any]]:
    """(value, aval text, first eqn using it) for each array constant: constvars, then array literals."""
    firsts: dict[int, tuple[Any, dict]] = {}
    for jaxpr, consts in _walk(closed_jaxpr):
        arrays = [(var, value) for var, value in zip(jaxpr.constvars, consts) if _is_array(value)]
        first = _first_uses(jaxpr, (var for var, _ in arrays)) if arrays else {}
        for var, value in arrays:
            eqn = first.get(var)
            yield value, jax_compat.short_aval(var.aval), None if eqn is None else _refine(eqn, var, firsts)
        for eqn in jaxpr.eqns:  # jax_use_simplified_jaxpr_constants: arrays inline as Literals
            for atom in eqn.invars:
                if jax_compat.is_literal(atom):
                    value = jax_compat.literal_value(atom)
                    # Python scalars are literals too (TypedFloat, 0-d TypedNdArray); a 0-d jax
                    # array can only be a constant.
                    if isinstance(value, jax.Array) or (_is_array(value) and np.ndim(value) > 0):
                        yield value, jax_compat.short_aval(atom.aval), eqn


def _scalar_literals(closed_jaxpr: Any) -> dict[tuple[float, float], tuple[str, int, str] | None]:
    """{value at float32 precision: the user frame of its first eqn} for each scalar literal of the program."""
    found: dict[tuple[float, float], tuple[str, int, str] | None] = {}
    for jaxpr, _ in _walk(closed_jaxpr):
        for eqn in jaxpr.eqns:
            for atom in eqn.invars:
                if jax_compat.is_literal(atom):
                    value = jax_compat.literal_value(atom)
                    if np.ndim(value) == 0 and not isinstance(value, (bool, np.bool_)):
                        key = _scalar_key(value)
                        if key is not None and key not in found:
                            stack = _stack(eqn)
                            found[key] = stack[-1] if stack else None
    return found


# What the constants analysis reads of a jaxpr alone, per live jaxpr object (`JaxprMemo`): JAX hands
# back the same jaxpr for a signature it traced before, so a cell run again walks nothing. The values
# are matched against the globals of each cell anew; the memo holds them by weak reference only.
_CONSTANT_SITES: JaxprMemo[list | None] = JaxprMemo()
_SCALAR_LITERALS: JaxprMemo[dict] = JaxprMemo()


def _sites(jaxpr: Any) -> list[tuple[Any, str, tuple | None, int]]:
    """(value, aval text, user frame of its first use or None, bytes) for each array constant."""
    found = []
    for value, aval, eqn in _constants(jaxpr):
        stack = _stack(eqn) if eqn is not None else ()
        found.append((value, aval, stack[-1] if stack else None, _nbytes(value)))
    return found


def weak_constant_sites(closed_jaxpr: Any) -> list | None:
    """`_sites` with each value held weakly (what the memo keeps); None when a value cannot be.
    Also what the prefetch thread computes while XLA compiles the program (capture/prefetch.py)."""
    try:
        return [(weakref.ref(value), aval, frame, size) for value, aval, frame, size in _sites(closed_jaxpr)]
    except TypeError:  # a constant that cannot be weakly referenced: not remembered
        return None


def _prefetched_sites(closed_jaxpr: Any) -> list | None:
    """The constant sites the prefetch thread found while XLA compiled the program, else found now."""
    ready, found = PREFETCH.take("constants", closed_jaxpr)
    return found if ready else weak_constant_sites(closed_jaxpr)


def _constant_sites(closed_jaxpr: Any) -> list[tuple[Any, str, tuple[str, int, str] | None, int]]:
    """(value, aval text, user frame of its first use or None, bytes) for each array constant."""
    remembered = _CONSTANT_SITES.get(closed_jaxpr, _prefetched_sites)
    if remembered is not None:
        found = [(ref(), aval, frame, size) for ref, aval, frame, size in remembered]
        if all(value is not None for value, _, _, _ in found):
            return found
        _CONSTANT_SITES.forget(closed_jaxpr)  # a value the jaxpr no longer holds: read it again
    return _sites(closed_jaxpr)


def constants_reach(fn: Any) -> _Reach:
    """The arrays and scalars `fn` can read without taking them as arguments, as they are now (about
    0.1 ms): `baked_constants` matches a program's constants against this snapshot later, so a
    global reassigned after the call is still named as the value JAX read."""
    reach = _Reach()
    reach.function(fn)
    return reach


def _baked_scalars(
    closed_jaxpr: Any, reach: _Reach, name: str, reported: set[str], where: Callable[[Any], SourceLocation | None]
) -> list[Finding]:
    """Python scalar globals whose value appears as a literal in the program ("probably": matched by value)."""
    found: list[Finding] = []
    literals = _SCALAR_LITERALS.get(closed_jaxpr, _scalar_literals)
    for label, how, value in reach.scalars:
        key = _scalar_key(value)
        if key is None or label in reported or (key[1] == 0.0 and key[0] in _TRIVIAL_SCALARS):
            continue
        if key not in literals:
            continue
        reported.add(label)
        frame = literals[key]
        found.append(
            Finding(
                "global_constant",
                (
                    f"`{label}` ({how}, = {value!r}) was probably baked into the program as the literal {value!r}: "
                    f"Python numbers are read when `{name}` is traced, so giving `{label}` a new value later changes "
                    "nothing until JAX traces again. Pass it as an argument if it is meant to change."
                ),
                where(frame),
                "info",
            )
        )
    return found


def _where(location: SourceLocation | None) -> Callable[[Any], SourceLocation | None]:
    """A finding's site: the user frame of the eqn, else the function's definition."""
    return lambda frame: _location(frame) if frame is not None else location


def baked_constants(
    fn: Any, closed_jaxpr: Any, min_unnamed_bytes: int = MIN_UNNAMED_BYTES, reach: _Reach | None = None
) -> list[Finding]:
    """Findings of kind `global_constant` for `fn` (jitted or plain) and its traced ClosedJaxpr.

    * A named array (a global, closure variable, attribute of a bound method's `self`,
      leaf of a global pytree, `functools.partial` argument, or such a name in a helper
      the function calls) found among the program's constants: severity "warning".
    * An array constant no name matches, of at least `min_unnamed_bytes`: "info".
    * A Python scalar global whose value appears as a literal: "info", worded "probably"
      (a literal is matched by value only). 0, 1 and -1 are skipped: they are everywhere.
    Each name is reported once, at the first eqn that reads it. `reach` (from `constants_reach`
    right after the call) is what the names held then; by default they are read now.
    """
    if reach is None:
        reach = constants_reach(fn)
    name = _function_name(fn)
    where = _where(source.function_location(fn))
    reported: set[str] = set()
    findings = _baked_arrays(closed_jaxpr, reach, name, where, reported, min_unnamed_bytes)
    if reach.scalars:
        findings.extend(_baked_scalars(closed_jaxpr, reach, name, reported, where))
    return findings


def _baked_arrays(
    closed_jaxpr: Any,
    reach: _Reach,
    name: str,
    where: Callable[[Any], SourceLocation | None],
    reported: set[str],
    min_unnamed_bytes: int = MIN_UNNAMED_BYTES,
) -> list[Finding]:
    """The array constants of `baked_constants`: named ones, and unnamed ones from `min_unnamed_bytes`."""
    findings: list[Finding] = []
    unnamed: set[int] = set()
    for value, aval, frame, size in _constant_sites(closed_jaxpr):
        named = _match(value, reach)
        if named is not None:
            label, how = named
            if label in reported:
                continue
            reported.add(label)
            findings.append(
                Finding(
                    "global_constant",
                    (
                        f"`{label}` ({how}, {aval}, {bytes_text(size)}) is baked into the compiled program as a "
                        f"constant: JAX read its value when it traced `{name}`, so giving `{label}` a new value later "
                        "changes nothing until JAX traces again, and large constants bloat the program. "
                        "Pass it as an argument instead."
                    ),
                    where(frame),
                    "warning",
                )
            )
        elif size >= min_unnamed_bytes and id(value) not in unnamed:
            unnamed.add(id(value))
            findings.append(
                Finding(
                    "global_constant",
                    (
                        f"An array constant ({aval}, {bytes_text(size)}) is baked into the compiled program of `{name}`: "
                        "an array made outside the traced computation (numpy inside the function, or a value reached "
                        "through an object jaxmagic could not name). Its value is fixed until JAX traces again and it "
                        "makes the program bigger. Pass it as an argument, or build it with jnp inside the function."
                    ),
                    where(frame),
                    "info",
                )
            )
    return findings


@dataclass
class PendingFindings:
    """One program's jaxpr findings between its call and the capture's `stop`, holding no array and
    no function of the user's: a jitted closure the cell drops frees what it closed over at once.

    Its array constants are matched right after the call (their sites were found by the prefetch
    thread while XLA compiled a big program, or now for a small one); the scalar literals and the
    unrolled loops, which read the program's structure alone, wait for `stop` (`finish_pending`),
    on the program JAX traced while it is alive (the prefetch thread's walks are found by it), else
    on the copy the capture keeps, its constants stubbed.
    """

    name: str
    where: Callable[[Any], SourceLocation | None]
    kept: Any  # the program as the capture keeps it: itself when it holds no array, else its stubbed copy
    original: Any  # a weak reference to the program JAX traced, or None when `kept` is it
    reach: _Reach | None  # the scalars `fn` could read after its call (no arrays); None: constants unchecked
    found: list[Finding] = field(default_factory=list)
    reported: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def program(self) -> Any:
        original = self.original() if self.original is not None else None
        return original if original is not None else self.kept


def pending_findings(fn: Any, closed_jaxpr: Any, kept: Any, reach: _Reach | None) -> PendingFindings:
    """Take what `finish_pending` needs of one program right after its call (`PendingFindings`)."""
    name = _function_name(fn)
    original = None
    if kept is not closed_jaxpr:
        try:
            original = weakref.ref(closed_jaxpr)
        except TypeError:  # a jaxpr type without weak references: its walks are done on the copy
            original = None
    pending = PendingFindings(name, _where(source.function_location(fn)), kept, original, reach)
    if reach is not None:
        try:
            pending.found = _baked_arrays(closed_jaxpr, reach, name, pending.where, pending.reported)
        except Exception as exc:  # boundary: said in a note; the other analyses still run
            pending.notes.append(f"{name}: {CONSTANTS} not checked: {type(exc).__name__}: {exc}")
        reach.drop_arrays()
    return pending


def finish_pending(pending: PendingFindings) -> tuple[list[Finding], list[str]]:
    """The findings of one program at `stop`: its array constants (matched after its call), scalar
    literals and unrolled loops; a note for each analysis that failed."""
    program = pending.program()
    findings, notes = list(pending.found), list(pending.notes)
    if pending.reach is not None and pending.reach.scalars:
        try:
            findings.extend(_baked_scalars(program, pending.reach, pending.name, pending.reported, pending.where))
        except Exception as exc:  # boundary: said in a note; the loops are still looked for
            notes.append(f"{pending.name}: {CONSTANTS} not checked: {type(exc).__name__}: {exc}")
    try:
        findings.extend(_remembered_loops(program))
    except Exception as exc:  # boundary: said in a note
        notes.append(f"{pending.name}: {LOOPS} not checked: {type(exc).__name__}: {exc}")
    return findings, notes


# -- unrolled loops -----------------------------------------------------------------------


class _Context:
    """The eqns of one jaxpr traced under one chain of user frames (a line and its callers)."""

    __slots__ = ("prims", "total", "members")

    def __init__(self) -> None:
        self.prims: Counter = Counter()
        self.total = 0  # eqns with their sub-jaxprs' eqns
        self.members: list[int] = []  # indices of its eqns in the jaxpr


def _repeats(ctx: _Context, min_repeats: int) -> int:
    """k if the context's eqns are about k copies of one primitive mix, else 1.

    A primitive's count must be near a multiple of k (one off per multiple allowed: the first
    layer of an MLP needs no input gradient), for 90% of the eqns at least; the largest such k
    wins. Primitives seen fewer than `min_repeats` times (set-up, a differing first iteration)
    are not candidates for k.
    """
    n = len(ctx.members)
    counts = list(ctx.prims.values())
    best = 1
    for k in sorted({c for c in counts if c >= min_repeats}, reverse=True):
        covered = 0
        for count in counts:
            multiple = round(count / k)
            if multiple >= 1 and abs(count - multiple * k) <= multiple:
                covered += count
        if covered >= 0.9 * n:
            best = k
            break
    return best


def _chained(jaxpr: Any, members: list[int], copy_size: float) -> bool:
    """True if some dependency path holds as many of the members as two copies have eqns.

    Then copies feed each other: iterations of a loop. Independent copies (a tree map over
    parameters, a comprehension) keep every path inside one copy, plus what gathers them
    (a `jnp.stack` of the results), hence two copies and not one. Paths may pass through
    eqns of other lines: a loop body is often several lines.
    """
    member_set = set(members)
    on_path: dict[Any, int] = {}
    eqns = jaxpr.eqns
    for i in range(members[0], members[-1] + 1):
        eqn = eqns[i]
        count = max((on_path.get(v, 0) for v in eqn.invars if not jax_compat.is_literal(v)), default=0)
        if i in member_set:
            count += 1
            if count >= 2 * copy_size:
                return True
        if count:
            for v in eqn.outvars:
                on_path[v] = count
    return False


def _common_depth(stacks: list[tuple]) -> int:
    """How many outer frames every eqn shares: the traced function's entry (and its callers)."""
    present = [s for s in stacks if s]
    if not present:
        return 0
    first = present[0]
    common = len(first)
    for s in present:
        common = min(common, len(s))
        while common and s[common - 1] != first[common - 1]:
            common -= 1
    return common


def _loops_in(jaxpr: Any, sizes: dict[int, int], min_repeats: int, max_checks: int = 32) -> list[dict]:
    """Loops in one jaxpr: one entry per context that holds (part of) a loop body, not yet merged."""
    stacks = [_stack(eqn) for eqn in jaxpr.eqns]
    # Keep the deepest shared frame: a function whose body is one loop line is that line.
    first_depth = max(1, _common_depth(stacks))
    contexts: dict[tuple, _Context] = {}
    for i, (eqn, stack) in enumerate(zip(jaxpr.eqns, stacks)):
        if len(stack) < first_depth:
            continue
        size = 1 + sum(_size(sub, sizes) for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False))
        prim = eqn.primitive.name
        for d in range(first_depth, len(stack) + 1):
            key = stack[:d]
            ctx = contexts.get(key)
            if ctx is None:
                ctx = contexts[key] = _Context()
            ctx.prims[prim] += 1
            ctx.total += size
            ctx.members.append(i)
    children: dict[tuple, list[tuple]] = {}
    for key in contexts:
        if len(key) > first_depth:
            children.setdefault(key[:-1], []).append(key)
    loops: list[dict] = []
    flagged: set[tuple] = set()
    checks = 0
    for key in sorted(contexts, key=lambda key: (len(key), -contexts[key].total)):
        if any(key[:d] in flagged for d in range(first_depth, len(key))):
            continue  # inside a loop already found: its body, not another loop
        ctx = contexts[key]
        n = len(ctx.members)
        if n < min_repeats:
            continue
        k = _repeats(ctx, min_repeats)
        if k < min_repeats:
            continue
        if checks >= max_checks:  # each check is a pass over the jaxpr: bound the worst case
            break
        checks += 1
        chained = _chained(jaxpr, ctx.members, n / k)
        if chained:
            parts = _descend(key, k, contexts, children, min_repeats)
        else:  # independent copies: a loop only if the line is in one (a tree map is not)
            parts = [key] if _LoopStatements.enclosing(key[-1][0], key[-1][1]) is not None else []
        if parts:
            flagged.add(key)
            for part in parts:
                found = contexts[part]
                loops.append(
                    {
                        "key": part,
                        "k": k,
                        "n": len(found.members),
                        "total": found.total,
                        "prims": found.prims,
                        "independent": not chained,
                    }
                )
    return loops


def _descend(
    key: tuple, k: int, contexts: dict[tuple, _Context], children: dict[tuple, list[tuple]], min_repeats: int
) -> list[tuple]:
    """The contexts that hold the loop itself, under a context that repeats k times; [] for none.

    * Most of the context's eqns are its line's own (library calls): the line is the loop body.
    * Most are in calls it makes, and those calls repeat k times too: the loop is this line
      if it is in a loop statement (or the source cannot be parsed), else further down: a
      call like `loss(params)` repeats because a loop inside `loss` does.
    * Most are in calls that do not repeat: the same helper reached from different lines,
      which is no loop.
    """
    n = len(contexts[key].members)
    kids = children.get(key, ())
    if sum(len(contexts[kid].members) for kid in kids) < 0.9 * n:
        return [key]
    parts = [kid for kid in kids if _repeats(contexts[kid], min_repeats) % k == 0]
    if sum(len(contexts[kid].members) for kid in parts) < 0.9 * n:
        return []
    file, line, _ = key[-1]
    if _LoopStatements.spans(file) is None or _LoopStatements.enclosing(file, line) is not None:
        return [key]
    return [found for kid in parts for found in _descend(kid, k, contexts, children, min_repeats)]


def _size(jaxpr: Any, sizes: dict[int, int]) -> int:
    """Eqns of a (sub-)jaxpr with everything nested in it, memoised by identity."""
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    n = sizes.get(id(inner))
    if n is None:
        n = sum(
            1 + sum(_size(sub, sizes) for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False)) for eqn in inner.eqns
        )
        sizes[id(inner)] = n
    return n


class _LoopStatements:
    """The `for`/`while` statements and comprehensions of a source file, from its text in linecache.

    Lets a finding name the loop ("the `for` at line 28") and merge the findings of the
    lines of one loop body. Parsed once per file text; a text that does not parse (an
    IPython cell with magics left in) gives no loops and the finding names lines only.
    """

    _cache: dict[str, tuple[str, list[tuple[int, int, int]] | None]] = {}
    _LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

    @classmethod
    def spans(cls, file: str) -> list[tuple[int, int, int]] | None:
        """(first line, last line, index) of each loop in the file; None if its text does not parse."""
        text = "".join(linecache.getlines(file))
        cached = cls._cache.get(file)
        if cached is None or cached[0] != text:
            try:
                tree = ast.parse(text) if text else None
                spans = (
                    None
                    if tree is None
                    else [
                        (node.lineno, node.end_lineno or node.lineno, i)
                        for i, node in enumerate(ast.walk(tree))
                        if isinstance(node, cls._LOOPS)
                    ]
                )
            except (SyntaxError, ValueError):
                spans = None
            cached = cls._cache[file] = (text, spans)
        return cached[1]

    @classmethod
    def enclosing(cls, file: str, line: int) -> int | None:
        """The first line of the innermost loop statement containing `line`, or None."""
        inside = [(end - start, -start, start) for start, end, _ in cls.spans(file) or () if start <= line <= end]
        return min(inside)[2] if inside else None


def _merge_loops(loops: list[dict]) -> list[dict]:
    """The lines of one loop statement become one finding, from however many call sites.

    Their counts may differ (a line with two multiplies per iteration counts twice as many),
    so the merged count is their gcd. Lines in no loop statement are merged by line and callers.
    """
    merged: dict[tuple, dict] = {}
    for loop in loops:
        key = loop["key"]
        file, line, _ = key[-1]
        header = _LoopStatements.enclosing(file, line)
        group = (file, header) if header is not None else (key[:-1], file, line)
        into = merged.get(group)
        if into is None:
            merged[group] = {
                **loop,
                "lines": {line},
                "callers": {key[:-1]},
                "header": header,
                "prims": Counter(loop["prims"]),
            }
        else:
            into["lines"].add(line)
            into["callers"].add(key[:-1])
            into["k"] = math.gcd(into["k"], loop["k"])
            into["n"] += loop["n"]
            into["total"] += loop["total"]
            into["prims"].update(loop["prims"])
            into["independent"] = into["independent"] and loop["independent"]
    return list(merged.values())


def _loop_finding(loop: dict) -> Finding:
    key, k, total, header = loop["key"], loop["k"], loop["total"], loop["header"]
    lines = sorted(set(loop["lines"]))
    file, _, function = key[-1]
    where = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}–{lines[-1]}"
    if len(loop["callers"]) > 1:
        callers = f" (reached from {len(loop['callers'])} call sites; counts are per call site)"
    else:
        callers = "".join(f", called from {source.where_text(f, line)} in `{fn}`" for f, line, fn in reversed(key[:-1]))
        callers = f" ({callers[2:]})" if callers else ""
    copies = k * len(loop["callers"])
    per = [(p, round(c / copies)) for p, c in loop["prims"].most_common()]
    mix = ", ".join(f"{p}×{c}" if c > 1 else p for p, c in per[:5] if c) + (", …" if len(per) > 5 else "")
    if header is not None:
        code = source.code_line(file, header) or ""
        what = (
            f"The Python loop `{code}` ({source.where_text(file, header)}, in `{function}`){callers} "
            f"was unrolled: {where} ran"
        )
    else:
        what = f"A Python loop was unrolled: {where} of `{function}`{callers} ran"
    message = (
        f"{what} {k} times while JAX traced it, making {total:,} eqns (about {round(loop['n'] / copies):,} per "
        f"iteration: {mix}). Every iteration is separate code in the program, so tracing and compile time "
        "grow with the number of iterations. "
    )
    if loop["independent"]:
        message += (
            "The iterations do not depend on each other: jax.vmap over the stacked inputs computes "
            "them as one batched operation, traced and compiled once."
        )
    else:
        message += (
            "If the iterations do the same work, use jax.lax.fori_loop or jax.lax.scan (with "
            "per-iteration parameters stacked into arrays) so the body is traced and compiled once."
        )
    severity = "warning" if total >= WARN_LOOP_EQNS else "info"
    return Finding(
        "unrolled_loop",
        message,
        source.location(file, header if header is not None else lines[0], None, function),
        severity,
    )


def unrolled_loops(
    closed_jaxpr: Any,
    min_repeats: int = MIN_REPEATS,
    min_eqns: int = MIN_LOOP_EQNS,
    max_findings: int = MAX_LOOP_FINDINGS,
) -> list[Finding]:
    """Findings of kind `unrolled_loop`: Python loops whose body JAX traced `min_repeats`+ times.

    Looks at the root jaxpr and every distinct sub-jaxpr (a loop inside a scan body is found
    there). A loop is reported once, at its `for`/`while` line when the source parses (else
    at the repeated line): a loop over layers is one finding, not one per line of the layer,
    and a loop in a helper called from several lines is one finding. Loops under `min_eqns`
    eqns in all (sub-jaxprs included) are left out. At most `max_findings`, the biggest first.
    Severity "warning" from WARN_LOOP_EQNS eqns, else "info".
    """
    sizes: dict[int, int] = {}
    loops: list[dict] = []
    for jaxpr, _ in _walk(closed_jaxpr):
        # The size threshold applies to whole loops: a body of three one-eqn lines is one loop.
        loops.extend(loop for loop in _merge_loops(_loops_in(jaxpr, sizes, min_repeats)) if loop["total"] >= min_eqns)
    loops.sort(key=lambda loop: -loop["total"])
    return [_loop_finding(loop) for loop in loops[:max_findings]]


CONSTANTS = "baked constants"
LOOPS = "unrolled loops"

# Loop findings per live ClosedJaxpr. JAX hands back the same jaxpr object for a function and
# signature it traced before, so a cell run again (a training cell, a benchmark) skips the
# analysis. Loops depend on the jaxpr alone, while constants are matched against the globals
# of the moment (only the constants' sites are remembered, `_constant_sites`).
_LOOPS_SEEN: JaxprMemo[list[Finding]] = JaxprMemo()


def _remembered_loops(closed_jaxpr: Any) -> list[Finding]:
    return list(_LOOPS_SEEN.get(closed_jaxpr, _prefetched_loops))


def _prefetched_loops(closed_jaxpr: Any) -> list[Finding]:
    """The loops the prefetch thread found while XLA compiled the program, else found now."""
    ready, loops = PREFETCH.take("loops", closed_jaxpr)
    return loops if ready else unrolled_loops(closed_jaxpr)


def jaxpr_findings(
    fn: Any, closed_jaxpr: Any, kinds: tuple[str, ...] = (CONSTANTS, LOOPS), reach: _Reach | None = None
) -> tuple[list[Finding], list[str]]:
    """The analyses named in `kinds` for one (function, signature), and a note for each that failed.

    For the capture session: a failure here costs that finding, never the capture. The
    session takes `constants_reach` right after the call (the globals as they are then) and runs
    both analyses, which then read only that snapshot and the jaxpr, when the capture stops.
    """
    analyses = {
        CONSTANTS: lambda: baked_constants(fn, closed_jaxpr, reach=reach),
        LOOPS: lambda: _remembered_loops(closed_jaxpr),
    }
    findings: list[Finding] = []
    notes: list[str] = []
    for what in kinds:
        try:
            findings.extend(analyses[what]())
        except Exception as exc:  # boundary: one analysis failing is said in a note; the others still run
            notes.append(f"{_function_name(fn)}: {what} not checked: {type(exc).__name__}: {exc}")
    return findings, notes
