"""An argument donated and then read: which call donated it, where it was read, the fix.

`jax.jit(f, donate_argnums=0)(x)` lets XLA reuse `x`'s buffer for the result; JAX then deletes
`x` (on CPU too, where a donated buffer matches an output; where none does, JAX warns "Some
donated buffers were not usable" and `x` stays alive). Reading `x` afterwards raises JAX's
`RuntimeError: Array has been deleted ...` (or, passed to another compiled call, the runtime's
"Buffer has been deleted or donated"), which names the shape but not the call that took it.

So the capture remembers, per call of a function that donates, which arrays it was handed in
donated positions (by identity, through weak references: nothing is kept alive), and when the
cell raises JAX's deleted-array error it looks for the deleted array in the traceback's frames
and names the call that donated it (kind "donated_then_read", severity "bug"). Only what is
known is said: an array no recorded call donated (deleted with `x.delete()`, donated before the
cell) gets no finding.

Cost: only calls of donating functions pay, and only for donated arguments that hold arrays: a
flatten, a weak reference per leaf made in C (`map`) and the call's user line, about 0.4 us a leaf
in a loop. Nothing is indexed per leaf (the error path looks the array up). The references of
arguments that died are dropped as soon as they are as many as the live ones, so they die young:
kept by the thousand (a table entry per array did that), they reached the collector's oldest
generation and made Python collect the whole heap, 3 times in 1,000 steps of a 300-leaf donating
step on the project's machine (169 ms).
"""

from __future__ import annotations

import functools
import operator
import sys
import weakref
from typing import Any

import jax

from .. import jax_compat, source
from ..jit import signature
from ..record import Capture, Finding

KIND = "donated_then_read"
PRUNE_FROM = 64  # weak references held before those of dead arguments are dropped
MAX_SCAN = 64  # items looked at per container in a traceback frame's locals


_referent = weakref.ref.__call__  # what a weak reference gives: its array, or None once it died
_is_something = functools.partial(operator.is_not, None)


class DonationLog:
    """What each call of a donating function was handed in donated positions: per call and argument,
    (weak references to the argument's leaves, call index, function, argument name, whether the
    argument holds more than one leaf, the call's user frame as (file, line, function)), oldest first."""

    def __init__(self) -> None:
        self.donating: dict[int, bool] = {}  # id(function state) -> donates any argument
        self._donated: dict[int, tuple[tuple, ...]] = {}  # id(function state) -> ((position, keyword, name), ...)
        self._notes: list[tuple] = []
        self._refs = 0  # weak references held in `_notes`
        self._prune_at = PRUNE_FROM

    def _prune(self) -> None:
        """Drop the notes whose arrays all died (a training loop donates a new state each step and drops
        the one before): amortized O(1) per reference (each looked at in C), at most about twice the
        live ones held. Twice, not more: a loop then frees about as many references per step as it
        makes, so they neither reach Python's collection threshold nor outlive a collection."""
        kept = [entry for entry in self._notes if any(map(_is_something, map(_referent, entry[0])))]
        self._notes = kept
        self._refs = sum(len(entry[0]) for entry in kept)
        self._prune_at = max(PRUNE_FROM, 2 * self._refs)

    def donates(self, key: int, fn: Any) -> bool:
        """Whether jitted `fn` (its state's id `key`) donates an argument: read once from jit's options."""
        known = self.donating.get(key)
        if known is None:
            info = jax_compat.jit_info(fn)
            nums = signature._as_set(getattr(info, "donate_argnums", ()))
            names = signature._as_set(getattr(info, "donate_argnames", ()))
            params = signature._parameter_names(info)
            positions = {i: params[i] if i < len(params) else f"args[{i}]" for i in nums}
            positions.update({params.index(n): n for n in names if n in params})
            self._donated[key] = tuple((i, name) for i, name in sorted(positions.items())) + tuple(
                (None, n) for n in sorted(names) if n not in params
            )
            known = self.donating[key] = bool(nums or names)
        return known

    def note(self, key: int, args: tuple, kwargs: dict, index: int, name: str) -> None:
        """Remember the arrays this call of a donating function was given in donated positions (the
        user's line is kept raw, the message is made only if the cell fails)."""
        where: Any = False  # the call's user frame, looked for once an argument holds arrays
        for position, argument in self._donated.get(key, ()):
            if position is not None and position < len(args):
                value = args[position]
            elif argument in kwargs:
                value = kwargs[argument]
            else:
                continue
            leaves = jax.tree_util.tree_leaves(value)
            if not leaves:  # Equinox's `filter_jit` donates its first argument, empty unless asked
                continue
            if where is False:
                where = _user_frame(sys._getframe(1))
            if self._refs + len(leaves) > self._prune_at:  # before the new references: the dead ones go first
                self._prune()
            try:
                refs = tuple(map(weakref.ref, leaves))
            except TypeError:  # a leaf that takes no weak reference (a Python scalar): the arrays only
                refs = tuple(weakref.ref(leaf) for leaf in leaves if isinstance(leaf, jax.Array))
            self._notes.append((refs, index, name, argument, len(leaves) > 1, where))
            self._refs += len(refs)

    def donor_of(self, array: Any) -> tuple | None:
        """The note of the latest recorded call that was handed `array` in a donated position."""
        for entry in reversed(self._notes):
            for ref in entry[0]:
                if ref() is array:
                    return entry
        return None

    def explain(self, exc: BaseException | None, capture: Capture) -> Finding | None:
        """The finding for JAX's deleted-array error `exc` when a recorded call donated that array."""
        if exc is None or not jax_compat.is_deleted_array_error(exc):
            return None
        for array in _deleted_arrays(exc):
            entry = self.donor_of(array)
            if entry is not None:
                return _finding(exc, entry)
        return None


