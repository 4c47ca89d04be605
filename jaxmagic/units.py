"""Sizes as people read them, shared by capture findings and model documents."""

from __future__ import annotations


def bytes_text(n: int) -> str:
    """'48 bytes', '1.5 KB', '2.0 MB', '1.1 GB' (binary units)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
