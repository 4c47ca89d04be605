"""What a capture remembers between cells and between calls, and that it never serves a stale answer.

A cell run again (a training cell, `%timeit`) gets the same jaxpr objects from JAX: the jaxpr-only
parts of the constants and loop analyses and the stubbed copy a capture keeps are remembered per
live jaxpr (capture/jaxpr_memo.py), the comparison with the globals stays per cell. A function's
first calls reuse its previous signature when nothing JAX keys on changed. `jax.jit(f)` made anew
each iteration is forgotten by id when it dies instead of being kept alive. Real JAX throughout.
"""

from __future__ import annotations

import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmagic
from jaxmagic.capture import buffers
from jaxmagic.capture.findings import program as findings
from jaxmagic.capture.jaxpr_memo import JaxprMemo
from jaxmagic.capture.jit.signature import concrete_key, signature_of


def test_a_memo_answers_for_the_same_object_only_and_forgets_it_when_it_dies():
    memo: JaxprMemo[int] = JaxprMemo()
    computed = []

    def compute(jaxpr):
        computed.append(jaxpr)
        return len(computed)

    first = jax.make_jaxpr(lambda x: x + 1)(1.0)
    assert memo.get(first, compute) == 1 and memo.get(first, compute) == 1  # computed once
    other = jax.make_jaxpr(lambda x: x * 2)(1.0)
    assert memo.get(other, compute) == 2
    computed.clear()
    del first, other
    gc.collect()
    assert len(memo) == 0  # both entries went with their jaxprs
    again = jax.make_jaxpr(lambda x: x - 1)(1.0)  # may take a freed id: computed anew, not served
    assert memo.get(again, compute) == 1 and computed == [again]
    memo.forget(again)
    assert len(memo) == 0


_TABLE = jnp.arange(8.0)
_RATE = 0.37


def _reads_globals(v):
    return v * _TABLE + _RATE


def test_remembered_constants_are_still_matched_against_each_cells_globals():
    """The second analysis of the same jaxpr comes from the memo and gives what a fresh one gives:
    named while the global holds the array baked in, unnamed once the global holds another."""
    global _TABLE
    f = jax.jit(_reads_globals)
    closed = f.trace(jnp.ones(8)).jaxpr
    assert f.trace(jnp.ones(8)).jaxpr is closed  # JAX hands back the same object: what the memo relies on
    first = findings.baked_constants(f, closed)
    assert {m for m in ("`_TABLE`", "`_RATE`") if any(m in x.message for x in first)} == {"`_TABLE`", "`_RATE`"}
    assert findings.baked_constants(f, closed) == first
    before = _TABLE
    try:
        _TABLE = jnp.zeros(8)  # the program still holds the old array
        remembered = findings.baked_constants(f, closed)
        fresh_memo = (findings._CONSTANT_SITES, findings._SCALAR_LITERALS)
        findings._CONSTANT_SITES, findings._SCALAR_LITERALS = JaxprMemo(), JaxprMemo()
        try:
            fresh = findings.baked_constants(f, closed)
        finally:
            findings._CONSTANT_SITES, findings._SCALAR_LITERALS = fresh_memo
    finally:
        _TABLE = before
    assert remembered == fresh
    assert not any("`_TABLE`" in x.message for x in remembered)


def test_the_memos_hold_no_constant_and_no_jaxpr():
    """Two captures of a function closing over a big array (the second served from the memos):
    once the user drops the function and the array, both are freed and every memo entry is gone."""
    big = jnp.ones((1 << 20,), jnp.float32)
    big_ref = weakref.ref(big)
    f = jax.jit(lambda v: v + big[:3].sum())
    caps = []
    for _ in range(2):
        with jaxmagic.capture({}, keys=False) as cap:
            f(jnp.ones(3))
        caps.append(cap)
    closed = f.trace(jnp.ones(3)).jaxpr
    assert caps[0].calls[0].jaxpr is caps[1].calls[0].jaxpr  # the same stubbed copy, made once
    assert caps[1].calls[0].jaxpr is not closed and isinstance(
        caps[1].calls[0].jaxpr.consts[0], type(caps[0].calls[0].jaxpr.consts[0])
    )
    sizes = len(buffers._STUBBED), len(findings._CONSTANT_SITES)
    del big, f, closed
    jax.clear_caches()
    gc.collect()
    assert big_ref() is None, "a memo keeps the array the function closed over"
    assert len(buffers._STUBBED) < sizes[0] and len(findings._CONSTANT_SITES) < sizes[1]
    assert [c.jaxpr.consts[0].shape for c in caps[0].calls] == [(1 << 20,)]  # the captures still tell


