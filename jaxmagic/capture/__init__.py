"""Recording what JAX does: knows JAX, knows nothing of IPython or widgets."""

from .record import (ArgSpec, Artifacts, Capture, CellError, Event, Finding, JitCall, Signature,
                     SourceLocation)
from .session import CaptureContext, CaptureSession, capture

__all__ = ["ArgSpec", "Artifacts", "Capture", "CaptureContext", "CaptureSession", "CellError", "Event",
           "Finding", "JitCall", "Signature", "SourceLocation", "capture"]
