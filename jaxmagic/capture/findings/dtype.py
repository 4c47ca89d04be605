"""A 64-bit dtype requested without x64: JAX's own truncation warning, as a finding on the user's line.

JAX's warning is the truth: a finding is made only from a warning JAX issued during the cell
(`warning_site` hears every `warnings.warn`), read through `jax_compat.dtype_truncation`.
One finding per user line, with the number of times JAX warned there (a loop warns every
iteration; Python shows it once per location). A warning the user's filters "ignore" gives
no finding (the user chose not to hear it), nor does one they turn into an error (JAX raised
then, nothing was truncated); one already shown once (the "default" filter) still counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import jax_compat, source
from ..record import Finding, JitCall, SourceLocation


@dataclass
class _Truncation:
    requested: str
    given: str
    where: str | None  # the function JAX names (`zeros`), if any
    source: SourceLocation | None
    call: int | None  # the recorded jitted call it was traced in
    times: int = 1


class TruncationLog:
    """The `warning_site.Listener` of one capture: drops warnings during jaxmagic's own work,
    notes JAX's truncation warnings by the user's line."""

    def __init__(self, quiet: Callable[[], bool], recording_call: Callable[[Any], int | None]):
        self.quiet = quiet
        self._recording_call = recording_call
        self._by_line: dict[tuple[str, int] | None, _Truncation] = {}

    def on_warning(self, message: Any, category: Any, frame: Any) -> None:
        """Note a truncation warning the user's filters let through (module docstring)."""
        text = str(message)
        if "Explicitly requested dtype" not in text:  # the cheap test first: most warnings are others
            return
        said = jax_compat.dtype_truncation(text)
        if said is None or _filtered_out(message, category, frame):
            return
        where = source.caller_location(frame)  # JAX's level can name its own line (`jnp.arange` under grad)
        key = (where.file, where.line) if where else None
        known = self._by_line.get(key)
        if known is not None:
            known.times += 1
            return
        self._by_line[key] = _Truncation(
            said["requested"], said["given"], said["where"], where, self._recording_call(frame)
        )

    def findings(self, calls: list[JitCall]) -> list[Finding]:
        """One `dtype_truncated` warning per line, in the order first seen."""
        found = []
        for t in self._by_line.values():
            function = calls[t.call].name if t.call is not None and 0 <= t.call < len(calls) else None
            found.append(
                Finding(
                    kind="dtype_truncated",
                    severity="warning",
                    source=t.source,
                    call=t.call,
                    function=function,
                    message=_message(t, function),
                )
            )
        return found


def _message(t: _Truncation, function: str | None) -> str:
    """What was requested, what JAX gave, where, how often, and the two fixes."""
    asked = f"{t.requested} was requested" + (f" in {t.where}" if t.where else "")
    inside = f" (traced in {function})" if function else ""
    line = source.where_text(t.source.file, t.source.line) if t.source else "an unknown line"
    times = f"; JAX warned {t.times} times here" if t.times > 1 else ""
    return (
        f"{asked} at {line}{inside}, but x64 is off: JAX gives {t.given} instead{times}. "
        f'To compute in {t.requested}, run jax.config.update("jax_enable_x64", True) at startup, '
        f"before any array is made; otherwise request {t.given}."
    )


def _filtered_out(message: Any, category: Any, frame: Any) -> bool:
    """True when the user's warning filters "ignore" this warning where it was shown, or made it
    an error: the first matching filter's action, as `warnings.warn_explicit` finds it."""
    if isinstance(message, Warning):
        category = type(message)
    category = category or UserWarning
    text = str(message)
    module = frame.f_globals.get("__name__", "<string>") if frame is not None else "sys"
    lineno = frame.f_lineno if frame is not None else 1
    action = getattr(warnings, "defaultaction", "default")  # at runtime, though typeshed leaves it out
    for item in warnings.filters:
        act, msg, cat, mod, ln = item
        if (
            (msg is None or msg.match(text))
            and issubclass(category, cat)
            and (mod is None or mod.match(str(module)))
            and (ln == 0 or lineno == ln)
        ):
            action = act
            break
    return action in ("ignore", "error")