def test_a_hit_reuses_the_previous_signature_only_when_nothing_jax_keys_on_changed():
    f = jax.jit(lambda a, b: a)
    x32, y32 = jnp.ones(4), jnp.zeros(4)
    key, leaves = concrete_key(f, (x32, {"w": y32}), {})
    assert leaves == [x32, y32]
    assert concrete_key(f, (y32, {"w": x32}), {})[0] == key  # other arrays, same types and placement
    assert concrete_key(f, (jnp.ones(5), {"w": y32}), {})[0] != key  # shape
    assert concrete_key(f, (x32, {"v": y32}), {})[0] != key  # pytree (a path)
    assert concrete_key(f, (x32.astype(jnp.int32), {"w": y32}), {})[0] != key  # dtype
    moved = jax.device_put(x32, jax.devices()[1])
    assert concrete_key(f, (moved, {"w": y32}), {})[0] != key  # placement
    assert concrete_key(f, (np.ones(4), {"w": y32}), {}) is None  # not a jax.Array: the full signature
    assert concrete_key(jax.jit(lambda a, n: a, static_argnums=1), (x32, 3), {}) is None

    with jaxmagic.capture({}, keys=False) as cap:
        for arg in (x32, y32, moved, jnp.ones(5), x32):
            f(arg, {"w": y32})
    sigs = [c.signature for c in cap.calls]
    assert all(s is not None for s in sigs)
    assert sigs[1] is sigs[0] and sigs[4] is not sigs[3]
    for call, arg in zip(cap.calls, (x32, y32, moved, jnp.ones(5), x32)):  # each as computed afresh
        assert call.signature == signature_of(f, (arg, {"w": y32}), {})
    assert sigs[2].args[0].sharding == "device 1" and sigs[3].args[0].aval == "f32[5]"


def _step(v):
    return v + 1


def test_wrappers_made_anew_are_not_kept_alive_and_still_counted():
    """Past the budget, each `jax.jit(_step)` is recorded as the one function and freed when the loop
    drops it (no id of a dead wrapper is left to name another function); every call is listed."""
    x = jnp.ones(3)
    refs = []
    with jaxmagic.capture({}, keys=False) as cap:
        for _ in range(40):
            wrapper = jax.jit(_step)
            wrapper(x)
            refs.append(weakref.ref(wrapper))
        del wrapper
        gc.collect()
        alive_inside = sum(r() is not None for r in refs)
        other = jax.jit(lambda v: v * 3)  # may take a freed wrapper's id: its own function
        other(x)
    assert alive_inside <= 8  # the wrappers of the budget's calls are kept until the capture stops
    assert len(cap.calls) == 41 and len({c.function_id for c in cap.calls[:40]}) == 1
    assert cap.calls[40].function_id != cap.calls[0].function_id and cap.calls[40].name != cap.calls[0].name
    assert cap.wrappers == {cap.calls[0].function_id: 40}
    assert all(c.cache_hit for c in cap.calls[1:40]) and all(c.start <= c.end for c in cap.calls)


def test_wrappers_made_anew_and_called_again_are_listed_and_freed():
    """A hot definition's further wrappers, each called three times, stay off the routed call's fast
    path (its table would keep them alive) and still have every call listed as a cache hit."""
    x = jnp.ones(3)
    refs = []
    with jaxmagic.capture({}, keys=False) as cap:
        for _ in range(30):
            wrapper = jax.jit(_step)
            for _ in range(3):
                wrapper(x)
            refs.append(weakref.ref(wrapper))
        del wrapper
        gc.collect()
        alive_inside = sum(r() is not None for r in refs)
    assert alive_inside <= 8
    assert len(cap.calls) == 90 and len({c.function_id for c in cap.calls}) == 1
    assert all(c.cache_hit for c in cap.calls[1:]) and all(c.start <= c.end for c in cap.calls)
    assert cap.wrappers == {cap.calls[0].function_id: 30}  # each counted once, though called three times


