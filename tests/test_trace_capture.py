"""%%trace recording: every figure checked against JAX's own answer, and nothing leaks.

Compile counts are compared with a `jax.monitoring` listener of the test's own; miss
reasons with deliberate changes; timings for order and nesting.
"""

from __future__ import annotations

import builtins
import logging

import jax
import jax.monitoring
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.capture.jit import cache_log, monitoring, readiness

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
ORIGINAL_PRINT = builtins.print


class CompileCounter:
    """The test's own monitoring listener: JAX's count of backend compiles."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, event: str, duration: float, **kwargs) -> None:
        if event == COMPILE_EVENT:
            self.count += 1

    def __enter__(self) -> CompileCounter:
        jax.monitoring.register_event_duration_secs_listener(self)
        return self

    def __exit__(self, *exc) -> None:
        monitoring.unregister("event_duration")(self)  # public on JAX 0.5+, private on 0.4


def timeline(cap, **options) -> dict:
    return jaxmagic.document(cap, "timeline", **options)


def lane(doc: dict, name: str) -> dict:
    matches = [l for l in doc["lanes"] if l["name"].endswith(name)]
    assert len(matches) == 1, [l["name"] for l in doc["lanes"]]
    return matches[0]


def misses_of(doc: dict, name: str) -> list[dict]:
    li = doc["lanes"].index(lane(doc, name))
    return [m for m in doc["misses"] if doc["calls"]["lane"][m["call"]] == li]


def test_compile_count_equals_jax_monitoring_and_hits_are_hits():
    def shaped(x):
        return jnp.sin(x) * 2

    with jaxmagic.capture({}):  # a first capture in the process learns how this JAX answers AOT compiles
        jax.jit(lambda x: x - 1)(jnp.ones(2))
    ns = {"f": jax.jit(shaped)}
    with CompileCounter() as jax_count, jaxmagic.capture(ns) as cap:
        f = ns["f"]  # the recorded stand-in, as a notebook cell sees its global
        for n in (3, 3, 4, 4, 5, 3):
            f(jnp.ones(n))
    doc = timeline(cap)
    lf = lane(doc, "shaped")
    assert lf["calls"] == 6
    assert sum(l["compiles"] for l in doc["lanes"]) == jax_count.count
    assert lf["compiles"] == 3 and lf["misses"] == 3 and lf["hits"] == 3
    assert doc["calls"]["hit"] == [0, 1, 0, 1, 0, 1]


def test_timings_are_ordered_and_nested():
    with jaxmagic.capture({}) as cap:
        f = jax.jit(lambda x: (x @ x.T).sum())
        g = jax.jit(lambda x: jnp.tanh(x) + 1)
        for n in (8, 8, 16):
            f(jnp.ones((n, n)))
            g(jnp.ones(n))
    doc = timeline(cap)
    calls, spans = doc["calls"], doc["spans"]
    assert calls["start"][0] >= 0
    for i in range(len(calls["start"])):
        assert calls["start"][i] <= calls["end"][i] <= doc["duration_us"]
        if i:
            assert calls["end"][i - 1] <= calls["start"][i]  # calls are sequential
    for li, call, phase, s, e in zip(spans["lane"], spans["call"], spans["phase"], spans["start"], spans["end"]):
        assert 0 <= s <= e
        if call >= 0:  # a phase happened inside its call, on its lane
            assert calls["start"][call] - 1 <= s and e <= calls["end"][call] + 1
            assert calls["lane"][call] == li
    by_call: dict[int, list] = {}
    for call, phase, s in zip(spans["call"], spans["phase"], spans["start"]):
        by_call.setdefault(call, []).append((s, phase))
    for call, phases in by_call.items():
        if call >= 0:  # trace, then lower, then compile
            order = [p for _, p in sorted(phases)]
            assert order == sorted(order, key=["trace", "lower", "compile"].index)
    for l in doc["lanes"]:
        for key in ("trace_us", "lower_us", "compile_us", "dispatch_us"):
            assert l[key] >= 0


def test_dispatch_and_device_time_without_blocking_then_exact_with_sync(monkeypatch):
    # every call watched, whatever a sample costs on this machine: a fast machine's 600x600 matmuls
    # can be shorter than COST_FACTOR samples, and this test is about what a watch learns
    monkeypatch.setattr(readiness, "COST_FACTOR", 0)
    ns = {"f": jax.jit(lambda a: a @ a @ a)}
    a = jnp.ones((600, 600))
    ns["f"](a).block_until_ready()
    with jaxmagic.capture(ns) as cap:
        f = ns["f"]
        for _ in range(4):
            out = f(a)
            float(out[0, 0])  # a training loop reads its loss: the next call's poll sees it ready
    assert all(c.ready is not None and c.ready >= c.end for c in cap.calls[:3])
    assert cap.calls[0].ready <= cap.calls[1].start  # seen at the next call, before it started
    with jaxmagic.capture(ns, sync=True) as cap:
        f = ns["f"]
        for _ in range(3):
            f(a)
    assert all(c.ready is not None and c.ready >= c.end for c in cap.calls)
    doc = timeline(cap)
    assert doc["options"]["sync"] and lane(doc, "<lambda>")["device_calls"] == 3


def test_device_time_is_known_when_the_loop_keeps_only_the_last_output():
    """`loss, params = step(params)`-style loops drop the first output at once: the last one is watched too."""
    import time

    ns = {"f": jax.jit(lambda a: (jnp.sum(a), a @ a))}
    a = jnp.ones((200, 200))
    jax.block_until_ready(ns["f"](a))
    kept = []
    with jaxmagic.capture(ns) as cap:
        f = ns["f"]
        for _ in range(12):
            _, y = f(a)  # the scalar is dropped at once
            kept.append(y)
            # calls further apart than the sampling interval can be (at most COST_INTERVAL_MAX_S): each one is watched
            time.sleep(readiness.COST_INTERVAL_MAX_S + 0.002)
    known = [c for c in cap.calls if c.ready is not None]
    assert len(known) >= 10, len(known)
    assert all(c.ready >= c.end for c in known)


def test_explanations_are_recorded_silently_and_the_flag_restored(capfd, caplog):
    from jaxmagic.capture import jax_compat

    if not jax_compat.explaining_is_safe():
        pytest.skip(f"jaxmagic leaves jax_explain_cache_misses off on JAX {jax.__version__}: it breaks programs")
    assert not jax.config.jax_explain_cache_misses
    before = [list(logging.getLogger(n).filters) for n in cache_log.EMITTERS]
    handlers = list(logging.getLogger("jax").handlers)
    with jaxmagic.capture({}) as cap:
        f = jax.jit(lambda x: x + 1)
        f(jnp.ones(2))
        f(jnp.ones(3))
    out, err = capfd.readouterr()
    # The user did not ask for them: they reach no handler and are not printed.
    assert "TRACING CACHE MISS" not in err + out + caplog.text
    assert any("TRACING CACHE MISS" in t for t in cap.calls[1].explanations)
    assert not jax.config.jax_explain_cache_misses
    assert [list(logging.getLogger(n).filters) for n in cache_log.EMITTERS] == before
    assert logging.getLogger("jax").handlers == handlers


def test_user_flag_on_keeps_their_output_and_their_setting(caplog):
    jax.config.update("jax_explain_cache_misses", True)
    try:
        with jaxmagic.capture({}) as cap:
            f = jax.jit(lambda x: x * 2)
            f(jnp.ones(2))
            f(jnp.ones(5))
        assert jax.config.jax_explain_cache_misses
    finally:
        jax.config.update("jax_explain_cache_misses", False)
    assert caplog.text.count("TRACING CACHE MISS") == 2  # what they would see without the magic
    assert any("TRACING CACHE MISS" in t for t in cap.calls[1].explanations)


def test_print_inside_jit_is_a_trace_time_finding_and_still_prints(capsys):
    def noisy(x):
        print("tracing noisy")  # the finding's line
        return x * 3

    with jaxmagic.capture({}) as cap:
        f = jax.jit(noisy)
        for _ in range(3):
            f(jnp.ones(2))
        print("outside")
    out = capsys.readouterr().out
    assert out.count("tracing noisy") == 1 and "outside" in out
    found = [f for f in cap.findings if f.kind == "trace_time_print"]
    assert len(found) == 1 and found[0].call == 0
    assert found[0].source.code == 'print("tracing noisy")  # the finding\'s line'
    assert builtins.print is ORIGINAL_PRINT


def test_recompile_storm_finding_with_reason_and_threshold():
    with jaxmagic.capture({}) as cap:
        f = jax.jit(lambda x: x.sum())
        for n in range(1, 9):
            f(jnp.ones(n))
    doc = timeline(cap)
    storms = [x for x in doc["findings"] if x["kind"] == "recompile_storm"]
    assert len(storms) == 1 and storms[0]["severity"] == "bug"
    assert "8 times" in storms[0]["message"] and "shape" in storms[0]["message"]
    assert not [x for x in timeline(cap, storm=20)["findings"] if x["kind"] == "recompile_storm"]


def test_compiles_outside_recorded_calls_get_their_own_lane():
    with jaxmagic.capture({}) as cap:
        jnp.cos(jnp.ones(7, jnp.float32) * 3.0)  # eager ops compile small programs
    doc = timeline(cap)
    events = [l for l in doc["lanes"] if l["origin"] == "events"]
    assert events and all(l["calls"] == 0 for l in events)
    assert sum(l["compiles"] for l in events) >= 1
    assert all(c == -1 for c in doc["spans"]["call"])


def test_capture_holds_no_device_buffers():
    big = jnp.ones((1000, 1000))
    with jaxmagic.capture({}) as cap:  # noqa: F841
        out = jax.jit(lambda x: x * 2)(big)
    del out
    import gc

    gc.collect()
    live = [a for a in jax.live_arrays() if a.shape == (1000, 1000)]
    assert len(live) == 1  # only `big`: the capture kept a weak reference to the output


def _second_miss(calls) -> dict:
    """Run `calls()` (two calls that must differ) inside a capture; the second call's Miss."""
    with jaxmagic.capture({}) as cap:
        calls()
    doc = timeline(cap)
    assert doc["calls"]["hit"][:2] == [0, 0]
    return doc["misses"][doc["calls"]["miss"][1]]


