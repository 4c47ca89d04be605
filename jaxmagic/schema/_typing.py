"""The typing names the declarations use, from `typing_extensions` where it is installed.

pydantic (the test suite's validator, jaxmagic/schema/validate.py) reads TypedDicts only from
`typing_extensions` before Python 3.12; at run time jaxmagic needs neither, so the standard
library's names serve when `typing_extensions` is absent (Python 3.11+ has both).
"""

from __future__ import annotations

try:
    from typing_extensions import NotRequired, TypedDict
except ImportError:  # pragma: no cover - a user's environment without typing_extensions
    from typing import NotRequired, TypedDict  # type: ignore[assignment]

__all__ = ["NotRequired", "TypedDict"]
