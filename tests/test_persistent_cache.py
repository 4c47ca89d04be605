"""%%trace with JAX's persistent compilation cache on a real cache directory.

Two fresh Python processes share one directory, as two kernel sessions would: the first
compiles and writes the cache (misses), the second reads it (hits). The capture's counts
are compared with a `jax.monitoring` listener the script registers itself (JAX's answer).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, jax.monitoring, jax.numpy as jnp
    import jaxmagic

    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    x = jnp.arange(8.0)  # eager ops before the capture compile too: keep them out of the count
    with jaxmagic.capture({}):  # the process's first capture learns how this JAX answers AOT compiles
        jax.jit(lambda v: v - 1)(x)

    jax_says = {"hits": 0, "misses": 0}
    def listener(event, **kwargs):
        for kind in jax_says:
            if event == "/jax/compilation_cache/cache_" + kind:
                jax_says[kind] += 1
    jax.monitoring.register_event_listener(listener)

    with jaxmagic.capture({}) as cap:
        f = jax.jit(lambda v: jnp.sin(v) * 2.0)
        g = jax.jit(lambda v: v @ v.T)
        f(x); f(x); g(x[None])
    from jaxmagic.capture.jit import monitoring
    monitoring.unregister("event")(listener)  # public on JAX 0.5+, private on 0.4
    doc = jaxmagic.document(cap, "timeline")
    from jaxmagic.views import static_timeline
    print(json.dumps({"jax": jax_says, "text": static_timeline.timeline_text(doc), "cache": {k: v for k, v in doc["cache"].items() if k != "events"},
                      "events": doc["cache"]["events"], "lanes": [l["name"] for l in doc["lanes"]],
                      "hits": [c.cache_hit for c in cap.calls],
                      "settings": cap.settings}))
""")


def run_session(cache_dir: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(cache_dir)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> tuple[dict, dict]:
    cache_dir = tmp_path_factory.mktemp("jax-cache")
    return run_session(cache_dir), run_session(cache_dir)


def test_first_session_writes_the_cache_and_counts_its_misses(sessions):
    first, _ = sessions
    assert first["jax"]["misses"] >= 2 and first["jax"]["hits"] == 0
    cache = first["cache"]
    assert cache["enabled"] is True
    assert (cache["hits"], cache["misses"]) == (first["jax"]["hits"], first["jax"]["misses"])
    assert first["settings"]["persistent_cache_dir"]
    assert first["hits"] == [False, True, False]  # in-memory caches: the second call of f is a hit


def test_second_session_reads_the_cache_and_counts_its_hits(sessions):
    _, second = sessions
    assert second["jax"]["hits"] >= 2
    cache = second["cache"]
    assert (cache["hits"], cache["misses"]) == (second["jax"]["hits"], second["jax"]["misses"])
    # A persistent-cache hit still traces and lowers in this process: it is a miss of the
    # in-memory cache, and the timeline keeps it one.
    assert second["hits"] == [False, True, False]
    assert cache["saved_us"] is not None and cache["saved_us"] >= 0


def test_cache_events_are_placed_on_the_lanes_of_the_calls_that_caused_them(sessions):
    for session in sessions:
        lanes = session["lanes"]
        placed = [e for e in session["events"] if e["lane"] >= 0]
        assert {e["kind"] for e in session["events"]} <= {"hit", "miss"}
        assert len(placed) == len(session["events"])  # every compile came from a recorded call
        assert all(0 <= e["lane"] < len(lanes) for e in placed)
        assert all(e["t"] >= 0 for e in session["events"])


def test_static_views_say_what_the_cache_did(sessions):
    first, second = sessions
    assert f"Persistent compilation cache: 0 hits, {first['jax']['misses']} misses" in first["text"]
    assert f"Persistent compilation cache: {second['jax']['hits']} hits" in second["text"]