@pytest.mark.parametrize(
    "case, kind, path, before, after",
    [
        ("shape", "shape", "x", "f32[3]", "f32[4]"),
        ("dtype", "dtype", "x", "f32[3]", "i32[3]"),
        ("weak_type", "weak_type", "x", None, None),
        ("static_argnum", "static", "n", "2", "3"),
        ("static_argname", "static", "mode", "'a'", "'b'"),
        ("new_kwarg", "pytree", None, None, None),
        ("pytree_keys", "pytree", "p", None, None),
        ("sharding", "sharding", "x", None, None),
        ("device", "sharding", "x", "default device", "device 1"),
    ],
)
def test_miss_reasons_match_deliberate_changes(case, kind, path, before, after):
    def two_calls():
        if case == "shape":
            f = jax.jit(lambda x: x * 2)
            f(jnp.ones(3)), f(jnp.ones(4))
        elif case == "dtype":
            f = jax.jit(lambda x: x * 2)
            f(jnp.ones(3)), f(jnp.ones(3, jnp.int32))
        elif case == "weak_type":
            f = jax.jit(lambda x: x * 2)
            f(jnp.float32(1.0)), f(1.0)
        elif case == "static_argnum":
            f = jax.jit(lambda x, n: x * n, static_argnums=1)
            f(jnp.ones(3), 2), f(jnp.ones(3), 3)
        elif case == "static_argname":
            f = jax.jit(lambda x, mode: x if mode == "a" else -x, static_argnames="mode")
            f(jnp.ones(3), mode="a"), f(jnp.ones(3), mode="b")
        elif case == "new_kwarg":
            f = jax.jit(lambda x, y=None: x if y is None else x + y)
            f(jnp.ones(3)), f(jnp.ones(3), y=jnp.ones(3))
        elif case == "pytree_keys":
            f = jax.jit(lambda p: sum(p.values()))
            f({"a": jnp.ones(3), "b": jnp.ones(3)}), f({"a": jnp.ones(3), "c": jnp.ones(3)})
        elif case == "sharding":
            mesh = jax.make_mesh((8,), ("d",))
            f = jax.jit(lambda x: x * 2)
            x = jnp.arange(8.0)
            f(x), f(jax.device_put(x, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))))
        elif case == "device":  # an array committed to another device: JAX recompiles without explaining
            f = jax.jit(lambda x: x * 2)
            x = jnp.arange(8.0)
            f(x), f(jax.device_put(x, jax.devices()[1]))

    miss = _second_miss(two_calls)
    assert miss["kind"] == kind, miss
    assert miss["words"] and miss["fix"]
    if path is not None:
        # JAX's explanation names the argument; without one (JAX 0.4 explains fewer misses)
        # the signature diff names the leaves that came and went under it.
        assert any(
            c["path"] == path or (kind == "pytree" and c["path"].startswith(path + "[")) for c in miss["changes"]
        ), miss["changes"]
    if before is not None:
        change = next(c for c in miss["changes"] if c["path"] == path)
        assert (change["before"], change["after"]) == (before, after)


