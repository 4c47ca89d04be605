"""Names as the user wrote them, for jitted calls a library makes on the user's behalf.

`nnx.jit` and `eqx.filter_jit` call JAX's jit with arguments of their own making: NNX passes
its graph state as flat lists (`model.states[0][0]`), Equinox a partition of every argument
(`dynamic_nodonate['first'][3]`), and the function JAX traces is the library's (defined in
site-packages). The user's own call is one frame up: the outermost library frame under the
user's line holds the arguments as the user passed them (`model`, `opt`, `x`), and its
wrapper object keeps the user's function. The arrays are the same objects on both sides, so
each leaf of the jitted call is named by where the same array sits in the user's arguments:
`model.hidden.kernel`. A leaf that is not found there keeps JAX's name; nothing is guessed.

Called only when a call's signature is taken (misses and a function's first calls).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
import types
from dataclasses import dataclass, replace
from typing import Any

import jax

from .. import source
from ..record import Signature

_MAX_FRAMES = 200  # frames walked up looking for the user's line


@dataclass(frozen=True)
class UserEntry:
    """The user's call of a library's jit wrapper: its function and its arguments, by parameter name."""

    function: Any  # the user's function behind the wrapper (for its name and definition), or None
    arguments: dict[str, Any]  # parameter name -> value, as the user passed it


def user_entry(frame: types.FrameType | None, wrapped: Any = None) -> UserEntry | None:
    """The library call the user's code made that led to the jitted call running below `frame`,
    or None when the user's code called the jitted function itself (JAX's names are the user's).

    `wrapped` is looked into for the user's function when the library frame is a plain closure
    (`nnx.grad`'s wrapper keeps no `self`): the function JAX was handed wraps the user's.
    """
    entry = _library_entry_frame(frame)
    if entry is None:
        return None
    positional, keywords, wrapper = _frame_arguments(entry)
    if positional is None:  # the library rebound its `*args`: read the user's own call instead
        positional, keywords = _written_arguments(entry.f_back) or ([], {})
    holder = next((h for h in (wrapper, wrapped, _own_function(entry)) if h is not None), None)
    function = source.user_function(holder) if holder is not None else None
    if function is not None and not source.is_user_file(
        getattr(getattr(function, "__code__", None), "co_filename", "")
    ):
        function = None
    return UserEntry(function=function, arguments=_bind(function, positional, keywords))


def _own_function(frame: types.FrameType) -> Any:
    """The function object a library frame runs, where that function refers to itself (Flax 0.10's
    `nnx.jit` wrapper is a closure over itself, made with `functools.wraps(fun)`): its `__wrapped__`
    leads to the user's function. None otherwise."""
    for value in frame.f_locals.values():
        if isinstance(value, types.FunctionType) and value.__code__ is frame.f_code:
            return value
    return None


def _library_entry_frame(frame: types.FrameType | None) -> types.FrameType | None:
    """The frame the user's line called, when it is a library's (not jaxmagic's call routing)."""
    below = None
    for _ in range(_MAX_FRAMES):
        if frame is None:
            return None
        if source.is_user_file(frame.f_code.co_filename):
            if below is None or source.is_own_file(below.f_code.co_filename):
                return None  # the user called the jitted function directly
            return below
        below, frame = frame, frame.f_back
    return None


def _frame_arguments(frame: types.FrameType) -> tuple[list | None, dict, Any]:
    """(positional, keyword, the wrapper object) a library frame was called with: `self` of a
    method is the wrapper (it keeps the user's function), the rest are the user's arguments.

    Positional is None when the frame rebound its `*args` (Equinox's `x, *args = args`): what it
    holds now is no longer what the user passed.
    """
    info = inspect.getargvalues(frame)
    values = info.locals
    names = list(info.args)
    wrapper = None
    if names and names[0] == "self":
        wrapper = values.get("self")
        names = names[1:]
    positional = [values[n] for n in names if n in values]
    if info.varargs:
        if not isinstance(values.get(info.varargs), tuple):
            return None, {}, wrapper
        positional.extend(values[info.varargs])
    keywords = dict(values.get(info.keywords) or {}) if info.keywords else {}
    return positional, keywords, wrapper


def _written_arguments(frame: types.FrameType | None) -> tuple[list, dict] | None:
    """The arguments of the call `frame` is making, read from the call as written, when each is
    a plain name (`f(model, x, y=y)`): looked up like Python does, so nothing runs. None otherwise.

    The call is found by the frame's current instruction's source position (Python 3.11+).
    """
    co_positions = getattr(frame.f_code, "co_positions", None) if frame is not None else None
    if frame is None or co_positions is None:
        return None
    try:
        positions = list(co_positions())[frame.f_lasti // 2]
        text = _source_span(frame.f_code.co_filename, *positions)
        call = ast.parse(text, mode="eval").body if text else None
    except (IndexError, SyntaxError, ValueError, TypeError):
        return None
    if not isinstance(call, ast.Call) or not all(isinstance(a, ast.Name) for a in call.args):
        return None
    if not all(k.arg and isinstance(k.value, ast.Name) for k in call.keywords):
        return None
    scopes = (frame.f_locals, frame.f_globals, vars(builtins))
    names = [a.id for a in call.args] + [k.value.id for k in call.keywords]  # type: ignore[union-attr]
    if not all(any(n in scope for scope in scopes) for n in names):
        return None
    look = lambda n: next(scope[n] for scope in scopes if n in scope)
    return [look(a.id) for a in call.args], {k.arg: look(k.value.id) for k in call.keywords}  # type: ignore


def _source_span(
    filename: str, line: int | None, end_line: int | None, col: int | None, end_col: int | None
) -> str | None:
    """The source text between two positions (columns are UTF-8 byte offsets, as Python counts)."""
    if None in (line, end_line, col, end_col):
        return None
    lines = [text.encode() for text in linecache.getlines(filename)[line - 1 : end_line]]  # type: ignore[operator]
    if len(lines) != end_line - line + 1:  # type: ignore[operator]
        return None
    if len(lines) == 1:
        return lines[0][col:end_col].decode()
    return b"".join([lines[0][col:], *lines[1:-1], lines[-1][:end_col]]).decode()


def _bind(function: Any, positional: list, keywords: dict) -> dict[str, Any]:
    """Arguments by the user's parameter names; `args[i]` and keyword names where they cannot be bound."""
    if function is not None:
        try:
            bound = inspect.signature(function).bind_partial(*positional, **keywords)
            return dict(bound.arguments)
        except (TypeError, ValueError):
            pass
    named = {f"args[{i}]": value for i, value in enumerate(positional)}
    named.update(keywords)
    return named


def _is_array(leaf: Any) -> bool:
    # Arrays only: small ints and other interned values share identities and would name wrongly.
    return isinstance(leaf, jax.Array) or type(leaf).__module__ == "numpy" and hasattr(leaf, "shape")


def leaf_names(entry: UserEntry, leaves: list) -> list[str | None]:
    """For each leaf of the jitted call, its path in the user's arguments (`model.hidden.kernel`),
    or None where that array is not among them."""
    wanted = {id(leaf) for leaf in leaves if _is_array(leaf)}
    if not wanted:
        return [None] * len(leaves)
    paths: dict[int, str] = {}
    for name, value in entry.arguments.items():
        for path, leaf in _named_leaves(value):
            if id(leaf) in wanted and id(leaf) not in paths:
                paths[id(leaf)] = name + path
    return [paths.get(id(leaf)) if _is_array(leaf) else None for leaf in leaves]


def _named_leaves(value: Any) -> list[tuple[str, Any]]:
    """(path under `value`, leaf) for each leaf of one of the user's arguments: JAX's flattening,
    or, for an object JAX sees as one leaf, its library's own graph (`_graph_leaves`)."""
    try:
        flat = jax.tree_util.tree_flatten_with_path(value)[0]
    except Exception:  # an argument JAX cannot flatten: its leaves stay unnamed
        return []
    if len(flat) == 1 and flat[0][1] is value and not _is_array(value):
        return _graph_leaves(value) or []
    return [(_readable(value, key_path), leaf) for key_path, leaf in flat]


def _graph_leaves(value: Any) -> list[tuple[str, Any]] | None:
    """The arrays of a Flax NNX object that is not a JAX pytree (NNX modules became pytrees in Flax
    0.11; on 0.10 `nnx.jit` and `nnx.grad` hand JAX their graph state, and the user's `model` flattens
    to itself), by their path in NNX's own graph (`.hidden.kernel`, `.blocks[0].kernel`). Read only
    where the user's program already loaded Flax; None for anything else."""
    nnx = sys.modules.get("flax.nnx")
    try:
        if nnx is None or not nnx.graph.is_graph_node(value):
            return None
        found = []
        for path, node in nnx.iter_graph(value):
            array = _variable_value(node) if isinstance(node, nnx.Variable) else node
            if _is_array(array):
                found.append((_graph_path(value, path), array))
        return found
    except Exception:  # boundary: a Flax whose graph API differs: the leaves keep JAX's names
        return None


def _variable_value(variable: Any) -> Any:
    """A Flax variable's array without a warning of Flax's in the user's cell: `get_value()` where Flax
    has it (0.12 deprecates `.value`), `.value` on the versions before it."""
    get_value = getattr(variable, "get_value", None)
    return get_value() if callable(get_value) else variable.value


def _graph_path(root: Any, path: tuple) -> str:
    """A graph path as the user would write it: attributes as `.name`, sequence items as `[i]`, dict
    entries as `['key']` (what JAX's `keystr` writes for the same objects as pytrees)."""
    node: Any = root
    text = ""
    for key in path:
        if isinstance(node, dict):
            text += f"[{key!r}]"
        elif isinstance(key, int):  # a list, or a sequence node of the library's own (`nnx.List`)
            text += f"[{key}]"
        else:
            text += f".{key}"
        node = _child(node, key)
    return text


def _child(node: Any, key: Any) -> Any:
    """`node[key]` or `node.key`, whichever the graph path step is; None where neither answers."""
    try:
        return node[key] if isinstance(node, dict) or isinstance(key, int) else getattr(node, str(key))
    except Exception:  # boundary: a node of the library's that answers neither way
        return None


def _readable(root: Any, key_path: tuple) -> str:
    """The key path as text; a Flax variable's own `.value` step is left out (`hidden.kernel`, the
    name Flax itself prints), since the variable, not its box, is what the user named."""
    text = jax.tree_util.keystr(key_path)
    if text.endswith(".value") and type(_at(root, key_path[:-1])).__module__.startswith("flax."):
        text = text[: -len(".value")]
    return text


def _at(root: Any, key_path: tuple) -> Any:
    """The object at `key_path` under `root` (attribute, dict and sequence keys), or None."""
    node = root
    try:
        for key in key_path:
            if hasattr(key, "name"):
                node = getattr(node, key.name)
            elif hasattr(key, "key"):
                node = node[key.key]
            elif hasattr(key, "idx"):
                node = node[key.idx]
            else:
                return None
    except Exception:  # a key path a library's flattening made up: no parent to read
        return None
    return node


def renamed(signature: Signature, names: list[str | None]) -> Signature:
    """`signature` with each dynamic leaf's path replaced by its user name where one was found
    (`names` is in the order of the dynamic leaves; static arguments keep theirs)."""
    if not any(names):
        return signature
    specs, dynamic = [], iter(names)
    for spec in signature.args:
        name = None if spec.static else next(dynamic, None)
        specs.append(spec if not name else replace(spec, path=name))
    return Signature(args=tuple(specs))


def reason_in_user_terms(reason: Any, renames: dict[str, str], call_site: Any) -> Any:
    """A miss reason whose JAX explanation names the library's arguments (`dynamic_nodonate['rest'][0]`)
    and the library's line, told with the user's names and the user's line instead. JAX's own
    text is kept verbatim beside it."""
    explanation = getattr(reason, "explanation", None)
    if explanation is None or not renames:
        return reason
    changes = tuple(replace(c, path=renames.get(c.path, c.path)) for c in explanation.changes)
    site = explanation.call_site
    if call_site is not None and (site is None or not source.is_user_file(site[0])):
        site = (call_site.file, call_site.line)
    return replace(reason, explanation=replace(explanation, changes=changes, call_site=site))
