"""Seeing every differentiation of a capture: `jax.grad` & co. replaced for its duration.

`jax.grad`, `value_and_grad`, `jacrev` and `jacfwd` return a function; during a capture they
return a stand-in for it that reports each call. `jax.vjp`, `jax.jvp` and `jax.linearize`
report the call itself. Every stand-in passes `*args, **kwargs` to JAX's own object untouched
(so `holomorphic`, `allow_int`, `reduce_axes` and any keyword a later JAX adds keep working)
and reads `argnums` / `has_aux` from them only for the record. The user's call runs exactly
once, first; what is recorded is worked out after it returns.

Nothing here sits on the path of a jitted call: a capture with no differentiation costs
nothing per call (patching and restoring cost about 55 us per capture). Only the `jax`
module attributes and the namespace's aliases of them are patched, not JAX's internals: the
`jacfwd(jacrev(...))` inside `jax.hessian` (one record, the hessian), grad functions made
before the capture and modules that ran `from jax import grad` at import time are not seen.
Functions made during a capture stay stand-ins afterwards: with no capture running they
only forward, and a later capture records them again.
"""

from __future__ import annotations

import collections
import copy
import functools
import inspect
import sys
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Protocol

import jax
import numpy as np

from ... import strict
from .. import aliases, jax_compat, source
from ..jit import user_names
from ..jit.signature import _leaf_spec, _static_repr
from ..patches import replace_attribute
from ..record import ArgSpec, GradCall, Signature
from ..silence import this_thread_silenced
from . import split as grads
from . import values as grad_values

TRANSFORMS = ("grad", "value_and_grad", "jacrev", "jacfwd", "hessian")  # return a function; its calls are recorded
CALLS = ("vjp", "jvp", "linearize")  # recorded when called
SPLIT_KINDS = ("grad", "value_and_grad", "vjp", "jacrev")  # reverse mode: JAX's forward/backward split exists
SPLIT_OFF_NOTE = (
    "no forward/backward split: it traces the function again (its Python runs once more), "
    "so it is taken only when asked: %%grad_graph, or jaxmagic.capture(grads=True)"
)

_CURRENT_TRACE, _NO_TRACE = jax_compat.current_trace_probe()  # the probe `JitRecorder.record` uses
_clock = time.perf_counter


@dataclass(frozen=True, slots=True)
class Differentiation:
    """What one `jax.grad(...)` (or one `jax.vjp(...)` call) differentiates, read from its arguments."""

    kind: str
    fn: Any  # the differentiated function
    argnums: tuple[int, ...]
    has_aux: bool

    @property
    def name(self) -> str:
        target = getattr(self.fn, "__wrapped__", self.fn)
        name = getattr(target, "__qualname__", None) or getattr(self.fn, "__name__", None)
        if name is None and isinstance(self.fn, functools.partial):
            name = getattr(self.fn.func, "__qualname__", None)
        return name or f"<{type(self.fn).__name__}>"


class GradRecorder(Protocol):
    def record_grad(
        self, what: Differentiation, run: Callable, args: tuple, kwargs: dict, primals: tuple, primal_kwargs: dict
    ) -> Any: ...


_recorder: GradRecorder | None = None  # the innermost running capture session


def set_recorder(recorder: GradRecorder | None) -> GradRecorder | None:
    """Make `recorder` receive differentiations; returns the previous one for restoring."""
    global _recorder
    previous, _recorder = _recorder, recorder
    return previous


# ---------------------------------------------------------------------------------------------
# The stand-ins.


def _argnum_tuple(argnums: Any) -> tuple[int, ...]:
    if isinstance(argnums, (int, np.integer)):
        return (int(argnums),)
    try:
        return tuple(int(n) for n in argnums)
    except Exception:  # JAX rejects it when the function is called; the record just has none
        return ()


