"""jaxmagic: see what JAX did in a notebook cell.

`%load_ext jaxmagic`, then `%%jaxpr` over a cell. In scripts and tests:

    with jaxmagic.capture() as cap:
        f(x)
    cap.calls           # one JitCall per call of a jitted function
    jaxmagic.show(cap, "graph")
"""

from __future__ import annotations

__version__ = "0.1.0"

from .api import document, show, static_html, to_dot, to_html, view
from .capture import Capture, JitCall, capture


def load_ipython_extension(shell):  # noqa: ANN001 - IPython's entry point
    from .magics import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell):  # noqa: ANN001
    from .magics import unload_ipython_extension as unload

    unload(shell)


__all__ = ["Capture", "JitCall", "capture", "document", "show", "static_html", "to_dot", "to_html", "view",
           "load_ipython_extension", "unload_ipython_extension", "__version__"]
