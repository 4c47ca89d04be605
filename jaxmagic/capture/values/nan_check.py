"""NaN and Inf in a cell's results, found without options, and where they first appeared.

While a cell runs, the calls jaxmagic records in full (each function's first calls and every
miss) and the latest readiness-sampled call of each function leave *weak* references to their
float outputs, and the full ones to their array arguments: buffer lifetimes stay the user's.
When the capture stops, the outputs still alive and ready (`is_ready()`, never waited for) are
checked on the host with numpy, shard by shard (no JAX op, so no compile and nothing on the
user's timeline; no host copy is cached on the user's arrays), within a byte and a call budget;
so are the arrays the cell bound in its namespace (a loop's last result, whose cache-hit call kept
no reference), and a full call's few small outputs are read as soon as it is recorded when they
are ready then (`print(f(x))` frees them before the cell ends).

For an output holding NaN (or Inf), the call's program is evaluated again eqn by eqn on its
arguments, when they are still alive, by the `--values` interpreter (capture/values/forward.py), and
stops at the first eqn whose result holds NaN (or Inf): the op `jax_debug_nans`
(`jax_debug_infs`) would stop at. Eager grads are evaluated on their forward/backward split
(capture/grads/split.py; traced under %%grad_graph), so the op is said to be forward or backward;
in a jitted step the backward ops are those JAX traced under `transpose`.

Under the user's own `jax_debug_nans`/`jax_debug_infs` JAX raises FloatingPointError at the
op; the finding then says what JAX stopped at (`debug_findings`).
"""

from __future__ import annotations

import math
import re
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from ... import strict
from ...units import bytes_text, plural
from .. import jax_compat, source
from ..keys import patch as key_patch
from ..record import Capture, Finding, SourceLocation
from . import forward as values

MAX_CHECK_BYTES = 64 << 20  # bytes of outputs read on the host per cell (64 MiB: ~10 ms on one CPU core)
MAX_WATCHED = 256  # calls whose outputs are held (weakly) per cell
# A fully recorded call's outputs already ready when it has been recorded are read at once when they
# are few and small (`print(f(x))` frees them before the cell ends): up to this many leaves and bytes.
EARLY_MAX_LEAVES = 16
EARLY_MAX_BYTES = 64 << 10
MAX_LOCATED = 4  # NaN/Inf outputs whose origin is searched per cell
# A call whose early-read outputs already hold NaN/Inf keeps its arguments (strongly, until the cell
# ends) so the origin can be searched though the cell drops them (`f(jnp.ones(3), ...)`): at most
# MAX_LOCATED such calls per cell, each with at most this many argument bytes.
PIN_MAX_BYTES = 64 << 20
# Small arguments of every fully recorded call are held until the cell ends too, whether or not its
# outputs were ready to read (a call returns before its outputs are computed): up to this many
# bytes a call and in all per cell. A demo's `f(jnp.ones(3))` keeps its origin; a train step's
# parameters are never held.
PIN_SMALL_BYTES = 1 << 20
PIN_SMALL_TOTAL = 16 << 20
LOCATE_BUDGET_S = 2.0  # wall clock per search, checked between eqns
LOCATE_MAX_EQNS = values.MAX_EQNS
_FLOAT_KINDS = "fc"


def _is_float(dtype: Any) -> bool:
    """True for floating and complex dtypes, bfloat16 and float8 included: what can hold NaN/Inf."""
    try:
        return np.dtype(dtype).kind in _FLOAT_KINDS or bool(jax.numpy.issubdtype(dtype, np.inexact))
    except (TypeError, ValueError):  # an extended dtype (keys) numpy cannot read
        return False


def _as_numpy(array: np.ndarray) -> np.ndarray:
    """bfloat16 and float8 (numpy 'V' kinds) are checked as float32."""
    return array if array.dtype.kind in _FLOAT_KINDS else array.astype(np.float32)


def host_counts(array: Any) -> tuple[int, int]:
    """(NaN count, Inf count) of one ready array, read shard by shard on the host.

    Each addressable shard is read once (replicas skipped) through its own single-device array,
    so the user's array never caches a host copy (`np.asarray(x)` would keep one on `x`).
    """
    nan = inf = 0
    parts = _distinct_parts(array)
    for part in parts:
        host = _as_numpy(np.asarray(part))
        if host.dtype.kind == "c":
            host = host.view(np.real(host).dtype)
        if not host.size or _all_finite(host):
            continue
        nan += int(np.count_nonzero(np.isnan(host)))
        inf += int(np.count_nonzero(np.isinf(host)))
    return nan, inf