def _recorded_transform(made: Callable, what: Differentiation) -> Callable:
    """Stand-in for the function `jax.grad(...)` made: forwards, through the running capture if any.

    With no capture running it costs one global read, so a `grad_fn` made in a captured cell
    and kept stays cheap in later plain cells, and is seen again by later captures.
    """

    def recorded_transform(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        recorder = _recorder
        if recorder is None:
            return made(*args, **kwargs)
        try:
            return recorder.record_grad(what, made, args, kwargs, args, kwargs)
        except BaseException as exc:  # the recorder's frames are not the user's to read
            raise exc.with_traceback(source.past_own_frames(exc.__traceback__))

    functools.update_wrapper(recorded_transform, made)
    recorded_transform._jaxmagic_made = made  # type: ignore[attr-defined]
    return recorded_transform


@functools.lru_cache(maxsize=32)
def _signature(original: Callable) -> inspect.Signature:
    """Read once per process (about 40 us each): every capture patches the same seven functions."""
    return inspect.signature(original)


def _patched_transform(kind: str, original: Callable) -> Callable:
    signature = _signature(original)

    @functools.wraps(original)
    def transform(*args: Any, **kwargs: Any) -> Any:
        made = original(*args, **kwargs)  # bad arguments raise from JAX itself, as without a capture
        try:
            bound = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return made
        what = Differentiation(
            kind, bound["fun"], _argnum_tuple(bound.get("argnums", 0)), bool(bound.get("has_aux", False))
        )
        return _recorded_transform(made, what)

    transform._jaxmagic_original = original  # type: ignore[attr-defined]
    return transform


def _patched_call(kind: str, original: Callable) -> Callable:
    signature = _signature(original)

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        recorder = _recorder
        if recorder is None:
            return original(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs).arguments
            primals = bound.get("primals", ())
            if not isinstance(primals, (tuple, list)):
                raise TypeError("primals")  # JAX says what is wrong with them
            primals = tuple(primals)
            what = Differentiation(kind, bound["fun"], tuple(range(len(primals))), bool(bound.get("has_aux", False)))
        except (TypeError, KeyError):
            return original(*args, **kwargs)
        try:
            return recorder.record_grad(what, original, args, kwargs, primals, {})
        except BaseException as exc:  # the recorder's frames are not the user's to read
            raise exc.with_traceback(source.past_own_frames(exc.__traceback__))

    call._jaxmagic_original = original  # type: ignore[attr-defined]
    return call


def patch_grads(stack: ExitStack, namespace: dict) -> None:
    """Replace `jax.grad` & co. and their `from jax import grad` bindings for the capture's duration.

    Each undo is registered right after its patch, so any exit restores JAX's objects. A
    nested capture finds them patched and patches nothing.
    """
    patched_of: dict[Any, Any] = {}  # original -> patched (functions hash by identity)
    for kind in (*TRANSFORMS, *CALLS):
        original = getattr(jax, kind)
        if getattr(original, "_jaxmagic_original", None) is not None:  # an outer capture's patch
            continue
        patched = (_patched_transform if kind in TRANSFORMS else _patched_call)(kind, original)
        replace_attribute(stack, jax, kind, patched)
        patched_of[original] = patched
    if not patched_of:
        return

    aliases.rebind_aliases(stack, namespace, patched_of)


# ---------------------------------------------------------------------------------------------
# Recording.


class GradLog:
    """Appends one `GradCall` per differentiation to a session's capture.

    `owner` is the capture's jit recorder (capture/jit/recorder.py): its `capture` receives the
    records and its `_collecting` flag is set while the split is traced, so JAX events and nested
    differentiations of our own tracing are not recorded as the user's. `recording_call(frame)` gives the index of the
    recorded jitted call a frame runs inside.
    """

    def __init__(self, owner: Any, recording_call: Callable[[Any], int | None]):
        self._owner = owner
        self._recording_call = recording_call
        # (maker, id(fn), argnums, has_aux, signature key) -> (split, error): one split per function
        # and avals, while the function lives: a weak reference forgets its entries when it dies (so
        # its id is not taken by another function's, and the arrays it closed over, which its split
        # holds, go with it). A function that takes no weak reference is kept until the capture stops.
        self._splits: dict[tuple, tuple[Any, str | None]] = {}
        self._functions: dict[int, tuple[Any, list[tuple]]] = {}  # id(fn) -> (weak reference, its keys)
        self._running: list[GradCall] = []  # records whose call is in progress: `grad(grad(f))` nests

    def record(
        self, what: Differentiation, run: Callable, args: tuple, kwargs: dict, primals: tuple, primal_kwargs: dict
    ) -> Any:
        """Call `run(*args, **kwargs)` once and return exactly its result; record it afterwards.

        The record is appended before the call so that records are in the order the calls
        started (a `grad` of a `grad` records the outer one first); its other fields are filled
        after the call returns or raises.
        """
        __tracebackhide__ = True
        owner = self._owner
        if owner._collecting or threading.get_ident() != owner._thread:
            return run(*args, **kwargs)  # our own tracing of a split runs the user's code again; another thread's
        traced = _CURRENT_TRACE.value is not _NO_TRACE
        grads_list = owner.capture.grads
        running = self._running
        rec = GradCall(
            index=len(grads_list),
            kind=what.kind,
            name=what.name,
            source=None,
            call_site=None,
            argnums=what.argnums,
            has_aux=what.has_aux,
            args=(),
            traced=traced,
            inside=running[-1].index if running else None,
        )
        grads_list.append(rec)
        frame = sys._getframe(1)
        retrace = None if traced else replayable(what.fn)
        start = _clock()
        running.append(rec)
        try:
            out = run(*args, **kwargs)
        except BaseException as exc:
            rec.start, rec.end = start, _clock()
            self._describe(rec, what, frame, primals, primal_kwargs, exc, retrace)
            raise
        finally:
            running.pop()
        rec.start, rec.end = start, _clock()
        self._describe(rec, what, frame, primals, primal_kwargs, None, retrace)
        if rec.traced and rec.call is not None and what.kind in ("grad", "value_and_grad"):
            try:
                rec.gradient_vars = gradient_vars(what, rec.args, primals, out)
            except Exception as exc:  # the gradient leaves then go unlinked
                strict.fallback("gradient leaves linked to the program's Vars", exc)
                rec.gradient_vars = ()
        return out

    def _describe(
        self,
        rec: GradCall,
        what: Differentiation,
        frame: Any,
        primals: tuple,
        primal_kwargs: dict,
        error: BaseException | None,
        retrace: Callable | None = None,
    ) -> None:
        """Fill the record; a failure of ours becomes a capture note, never the user's exception.

        `retrace` makes the function to trace the split with (`replayable`), when it is not `what.fn`.
        """
        try:
            rec.source = source.function_location(what.fn)
            rec.name = _user_name(what) or rec.name
            rec.call_site = source.caller_location(frame)
            rec.args = arg_specs(what.fn, primals, primal_kwargs)
            if not rec.traced:
                rec.args = _named_as_written(rec.args, what.fn, frame, primals, primal_kwargs)
            rec.call = self._recording_call(frame)
            if rec.traced:
                rec.batch = batch_text(primals, primal_kwargs)
            # Under vmap alone (no recorded jit around it) the per-example function has a split of
            # its own: traced on the per-example avals the batch tracers carry.
            splittable = not rec.traced or (rec.batch is not None and rec.call is None)
            if error is not None:
                rec.error = f"the call raised {type(error).__name__}: {error}"
            elif not splittable:
                pass  # part of the program JAX is tracing: the recorded jitted call shows it
            elif not self._owner.grads:
                rec.error = SPLIT_OFF_NOTE
            elif what.kind in SPLIT_KINDS:
                rec.split, rec.error, fresh = self._trace_once(
                    rec, what, primals, primal_kwargs, grads.grad_split, retrace
                )
                if fresh and rec.split is not None and self._owner.values and not rec.traced:
                    rec.values = grad_values.split_values(what.kind, rec.split, primals, primal_kwargs)
            elif what.kind == "hessian":  # forward over reverse: the jvp of the gradient
                rec.tangent, rec.error, _ = self._trace_once(rec, what, primals, primal_kwargs, _gradient_tangents)
            else:  # forward mode has no backward pass: the one program pushing tangents forward
                rec.tangent, rec.error, _ = self._trace_once(rec, what, primals, primal_kwargs, grads.tangent_program)
        except Exception as exc:  # boundary: said in a note; the user's differentiation has run already
            self._owner.capture.notes.append(
                f"jaxmagic could not record differentiation {rec.index} ({rec.name}): {type(exc).__name__}: {exc}"
            )

    def _trace_once(
        self,
        rec: GradCall,
        what: Differentiation,
        primals: tuple,
        primal_kwargs: dict,
        make: Callable,
        retrace: Callable | None = None,
    ) -> tuple[Any, str | None, bool]:
        """`make(fn, args, kwargs, argnums, has_aux)` (JAX's forward/backward split, or the tangent
        program of forward mode) at these avals, traced once per (function, avals): (result, error,
        whether it was traced now rather than found).

        Traced on abstract values (`ShapeDtypeStruct`s), so no array of the call is kept.
        The user's Python runs once more while it is traced: what it prints then is discarded.
        """
        key = (make.__name__, id(what.fn), what.argnums, what.has_aux, Signature(rec.args).key)
        known = self._splits.get(key)
        if known is not None:
            return known[0], known[1], False
        owner = self._owner
        split, error = None, None
        owner._collecting = True
        try:
            abstract = jax.tree_util.tree_map(_abstract, (primals, primal_kwargs))
            with this_thread_silenced():
                fn = retrace() if retrace is not None else what.fn
                split = make(fn, abstract[0], abstract[1], what.argnums, what.has_aux)
        except Exception as exc:  # boundary: tracing the user's function again may fail: said in a note
            error = f"{type(exc).__name__}: {exc}"
            owner.capture.notes.append(f"no graph of {what.kind} of {rec.name}: {error}")
        finally:
            owner._collecting = False
        self._remember(what.fn, key, (split, error))
        return split, error, True

    def _remember(self, fn: Any, key: tuple, answer: tuple[Any, str | None]) -> None:
        """Keep `answer` under `key` while `fn` lives (`_forget` drops it when `fn` dies)."""
        entry = self._functions.get(id(fn))
        if entry is None:
            try:
                holder: Any = weakref.ref(fn, functools.partial(self._forget, id(fn)))
            except TypeError:  # no weak reference to this type: kept alive until the capture stops
                holder = fn
            entry = self._functions[id(fn)] = (holder, [])
        entry[1].append(key)
        self._splits[key] = answer

    def release(self) -> None:
        """Let go of every split and weak reference: their callbacks hold this log (no cycle is left)."""
        self._functions.clear()
        self._splits.clear()

    def _forget(self, fn_id: int, ref: weakref.ref) -> None:
        """A differentiated function died: its splits go, and its id no longer names it (callback)."""
        entry = self._functions.get(fn_id)
        if entry is not None and entry[0] is ref:
            del self._functions[fn_id]
            for key in entry[1]:
                self._splits.pop(key, None)


def replayable(fn: Any) -> Callable[[], Any] | None:
    """A maker of copies of `fn` that can be traced again after the user's call, or None.

    A split is traced after the call, by calling the differentiated function once more. Some
    callables consume per-call state as they run: Flax NNX's eager `nnx.grad` hands JAX a
    `GradFn` whose deque of non-differentiated states is emptied by the call, so a second call
    raises `IndexError: pop from an empty deque`. The deques' items (references, no copies of
    arrays) are kept from before the call, and each trace gets a shallow copy of `fn` with
    fresh deques holding them; `fn` itself is never changed.
    """
    attrs = getattr(fn, "__dict__", None)
    if not isinstance(attrs, dict):
        return None
    queued = {name: tuple(value) for name, value in attrs.items() if isinstance(value, collections.deque)}
    if not queued:
        return None

    def fresh() -> Any:
        twin = copy.copy(fn)
        for name, items in queued.items():
            setattr(twin, name, collections.deque(items))
        return twin

    return fresh


def gradient_vars(
    what: Differentiation, specs: tuple[ArgSpec, ...], primals: tuple, out: Any
) -> tuple[tuple[str, str, Any], ...]:
    """(path, aval, jaxpr Var) of each gradient leaf a `grad` traced inside a jitted function returned.

    While `jit` traces, the returned leaves are tracers whose Var is the one the recorded jaxpr
    binds (`jax_compat.tracer_var`), so the jitted program's graph can show which value is the
    gradient of `params['w']`. Leaves are those of `args[argnums]`, in that order.
    """
    grads = out[1] if what.kind == "value_and_grad" else (out[0] if what.has_aux else out)
    counts = [len(jax.tree_util.tree_leaves(a)) for a in primals]
    starts = np.cumsum([0, *counts])
    paths = [
        spec
        for n in what.argnums
        for spec in specs[starts[n % len(primals)] : starts[n % len(primals)] + counts[n % len(primals)]]
    ]
    leaves = jax.tree_util.tree_leaves(grads)
    if len(leaves) != len(paths):
        return ()
    found = []
    for spec, leaf in zip(paths, leaves):
        var = jax_compat.tracer_var(leaf)
        if var is not None:
            found.append((spec.path, spec.aval, var))
    return tuple(found)


def _gradient_tangents(
    fn: Callable, args: tuple, kwargs: dict, argnums: tuple[int, ...], has_aux: bool
) -> grads.TangentProgram:
    """`jax.hessian` is `jacfwd(jacrev(f))`: the program is the jvp of f's gradient (JAX's own grad,
    not our stand-in), whose tangent part JAX runs once per input element."""
    grad = getattr(jax.grad, "_jaxmagic_original", jax.grad)
    return grads.tangent_program(grad(fn, argnums=argnums, has_aux=has_aux), args, kwargs, argnums, has_aux)


def _abstract(leaf: Any) -> Any:
    """A `ShapeDtypeStruct` for an array leaf (avals only); other leaves as they are."""
    if isinstance(leaf, (jax.Array, np.ndarray)):
        aval = jax_compat.aval_of(leaf)
        return jax.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=bool(getattr(aval, "weak_type", False)))
    return leaf


