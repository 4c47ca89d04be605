"""What a magic cell shows when jaxmagic itself fails: a short box, never the user's traceback.

Recording, building a document and drawing a widget can each fail on something new (an unknown
primitive, a JAX version we have not seen, odd params). The cell has run by then, with its own
output and result untouched; what is left to say is what jaxmagic could not do, in a box below
the cell with the message to report. Both `text/html` and `text/plain` are offered, so a front
end without widgets (a terminal, nbconvert to text) still says it.
"""

from __future__ import annotations

from typing import Any

from .html_parts import esc

HINT = "The cell itself ran normally. Please open an issue with this message."


def failure_text(magic: str, what: str, exc: BaseException, version: str) -> str:
    return f"%%{magic}: jaxmagic {version} could not {what}: {type(exc).__name__}: {exc}. {HINT}"


def failure_bundle(magic: str, what: str, exc: BaseException, version: str) -> dict[str, str]:
    """The mime bundle of the box: HTML (escaped) and plain text."""
    text = failure_text(magic, what, exc, version)
    html = (
        '<div style="border:1px solid #d62728;border-left-width:4px;padding:6px 10px;margin:4px 0;'
        'font-family:ui-sans-serif,system-ui,sans-serif;font-size:13px">'
        f"<b>%%{esc(magic)}</b>: jaxmagic {esc(version)} could not {esc(what)}: "
        f"<code>{esc(type(exc).__name__)}: {esc(exc)}</code>. {esc(HINT)}</div>"
    )
    return {"text/html": html, "text/plain": text}


def show_failure(magic: str, what: str, exc: BaseException, version: str) -> None:
    """Display the box; if even displaying fails, one line on stderr is the last resort."""
    try:
        from IPython.display import display

        display(failure_bundle(magic, what, exc, version), raw=True)
    except Exception:  # boundary: the last resort must not fail in turn
        import sys

        print(failure_text(magic, what, exc, version), file=sys.stderr)


def interrupted_text(magic: str) -> str:
    return f"%%{magic}: view interrupted (Ctrl-C while it was being built); the cell itself finished."


def show_interrupted(magic: str) -> None:
    """One line where the view would have been: Ctrl-C after the cell's code finished stops only
    jaxmagic's work, and the cell stays finished (no traceback, as without the magic)."""
    text = interrupted_text(magic)
    html = (
        '<div style="border:1px solid #999;border-left-width:4px;padding:4px 10px;margin:4px 0;'
        f'font-family:ui-sans-serif,system-ui,sans-serif;font-size:13px">{esc(text)}</div>'
    )
    try:
        from IPython.display import display

        display({"text/html": html, "text/plain": text}, raw=True)
    except BaseException:
        import sys

        print(text, file=sys.stderr)


__all__: list[Any] = ["failure_bundle", "failure_text", "show_failure", "show_interrupted", "HINT"]