def _distinct_parts(array: Any) -> list[Any]:
    """The single-device arrays holding each distinct part of `array` once (replicas skipped).

    A fully replicated array (every one-device array) is its first shard, taken without building
    the list of `Shard` objects: about a fifth of the check's time on a train step's small
    parameters (bench/trace.py's loop reads ~50 of them at each capture's end).
    """
    sharding = getattr(array, "sharding", None)
    if getattr(sharding, "is_fully_replicated", False) and hasattr(array, "addressable_data"):
        return [array.addressable_data(0)]
    shards = getattr(array, "addressable_shards", None)
    return [s.data for s in shards if getattr(s, "replica_id", 0) == 0] if shards else [array]


_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _all_finite(host: np.ndarray) -> bool:
    """True when no element is NaN or Inf, in one pass and no temporaries.

    The dot product of the values with themselves is NaN if one is NaN, Inf if one is Inf (BLAS,
    one pass: twice as fast as max and min); it is also Inf when large finite values overflow, and
    then the caller's exact count says 0. Other dtypes: max and min, NaN or +-Inf if one element is.
    """
    if host.dtype in _DOT_DTYPES and host.flags.c_contiguous:
        flat = host.reshape(-1)
        with np.errstate(all="ignore"):
            return bool(np.isfinite(np.dot(flat, flat)))
    return bool(np.isfinite(host.max()) and np.isfinite(host.min()))


def _weak(leaf: Any) -> Any:
    """A weak reference to an array leaf; other leaves (Python scalars, statics) as they are."""
    if isinstance(leaf, (jax.Array, np.ndarray)):
        try:
            return weakref.ref(leaf)
        except TypeError:
            return leaf
    return leaf


def _weak_object(obj: Any) -> Any:
    """A weak reference to a jitted function or a differentiation's split (each may hold big arrays the
    cell drops), or the object itself where its type takes none."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return obj


def _strong(item: Any) -> tuple[bool, Any]:
    """(alive, value) of a held argument leaf: a dead weak reference means it was freed."""
    if isinstance(item, weakref.ref):
        value = item()
        return value is not None, value
    return True, item


def _nbytes(array: Any) -> int:
    """An array's size in bytes from its shape and dtype: a fourth of the cost of JAX's `nbytes` property
    (which goes through numpy), read for every leaf of every fully recorded call."""
    try:
        return math.prod(array.shape) * array.dtype.itemsize
    except (AttributeError, TypeError):  # an extended dtype (keys) or an odd array-like
        return int(getattr(array, "nbytes", 0))


def _arg_bytes(leaves: list) -> int:
    return sum(_nbytes(v) for v in leaves if isinstance(v, (jax.Array, np.ndarray)))


@dataclass
class _Watched:
    """One call whose outputs are checked when the capture stops."""

    call: int | None  # Capture.calls index (jitted calls)
    grad: int | None  # Capture.grads index (eager differentiations)
    function: str
    out_tree: Any
    outputs: list  # (leaf position, weak ref) of float leaves
    fn: Any = None  # the jitted function, for its program: a weak reference but when pinned (`_pin`)
    arg_tree: Any = None
    args: list = field(default_factory=list)  # weak refs to array leaves, other leaves as they are
    split: Any = None  # grads.GradSplit of an eager grad: a weak reference but when pinned (`_pin`)
    no_inputs: str | None = None  # why the origin cannot be searched, known when watched
    value_first: bool = False  # value_and_grad: output [0] is the value, [1] the gradients
    early: dict = field(default_factory=dict)  # leaf position -> (NaN, Inf) read right after the call


def _sampled_entry(index: int, name: str, refs: tuple) -> _Watched:
    """The watched outputs of a readiness-sampled cache hit, whose arguments were not kept."""
    return _Watched(
        index,
        None,
        name,
        None,
        [(None, ref) for ref in refs],
        no_inputs=f"the arguments of call {index} (a cache hit in a loop) are not kept, to keep recording cheap",
    )


@dataclass
class _Origin:
    eqn: Any
    side: str | None  # "forward" | "backward" | None (no differentiation)
    at_input: str | None = None  # the input already held it


class _Found(Exception):
    def __init__(self, var: Any):
        self.var = var


_SEEN: dict = {}  # the summary of every variable `_FirstNonFinite` saw: none is kept


class _FirstNonFinite(values._Interpreter):
    """The values interpreter, stopped at the first variable holding NaN (or Inf)."""

    def __init__(self, kind: str, deadline: float, max_eqns: int, budget_s: float):
        super().__init__(deadline, max_eqns, budget_s)
        self.kind = kind

    def _summarize(self, var: Any, value: Any) -> None:
        self.values[var] = _SEEN  # seen: nothing else kept
        if not _is_float(getattr(getattr(var, "aval", None), "dtype", None)):
            return
        nan, inf = host_counts(value)
        if nan if self.kind == "nan" else inf:
            raise _Found(var)


class NanWatch:
    """Outputs to check at stop, held weakly; `check` turns them into findings and forgets them."""

    def __init__(self) -> None:
        self.watched: list[_Watched] = []
        # sampled cache hits: (call index, function name, weak refs) of the latest call per function,
        # a plain tuple (a train step of 0.5 ms is sampled every call); made into a `_Watched` at `check`
        self.latest: dict[Any, tuple[int, str, tuple]] = {}
        self.dropped = 0
        self.pinned = 0  # calls whose arguments are held strongly because they returned NaN/Inf (`_pin`)
        self.small_held = 0  # bytes of small arguments held strongly (`_hold_small`)

    def note_call(
        self, index: int, name: str, fn: Any, args: tuple, kwargs: dict, out: Any, keep_small: bool = True
    ) -> None:
        """A call recorded in full: its float outputs and its arguments, held weakly; the arguments
        held strongly when its outputs already hold NaN/Inf (`_pin`), or when small (`keep_small`)."""
        entry = self._entry(index, None, name, out)
        if entry is None:
            return
        arg_leaves, entry.arg_tree = jax.tree_util.tree_flatten((args, kwargs))
        entry.args = [_weak(leaf) for leaf in arg_leaves]
        entry.fn = _weak_object(fn)
        self._read_early(entry)
        if any(nan or inf for nan, inf in entry.early.values()):
            self._pin(entry)
        elif keep_small:
            self._hold_small(entry)
        self._add(entry)

    def _hold_small(self, entry: _Watched) -> None:
        """Hold a call's arguments until the cell ends when they are small (PIN_SMALL_BYTES a call,
        PIN_SMALL_TOTAL a cell): its outputs may be computed, and found NaN, only after the cell
        dropped them."""
        held = [_strong(item) for item in entry.args]
        if not all(alive for alive, _ in held):
            return
        values_ = [value for _, value in held]
        size = _arg_bytes(values_)
        if size <= PIN_SMALL_BYTES and self.small_held + size <= PIN_SMALL_TOTAL:
            entry.args = values_
            self.small_held += size

    def _pin(self, entry: _Watched) -> None:
        """Hold the arguments of a call already known to return NaN/Inf until the cell ends, so its
        origin can be searched though the cell drops them; within MAX_LOCATED calls, PIN_MAX_BYTES each."""
        if self.pinned >= MAX_LOCATED:
            return
        held = [_strong(item) for item in entry.args]
        if not all(alive for alive, _ in held):
            return
        values_ = [value for _, value in held]
        if _arg_bytes(values_) > PIN_MAX_BYTES:
            return
        entry.args = values_
        entry.fn = _strong(entry.fn)[1]  # and its program: the cell may drop a `jax.jit(f)` at once
        entry.split = _strong(entry.split)[1]
        self.pinned += 1

    def _read_early(self, entry: _Watched) -> None:
        """Read a few small outputs that are ready already (never waiting): arrays do not change, so
        their counts stand at `stop` even if the cell frees them meanwhile. A host read, no JAX op."""
        if len(entry.outputs) > EARLY_MAX_LEAVES or len(self.watched) >= MAX_WATCHED:
            return
        arrays = [(position, ref()) for position, ref in entry.outputs]
        try:
            if sum(_nbytes(a) for _, a in arrays if a is not None) > EARLY_MAX_BYTES:
                return
            for position, array in arrays:
                if array is not None and not array.is_deleted() and array.is_ready():
                    entry.early[position] = host_counts(array)
        except Exception:  # boundary: an output freed or donated meanwhile is read at stop, if at all
            entry.early.clear()

    def note_sampled(self, key: Any, index: int, name: str, refs: tuple) -> None:
        """A readiness-sampled cache hit: the one or two outputs readiness watches (weak references,
        capture/jit/readiness.py), for the latest such call per function; its arguments are not kept."""
        latest = self.latest
        if key in latest or len(latest) < MAX_WATCHED:
            latest[key] = (index, name, refs)

    def note_grad(
        self,
        index: int,
        name: str,
        kind: str,
        out: Any,
        split: Any,
        primals: tuple,
        primal_kwargs: dict,
        why: str | None,
    ) -> None:
        """An eager differentiation: its outputs, and its differentiated arguments when it has a split."""
        entry = self._entry(None, index, name, out)
        if entry is None:
            return
        entry.no_inputs, entry.value_first = why, kind == "value_and_grad"
        if split is not None:
            entry.split = _weak_object(split)  # it holds what the function closed over: strongly only when pinned
            entry.args = [_weak(leaf) for leaf in jax.tree_util.tree_leaves((tuple(primals), primal_kwargs))]
            self._read_early(entry)
            if any(nan or inf for nan, inf in entry.early.values()):
                self._pin(entry)
        self._add(entry)

    def _entry(self, call: int | None, grad: int | None, name: str, out: Any) -> _Watched | None:
        leaves, tree = jax.tree_util.tree_flatten(out)
        outputs = []
        for position, leaf in enumerate(leaves):
            if isinstance(leaf, jax.Array) and _is_float(leaf.dtype):
                try:
                    outputs.append((position, weakref.ref(leaf)))
                except TypeError:
                    pass
        return _Watched(call, grad, name, tree, outputs) if outputs else None

    def _add(self, entry: _Watched) -> None:
        if len(self.watched) < MAX_WATCHED:
            self.watched.append(entry)
        else:
            self.dropped += 1

    def check(self, capture: Capture, bound: Sequence[tuple[str, Any]] = ()) -> None:
        """Check what is still alive and ready; add findings and notes to `capture`. Never raises.

        `bound`: (name as written, array) for the arrays the cell bound in the namespace: they
        name the outputs they are, and the rest (a loop's last result, whose call kept no
        reference) are checked too."""
        full = {entry.call for entry in self.watched}
        entries = [*self.watched, *(_sampled_entry(*hit) for hit in self.latest.values() if hit[0] not in full)]
        self.watched, self.latest = [], {}
        try:
            _check(entries, capture, self.dropped, bound)
        except Exception as exc:  # boundary: said in a note, never raised into the cell
            capture.notes.append(f"outputs not checked for NaN/Inf: {type(exc).__name__}: {exc}")


MAX_BOUND_LEAVES = 1000  # arrays read in one name's tuples, lists and dicts


def names_before(namespace: dict) -> dict[str, Any]:
    """What each name held when the cell started: a weak reference where the object takes one
    (an array freed in the cell may leave its id to the array that replaced it), else its id."""
    before: dict[str, Any] = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        try:
            before[name] = weakref.ref(value)
        except TypeError:
            before[name] = id(value)
    return before


def _unchanged(held: Any, value: Any) -> bool:
    """True when a name still holds what it held when the cell started."""
    return held() is value if isinstance(held, weakref.ref) else held == id(value)


def bound_arrays(namespace: dict, before: dict[str, Any]) -> list[tuple[str, Any]]:
    """(name as written, array) of the float arrays in names the cell bound or rebound, inside
    tuples, lists and dicts too (`params['w']`); names starting with `_` are IPython's."""
    found = []
    for name, value in list(namespace.items()):
        if name.startswith("_") or (name in before and _unchanged(before[name], value)):
            continue
        if isinstance(value, jax.Array):
            found.append((name, value))
        elif isinstance(value, (tuple, list, dict)):
            try:
                leaves = jax.tree_util.tree_flatten_with_path(value)[0][:MAX_BOUND_LEAVES]
            except Exception:  # boundary: a user's container JAX cannot flatten is not read
                continue
            found.extend(
                (name + jax.tree_util.keystr(path), leaf) for path, leaf in leaves if isinstance(leaf, jax.Array)
            )
    return found


