"""Source locations for functions, call sites and exceptions.

Notebook cells are registered in `linecache` by IPython, so the code line of a
cell shows up like any file's. Frames inside JAX, jaxmagic, the standard library
and site-packages are not the user's and are skipped when looking for "the user's line".
"""

from __future__ import annotations

import functools
import linecache
import os
import re
import sysconfig
import types
from typing import Any

from .record import CellError, SourceLocation

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_PREFIXES = tuple(
    {os.path.realpath(p) for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
                                   sysconfig.get_paths().get("platlib")) if p}
)


def code_line(file: str, line: int) -> str | None:
    text = linecache.getline(file, line)
    return text.strip() or None


def location(file: str | None, line: int | None, column: int | None = None,
             function: str | None = None) -> SourceLocation | None:
    if not file or not line:
        return None
    return SourceLocation(file=file, line=line, column=column, function=function, code=code_line(file, line))


@functools.lru_cache(maxsize=4096)
def is_user_file(file: str) -> bool:
    """False for jaxmagic, JAX and installed libraries; True for notebooks cells and scripts.

    Cached: it resolves symlinks (a system call per path component) and runs for every
    frame walked up from a recorded call.
    """
    if not file or file.startswith("<frozen"):
        return False
    try:
        real = os.path.realpath(file)
    except (ValueError, UnicodeError):  # a name no file system can hold (a lone surrogate, a NUL): the user's
        return True
    if real.startswith(PACKAGE_DIR):
        return False
    return not real.startswith(_LIBRARY_PREFIXES)


# A notebook cell's file: `<ipython-input-3-…>` (IPython, Colab), `<cell 3>`, or the file ipykernel
# writes each cell to (`/tmp/ipykernel_4242/526010223.py`), whose name means nothing to a reader.
_CELL_FILE = re.compile(r"^<.*>$|[\\/]ipykernel_\d+[\\/]\d+\.py$")


def is_cell_file(file: str | None) -> bool:
    return bool(file) and bool(_CELL_FILE.search(file))


def where_text(file: str | None, line: int | None) -> str:
    """`line 7` for a line of a notebook cell, `train.py:12` elsewhere (the file's name, not its path):
    how notes and findings point at code. The same rule as the widgets' (widgets/source-text.js)."""
    if not file or is_cell_file(file):
        return f"line {line}" if line is not None else "?"
    name = re.split(r"[\\/]", file)[-1]
    return f"{name}:{line}" if line is not None else name


def function_location(fn: Any) -> SourceLocation | None:
    """Where a Python function (or the function under a jit) is defined."""
    target = getattr(fn, "__wrapped__", fn)
    code = getattr(target, "__code__", None)
    if code is None:
        call = getattr(target, "__call__", None)
        code = getattr(call, "__code__", None)
    if code is None:
        return None
    line = code.co_firstlineno
    for _ in range(20):  # co_firstlineno points at the first decorator; show the `def` line
        if not code_line(code.co_filename, line) or not code_line(code.co_filename, line).startswith("@"):
            break
        line += 1
    return location(code.co_filename, line, None, getattr(target, "__qualname__", None))


def caller_location(frame: types.FrameType | None) -> SourceLocation | None:
    """The innermost user frame at or above `frame`."""
    while frame is not None:
        file = frame.f_code.co_filename
        if is_user_file(file):
            return location(file, frame.f_lineno, None, frame.f_code.co_name)
        frame = frame.f_back
    return None


def exception_location(exc: BaseException) -> SourceLocation | None:
    """The innermost user frame of the traceback: the line that failed, as the user sees it."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        file = tb.tb_frame.f_code.co_filename
        if is_user_file(file):
            found = location(file, tb.tb_lineno, None, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return found


def cell_error(exc: BaseException) -> CellError:
    message = str(exc)
    if len(message) > 2000:
        message = message[:2000] + "…"
    return CellError(type=type(exc).__name__, message=message, source=exception_location(exc))

