"""Discarding what one thread prints while the user's Python is traced again, and only that.

A capture traces the user's function once more in places (the enlarged vmap of `--vmap`, the
forward/backward split of `%%grad_graph`): a `print("tracing")` in it must not print twice, so
that thread's output is discarded. `contextlib.redirect_stdout` cannot do it: it swaps the
process's `sys.stdout`, and JAX runs `jax.debug.print` and other host callbacks of computations
already dispatched on its own threads meanwhile, whose lines then went to the discarded buffer
(found with JAX's partitioned `debug_print` tests: 1 to 5 of 12 lines lost). Here `sys.stdout`
and `sys.stderr` become a stand-in that drops the writes of the silenced threads and passes every
other thread's on to the stream that was there.

One stand-in serves every thread silenced at once (two threads retracing together): it is put in
place by the first and taken out by the last, and only where it is still what `sys.stdout` is (a
stream the user's code set meanwhile is theirs to keep).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

_lock = threading.Lock()
_silenced: dict[int, int] = {}  # thread id -> how many silences it is inside
_installed: list[tuple[str, Any, Any]] = []  # (name in sys, stand-in, the stream it replaced)


class _OtherThreadsOnly:
    """A text stream that drops the silenced threads' writes and passes the rest to `stream`;
    anything else (fileno, encoding, isatty, buffer) is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if threading.get_ident() in _silenced:
            return len(text)
        return self._stream.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if threading.get_ident() not in _silenced:
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def this_thread_silenced() -> Iterator[None]:
    """While inside, what this thread writes to `sys.stdout` and `sys.stderr` is discarded; other
    threads' writes reach the streams as before."""
    thread = threading.get_ident()
    with _lock:
        if not _installed:
            for name in ("stdout", "stderr"):
                stream = getattr(sys, name)
                stand_in = _OtherThreadsOnly(stream)
                setattr(sys, name, stand_in)
                _installed.append((name, stand_in, stream))
        _silenced[thread] = _silenced.get(thread, 0) + 1
    try:
        yield
    finally:
        with _lock:
            _silenced[thread] -= 1
            if not _silenced[thread]:
                del _silenced[thread]
            if not _silenced:
                for name, stand_in, stream in _installed:
                    if getattr(sys, name) is stand_in:
                        setattr(sys, name, stream)
                _installed.clear()