def _counts_within(array: Any, budget: list[int]) -> tuple[int, int] | None:
    """NaN/Inf counts of a ready float array within the byte budget; None when not checked."""
    try:
        if not _is_float(array.dtype) or array.is_deleted():
            return None
        if not array.is_ready():
            budget[2] += 1
            return None
    except Exception:  # boundary: a user's array-like whose state cannot be read is not checked
        return None
    nbytes = _nbytes(array)
    if nbytes > budget[0]:
        budget[1] += 1
        return None
    budget[0] -= nbytes
    return host_counts(array)


def _check(entries: list[_Watched], capture: Capture, dropped: int, bound: Sequence[tuple[str, Any]]) -> None:
    """Read every watched output within the budget, then one finding per function, kind and kind of
    output (its first call whose origin was found, else its first), saying in how many calls."""
    budget = [MAX_CHECK_BYTES, 0, 0]  # bytes left, outputs past the budget, outputs not ready
    names: dict[int, str] = {}
    for name, array in sorted(bound, key=lambda item: bool(re.search(r"[\[.]", item[0]))):
        names.setdefault(id(array), name)  # an array under several names is called by a plain one (`p`)
    checked: set[int] = set()
    groups: dict[tuple, list] = {}
    for entry in sorted(entries, key=lambda e: (e.grad is not None, e.call if e.call is not None else e.grad)):
        for position, ref in entry.outputs:
            counts, name = _read(entry, position, ref, budget, checked, names)
            if counts is None or not any(counts):
                continue
            kind = "nan" if counts[0] else "inf"
            hits = groups.setdefault((entry.function, entry.grad is None, kind), [])
            if not hits or hits[-1][0] is not entry:  # one hit per call
                hits.append((entry, position, counts[0] or counts[1], name))
    tries = MAX_LOCATED
    for (_, _, kind), hits in groups.items():
        origin, why, chosen = None, "more NaN/Inf outputs than the origins searched per cell", hits[0]
        for hit in hits:
            if tries <= 0:
                break
            tries -= 1
            origin, why = _locate(hit[0], kind)
            if origin is not None or hit is hits[0]:
                chosen = hit
            if origin is not None:
                break
        entry, position, count, name = chosen
        # the cell's name of another call's output (a loop's last result) still says which array it is
        bound_too = next((hit[3] for hit in reversed(hits) if hit[3] and hit is not chosen), None)
        finding = _finding(entry, kind, count, _out_path(entry, position), origin, why, name, len(hits), bound_too)
        capture.findings.append(finding)
    _check_bound(bound, checked, budget, capture)
    if budget[1]:
        capture.notes.append(
            f"{plural(budget[1], 'output')} not checked for NaN/Inf: past the "
            f"{bytes_text(MAX_CHECK_BYTES)} read per cell"
        )
    if budget[2]:
        capture.notes.append(
            f"{plural(budget[2], 'output')} still being computed when the cell ended "
            "not checked for NaN/Inf (the check never waits for the device)"
        )
    if dropped:
        capture.notes.append(
            f"the outputs of {plural(dropped, 'call')} were not checked for NaN/Inf: "
            f"{MAX_WATCHED} calls are checked per cell"
        )


