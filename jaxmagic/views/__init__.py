"""Views: JSON documents in, widgets and static HTML out. Never imports JAX.

The widget class is imported on first use, so static export works without loading
ipywidgets.
"""

from typing import Any

from .static_html import fallback_html, page, text_summary


def __getattr__(name: str) -> Any:
    if name == "JaxmagicWidget":
        from .widget import JaxmagicWidget

        return JaxmagicWidget
    raise AttributeError(name)


__all__ = ["JaxmagicWidget", "fallback_html", "page", "text_summary"]
