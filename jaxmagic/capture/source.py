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
import sys
import sysconfig
import types
from collections.abc import Iterable
from typing import Any

from .record import CellError, SourceLocation

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_PREFIXES = tuple(
    {
        os.path.realpath(p)
        for p in (
            sysconfig.get_paths().get("stdlib"),
            sysconfig.get_paths().get("purelib"),
            sysconfig.get_paths().get("platlib"),
        )
        if p
    }
)

_LIBRARY_DIRS = tuple(prefix + os.sep for prefix in _LIBRARY_PREFIXES)  # a folder's files, not its neighbours


@functools.cache
def _package_dirs(*names: str) -> tuple[str, ...]:
    """The folders of the named packages, once they are imported (read when first needed)."""
    dirs = []
    for name in names:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if file:
            dirs.append(os.path.realpath(os.path.dirname(file)) + os.sep)
    return tuple(dirs)


def is_jax_function(fn: Any) -> bool:
    """True for a function JAX itself defines, looking under its wrappers (`jnp.where`,
    `jax.random.normal`, `jax.nn.relu` are jitted): its calls are JAX's implementation of an
    operation, not a program the user jitted. `jax.jit(jax.vmap(f))` traces JAX's `vmap_f`,
    but `f` under it is the user's: that is the user's program."""
    queue, seen, found = [fn], set(), False
    while queue and len(seen) < _MAX_LOOKS:
        obj = queue.pop(0)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        code = _code_of(obj)
        if code is not None:
            if not _is_jax_file(code.co_filename):
                return False
            found = True
        queue.extend(_inner_callables(obj))
    return found


@functools.lru_cache(maxsize=4096)
def _is_jax_file(file: str) -> bool:
    jax_dirs = _package_dirs("jax", "jaxlib")
    try:
        return bool(jax_dirs) and os.path.realpath(file).startswith(jax_dirs)
    except (ValueError, UnicodeError):
        return False


def library_frame_text(file: str, line: int | None, function: str | None) -> str:
    """A library's frame for the details beside the user's line: `flax/nnx/nn/linear.py:422 (Linear.__call__)`,
    the path from the installed package's folder on (site-packages is the same for every frame)."""
    return f"{_library_path(file)}:{line}" + (f" ({function})" if function else "")


@functools.lru_cache(maxsize=4096)
def _library_path(file: str) -> str:
    """Cached: resolving symlinks is a system call per path component, and an optimizer's update
    makes thousands of eqns in a few library files (16k eqns: 144k `lstat` calls, 0.6 s)."""
    for prefix in _LIBRARY_DIRS:
        if file.startswith(prefix) or os.path.realpath(file).startswith(prefix):
            return os.path.relpath(os.path.realpath(file), prefix)
    return file


@functools.lru_cache(maxsize=1024)
def past_own_frames(tb: Any) -> Any:
    """The traceback without jaxmagic's entries: what a stand-in re-raises with.

    A stand-in's frames (the routed call, the recorder, the warning relay) sit between the
    user's line and JAX's; `traceback.print_exc()` would show them. Re-raised from the
    outermost stand-in with this traceback, only that one frame is left (Python adds a frame
    for every function an exception leaves).
    """

    def own(entry: Any) -> bool:
        return is_own_file(entry.tb_frame.f_code.co_filename)

    while tb is not None and own(tb):
        tb = tb.tb_next
    entry = tb
    while entry is not None:  # deeper ones too: a JAX-own jitted op routed while JAX traced
        later = entry.tb_next
        while later is not None and own(later):
            later = later.tb_next
        entry.tb_next = later
        entry = later
    return tb


@functools.lru_cache(maxsize=4096)
def is_own_file(file: str) -> bool:
    """True for a file of jaxmagic itself (its capture frames sit between a jitted call and its caller).

    Cached like `is_user_file`: `realpath` makes a system call per path component, and this runs
    for every signature a capture takes and every frame an error passes.
    """
    try:
        return os.path.realpath(file).startswith(PACKAGE_DIR + os.sep)
    except (ValueError, UnicodeError):
        return False