def _read(
    entry: _Watched, position: int | None, ref: weakref.ref, budget: list[int], checked: set[int], names: dict[int, str]
) -> tuple[tuple[int, int] | None, str | None]:
    """(NaN, Inf) counts of one watched output, read right after its call or now; its bound name."""
    array = ref()
    name = None if array is None else names.get(id(array))
    if array is not None:
        if id(array) in checked:
            return None, None
        checked.add(id(array))
    early = entry.early.get(position)
    if early is not None:
        return early, name
    if array is None:
        return None, None
    return _counts_within(array, budget), name


def _check_bound(bound: Sequence[tuple[str, Any]], checked: set[int], budget: list[int], capture: Capture) -> None:
    """Arrays the cell bound that no watched call output was: one finding per name that holds NaN/Inf."""
    reported: set[str] = set()
    for name, array in bound:
        root = re.split(r"[\[.]", name, maxsplit=1)[0]
        if id(array) in checked or root in reported:
            continue
        checked.add(id(array))
        counts = _counts_within(array, budget)
        if not counts or not any(counts):
            continue
        reported.add(root)
        kind = "nan" if counts[0] else "inf"
        word = _WORD[kind]
        capture.findings.append(
            Finding(
                kind=kind,
                severity="bug",
                message=(
                    f"`{name}`, bound by this cell, holds {word} ({plural(counts[0] or counts[1], 'element')}); the "
                    f"origin could not be located: the call or op that made it kept no reference to its arguments "
                    f"(after a function's first calls, cache hits in a loop are recorded without them). "
                    f"%%jaxpr --values on one call, or jax.config.update('jax_debug_{kind}s', True), finds the op."
                ),
            )
        )


def _out_path(entry: _Watched, position: int | None) -> str:
    """The output's pytree path (`[1]['w']`), or "" for a single array (or one readiness watched)."""
    if position is None or entry.out_tree is None:
        return ""
    try:
        marked = jax.tree_util.tree_unflatten(entry.out_tree, list(range(entry.out_tree.num_leaves)))
        for path, leaf in jax.tree_util.tree_flatten_with_path(marked)[0]:
            if leaf == position:
                return jax.tree_util.keystr(path)
    except Exception as exc:  # the finding names the whole output instead
        strict.fallback("the output path of a NaN/Inf finding", exc)
    return ""


