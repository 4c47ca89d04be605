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
cell) gets no finding. Cost: only calls of donating functions pay, a flatten of their donated
arguments (a few microseconds) and the call's user line.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

import jax

from .. import jax_compat, source
from ..jit import signature
from ..record import Capture, Finding

KIND = "donated_then_read"
PRUNE_FROM = 10_000  # entries remembered before dead arrays are forgotten
MAX_SCAN = 64  # items looked at per container in a traceback frame's locals


class DonationLog:
    """Arrays handed to donating calls, by id: (weak reference, call index, function, argument name,
    whether the argument holds more than one array, the call's user frame as (file, line, function))."""

    def __init__(self) -> None:
        self.donating: dict[int, bool] = {}  # id(function state) -> donates any argument
        self._donated: dict[int, tuple[tuple, ...]] = {}  # id(function state) -> ((position, keyword, name), ...)
        self._arrays: dict[int, tuple] = {}
        self._prune_at = PRUNE_FROM

    def _prune(self) -> None:
        """Forget arrays that died (a training loop donates a new state each step): amortized O(1) per
        note, the table stays about twice the live donated arrays."""
        self._arrays = {k: v for k, v in self._arrays.items() if v[0]() is not None}
        self._prune_at = max(PRUNE_FROM, 2 * len(self._arrays))

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
        """Remember the arrays this call of a donating function was given in donated positions (a few
        microseconds: the user's line is kept raw, the message is made only if the cell fails)."""
        where = _user_frame(sys._getframe(1))
        arrays = self._arrays
        for position, argument in self._donated.get(key, ()):
            if position is not None and position < len(args):
                value = args[position]
            elif argument in kwargs:
                value = kwargs[argument]
            else:
                continue
            leaves = jax.tree_util.tree_leaves(value)
            if len(arrays) + len(leaves) > self._prune_at:
                self._prune()
                arrays = self._arrays
            for leaf in leaves:
                if isinstance(leaf, jax.Array):
                    try:
                        arrays[id(leaf)] = (weakref.ref(leaf), index, name, argument, len(leaves) > 1, where)
                    except TypeError:
                        continue

    def explain(self, exc: BaseException | None, capture: Capture) -> Finding | None:
        """The finding for JAX's deleted-array error `exc` when a recorded call donated that array."""
        if exc is None or not jax_compat.is_deleted_array_error(exc):
            return None
        for array in _deleted_arrays(exc):
            entry = self._arrays.get(id(array))
            if entry is not None and entry[0]() is array:
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
    _ref, index, name, argument, pytree, frame = entry
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