def test_wrappers_of_a_hot_definition_are_counted_once_however_they_are_called():
    """Three held wrappers of one hot definition called in turn, one of them then with a new shape (a
    miss, recorded in full), and 50 made and dropped: 53 wrappers, each counted once; a dropped
    wrapper's id taken by a later one names the later one. Every call is listed, in order."""
    x = jnp.ones(3)
    with jaxmagic.capture({}, keys=False) as cap:
        first = jax.jit(_step)
        for _ in range(10):  # hot: past the budget, its program known
            first(x)
        a, b = jax.jit(_step), jax.jit(_step)
        for _ in range(20):  # alternating: each counted on its first call, registered on its second
            a(x)
            b(x)
        b(jnp.ones(5))  # a miss: a new program, recorded in full
        for _ in range(50):
            jax.jit(_step)(x)  # counted once each, never registered
    fid = cap.calls[0].function_id
    assert len(cap.calls) == 10 + 40 + 1 + 50 and {c.function_id for c in cap.calls} == {fid}
    assert cap.wrappers == {fid: 53}
    miss = cap.calls[50]
    assert not miss.cache_hit and miss.signature is not None and miss.signature.args[0].aval == "f32[5]"
    assert all(c.cache_hit for c in cap.calls[1:50] + cap.calls[51:])
    assert [c.index for c in cap.calls] == list(range(len(cap.calls)))


def test_a_wrapper_counted_while_its_definition_was_hot_is_not_counted_again_when_it_no_longer_is():
    """A wrapper counted on its first call (its definition hot: JAX held one program) and called again
    after a miss gave the definition a second program (no longer hot: recorded in full) is one wrapper."""

    def double(v):
        return v * 2

    x = jnp.ones(3)
    with jaxmagic.capture({}, keys=False) as cap:
        first = jax.jit(double)
        first(x)  # compiled: JAX holds one program, the definition is hot at once
        later = jax.jit(double)
        later(x)  # counted, not registered
        first(jnp.ones(5))  # a second program: hits are no longer known, the budget applies again
        later(x)  # recorded in full now
    fid = cap.calls[0].function_id
    assert [c.function_id for c in cap.calls] == [fid] * 4
    assert [c.cache_hit for c in cap.calls] == [False, True, False, True]
    assert cap.calls[3].signature is not None  # within the budget: recorded in full
    assert cap.wrappers == {fid: 2}


def test_a_hot_function_is_not_kept_alive_by_its_capture():
    """The routed call's fast path holds each hot function (JAX's call bound to it) only while the
    capture runs: dropped by the cell, the function is freed after the capture stops."""
    x = jnp.ones(3)
    with jaxmagic.capture({}, keys=False) as cap:
        hot = jax.jit(lambda v: v * 5)
        for _ in range(50):
            hot(x)
    ref = weakref.ref(hot)
    del hot
    gc.collect()
    assert ref() is None
    assert len(cap.calls) == 50 and all(c.cache_hit for c in cap.calls[1:])
    assert [c.start for c in cap.calls] == sorted(c.start for c in cap.calls)


def test_sampling_backs_off_while_watches_tell_nothing_and_returns_when_one_settles():
    """Outputs freed before any poll saw them ready (a step whose outputs the next step consumes) widen
    the readiness interval, at most 64x; the first watch that gives a time brings it back."""
    import time

    from jaxmagic.capture.jit import readiness

    watch = readiness.ReadyWatch(time.perf_counter)
    assert watch.interval() == readiness.SAMPLE_S
    for i in range(readiness.BACKOFF_AFTER * 2):
        assert watch.watch(i, jnp.ones(3) + i, 0.0)  # the output is dropped at once
    gc.collect()
    watch.poll()
    assert not watch.ready and watch.interval() == 4 * readiness.SAMPLE_S
    for i in range(100):
        watch.watch(i, jnp.ones(3) + i, 0.0)
    gc.collect()
    watch.poll()
    assert watch.interval() == 64 * readiness.SAMPLE_S  # never wider (6.4 ms)
    kept = jax.block_until_ready(jnp.ones(3) * 2)
    watch.watch(500, kept, 0.0)
    watch.poll()
    assert 500 in watch.ready and watch.interval() == readiness.SAMPLE_S


def test_a_costly_sample_widens_the_interval_to_its_cost_factor_within_a_cap():
    """A sample that cost `c` seconds (poll and watch) is followed by none for COST_FACTOR x c, so
    sampling takes a bounded share of the cell however cold the caches; never wider than
    COST_INTERVAL_MAX_S on that account, and never below the backoff's interval."""
    import time

    from jaxmagic.capture.jit import readiness

    watch = readiness.ReadyWatch(time.perf_counter)
    assert watch.interval(0.0) == readiness.SAMPLE_S
    assert watch.interval(0.1e-6) == readiness.SAMPLE_S  # a cheap sample: the plain interval
    assert watch.interval(25e-6) == pytest.approx(readiness.COST_FACTOR * 25e-6)
    assert watch.interval(1.0) == readiness.COST_INTERVAL_MAX_S
    watch.unknown_streak = readiness.BACKOFF_AFTER * readiness.MAX_DOUBLINGS
    assert watch.interval(1e-6) == 64 * readiness.SAMPLE_S