def _alive_args(entry: _Watched) -> tuple[list | None, str | None]:
    """The call's argument leaves if all are still alive and not donated; else why not."""
    leaves = []
    for item in entry.args:
        alive, value = _strong(item)
        if not alive:
            return None, (
                "its arguments were freed before the cell ended (overwritten or donated), so the "
                "program cannot be evaluated again on them"
            )
        if isinstance(value, jax.Array) and value.is_deleted():
            return None, "an argument was donated (the call deleted its buffer)"
        leaves.append(value)
    return leaves, None


def _locate(entry: _Watched, kind: str) -> tuple[_Origin | None, str | None]:
    """The first eqn whose result holds `kind`, evaluating the call's program again; or why not."""
    if entry.no_inputs is not None:
        return None, entry.no_inputs
    leaves, why = _alive_args(entry)
    if leaves is None:
        return None, why
    try:
        with key_patch.quiet():
            if entry.split is not None:
                alive, split = _strong(entry.split)
                if not alive:
                    return None, (
                        "the cell dropped the differentiated function before it ended, and with it the "
                        "program's constants, so the program cannot be evaluated again"
                    )
                return _locate_grad(split, leaves, kind)
            return _locate_call(entry, leaves, kind)
    except Exception as exc:  # boundary: the user's program, evaluated again, may fail: the reason says so
        return None, f"evaluating the program again failed: {type(exc).__name__}: {exc}"


def _locate_call(entry: _Watched, leaves: list, kind: str) -> tuple[_Origin | None, str | None]:
    """The origin inside a jitted call's program, evaluated again on the call's own arguments."""
    alive, fn = _strong(entry.fn)
    if not alive:
        return None, (
            "the cell dropped the jitted function before it ended, and with it the program's constants, "
            "so the program cannot be evaluated again"
        )
    args, kwargs = jax.tree_util.tree_unflatten(entry.arg_tree, leaves)
    # The call's own trace (JAX's cache answers it), under the user's settings: traced while
    # jax_debug_nans is switched off for this thread, JAX keeps a cache entry that later calls
    # under the user's jax_debug_nans reuse without checking (JAX 0.10).
    traced = fn.trace(*args, **kwargs)
    flat = values.call_arguments(fn, traced, args, kwargs)
    if flat is None:
        return None, "the call's arguments do not match its traced program"
    deadline = time.perf_counter() + LOCATE_BUDGET_S
    origin, why, _ = _search(traced.jaxpr, flat, kind, deadline, jax_compat.argument_paths(traced.jaxpr))
    return origin, why


def _locate_grad(split: Any, leaves: list, kind: str) -> tuple[_Origin | None, str | None]:
    """Forward pass on the differentiated leaves, then backward on its residuals and JAX's seed (1.0)."""
    deadline = time.perf_counter() + LOCATE_BUDGET_S
    dynamic = [leaves[i] for i in split.dynamic]
    origin, why, outputs = _search(split.forward, dynamic, kind, deadline, None, side="forward")
    if origin is not None or outputs is None:
        return origin, why
    residuals = outputs[split.n_primal_out :]
    del outputs
    seeds = [np.ones(v.aval.shape, v.aval.dtype) for v in split.backward.jaxpr.invars[len(residuals) :]]
    origin, why, _ = _search(split.backward, [*residuals, *seeds], kind, deadline, None, side="backward")
    return origin, why


def _search(
    closed: Any, flat: Sequence[Any], kind: str, deadline: float, names: Sequence[str] | None, side: str | None = None
) -> tuple[_Origin | None, str | None, list | None]:
    """(origin, why not, outputs when it ran to the end without finding one)."""
    jaxpr = closed.jaxpr
    refused = values.replay_refusal(closed)
    if refused:
        return None, refused, None
    if len(flat) != len(jaxpr.invars):
        return None, "its arguments do not match the program's inputs", None
    elements = sum(int(np.prod(getattr(v.aval, "shape", ()))) for v in jaxpr.invars)
    if elements > values.MAX_ARG_ELEMENTS:
        return None, f"its arguments have {elements:,} elements (searched up to {values.MAX_ARG_ELEMENTS:,})", None
    interpreter = _FirstNonFinite(kind, deadline, LOCATE_MAX_EQNS, LOCATE_BUDGET_S)
    try:
        with (
            jax_compat.debug_checks_off(),
            jax_compat.compile_logs_off(),
        ):  # the replay is ours: the user's checks would stop it
            outputs = interpreter.run(jaxpr, closed.consts, flat)
    except _Found as found:
        return _origin_of(jaxpr, closed.consts, found.var, names, side), None, None
    except values._Stop as stop:
        return None, f"{stop}: the origin was not located", None
    return (
        None,
        (
            f"evaluated again eqn by eqn ({plural(interpreter.bound, 'eqn')}), no eqn produced "
            f"{_WORD[kind]} (the compiled program differs: XLA fused or reordered the ops)"
        ),
        outputs,
    )


