"""Warnings keep the location they have without a capture, and the cell's warnings are seen.

JAX warns with a fixed `stacklevel` (the float64 truncation warning: 4 frames up from the
dtype check), counted in Python frames. A capture puts its stand-ins between the user's line
and JAX (the routed jitted call and its recorder, the `jax.grad` and `jax.random` stand-ins,
the eager-transform hook), so the frame JAX names can be one of jaxmagic's: the warning then
shows `jaxmagic/capture/keys/patch.py:94`, and Python's once-per-location rule (the "default"
filter) hides it for every later line that reaches the same stand-in.

For the capture's duration `warnings.warn` is replaced by `_warn`, which walks the frames as
CPython does but does not count jaxmagic's own, and calls CPython's `warn` with the stack level
that reaches the frame the warning has without the capture. CPython then resolves the file,
line, module, registry and filters itself, so "default", "once", "module", "error" and
`catch_warnings(record=True)` act exactly as without the magic. Nothing sits on the path of a
jitted call (the fast path costs the same), and no `catch_warnings` is used: entering one
changes the filters, which empties every module's once-per-location registry and makes a
"default" warning show again.

The capture that installed it also hears of each warning (`Listener`): the float64 truncation
finding (capture/findings/dtype.py). While jaxmagic does its own work that runs the user's code
or JAX again (tracing a call's artefacts, a gradient's split), warnings are dropped: they were
the user's once, when their call ran. Warnings raised from C code (`PyErr_WarnEx`) do not go
through `warnings.warn` and are left as they are.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any, Protocol

from ... import strict
from .. import source
from ..patches import replace_attribute


class Listener(Protocol):
    def quiet(self) -> bool:
        """True while jaxmagic runs the user's code or JAX again for itself: warnings are dropped."""
        ...

    def on_warning(self, message: Any, category: type, frame: Any) -> None:
        """A warning the cell's code raised, at `frame` (where it is shown; None: JAX's "sys")."""


_listeners: list[tuple[Listener, int]] = []  # (listener, the thread of its cell), innermost last
_original_warn: Callable[..., None] = warnings.warn  # CPython's, read again at each install


def install(stack: ExitStack, listener: Listener, thread: int) -> None:
    """Replace `warnings.warn` until `stack` unwinds (a nested capture adds its listener only)."""
    global _original_warn
    if getattr(warnings.warn, "_jaxmagic_original", None) is None:
        _original_warn = replace_attribute(stack, warnings, "warn", _warn)
    _listeners.append((listener, thread))
    stack.callback(_remove, listener)


def _remove(listener: Listener) -> None:
    for i in range(len(_listeners) - 1, -1, -1):
        if _listeners[i][0] is listener:
            del _listeners[i]
            return


def _warn(message: Any, category: Any = None, stacklevel: int = 1, source: Any = None, **more: Any) -> None:
    """`warnings.warn`, located as without jaxmagic's frames (module docstring)."""
    __tracebackhide__ = True
    listener = _listeners[-1][0] if _listeners and _listeners[-1][1] == threading.get_ident() else None
    if listener is not None and listener.quiet():
        return
    caller = sys._getframe(1)
    level, frame = _level_without_own_frames(caller, stacklevel)
    if more:  # Python 3.12's `skip_file_prefixes`: CPython skips ours too, and forces a level of 2 or more
        prefixes = tuple(more.pop("skip_file_prefixes", ())) + (source_prefix(),)
        _original_warn(message, category, max(stacklevel, 1) + 1, source, skip_file_prefixes=prefixes, **more)
    else:
        _original_warn(message, category, level, source)
    if listener is not None:  # after CPython: a warning the filters turn into an error raised above
        try:
            listener.on_warning(message, category, frame)
        except Exception as exc:  # the user's warning is issued already; only its finding is lost
            strict.fallback("the finding of a warning", exc)


_warn._jaxmagic_original = warnings.warn  # type: ignore[attr-defined]


def source_prefix() -> str:
    return source.PACKAGE_DIR + "/"


def _level_without_own_frames(caller: Any, stacklevel: int) -> tuple[int, Any]:
    """The stack level, counted from `_warn`'s frame, that reaches the frame `stacklevel` names
    from `caller` when jaxmagic's frames are not counted; and that frame (None past the stack).

    CPython counts from the caller for levels 1 and below and skips importlib's bootstrap frames
    when it walks further (`next_external_frame`); both are kept.
    """
    steps, frame, counted = 0, caller, 0
    while counted < stacklevel - 1 and frame is not None:
        frame = frame.f_back
        steps += 1
        while frame is not None and _is_internal(frame):
            frame = frame.f_back
        if frame is not None and not source.is_own_file(frame.f_code.co_filename):
            counted += 1
    return steps + 2, frame  # one step from `_warn` to `caller`, then the walk's


def _is_internal(frame: Any) -> bool:
    file = frame.f_code.co_filename
    return "importlib" in file and "_bootstrap" in file