def test_a_lambda_redefined_in_a_loop_is_one_lane_of_new_functions():
    with jaxmagic.capture({}) as cap:
        for _ in range(4):
            jax.jit(lambda x: x + 1)(jnp.ones(2))
    doc = timeline(cap)
    assert len([l for l in doc["lanes"] if l["origin"] == "call"]) == 1
    kinds = [m["kind"] for m in doc["misses"]]
    assert kinds[0] == "first" and kinds[1:] == ["new_function"] * 3
    assert "once" in doc["misses"][1]["fix"]


@pytest.fixture
def jax_listeners_kept():
    """JAX's monitoring listener lists as they are now, put back after the test (it clears them)."""
    from jax._src import monitoring as private

    names = [
        n
        for n in ("_event_listeners", "_event_duration_secs_listeners", "_event_time_span_listeners")
        if hasattr(private, n)
    ]
    saved = {name: list(getattr(private, name)) for name in names}
    yield
    for name, listeners in saved.items():
        setattr(private, name, listeners)


def test_a_cell_that_clears_jax_monitoring_listeners_ends_cleanly_and_says_so(jax_listeners_kept):
    """`jax.monitoring.clear_event_listeners()` in the cell (JAX's own tests call it in tearDown) took
    jaxmagic's listeners away, and removing them at the end failed JAX's `assert` (an AssertionError
    out of the capture). Now the capture ends normally, leaves JAX's lists as the cell left them, and
    says what it could not see."""
    first = jax.jit(lambda x: x * 2)
    later = jax.jit(lambda x: x + 3)
    first(1.0)
    users_listener = CompileCounter()
    with jaxmagic.capture({}, keys=False) as cap:
        first(1.0)
        jax.monitoring.clear_event_listeners()
        jax.monitoring.register_event_duration_secs_listener(users_listener)  # the cell's own, added after
        later(1.0)
    assert cap.notes.count(monitoring.LISTENERS_REMOVED) == 1, cap.notes
    assert monitoring.LISTENERS_REMOVED in timeline(cap)["notes"]
    from jax._src import monitoring as private

    assert private.get_event_duration_listeners() == [users_listener]  # the cell's listener stays, ours is not back
    assert private.get_event_listeners() == []
    assert users_listener.count == 1  # the compile of `later`, seen by the cell's own listener
    assert [c.function_id for c in cap.calls] == [id(first), id(later)]  # both calls are still recorded
    assert cap.calls[0].cache_hit


