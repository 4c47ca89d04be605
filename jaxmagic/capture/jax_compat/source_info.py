"""An eqn's source info: its user frames, its name stack (scopes and transforms), JAX's traceback filter."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

from ... import strict

# The scope JAX's checkpoint (remat) puts around the recomputation it adds to a backward pass.
REMAT_SCOPE = "rematted_computation"


def user_frame(source_info: Any) -> Any:
    """The innermost user frame of an eqn's source_info (file, function, line, column)."""
    try:
        source_info_util = _source_info_util()  # once: an import statement per eqn costs ~1 µs
    except (ImportError, AttributeError) as exc:
        strict.fallback("the user's line of each eqn", exc)
        return None
    try:  # JAX 0.5 and later take the traceback
        return source_info_util.user_frame(source_info.traceback)
    except AttributeError:  # JAX 0.4 takes the SourceInfo itself (and reads its `.traceback`)
        try:
            return source_info_util.user_frame(source_info)
        except Exception:  # boundary: `source_info` may be None or a stand-in (an eqn built by hand)
            return None
    except Exception:  # boundary: as above
        return None


@functools.cache
def _source_info_util() -> Any:
    from jax._src import source_info_util

    return source_info_util


@functools.lru_cache(maxsize=1 << 16)
def frame_line(code: Any, lasti: int) -> tuple[str, int, str]:
    """(file, line, function) of a raw traceback frame (a code object and its last instruction)."""
    from jax._src import source_info_util

    frame = source_info_util.raw_frame_to_frame(code, lasti)
    return frame.file_name, frame.start_line, frame.function_name


@functools.cache
def _is_user_filename() -> Callable[[str], bool]:
    from jax._src import source_info_util

    return source_info_util.is_user_filename


# JAX functions that start tracing a function into a jaxpr. JAX 0.5 and later end an eqn's traceback
# at the traced function; JAX 0.4 keeps the whole Python stack, through these, to the call site.
_TRACE_ENTRIES = frozenset({"trace_to_jaxpr_dynamic", "trace_to_subjaxpr_dynamic"})


def user_stack(source_info: Any) -> tuple[tuple[str, int, str], ...]:
    """(file, line, function) of every user frame of an eqn's traceback, outermost first, within the
    function traced into the eqn's jaxpr (as JAX 0.5 and later record them; not its callers).

    The whole chain, not only the innermost line, tells a helper called from twenty
    lines apart from one called twenty times by a loop. Raw frames are cheap (a few µs
    per eqn); their line lookup is cached per (code, offset). Falls back to the innermost frame.
    """
    try:
        traceback = source_info.traceback
        if traceback is None:
            return ()
        codes, lastis = traceback.raw_frames()
        is_user = _is_user_filename()
        frames = []
        for code, lasti in zip(codes, lastis):  # innermost first
            if is_user(code.co_filename):
                frames.append(frame_line(code, lasti))
            elif frames and code.co_name in _TRACE_ENTRIES:
                break  # JAX 0.4: the frames outside the traced function (where it was traced from) follow
        return tuple(reversed(frames))
    except (AttributeError, TypeError, ValueError):  # no traceback to walk: the innermost frame, if any
        frame = user_frame(source_info)
        return () if frame is None else ((frame.file_name, frame.start_line, frame.function_name),)


def name_stack_text(source_info: Any) -> str:
    """An eqn's name stack as text, as JAX 0.5 and later write it.

    JAX 0.4 drops a transform with nothing inside it (an eqn of `grad`'s own body reads '', not
    `jvp()`), which would put it outside the transform's group; the text is rebuilt from the
    entries the same way on every JAX.
    """
    try:
        stack = source_info.name_stack.stack
        if _TRANSFORM is None:
            return str(source_info.name_stack)
        scope: list[str] = []
        for entry in reversed(stack):
            if entry.__class__ is _TRANSFORM:
                if scope:
                    scope[-1] = f"{entry.name}({scope[-1]})"
                else:
                    scope.append(f"{entry.name}()")
            else:
                scope.append(str(entry.name))
        return "/".join(reversed(scope))
    except (AttributeError, TypeError):  # no name stack entries: JAX's own text, or none
        try:
            return str(source_info.name_stack)
        except AttributeError:
            return ""


def name_stack_path(source_info: Any) -> list[str]:
    """An eqn's name stack as a path of nested boxes: each transform its own level, `jvp(…)`.

    JAX's text folds a transform into the next name (`jvp(attention)`, `jvp(vmap(BTNH,…))`,
    `jvp()`), which makes the ops of one `grad`'s forward pass siblings in three scopes that
    interleave: a block of a model is then cut across boxes and cannot be folded. Nesting
    (`jvp(…)` › `vmap(…)` › `BTNH,…`) keeps one transform's ops in one box.
    """
    try:
        stack = source_info.name_stack.stack
        if _TRANSFORM is None:
            raise TypeError("no name stack entries on this JAX")
        return [f"{entry.name}(\u2026)" if entry.__class__ is _TRANSFORM else str(entry.name) for entry in stack]
    except (AttributeError, TypeError):
        text = name_stack_text(source_info)
        return [part for part in text.split("/") if part] if text else []


