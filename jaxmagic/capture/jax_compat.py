"""Every private JAX API jaxmagic touches, each behind a feature check.

Keeping them in one module means a JAX release that moves one of them breaks
one function here, and the fallback degrades a feature instead of failing.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import jax

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

try:  # present in every JAX version we support; C++ PjitFunction type
    PJIT_FUNCTION_TYPE: type | None = type(jax.jit(lambda x: x))
except Exception:  # pragma: no cover - defensive
    PJIT_FUNCTION_TYPE = None


def is_jitted_function(obj: Any) -> bool:
    """True for the callable `jax.jit` returns (not for our own wrapper)."""
    if PJIT_FUNCTION_TYPE is not None and type(obj) is PJIT_FUNCTION_TYPE:
        return True
    return callable(obj) and hasattr(obj, "lower") and hasattr(obj, "_cache_size") and hasattr(obj, "trace")


def jit_info(fn: Any) -> Any:
    """The PjitInfo record of a jitted function: static and donated argnums/argnames."""
    return getattr(fn, "_jit_info", None)


def _make_trace_state_clean() -> Callable[[], bool]:
    try:
        from jax._src import core

        probe = core.trace_state_clean
        probe()
        return probe
    except Exception:  # unknown: assume no trace is running and let the caller check args
        return lambda: True


trace_state_clean: Callable[[], bool] = _make_trace_state_clean()


def aval_of(x: Any) -> Any:
    """The abstract value JAX would trace `x` as."""
    typeof = getattr(jax, "typeof", None)
    if typeof is not None:
        return typeof(x)
    from jax import api_util  # older JAX

    return api_util.shaped_abstractify(x)


def short_aval(aval: Any) -> str:
    """`f32[3,4]`, as JAX's jaxpr printer writes types."""
    try:
        return aval.str_short(short_dtypes=True)
    except TypeError:
        return aval.str_short()
    except Exception:
        return str(aval)


def user_frame(source_info: Any) -> Any:
    """The innermost user frame of an eqn's source_info (file, function, line, column)."""
    try:
        from jax._src import source_info_util

        return source_info_util.user_frame(source_info.traceback)
    except Exception:
        return None


def name_stack_text(source_info: Any) -> str:
    try:
        return str(source_info.name_stack)
    except Exception:
        return ""


def jaxpr_pretty_printer() -> Callable[[Any], tuple[str, dict]] | None:
    """A printer returning (text, {Var: printed name}) or None if the private API moved.

    The names let the graph label variables exactly as the jaxpr text does, and let
    us find the text line of each eqn.
    """
    try:
        from jax._src import core

        core.JaxprPpContext, core.JaxprPpSettings, core.pp_jaxpr  # noqa: B018 - feature check
    except Exception:
        return None

    def print_jaxpr(jaxpr: Any) -> tuple[str, dict]:
        context = core.JaxprPpContext()
        doc = core.pp_jaxpr(jaxpr, context, core.JaxprPpSettings())
        try:  # inside a kernel JAX would colour the text with ANSI codes
            text = doc.format(use_color=False)
        except TypeError:
            text = _ANSI.sub("", doc.format())
        return text, dict(context.var_names)

    return print_jaxpr


def literal_value(atom: Any) -> Any:
    """The Python value of a jaxpr Literal, or None for a Var."""
    return getattr(atom, "val", None) if type(atom).__name__ == "Literal" else None


def is_literal(atom: Any) -> bool:
    return type(atom).__name__ == "Literal"


def is_dropvar(var: Any) -> bool:
    return type(var).__name__ == "DropVar"


def jaxpr_types() -> tuple[type, type]:
    """(ClosedJaxpr, Jaxpr) classes, wherever this JAX keeps them."""
    from jax import extend

    core = extend.core
    return core.ClosedJaxpr, core.Jaxpr


def hide_from_jax(path: str) -> None:
    """Keep our frames out of JAX's filtered tracebacks and out of eqn source lines."""
    for module_name in ("traceback_util", "source_info_util"):
        try:
            module = __import__(f"jax._src.{module_name}", fromlist=["register_exclusion"])
            module.register_exclusion(path)
        except Exception:
            pass  # frames of ours may show in tracebacks; nothing else changes


def primitive_names() -> frozenset[str]:
    """Names of JAX's primitives: an eager op compiles as `jit(<primitive>)`."""
    try:
        from jax.extend.core import primitives

        return frozenset(getattr(primitives, n).name for n in dir(primitives) if n.endswith("_p"))
    except Exception:
        return frozenset()