def test_the_recorder_spaces_samples_by_what_they_cost(monkeypatch):
    """The recorder hands each sample's measured cost to the interval: with a factor so large that
    any cost reaches the cap, consecutive sampled calls of a tight loop are the cap apart, where
    SAMPLE_S alone would sample one call in twenty."""
    from jaxmagic.capture.jit import readiness

    monkeypatch.setattr(readiness, "COST_FACTOR", 1e12)
    monkeypatch.setattr(readiness, "COST_INTERVAL_MAX_S", 5e-3)
    ns = {"f": jax.jit(lambda a: a + 1)}
    x = jnp.ones(3)
    ns["f"](x).block_until_ready()
    kept = []
    with jaxmagic.capture(ns) as cap:
        for _ in range(4000):
            kept.append(ns["f"](x))  # outputs kept: every watch settles, no backoff
    sampled = [c.start for c in cap.calls if c.ready is not None]
    assert sampled, "no call sampled"
    assert all(b - a >= 5e-3 for a, b in zip(sampled, sampled[1:]))
    assert len(sampled) <= (cap.calls[-1].start - cap.calls[0].start) / 5e-3 + 1


def test_one_watch_stretched_by_the_machine_does_not_stop_sampling(monkeypatch):
    """A watch that took 5 ms (a thread switch, a page fault) is not what watching costs: the next
    interval comes from the cheaper of it and the previous watch. Taken alone, 5 ms x COST_FACTOR
    would stop sampling for the cap (here 1 s, longer than the loop)."""
    import time

    from jaxmagic.capture.jit import readiness

    monkeypatch.setattr(readiness, "COST_INTERVAL_MAX_S", 1.0)
    watch = readiness.ReadyWatch.watch
    watches = []

    def stretched_watch(self, index, out, seconds):
        watches.append(index)
        if len(watches) == 3:
            time.sleep(5e-3)
        return watch(self, index, out, seconds)

    monkeypatch.setattr(readiness.ReadyWatch, "watch", stretched_watch)
    ns = {"f": jax.jit(lambda a: a + 1)}
    x = jnp.ones(3)
    ns["f"](x).block_until_ready()
    kept = []
    with jaxmagic.capture(ns) as cap:
        deadline = time.perf_counter() + 0.3
        while time.perf_counter() < deadline:
            kept.append(ns["f"](x))  # outputs kept: every watch settles, no backoff
    assert len(watches) >= 4, watches  # watching went on after the stretched one
    assert all(cap.calls[i].ready is not None for i in watches)


def test_the_call_after_a_watch_polls_while_the_loop_still_holds_the_watched_output(monkeypatch):
    """`y = f(a)` in a loop frees the previous `y` as each call returns: the watched output is seen
    ready only by a poll at the very next call, so that call polls even though the next watch is
    5 ms away (without it, no call of this loop would have a device time)."""
    import time

    from jaxmagic.capture.jit import readiness

    monkeypatch.setattr(readiness, "COST_FACTOR", 1e12)
    monkeypatch.setattr(readiness, "COST_INTERVAL_MAX_S", 5e-3)
    ns = {"f": jax.jit(lambda a: a * 2.0)}
    a = jnp.ones(8)
    ns["f"](a).block_until_ready()
    with jaxmagic.capture(ns) as cap:
        for _ in range(40):
            y = ns["f"](a)  # the previous `y` is freed here
            time.sleep(1.5e-3)  # long enough for the call's output to be ready
    del y
    known = [c for c in cap.calls if c.ready is not None]
    watches = (cap.calls[-1].start - cap.calls[0].start) / 5e-3
    assert len(known) >= min(5, watches / 2), (len(known), watches)
    assert len(known) <= watches + 1 and all(c.ready >= c.end for c in known)