def code_line(file: str, line: int) -> str | None:
    text = linecache.getline(file, line)
    return text.strip() or None


def location(
    file: str | None, line: int | None, column: int | None = None, function: str | None = None
) -> SourceLocation | None:
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
    if real.startswith(PACKAGE_DIR + os.sep):  # the folder itself: a user's `jaxmagic_notes.py` beside it is theirs
        return False
    return not real.startswith(_LIBRARY_DIRS)


# A notebook cell's file: `<ipython-input-3-…>` (IPython, Colab), `<cell 3>`, or the file ipykernel
# writes each cell to (`/tmp/ipykernel_4242/526010223.py`), whose name means nothing to a reader.
_CELL_FILE = re.compile(r"^<.*>$|[\\/]ipykernel_\d+[\\/]\d+\.py$")
# IPython before 8 (and Colab) put the execution count in the file's name: `<ipython-input-3-5f2a…>`.
_INPUT_NUMBER = re.compile(r"^<ipython-input-(\d+)-")


def is_cell_file(file: str | None) -> bool:
    return bool(file) and bool(_CELL_FILE.search(file))


# {cell file: execution count} of the cells an IPython before 8 ran (Colab's 7.34 keeps no map, and
# ipykernel names cells by a hash of their text): filled by the magics' extension (`remember_cell`).
_OLD_IPYTHON_CELLS: dict[str, int] = {}


def remember_cell(file: str, number: int) -> None:
    """Note that the cell run as execution count `number` is compiled as `file`."""
    if not _INPUT_NUMBER.match(file):  # `<ipython-input-3-…>` says its number itself
        _OLD_IPYTHON_CELLS[file] = number


def _filename_map() -> dict | None:
    """IPython's {cell file: execution count} (IPython >= 8 keeps it for "Cell In[3], line 5"
    tracebacks; before 8, the cells the extension saw run), or None outside IPython. Never
    imports IPython."""
    ipython = sys.modules.get("IPython")
    getter = getattr(ipython, "get_ipython", None)
    try:
        shell = getter() if getter is not None else None
    except Exception:  # an IPython we do not know: name lines without cells
        return None
    if shell is None:
        return None
    found = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return found if isinstance(found, dict) else _OLD_IPYTHON_CELLS


def cell_number(file: str | None, names: dict | None = None) -> int | None:
    """The execution count of the cell `file` holds (`3` for `In [3]`), or None when unknown:
    from `names` when given (a document's `cells`), else from this session's IPython."""
    if not file:
        return None
    found = (names if names is not None else (_filename_map() or {})).get(file)
    if isinstance(found, int) and not isinstance(found, bool) and found >= 0:
        return found
    match = _INPUT_NUMBER.match(file)
    return int(match.group(1)) if match else None


def cell_names(files: Iterable[str]) -> dict[str, int]:
    """{file: execution count} for the cell files among `files`: what a document carries (`cells`) so
    that every view names a line `cell [3], line 5` whichever process renders it. Empty outside a
    notebook (or where IPython keeps no map: then lines read `line 5`)."""
    known = _filename_map()
    out: dict[str, int] = {}
    for file in files:
        if isinstance(file, str) and file not in out and is_cell_file(file):
            number = cell_number(file, known if known is not None else {})
            if number is not None:
                out[file] = number
    return out


def where_text(file: str | None, line: int | None, names: dict | None = None) -> str:
    """`cell [3], line 7` for a line of a notebook cell (`line 7` when the cell's number is unknown),
    `train.py:12` elsewhere (the file's name, not its path): how notes and findings point at code.
    Without a line, the place alone: `cell [3]`, `train.py`, or '' for a cell whose number is
    unknown. `names` is a document's `cells` ({file: execution count}); without it, this session's
    IPython is asked. The one Python home of the rule; the widgets' twin is
    widgets/ui/source-text.js `shortWhere`, held to the same answers by tests/fixtures/format-cases.json."""
    has_line = line is not None and line != ""
    if not file or is_cell_file(file):
        number = cell_number(file, names)
        cell = f"cell [{number}]" if number is not None else ""
        if not has_line:
            return cell
        return f"{cell}, line {line}" if cell else f"line {line}"
    name = _file_name(file)
    return f"{name}:{line}" if has_line else name


