"""Recording what JAX does: knows JAX, knows nothing of IPython or widgets.

The record types import without JAX; the session (which imports JAX) is loaded when first
asked for, so `import jaxmagic` and `%load_ext jaxmagic` can say clearly when JAX is missing.
"""

from typing import Any

from .record import ArgSpec, Artifacts, Capture, CellError, Event, Finding, JitCall, Signature, SourceLocation

_SESSION_NAMES = ("CaptureContext", "CaptureSession", "capture")


def __getattr__(name: str) -> Any:
    if name in _SESSION_NAMES:
        from . import session

        return getattr(session, name)
    raise AttributeError(name)


__all__ = [
    "ArgSpec",
    "Artifacts",
    "Capture",
    "CaptureContext",
    "CaptureSession",
    "CellError",
    "Event",
    "Finding",
    "JitCall",
    "Signature",
    "SourceLocation",
    "capture",
]
