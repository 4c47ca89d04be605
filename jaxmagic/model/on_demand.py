"""Parts of a document left out of it and computed when its view asks (docs/design.md,
"Deferred artifacts").

A builder given an `OnDemand` leaves its heavy parts out of the document (the document says
which, in `deferred`) and registers how to compute them; the widget answers its front end's
requests with `handlers` (views/requests.py). `jaxmagic.document()`, exported pages and
`--static` build without one, so they carry everything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import strict


def _checked(what: str, answer: Any) -> Any:
    """`answer`, checked against its declaration (jaxmagic/schema/requests.py) under strict mode."""
    if strict.enabled():
        from ..schema.validate import ANSWERS, check

        if what in ANSWERS:
            check(answer, ANSWERS[what])
    return answer


class OnDemand:
    """{what: handler(args) -> JSON data}, filled by document builders; answers are computed once."""

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[dict], Any]] = {}

    def add(self, what: str, compute: Callable[[str], Any], key_arg: str = "function") -> None:
        """Answer requests `what` with `compute(args[key_arg])`, once per key (a view may ask twice)."""
        answers: dict[str, Any] = {}

        def handler(args: dict) -> Any:
            key = args.get(key_arg)
            if not isinstance(key, str):
                raise ValueError(f"a {what!r} request needs a {key_arg!r} string")
            if key not in answers:
                answers[key] = _checked(what, compute(key))
            return answers[key]

        self.handlers[what] = handler