def _explain_setting_reads() -> tuple:
    """A cell that reads `jax_explain_cache_misses`, saves, sets and restores it (as test harnesses
    do), and reads it inside JAX's own context: what it read at each step."""
    old = jax.config.jax_explain_cache_misses
    jax.config.update("jax_explain_cache_misses", True)
    mid = jax.config.jax_explain_cache_misses
    jax.config.update("jax_explain_cache_misses", old)
    with jax.explain_cache_misses(True):
        inner = jax.config.jax_explain_cache_misses
    return old, mid, inner, jax.config.jax_explain_cache_misses


def test_the_cell_reads_its_own_explain_setting_and_restoring_it_leaves_it_as_it_was():
    """The capture turns JAX's explanations on for the cell's thread with a mark of its own (JAX reads
    it as true). The cell read that mark (1, not False), and saving and restoring the setting left
    explanations on globally after the cell: every later cell printed JAX's "TRACING CACHE MISS"
    warnings. Now the cell reads what plain JAX gives it (plain JAX is the oracle), JAX still
    explains for the capture, and the setting after the cell is the plain one."""
    from jax._src import config as jax_config

    assert not jax.config.jax_explain_cache_misses
    plain = _explain_setting_reads()
    after_plain = jax_config.explain_cache_misses.get_global()
    with jaxmagic.capture({}, keys=False) as cap:
        captured = _explain_setting_reads()
        explaining = jax_config.explain_cache_misses.value
    assert captured == plain == (False, True, True, False)
    assert [type(v) for v in captured] == [type(v) for v in plain]
    assert explaining  # JAX explains the cell's misses for the capture all the same
    assert jax_config.explain_cache_misses.get_global() is after_plain is False
    assert not jax.config.jax_explain_cache_misses
    assert not any("stays off" in note for note in cap.notes)
