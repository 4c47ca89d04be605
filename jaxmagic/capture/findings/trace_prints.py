"""Prints that run only while JAX traces: `print` inside a jitted function.

Inside a jitted call Python runs only while JAX traces it, so a `print` there shows
up on the first call (and every retrace) and never again; users expect it every call.
During a capture `builtins.print` is wrapped: the wrapper prints exactly as before and,
only when a JAX trace is running inside a recorded call, notes the caller's line.
The check costs nothing on prints outside traces (one call) and a short frame walk
inside them. `jax.debug.print` does not go through `print` and is never flagged.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

from ... import strict
from .. import aliases
from ..record import SourceLocation


def patch_print(
    stack: ExitStack,
    trace_clean: Callable[[], bool],
    recording_call: Callable[[Any], int | None],
    on_print: Callable[[int, SourceLocation | None], None],
    locate: Callable[[Any], SourceLocation | None],
    namespace: dict | None = None,
) -> None:
    """Wrap `builtins.print` for the capture; restored on `stack`.

    `recording_call(frame)` gives the index of the recorded call a frame runs inside (None
    outside one); `locate(frame)` the user's line. A name the cell binds to the stand-in in
    `namespace` (`p = print`) is given the builtin back when the capture ends.
    """
    original = builtins.print

    def print(*args: Any, **kwargs: Any) -> None:
        __tracebackhide__ = True
        try:
            if not trace_clean():
                frame = sys._getframe(1)
                index = recording_call(frame)
                if index is not None:
                    on_print(index, locate(frame))
        except Exception as exc:  # noting it must never stop the user's print
            strict.fallback("the finding of a print run while tracing", exc)
        return original(*args, **kwargs)

    print.__wrapped__ = original  # type: ignore[attr-defined]
    builtins.print = print

    def restore() -> None:
        if builtins.print is print:
            builtins.print = original

    stack.callback(restore)
    if namespace is not None:
        aliases.rebind_aliases(stack, namespace, {original: print})