def _user_frame(frame: Any) -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost user frame at or above `frame`, kept raw."""
    while frame is not None:
        code = frame.f_code
        if source.is_user_file(code.co_filename):
            return code.co_filename, frame.f_lineno, code.co_name
        frame = frame.f_back
    return None


def _deleted_arrays(exc: BaseException) -> list:
    """Deleted jax.Arrays in the traceback's frames (innermost first): the locals, and the items of
    tuples, lists and dicts among them. Module-level frames (the cell's namespace) are left out."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    found: list = []
    for frame in reversed(frames):
        if frame.f_locals is frame.f_globals:
            continue
        for value in list(frame.f_locals.values()):
            items = [value]
            if isinstance(value, (tuple, list)):
                items.extend(value[:MAX_SCAN])
            elif isinstance(value, dict):
                items.extend(list(value.values())[:MAX_SCAN])
            found.extend(x for x in items if jax_compat.is_deleted(x) and all(x is not y for y in found))
    return found


def _finding(exc: BaseException, entry: tuple) -> Finding:
    _refs, index, name, argument, pytree, frame = entry
    where = None
    if frame is not None:
        file, line, function = frame
        where = source.location(file, line, None, function)
    read = source.exception_location(exc)
    donated_at = ""
    if where is not None:
        code = f" (`{where.code}`)" if where.code else ""
        donated_at = f" at {source.where_text(where.file, where.line)}{code}"
    read_at = f" at `{read.code}`" if read is not None and read.code else " later"
    what = f"an array of its argument {argument}" if pytree else f"its argument {argument}"
    message = (
        f"{name} was called with {what} donated{donated_at}: JAX deleted that array's buffer when the call "
        f"reused it for its result, so reading it{read_at} raised {type(exc).__name__}. Use the value the "
        f"call returned instead (for example {argument} = {name}({argument}, ...)), or do not donate "
        f"{argument} (donate_argnums / donate_argnames)."
    )
    return Finding(kind=KIND, message=message, source=read, severity="bug", call=index, function=name)