def _file_name(file: str) -> str:
    """`train.py` for `/home/me/train.py` or `C:\\me\\train.py`."""
    return re.split(r"[\\/]", file)[-1]


def lines_where(file: str | None, lines: Iterable[Any], names: dict | None = None) -> str | None:
    """Several lines of one place: `cell [3], lines 44–45`, `lines 44–45` (a cell whose number is
    unknown), `train.py:12–14`; one line as `where_text` says it; None without a line
    (widgets/ui/source-text.js `linesWhere`, the same rule)."""
    found = sorted({line for line in lines if _is_number(line)})
    if not found:
        return None
    if len(found) == 1:
        return where_text(file, found[0], names)
    span = f"{found[0]}–{found[-1]}"
    if not file or is_cell_file(file):
        number = cell_number(file, names)
        return f"cell [{number}], lines {span}" if number is not None else f"lines {span}"
    return f"{_file_name(file)}:{span}"


def _is_number(value: Any) -> bool:
    """A line number as a JSON document may hold one: a finite number, not a bool."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value == value and value not in (float("inf"), float("-inf"))


# Where wrappers keep the function they wrap: functools.wraps (`__wrapped__`), bound methods,
# functools.partial (`func`), and the attributes libraries use (Flax's `f`, Equinox's `fun`, ...).
_INNER = ("__wrapped__", "__func__", "func", "f", "fun", "_fun", "fn", "function", "__call__")
_MAX_LOOKS = 64  # objects looked into under one wrapper: a decorator stack is a handful deep


def _code_of(obj: Any) -> types.CodeType | None:
    code = getattr(obj, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _inner_callables(obj: Any) -> list[Any]:
    """What `obj` wraps: the attributes wrappers keep their function in, and its closure's callables."""
    found = []
    for name in _INNER:
        try:
            inner = getattr(obj, name, None)
        except Exception:  # a property of someone's wrapper that raises: not where the function is
            continue
        if inner is not None and inner is not obj and callable(inner):
            found.append(inner)
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            inner = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if callable(inner) and not isinstance(inner, type):
            found.append(inner)
    owner = getattr(obj, "__self__", None)  # a bound method: `jax.jit(model.apply)` runs the model's own call
    if owner is not None and not isinstance(owner, (type, types.ModuleType)):
        call = getattr(type(owner), "__call__", None)  # noqa: B004
        if isinstance(call, types.FunctionType):
            found.append(call)
    return found


def user_function(fn: Any) -> Any:
    """The user's function under `fn`'s wrappers, or the first function found when none is the user's.

    A library decorator (`nnx.remat`, `eqx.filter_jit`, a `functools.partial`) hands JAX its own
    function, whose code is in site-packages; the user's is one or more levels in (`__wrapped__`,
    an attribute, a closure cell). Looked for breadth first, so the nearest user function wins.
    """
    first, queue, seen = None, [fn], set()
    while queue and len(seen) < _MAX_LOOKS:
        obj = queue.pop(0)
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        code = _code_of(obj)
        if code is not None:
            if is_user_file(code.co_filename):
                return obj
            first = first if first is not None else obj
        queue.extend(_inner_callables(obj))
    return first if first is not None else fn


def function_location(fn: Any) -> SourceLocation | None:
    """Where a Python function (or the function under a jit or a library's decorator) is defined:
    the user's code when any function under the wrappers is the user's (`user_function`)."""
    target = user_function(fn)
    code = _code_of(target)
    if code is None:
        return None
    line = code.co_firstlineno
    for _ in range(20):  # co_firstlineno points at the first decorator; show the `def` line
        text = code_line(code.co_filename, line)
        if not text or not text.startswith("@"):
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