def _origin_of(jaxpr: Any, consts: Sequence[Any], var: Any, names: Sequence[str] | None, side: str | None) -> _Origin:
    """The eqn (or input) that first holds the value, and whether it is a forward or backward op."""
    for position, invar in enumerate(jaxpr.invars):
        if invar is var:
            name = names[position] if names and position < len(names) else f"input {position}"
            return _Origin(None, side, at_input=name)
    if any(c is var for c in jaxpr.constvars):
        return _Origin(None, side, at_input="a constant the program closed over")
    found = _producer(jaxpr, var, ())
    if found is None:
        return _Origin(None, side, at_input="an input of an inner program")
    eqn, chain = found
    if side is None:
        for outer in (*chain, eqn):
            info = getattr(outer, "source_info", None)
            if jax_compat.has_transform(info, "transpose"):
                side = "backward"
                break
            if jax_compat.has_transform(info, "jvp"):
                side = "forward"
    return _Origin(eqn, side)


def _producer(jaxpr: Any, var: Any, chain: tuple) -> tuple[Any, tuple] | None:
    """The eqn whose outputs include `var`, and the eqns whose bodies hold it (outermost first)."""
    for eqn in jaxpr.eqns:
        if any(out is var for out in eqn.outvars):
            return eqn, chain
        for _, sub in jax_compat.sub_jaxprs(eqn, ordered=False, opened=True):
            found = _producer(sub, var, (*chain, eqn))
            if found is not None:
                return found
    return None


_WORD = {"nan": "NaN", "inf": "Inf"}
# The usual cause and fix per primitive (JAX's names), for the op that first produced the value.
_FIXES = {
    "log": "a log of a negative number gives NaN (of 0, -Inf): clip its argument (jnp.clip(v, 1e-6)) or guard it "
    "with jnp.where; for log(1 + exp(x)) use jax.nn.softplus or jnp.logaddexp(0, x)",
    "log1p": "log1p of a number below -1 gives NaN: clip its argument or guard it with jnp.where",
    "sqrt": "a sqrt of a negative number gives NaN (and its gradient at 0 is Inf): clip the argument, or use the "
    "double-where trick jnp.where(v > 0, jnp.sqrt(jnp.where(v > 0, v, 1)), 0)",
    "rsqrt": "rsqrt of a negative number is NaN, of 0 Inf: add an epsilon (jax.lax.rsqrt(v + 1e-6))",
    "pow": "a negative base to a fractional power is NaN: clip the base or use jnp.abs",
    "div": "0/0 is NaN and x/0 is Inf: divide safely with the double-where trick "
    "jnp.where(d != 0, n / jnp.where(d != 0, d, 1), 0), which also keeps the gradient finite",
    "exp": "exp overflows float32 above about 88.7: use jax.nn.softplus / jnp.logaddexp for log(1 + exp(x)), "
    "jax.nn.softmax / jax.nn.logsumexp for normalising, or subtract the maximum first",
    "mul": "0 * Inf is NaN: an earlier op overflowed to Inf (often exp); compute that part stably "
    "(jax.nn.softplus, jnp.logaddexp, jax.nn.logsumexp)",
    "sub": "Inf - Inf is NaN: an earlier op overflowed to Inf; compute that part stably",
    "add": "Inf + -Inf is NaN, and large values overflow: an earlier op overflowed; compute that part stably",
    "acos": "acos outside [-1, 1] is NaN: clip its argument",
    "asin": "asin outside [-1, 1] is NaN: clip its argument",
    "atanh": "atanh outside (-1, 1) is NaN or Inf: clip its argument",
    "lgamma": "lgamma at a non-positive integer is Inf: keep its argument positive",
}
_DEFAULT_FIX = (
    "check this op's inputs; jax.config.update('jax_debug_nans', True) (or 'jax_debug_infs') makes JAX raise at it"
)


def _eqn_location(eqn: Any) -> SourceLocation | None:
    """The user's line an eqn was traced from (JAX's source_info), or None."""
    frame = jax_compat.user_frame(getattr(eqn, "source_info", None))
    if frame is None:
        return None
    return source.location(frame.file_name, frame.start_line, getattr(frame, "start_column", None), frame.function_name)