def lowered_name_stack_text(source_info: Any) -> str:
    """An eqn's name stack as this JAX writes it into the lowering's op names (StableHLO, HLO).

    Equal to `name_stack_text` on JAX 0.5 and later; JAX 0.4 lowers its own spelling (an empty
    transform dropped), and the op names must be matched as written.
    """
    try:
        return str(source_info.name_stack)
    except AttributeError:
        return name_stack_text(source_info)


def hide_from_jax(path: str) -> None:
    """Keep our frames out of JAX's filtered tracebacks and out of eqn source lines."""
    for module_name in ("traceback_util", "source_info_util"):
        try:
            module = __import__(f"jax._src.{module_name}", fromlist=["register_exclusion"])
            module.register_exclusion(path)
        except (ImportError, AttributeError) as exc:  # frames of ours may show in tracebacks; nothing else changes
            strict.fallback("jaxmagic's frames kept out of JAX's tracebacks and eqn lines", exc)


def _transform_type() -> type | None:
    try:
        from jax._src.source_info_util import Transform

        return Transform
    except ImportError as exc:
        strict.fallback("transforms told from scopes in name stacks", exc)
        return None


_TRANSFORM = _transform_type()


def has_transform(source_info: Any, name: str) -> bool:
    """True if an eqn was traced under transform `name` (e.g. "vmap"): `vmap(...)` in its name stack.

    Called once per eqn of every recorded program: a loop over the stack's few entries.
    """
    try:
        for entry in source_info.name_stack.stack:  # noqa: SIM110
            if entry.__class__ is _TRANSFORM and entry.name == name:
                return True
        return False
    except (AttributeError, TypeError):
        return f"{name}(" in name_stack_text(source_info)


def _without_replayed_prefix(stack: list) -> list:
    """The name stack with what a `transpose` entry replays of the stack above it dropped.

    JAX 0.4 names a backward-pass eqn under vmap `vmap(transpose(vmap(jvp(...))))`: the part after
    `transpose` repeats the forward eqn's stack, whose start is the same vmap. Counting it twice
    would call one vmap nested.
    """
    keys = [(entry.__class__ is _TRANSFORM, getattr(entry, "name", entry)) for entry in stack]
    out, i = [], 0
    while i < len(stack):
        out.append(stack[i])
        if keys[i] == (True, "transpose"):
            prefix = keys[:i]
            if prefix and keys[i + 1 : i + 1 + len(prefix)] == prefix:
                del stack[i + 1 : i + 1 + len(prefix)]
                del keys[i + 1 : i + 1 + len(prefix)]
        i += 1
    return out


def transform_depth(source_info: Any, name: str) -> int:
    """How many times transform `name` appears in an eqn's name stack (2 = nested vmaps)."""
    try:
        stack = _without_replayed_prefix(list(source_info.name_stack.stack))
        return sum(entry.__class__ is _TRANSFORM and entry.name == name for entry in stack)
    except (AttributeError, TypeError):
        return name_stack_text(source_info).count(f"{name}(")


def scoped_user_context(source_info: Any, scope: str) -> Any:
    """A context that binds ops with an eqn's traceback and name stack, plus one more scope.

    Re-evaluating a user's eqn under it gives the new eqns (and every eqn JAX derives from
    them: `jvp(...)`, `transpose(jvp(...))`) the user's source line and scopes, with `scope`
    innermost, as `core.eval_jaxpr` does plus the scope. Falls back to `jax.named_scope`.
    """
    try:
        from jax._src import source_info_util

        stack = source_info_util.current_name_stack() + source_info.name_stack.extend(scope)
        return source_info_util.user_context(source_info.traceback, name_stack=stack)
    except (ImportError, AttributeError, TypeError) as exc:
        strict.fallback("the user's line and scopes on the ops of a split gradient", exc)
        return jax.named_scope(scope)


def name_stack_entries(source_info: Any) -> tuple[tuple[bool, str], ...]:
    """(is_transform, name) for each entry of an eqn's name stack, outermost first."""
    try:
        return tuple((entry.__class__ is _TRANSFORM, entry.name) for entry in source_info.name_stack.stack)
    except (AttributeError, TypeError):  # no source info (an eqn built by hand)
        return ()


def drop_scopes(source_info: Any, drop: Callable[[str], bool]) -> Any:
    """`source_info` with the name-stack scopes for which `drop(name)` is true removed (None: unchanged)."""
    try:
        stack = source_info.name_stack
        kept = tuple(e for e in stack.stack if e.__class__ is _TRANSFORM or not drop(e.name))
        if len(kept) == len(stack.stack):
            return source_info
        return source_info.replace(name_stack=type(stack)(kept))
    except (AttributeError, TypeError):  # no name stack to filter
        return source_info


def source_info_now() -> Any:
    """JAX's source info (traceback, name stack) for the current Python stack, or None."""
    try:
        from jax._src import source_info_util

        return source_info_util.current()
    except (ImportError, AttributeError) as exc:
        strict.fallback("the line of eager key operations", exc)
        return None
