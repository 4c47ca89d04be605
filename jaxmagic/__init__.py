"""jaxmagic: see what JAX did in a notebook cell.

`%load_ext jaxmagic`, then `%%jaxpr` over a cell. In scripts and tests:

    with jaxmagic.capture() as cap:
        f(x)
    cap.calls           # one JitCall per call of a jitted function
    jaxmagic.show(cap, "graph")
"""

from __future__ import annotations

import sys
from typing import Any

__version__ = "0.1.0"
MIN_JAX = (0, 4, 38)  # the oldest JAX the test suite has been run on (docs/design.md)

from . import api  # noqa: E402
from .api import document, show, static_html, to_dot, to_html, view  # noqa: E402 - no JAX needed
from .capture.record import Capture, JitCall  # noqa: E402


def capture(namespace: dict | None = None, **options: Any) -> Any:
    """Record what JAX does inside a `with` block: `with jaxmagic.capture() as cap: ...`.

    The recorder the magics use; `options` are `values`, `vmap`, `sync`, `grads`, `shardings`,
    `keys` (see `jaxmagic.capture.session.capture` for what each records). `namespace` is
    where jitted functions are looked up; by default the caller's module globals.
    """
    try:
        from .capture.session import capture as start  # imports JAX
    except ImportError:
        raise ImportError(jax_problem() or "jaxmagic could not load its recorder") from None
    return start(
        sys._getframe(1).f_globals if namespace is None else namespace, finish=api.complete_findings, **options
    )


def jax_problem() -> str | None:
    """Why jaxmagic cannot work with the JAX in this environment, or None when it can."""
    try:
        import jax
    except Exception as exc:  # boundary: whatever breaks JAX's import is what the user must hear
        return f"jaxmagic needs JAX, which could not be imported ({type(exc).__name__}: {exc}): pip install jax"
    try:
        version = tuple(int(part) for part in jax.__version__.split(".")[:3])
    except ValueError:
        return None  # a development version: assume it is new enough
    if version < MIN_JAX:
        need = ".".join(map(str, MIN_JAX))
        return f"jaxmagic needs JAX {need} or newer, this is {jax.__version__}: pip install -U jax"
    return None


def load_ipython_extension(shell):
    problem = jax_problem()
    if problem is not None:
        print(problem, file=sys.stderr)  # said once, at %load_ext; no magic is registered
        return
    from .magics import load_ipython_extension as load

    load(shell)
    # Called directly (not through %load_ext), IPython's extension manager would not know it is
    # loaded, and `%unload_ext jaxmagic` would leave every hook in place.
    loaded = getattr(getattr(shell, "extension_manager", None), "loaded", None)
    if isinstance(loaded, set):
        loaded.add(__name__)


def unload_ipython_extension(shell):
    from .magics import unload_ipython_extension as unload

    unload(shell)


__all__ = [
    "Capture",
    "JitCall",
    "capture",
    "document",
    "show",
    "static_html",
    "to_dot",
    "to_html",
    "view",
    "load_ipython_extension",
    "unload_ipython_extension",
    "__version__",
]