def _argument_names(fn: Any, n_args: int, kwargs: dict) -> tuple[list[str], dict[str, str]]:
    """The name each positional argument and keyword binds to in `fn`'s signature, the way JAX's
    debug info names jit arguments: `w`, `ws[1]` for a `*ws` parameter, `kw['lr']` for a `**kw` one.

    `inspect.signature` already sees through `functools.partial` (the bound arguments drop out)
    and `__wrapped__`. Without a signature, positions are `args[i]` and keywords their own names.
    """
    fallback = ([f"args[{i}]" for i in range(n_args)], {k: k for k in kwargs})
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fallback
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    star_kw = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)
    named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names = [
        positional[i] if i < len(positional) else f"{star}[{i - len(positional)}]" if star else f"args[{i}]"
        for i in range(n_args)
    ]
    keywords = {k: k if k in named or star_kw is None else f"{star_kw}[{k!r}]" for k in kwargs}
    return names, keywords


def arg_specs(fn: Any, args: tuple, kwargs: dict) -> tuple[ArgSpec, ...]:
    """One `ArgSpec` per leaf of the arguments, in the leaf order of `tree_flatten((args, kwargs))`
    (the split's inputs), named by `fn`'s parameters and the leaf's pytree path (avals only)."""
    names, keywords = _argument_names(fn, len(args), kwargs)
    specs: list[ArgSpec] = []

    def add(path: str, value: Any) -> None:
        for key_path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            leaf_path = path + jax.tree_util.keystr(key_path)
            if grads.is_traced_leaf(leaf):
                specs.append(_leaf_spec(leaf_path, leaf, False))
            else:  # a constant of the trace (Equinox's non-array leaves), as `grads` traces it
                specs.append(ArgSpec(path=leaf_path, aval=_static_repr(leaf), static=True))

    for name, value in zip(names, args):
        add(name, value)
    for key in sorted(kwargs):
        add(keywords[key], kwargs[key])
    return tuple(specs)