def test_hits_on_the_one_program_jax_holds_are_rows_that_name_it():
    """JAX's call cache holds one program for `f`: every later hit can only run it, so after one call
    recorded in full the hits are rows, each with that call's signature and artefacts (as computed
    afresh); the hits the signature budget would have recorded still have their outputs read for NaN."""
    f = jax.jit(lambda w, x: (w * 0.5 + jnp.log(x - 3.0), x - 1.0))
    w, x = w0, x0 = jnp.ones(4), jnp.full(4, 4.5)
    f(w, x)  # compiled before the cell
    assert f._cache_size() == 1  # JAX's own count of its programs for f
    with jaxmagic.capture({}, keys=False) as cap:
        for _ in range(12):
            w, x = f(w, x)
    assert [c.phases is not None for c in cap.calls] == [True] + [False] * 11  # recorded in full once
    assert all(c.cache_hit for c in cap.calls)
    first = cap.calls[0]
    assert first.signature == signature_of(f, (w0, x0), {})
    assert all(c.signature is first.signature and c.artifacts is first.artifacts for c in cap.calls)
    # x: 4.5, 3.5, 2.5 -> log of a negative in the third call's output: found, and its origin too
    (nan,) = [fd for fd in cap.findings if fd.kind == "nan"]
    assert nan.call == 2 and "`log`" in nan.message


def test_hits_of_a_function_holding_several_programs_keep_the_signature_budget():
    f = jax.jit(lambda x: x * 2)
    a, b = jnp.ones(3), jnp.ones(5)
    f(a), f(b)  # two programs: which one a hit runs is known only from its arguments
    with jaxmagic.capture({}, keys=False) as cap:
        for _ in range(6):
            f(a), f(b)
    recorded = [c for c in cap.calls if c.phases is not None]
    assert len(recorded) == 8  # the budget
    assert [str(c.signature) for c in recorded] == ["f32[3]", "f32[5]"] * 4
    assert all(c.signature is None for c in cap.calls[8:])  # not known: never guessed


def test_a_miss_that_adds_a_program_ends_what_hits_are_known_to_run():
    """After a miss the cache holds two programs: the next hits are recorded in full again (the budget),
    and earlier rows keep the program they ran."""
    f = jax.jit(lambda x: x + 1)
    a, b = jnp.ones(3), jnp.ones(7)
    with jaxmagic.capture({}, keys=False) as cap:
        for x in (a, a, a, b, a, b):
            f(x)
    sigs = [str(c.signature) for c in cap.calls]
    assert sigs == ["f32[3]", "f32[3]", "f32[3]", "f32[7]", "f32[3]", "f32[7]"]
    assert [c.cache_hit for c in cap.calls] == [False, True, True, False, True, True]
    assert [c.phases is not None for c in cap.calls] == [True, False, False, True, True, True]


def test_the_early_steps_of_a_loop_are_not_kept_alive_for_the_nan_check():
    """A one-program step's early hits are watched without their arguments kept: the loop frees its
    intermediate parameters as it would without the capture."""
    step = jax.jit(lambda p: {k: v * 0.9 for k, v in p.items()})
    params = {"w": jnp.ones((64, 64)), "b": jnp.ones(64)}
    step(params)
    refs = []
    with jaxmagic.capture({}, keys=False) as cap:
        p = params
        for _ in range(6):
            p = step(p)
            refs.append(weakref.ref(p["w"]))
        jax.block_until_ready(p)
        gc.collect()
        alive = [r() is not None for r in refs]
    assert alive == [False] * 5 + [True]
    assert len(cap.calls) == 6 and not [fd for fd in cap.findings if fd.kind == "nan"]


def test_without_a_count_of_jaxs_programs_the_budget_applies(monkeypatch):
    from jaxmagic.capture import jax_compat

    monkeypatch.setattr(jax_compat, "cached_programs", lambda fn: None)
    f = jax.jit(lambda x: x - 1)
    x = jnp.ones(3)
    with jaxmagic.capture({}, keys=False) as cap:
        for _ in range(10):
            f(x)
    assert [c.phases is not None for c in cap.calls] == [True] * 8 + [False] * 2
    assert all(c.signature is None for c in cap.calls[8:])


def test_wrappers_counted_once_are_noted_in_bounded_memory():
    """The notes of wrappers counted on their first call are swept of the dead ones as they grow: a
    loop that makes 3,000 keeps a few hundred weak references, not 3,000, and counts every one."""
    from jaxmagic.capture.jit.functions import _ONCE_SWEEP_MIN, FunctionTable

    table = FunctionTable()
    state, _ = table.state_of(jax.jit(_step))
    state.hot = True
    for _ in range(3000):
        assert table.hot_definition(jax.jit(_step)) is state
    assert state.wrappers == 3001
    assert len(table._once) <= 2 * _ONCE_SWEEP_MIN
    table.release()
    assert not table._once