def _finding(
    entry: _Watched,
    kind: str,
    count: int,
    path: str,
    origin: _Origin | None,
    why: str | None,
    name: str | None = None,
    calls: int = 1,
    bound_too: str | None = None,
) -> Finding:
    """One finding: the function, the output, the op and its line with the usual fix, or why not found."""
    word = _WORD[kind]
    what = "gradient" if entry.grad is not None else "output"
    if entry.value_first:  # value_and_grad's (value, grads)
        what, path = ("value", path[3:]) if path.startswith("[0]") else ("gradient", path[3:])
    output = f"its {what}{' ' + path if path else ''}" + (f" (`{name}`)" if name else "")
    more = f"; {plural(calls - 1, 'more call')} of it did too" if calls > 1 else ""
    more += f", one of them into `{bound_too}`" if bound_too and calls > 1 else ""
    head = f"{entry.function} returned {word} in {output} ({plural(count, 'element')}{more})"
    where = None
    if origin is not None and origin.eqn is not None:
        primitive = origin.eqn.primitive.name
        where = _eqn_location(origin.eqn)
        line = f" at line {where.line}" + (f" ({where.code})" if where.code else "") if where else ""
        side = f" in the {origin.side} pass" if origin.side else ""
        fix = _FIXES.get(primitive, _DEFAULT_FIX)
        message = (
            f"{head}: the first {word} comes from `{primitive}`{side}{line}, found by evaluating the "
            f"program again eqn by eqn (jax_debug_{kind}s stops at the same op). Usual fix: {fix}."
        )
    elif origin is not None:
        message = (
            f"{head}: {origin.at_input} already held {word}"
            f"{' in the ' + origin.side + ' pass' if origin.side else ''}: it comes from earlier work."
        )
    else:
        message = (
            f"{head}; the origin could not be located: {why}. %%jaxpr --values or "
            f"jax.config.update('jax_debug_{kind}s', True) finds the op."
        )
    return Finding(kind=kind, message=message, source=where, severity="bug", call=entry.call, function=entry.function)


def _verdict_message(kind: str, stopped_at: str, where: SourceLocation | None, function: str | None) -> str:
    """What JAX's `jax_debug_{kind}s` stopped at, in its words. Older JAX (0.4) names only the jitted
    function (`jit(f)`) when its de-optimized re-run does not produce the value again: then no op
    and no op's fix is claimed."""
    line = f" at line {where.line}" + (f" ({where.code})" if where.code else "") if where else ""
    name = f" in {function}" if function else ""
    raised = f"jax_debug_{kind}s raised FloatingPointError (invalid value ({kind}) encountered in {stopped_at})"
    if stopped_at.startswith(("jit(", "pjit(")):
        return (
            f"JAX stopped the cell{name} inside the jitted call `{stopped_at}`{line}: {raised}; this JAX does not "
            f"name the op inside. Run the cell without jax_debug_{kind}s to have the magic locate it."
        )
    return f"JAX stopped the cell{name} at `{stopped_at}`{line}: {raised}. Usual fix: {_FIXES.get(stopped_at, _DEFAULT_FIX)}."


def debug_findings(capture: Capture) -> list[Finding]:
    """What the user's `jax_debug_nans`/`jax_debug_infs` stopped at: JAX's FloatingPointError, from a
    recorded call, a differentiation, or the cell itself; one finding per (op, line)."""
    found: list[Finding] = []
    seen: set = set()

    def add(text: str | None, where: SourceLocation | None, call: int | None, function: str | None) -> None:
        stopped = jax_compat.debug_check_stop(text or "")
        if stopped is None:
            return
        kind, primitive = stopped
        key = (kind, primitive, where and (where.file, where.line))
        if key in seen:
            return
        seen.add(key)
        found.append(
            Finding(
                kind=kind,
                severity="bug",
                source=where,
                call=call,
                function=function,
                message=_verdict_message(kind, primitive, where, function),
            )
        )

    error = capture.error
    failed = [c for c in capture.calls if c.error and c.error.startswith("FloatingPointError")]
    failed_grads = [g for g in capture.grads if g.error and "FloatingPointError" in g.error]
    if error is not None and error.type == "FloatingPointError":  # named by the call or grad that raised
        call, name = (
            (failed[-1].index, failed[-1].name)
            if failed
            else (failed_grads[-1].call, failed_grads[-1].name)
            if failed_grads
            else (None, None)
        )
        add(f"FloatingPointError: {error.message}", error.source, call, name)
    for call in failed:
        add(
            call.error,
            error.source if error is not None and error.type == "FloatingPointError" else None,
            call.index,
            call.name,
        )
    for grad in failed_grads:
        add(grad.error, grad.call_site, grad.call, grad.name)
    return found