def _user_name(what: Differentiation) -> str | None:
    """The user's function's name where a library differentiates a function of its own making
    (Equinox's `filter_value_and_grad` hands JAX `fun_value_and_grad`, which calls the user's `loss`)."""
    code = getattr(what.fn, "__code__", None)
    if code is None or source.is_user_file(code.co_filename):
        return None
    user = source.user_function(what.fn)
    user_code = getattr(user, "__code__", None)
    if user_code is None or not source.is_user_file(user_code.co_filename):
        return None
    return getattr(user, "__qualname__", None)


def _named_as_written(
    specs: tuple[ArgSpec, ...], fn: Any, frame: Any, primals: tuple, primal_kwargs: dict
) -> tuple[ArgSpec, ...]:
    """`specs` renamed by the user's own call where a library differentiates for the user.

    `nnx.grad(loss_fn)(model)` hands JAX NNX's graph state (`model.states[0]['hidden']...`);
    the same arrays sit in the user's `model`, so each is named by its path there
    (`model.hidden.kernel`), as for `nnx.jit` (`user_names`). Anything not found keeps its name.
    """
    entry = user_names.user_entry(frame, wrapped=fn)
    if entry is None:
        return specs
    leaves = jax.tree_util.tree_leaves((primals, primal_kwargs))
    if len(leaves) != len(specs):
        return specs
    leaves = [leaf for leaf, spec in zip(leaves, specs) if not spec.static]
    return user_names.renamed(Signature(args=specs), user_names.leaf_names(entry, leaves)).args


def batch_text(args: tuple, kwargs: dict) -> str | None:
    """ "vmap over 32" when an argument is batched by vmap ("vmap over 4 × 8" for nested vmaps).

    None when no argument is batched or the size is unknown: under `vmap(jit(...))` the
    jitted body is traced unbatched and its tracers carry no axis.
    """
    best: list[int] = []
    for leaf in jax.tree_util.tree_leaves((args, kwargs)):
        sizes = jax_compat.vmap_sizes(leaf)
        if len(sizes) > len(best):
            best = sizes
    if not best:
        return None
    return "vmap over " + " × ".join(str(n) for n in reversed(best))
