"""A pytest plugin that runs each of JAX's own tests inside a jaxmagic capture (tools/jax_suite.py).

Each test's call phase (unittest's setUp, the test, tearDown and cleanups) runs inside
`jaxmagic.capture(module namespace, **mode options)`; after it, every document of the mode is built
and its static page drawn. The test's own outcome goes to pytest's report (compared with a plain run
by `jax_suite.py compare`); jaxmagic's own failures (the capture's stop raising, a document or page
failing to build) and slow stops or builds (over 5 s) go to $JAX_SUITE_ERRORS as JSON lines.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from typing import Any

import pytest

# mode -> (capture options, documents built): what each magic records and shows
MODES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "jaxpr": ({}, ["graph"]),
    "values": ({"values": True, "vmap": True}, ["graph"]),
    "grad_graph": ({"grads": True}, ["grad"]),
    "trace": ({}, ["timeline"]),
    "sharding": ({"shardings": True}, ["sharding"]),
    "prng": ({"keys": True}, ["keys"]),
}


def _log(entry: dict) -> None:
    with open(os.environ.get("JAX_SUITE_ERRORS", "jax-suite-errors.jsonl"), "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


def _build_views(capture: Any, nodeid: str, mode: str, views: list[str], stop_s: float) -> None:
    """Build every document and static page of the capture; log what raised or was slow."""
    import jaxmagic
    import jaxmagic.api

    for view in views:
        for what, build in (("document", jaxmagic.document), ("static_html", jaxmagic.api.static_html)):
            start = time.perf_counter()
            try:
                build(capture, view)
            except Exception as exc:  # every failure of ours is the finding
                if what == "document" or "cannot draw" not in str(exc):
                    _log(
                        {
                            "test": nodeid,
                            "mode": mode,
                            "where": f"{what}:{view}",
                            "error": traceback.format_exc()[-3000:],
                        }
                    )
            seconds = time.perf_counter() - start
            if seconds > 5 or stop_s > 5:
                _log({"test": nodeid, "mode": mode, "where": f"slow {what}:{view}", "seconds": seconds, "stop": stop_s})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    mode = os.environ.get("JAX_SUITE_MODE")
    if not mode:
        yield
        return
    import jaxmagic

    options, views = MODES[mode]
    context = jaxmagic.capture(getattr(item.module, "__dict__", {}), **options)
    capture = context.__enter__()
    outcome = yield
    excinfo = outcome.excinfo
    start = time.perf_counter()
    try:
        context.__exit__(*(excinfo or (None, None, None)))
    except BaseException as exc:  # the stop of ours failed, not the test
        if excinfo is None or exc is not excinfo[1]:
            _log({"test": item.nodeid, "mode": mode, "where": "exit", "error": traceback.format_exc()[-3000:]})
        return
    _build_views(capture, item.nodeid, mode, views, time.perf_counter() - start)
