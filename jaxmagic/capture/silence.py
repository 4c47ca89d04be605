"""Discarding what one thread prints while the user's Python is traced again, and only that.

A capture traces the user's function once more in places (the enlarged vmap of `--vmap`, the
forward/backward split of `%%grad_graph`): a `print("tracing")` in it must not print twice, so
that thread's output is discarded. `contextlib.redirect_stdout` cannot do it: it swaps the
process's `sys.stdout`, and JAX runs `jax.debug.print` and other host callbacks of computations
already dispatched on its own threads meanwhile, whose lines then went to the discarded buffer
(found with JAX's partitioned `debug_print` tests: 1 to 5 of 12 lines lost). Here `sys.stdout`
and `sys.stderr` become a stand-in that drops the writes of the retracing thread and passes every
other thread's on to the stream that was there, and are set back afterwards.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any


class _OtherThreadsOnly:
    """A text stream that drops writes from one thread and passes the rest to `stream`; anything
    else (fileno, encoding, isatty, buffer) is the stream's own."""

    def __init__(self, stream: Any, silenced_thread: int) -> None:
        self._stream = stream
        self._silenced = silenced_thread

    def write(self, text: str) -> int:
        if threading.get_ident() == self._silenced:
            return len(text)
        return self._stream.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if threading.get_ident() != self._silenced:
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def this_thread_silenced() -> Iterator[None]:
    """While inside, what this thread writes to `sys.stdout` and `sys.stderr` is discarded; other
    threads' writes reach the streams as before. Each stream is set back to the one it replaced."""
    thread = threading.get_ident()
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = _OtherThreadsOnly(stdout, thread)  # type: ignore[assignment]
    sys.stderr = _OtherThreadsOnly(stderr, thread)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr
