"""The view's requests to the kernel: heavy parts of a document computed when the user asks.

A widget is built with `handlers` ({what: handler(args) -> JSON data}, from the model layer's
`OnDemand`). Its front end sends `{"jm": "request", "id", "what", "args"}` as an anywidget custom
message; the reply is `{"jm": "reply", "id", "ok": true}` with the data as one binary buffer
(gzip-compressed JSON: a 40 MB HLO text travels as ~3 MB), or `{"ok": false, "error": text}`.
A handler that fails answers with its error, never a traceback: the view shows the sentence.
Why messages and not traitlets: a reply is sent to the view that asked and is never saved in
the notebook, so a saved widget's state stays the small document (docs/design.md, "Deferred
artifacts").
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict], Any]

REQUEST = "request"
REPLY = "reply"


def answer(handlers: dict[str, Handler], content: Any) -> tuple[dict, list[bytes]] | None:
    """The reply (content, buffers) to one custom message, or None when it is not a request of ours."""
    if not isinstance(content, dict) or content.get("jm") != REQUEST:
        return None
    request_id = content.get("id")
    what = content.get("what")
    handler = handlers.get(what) if isinstance(what, str) else None
    if handler is None:
        return {
            "jm": REPLY,
            "id": request_id,
            "ok": False,
            "error": f"this view cannot load {what!r} (known: {', '.join(sorted(handlers)) or 'nothing'})",
        }, []
    args = content.get("args")
    try:
        data = handler(args if isinstance(args, dict) else {})
        payload = gzip.compress(
            json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode(
                "utf-8", "surrogatepass"
            ),
            compresslevel=6,
            mtime=0,
        )
    except KeyboardInterrupt:
        return {"jm": REPLY, "id": request_id, "ok": False, "error": "interrupted in the kernel: ask again"}, []
    except Exception as exc:  # boundary: the front end's request is answered with the reason
        return {
            "jm": REPLY,
            "id": request_id,
            "ok": False,
            "error": f"the kernel could not compute it: {type(exc).__name__}: {exc}",
        }, []
    return {"jm": REPLY, "id": request_id, "ok": True}, [payload]


def serve(widget: Any, handlers: dict[str, Handler]) -> None:
    """Answer `widget`'s requests with `handlers` (ipywidgets' `on_msg` / `send`)."""
    if not handlers:
        return

    def on_message(_widget: Any, content: Any, buffers: Any) -> None:
        reply = answer(handlers, content)
        if reply is not None:
            widget.send(reply[0], buffers=reply[1])

    widget.on_msg(on_message)
