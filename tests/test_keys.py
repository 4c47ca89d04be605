"""%%prng: the PRNG key lineage, on real JAX, checked against JAX's own key-reuse checker where it applies.

JAX's checker (`jax_debug_key_reuse`) covers typed keys and raises at the first reuse; it
misses legacy `PRNGKey` arrays. Each program below is run twice: under `jaxmagic.capture()`
(our lineage) and plainly with the checker on in a fresh config context (JAX's answer).
"""

from __future__ import annotations

import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxmagic
from jaxmagic.capture.keys import flow as key_flow
from jaxmagic.capture.keys import patch as key_patch
from jaxmagic.views import fallback_html, text_summary

jr = jax.random


def _capture(fn) -> jaxmagic.Capture:
    with jaxmagic.capture({}) as cap:
        fn()
    return cap


@functools.cache
def _checker_in_cache_key() -> bool:
    """Whether turning JAX's checker on retraces a jitted function traced with it off (JAX 0.9 and later);
    JAX 0.8 reuses the unchecked trace, so a sampler an earlier test jitted would hide a reuse."""

    def reuse():
        k = jr.key(0)
        return jr.normal(k) + jr.normal(k)

    jitted = jax.jit(reuse)
    jitted()
    with jax.debug_key_reuse(True):
        try:
            jitted()
        except Exception as exc:
            if type(exc).__name__ == "KeyReuseError":
                return True
            raise
    return False


def _jax_says_reuse(fn) -> bool:
    """True when JAX's own checker raises KeyReuseError on `fn` (typed keys only)."""
    if not _checker_in_cache_key():
        jax.clear_caches()  # else samplers jitted unchecked by earlier tests answer from the cache
    with jax.debug_key_reuse(True):
        try:
            fn()
        except Exception as exc:
            if type(exc).__name__ == "KeyReuseError":
                return True
            raise
    return False


@functools.cache
def _JAX_CHECKS_EAGER() -> bool:
    """Whether JAX's checker sees eager reuse at all (JAX 0.4 checks jitted programs only)."""

    def reuse():
        k = jr.key(0)
        jr.normal(k)
        jr.normal(k)

    return _jax_says_reuse(reuse)


def _reused(cap) -> list:
    return [r for r in cap.keys if r.state == "reused"]


def _reuse_findings(cap) -> list:
    return [f for f in cap.findings if f.kind in ("key_reuse", "loop_reuse")]


# --- programs with and without bugs: (name, function, reuse?) -------------------------------


def eager_typed_reuse():
    k = jr.key(1)
    jr.normal(k)
    jr.uniform(k)


def eager_split_after_use():
    k = jr.key(2)
    jr.normal(k)
    jr.split(k)


def eager_clean_loop():
    key = jr.key(3)
    for _ in range(50):
        key, sub = jr.split(key)
        jr.normal(sub, (2,))


def jit_internal_reuse():
    jax.jit(lambda k: jr.normal(k) + jr.uniform(k))(jr.key(4))


def jit_across_calls():
    f = jax.jit(lambda k, x: x + jr.normal(k, x.shape))
    k = jr.key(5)
    x = f(k, jnp.zeros(3))
    f(k, x)


def scan_outside_key():
    def run(key):
        def body(c, _):
            return c + jr.normal(key, ()), None

        return jax.lax.scan(body, 0.0, None, length=10)[0]

    jax.jit(run)(jr.key(6))


def scan_clean():
    def run(key):
        def body(c, _):
            k, s = jr.split(c)
            return k, jr.normal(s, ())

        return jax.lax.scan(body, key, None, length=10)

    jax.jit(run)(jr.key(7))


def fold_in_distinct():
    k = jr.key(8)
    jr.normal(jr.fold_in(k, 1))
    jr.normal(jr.fold_in(k, 2))


def clone_then_both():
    k = jr.key(9)
    k2 = jr.clone(k)  # JAX's way to say "I mean to use this key twice"
    jr.normal(k)
    jr.normal(k2)


def fold_in_same_data_twice():
    k = jr.key(10)
    jr.normal(jr.fold_in(k, 3))
    jr.normal(jr.fold_in(k, 3))  # the same child key: the same numbers


PROGRAMS = [
    ("eager_typed_reuse", eager_typed_reuse, True),
    ("eager_split_after_use", eager_split_after_use, True),
    ("eager_clean_loop", eager_clean_loop, False),
    ("jit_internal_reuse", jit_internal_reuse, True),
    ("jit_across_calls", jit_across_calls, True),
    ("scan_outside_key", scan_outside_key, True),
    ("scan_clean", scan_clean, False),
    ("fold_in_distinct", fold_in_distinct, False),
    ("clone_then_both", clone_then_both, False),
]


@pytest.mark.parametrize("name,fn,bug", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_reuse_agrees_with_jax_checker(name, fn, bug):
    cap = _capture(fn)
    assert bool(_reuse_findings(cap)) is bug, [f.message for f in cap.findings]
    if name.startswith("eager") and not _JAX_CHECKS_EAGER():
        pytest.skip(f"JAX {jax.__version__}'s key reuse checker does not check eager code: no oracle")
    assert _jax_says_reuse(fn) is bug  # JAX's own answer on the same typed-key program


def test_eager_reuse_names_both_lines():
    cap = _capture(eager_typed_reuse)
    [reused] = _reused(cap)
    names = [u.name for u in reused.uses if u.consuming]
    assert names == ["normal", "uniform"]
    [finding] = _reuse_findings(cap)
    assert finding.severity == "bug" and finding.key == reused.id
    assert "normal" in finding.message and "uniform" in finding.message
    lines = {u.source.line for u in reused.uses}
    assert all(u.source is not None and u.source.file == __file__ for u in reused.uses)
    assert len(lines) == 2


def test_legacy_keys_reuse_is_found_where_jax_sees_none():
    def legacy():
        k = jr.PRNGKey(11)
        jr.normal(k)
        jr.uniform(k)

    assert not _jax_says_reuse(legacy)  # JAX's checker does not cover raw uint32 keys
    cap = _capture(legacy)
    [reused] = _reused(cap)
    assert reused.typed is False and reused.label == "PRNGKey(11)"
    assert reused.data == tuple(int(w) for w in np.asarray(jr.PRNGKey(11)))


def test_typed_and_legacy_views_of_one_stream_are_one_key():
    def both():
        jr.normal(jr.PRNGKey(12))
        jr.uniform(jr.key(12))  # the same key data: the same random numbers

    cap = _capture(both)
    [reused] = _reused(cap)
    assert len(reused.made) == 2 and reused.consumed == 2
    data_roundtrip = _capture(lambda: jr.normal(jr.wrap_key_data(jr.key_data(jr.key(13)))))
    assert len(data_roundtrip.keys) == 1  # key_data / wrap_key_data stay on the same node
    assert [u.kind for u in data_roundtrip.keys[0].uses] == ["data", "wrap", "sampler"]


def test_standard_split_loop_over_1000_steps_has_no_false_reuse_and_folds_into_a_run():
    def loop():
        key = jr.PRNGKey(0)
        for _ in range(1000):
            key, sub = jr.split(key)
            jr.normal(sub, (2,))

    cap = _capture(loop)
    assert not _reused(cap) and not _reuse_findings(cap)
    consumed = [r for r in cap.keys if r.how == "row" and any(u.name == "normal" for u in r.uses)]
    assert len(consumed) == 1000
    doc = jaxmagic.document(cap, "keys")
    [run] = doc["runs"]
    assert run["length"] >= 990
    hidden = sum(n["run"] == run["id"] for n in doc["nodes"])
    assert hidden >= 3 * 990  # split array, used row and next key per step


def test_jitted_step_chain_links_calls_through_the_returned_key():
    step = jax.jit(lambda key: tuple(jr.split(key)))
    noise = jax.jit(lambda key: jr.normal(key, (3,)))

    def run():
        key = jr.key(21)
        for _ in range(5):
            key, sub = step(key)
            noise(sub)

    cap = _capture(run)  # local jitted functions: seen through JAX's jitted type, not the namespace
    assert len(cap.calls) == 10
    assert not _reused(cap) and not _jax_says_reuse(run)
    roots = [r for r in cap.keys if r.parent is None]
    assert len(roots) == 1  # each call's result key hangs below the key it was made from
    steps = {c.index for c in cap.calls if c.index % 2 == 0}
    assert {r.call for r in cap.keys if r.call is not None} == steps  # each step's keys hang below its call
    used_by_noise = {u.call for r in cap.keys for u in r.uses if u.name == "normal"}
    assert used_by_noise == {c.index for c in cap.calls} - steps  # and each noise call uses one of them


def test_scan_is_one_loop_node_with_its_trip_count():
    cap = _capture(scan_clean)
    [loop] = [r for r in cap.keys if r.how == "loop"]
    assert loop.count == 10 and loop.loop == "scan ×10"
    sampled = [r for r in cap.keys if any(u.name == "normal" for u in r.uses)]
    assert len(sampled) == 1 and sampled[0].count == 10  # one node for 10 keys, not 10 nodes
    assert len(cap.keys) < 10


def test_loop_reuse_counts_iterations():
    cap = _capture(scan_outside_key)
    [finding] = [f for f in cap.findings if f.kind == "loop_reuse"]
    reused = cap.keys[finding.key]
    assert reused.consumed == 10 and reused.uses[0].times == 10 and reused.uses[0].loop == "scan ×10"


def test_fori_loop_with_traced_bounds_is_a_while_loop():
    def run(key, n):
        return jax.lax.fori_loop(0, n, lambda i, c: c + jr.normal(key), 0.0)

    cap = _capture(lambda: jax.jit(run)(jr.key(30), 5))
    [finding] = [f for f in cap.findings if f.kind == "loop_reuse"]
    assert "every iteration" in finding.message and cap.keys[finding.key].consumed is None


def test_cond_branches_are_alternatives():
    def run(key, p):
        return jax.lax.cond(p, lambda k: jr.normal(k), lambda k: jr.uniform(k), key)

    cap = _capture(lambda: jax.jit(run)(jr.key(31), True))
    [root] = cap.keys
    assert root.state == "consumed" and len(root.uses) == 2
    assert {u.branch for u in root.uses} == {"cond branch 1 of 2", "cond branch 2 of 2"}


def test_constant_key_in_a_program_is_flagged_and_its_calls_reuse_it():
    key = jr.key(40)

    def run():
        f = jax.jit(lambda x: x + jr.normal(key, x.shape))
        f(jnp.zeros(2))
        f(jnp.ones(2))

    cap = _capture(run)
    kinds = {f.kind for f in cap.findings}
    assert {"constant_key", "key_reuse"} <= kinds


def test_vmapped_sampler_on_a_split_consumes_every_row_once():
    def run(key):
        keys = jr.split(key, 8)
        return jax.vmap(lambda k: jr.normal(k, (2,)))(keys)

    cap = _capture(lambda: jax.jit(run)(jr.key(50)))
    assert not _reused(cap)
    [array] = [r for r in cap.keys if r.how == "split"]
    assert array.shape == (8,) and array.uses[0].shape == (8, 2)


def test_whole_array_and_row_use_is_reuse():
    def run(key):
        keys = jr.split(key, 4)
        return jax.vmap(lambda k: jr.normal(k))(keys), jr.uniform(keys[0])

    cap = _capture(lambda: jax.jit(run)(jr.key(51)))
    assert [r.label for r in _reused(cap)] == ["[0]"]


def test_wide_split_rows_are_nodes_with_indices():
    cap = _capture(lambda: [jr.bernoulli(k, 0.5) for k in jr.split(jr.key(52), 300)])
    rows = [r for r in cap.keys if r.how == "row"]
    assert sorted(r.index for r in rows) == list(range(300))
    assert not _reused(cap)


def test_cell_runs_exactly_as_without_capture_and_everything_is_restored():
    originals = {name: getattr(jr, name) for name in ("normal", "split", "PRNGKey", "key", "fold_in")}
    plain = [np.asarray(jr.normal(jr.split(jr.key(60))[1], (4,)))]
    with jaxmagic.capture({}) as cap:
        got = np.asarray(jr.normal(jr.split(jr.key(60))[1], (4,)))
        assert jr.normal is not originals["normal"]
    np.testing.assert_array_equal(got, plain[0])
    assert {name: getattr(jr, name) for name in originals} == originals
    assert cap.keys  # and it recorded

    with pytest.raises(KeyboardInterrupt):
        with jaxmagic.capture({}):
            jr.normal(jr.key(61))
            raise KeyboardInterrupt
    assert {name: getattr(jr, name) for name in originals} == originals
    assert key_patch._recorder is None


def test_namespace_aliases_are_recorded_and_restored():
    from jax.random import normal

    ns = {"normal": normal, "jr": jr}
    with jaxmagic.capture(ns) as cap:
        exec("x = normal(jr.key(62))", ns)
    assert ns["normal"] is normal
    assert [u.name for u in cap.keys[0].uses] == ["normal"]


def test_users_key_reuse_checker_setting_is_left_alone():
    before = jax.config.jax_debug_key_reuse
    if not _checker_in_cache_key():
        jax.clear_caches()  # samplers jitted unchecked by earlier tests would not check
    with jax.debug_key_reuse(True):
        raised = None
        try:
            with jaxmagic.capture({}) as cap:
                eager_typed_reuse()
        except Exception as exc:
            raised = exc
        if _JAX_CHECKS_EAGER():  # JAX 0.4's checker sees jitted programs only: nothing to raise there
            assert raised is not None and "consumed" in str(raised), raised
        else:
            assert raised is None, raised
        assert jax.config.jax_debug_key_reuse is True
    assert jax.config.jax_debug_key_reuse == before
    assert cap.keys[0].uses[0].name == "normal"  # recorded up to where JAX raised


def test_errors_inside_jax_random_pass_through_unchanged():
    with jaxmagic.capture({}):
        with pytest.raises(TypeError):
            jr.split(jr.key(63), "two")


def test_capture_holds_metadata_not_device_arrays():
    cap = _capture(eager_clean_loop)
    for record in cap.keys:
        assert record.data is None or all(type(w) is int for w in record.data)
        for use in record.uses:
            assert not isinstance(use.shape, jax.Array)
    json.dumps(jaxmagic.document(cap, "keys"))  # plain JSON


def test_keys_can_be_turned_off():
    with jaxmagic.capture({}, keys=False) as cap:
        eager_typed_reuse()
    assert cap.keys == [] and jr.normal.__module__.startswith("jax")


def test_program_key_flow_reads_legacy_data_through_unwrap_and_slices():
    closed = jax.make_jaxpr(lambda k: jr.normal(jr.split(k)[1], (3,)))(jr.PRNGKey(0))
    program = key_flow.program_keys(closed)
    assert program.inputs == {0: 0}
    kinds = [(program.keys[u.key].how, u.kind, u.name) for u in program.uses]
    assert kinds == [("input", "split", "split"), ("row", "sampler", "normal")]
    assert program.keys[program.uses[1].key].index == 1


def test_uint32_arguments_that_are_not_keys_are_not_keys():
    closed = jax.make_jaxpr(lambda x: x + 1)(jnp.zeros(2, jnp.uint32))
    assert key_flow.program_keys(closed).inputs == {}
    cap = _capture(lambda: jax.jit(lambda x: x * 2)(jnp.zeros((3, 2), jnp.uint32)))
    assert cap.keys == []


def test_document_and_static_views():
    cap = _capture(lambda: (eager_typed_reuse(), eager_clean_loop()))
    doc = jaxmagic.document(cap, "keys")
    assert doc["kind"] == "keys" and doc["version"] == 1
    assert [n["id"] for n in doc["nodes"]] == list(range(len(doc["nodes"])))
    assert all(n["parent"] is None or n["parent"] < n["id"] for n in doc["nodes"])
    assert doc["summary"]["reused"] == 1 and doc["findings"][0]["severity"] == "bug"
    assert len(doc["findings"][0]["sources"]) == 2
    html = fallback_html(doc)
    assert "reused" in html and "normal" in html
    assert "key(1)" in text_summary(doc)


def test_hostile_names_are_escaped_in_the_static_view():
    cap = _capture(eager_typed_reuse)
    doc = jaxmagic.document(cap, "keys")
    doc["nodes"][0]["label"] = "<img src=x onerror=alert(1)>"
    doc["findings"][0]["message"] = "<script>alert(1)</script>"
    html = fallback_html(doc)
    assert "<img src=x" not in html and "<script>alert" not in html


def test_prng_magic_runs_the_cell_and_shows_the_tree(magic_shell, capsys):
    cell = (
        "%%prng --name kcap\n"
        "import jax\n"
        "k = jax.random.key(70)\n"
        "a = jax.random.normal(k)\n"
        "b = jax.random.normal(k)\n"
        "print('drawn')\n"
        "float(a - b)\n"
    )
    result = magic_shell.run_cell(cell, store_history=True)
    assert result.success and result.result == 0.0  # the reuse is real: the same number twice
    assert "drawn" in capsys.readouterr().out
    cap = magic_shell.user_ns["kcap"]
    assert [f.kind for f in cap.findings if f.kind == "key_reuse"] == ["key_reuse"]
    assert magic_shell.run_cell("%%prng --static\nimport jax\njax.random.normal(jax.random.key(1))\n").success
    magic_shell.user_ns["ran"] = False
    result = magic_shell.run_cell("%%prng --bogus\nran = True\n", store_history=True)
    assert not result.success and magic_shell.user_ns["ran"] is False


def test_eager_vmap_scan_and_grad_are_seen_through_the_programs_they_bind():
    def run():
        keys = jr.split(jr.key(80), 4)
        jax.vmap(lambda k: jr.normal(k))(keys)  # every row once
        jr.uniform(keys[0])  # row 0 again: reuse
        k = jr.key(81)
        jax.grad(lambda w: (w * jr.normal(k, (3,))).sum())(jnp.ones(3))
        jr.normal(k)  # the key the gradient's function drew from: reuse

        def body(c, _):
            k, s = jr.split(c)
            return k, jr.normal(s)

        final, _ = jax.lax.scan(body, jr.key(82), None, length=20)
        jr.normal(final)  # the key the scan hands back: fresh

    cap = _capture(run)
    assert sorted(r.label for r in _reused(cap)) == ["[0]", "key(81)"]
    [loop] = [r for r in cap.keys if r.how == "loop"]
    assert loop.count == 20
    [after] = [r for r in cap.keys if r.how == "loop_out"]
    assert after.state == "consumed"


def test_evaluating_programs_again_for_values_records_no_key_use():
    with jaxmagic.capture({}, values=True) as cap:
        f = jax.jit(lambda k: jr.normal(k, (2,)))
        f(jr.key(83))
    [root] = cap.keys
    assert root.state == "consumed" and len(root.uses) == 1


def test_the_same_fold_in_twice_is_one_key_drawn_twice():
    assert not _jax_says_reuse(fold_in_same_data_twice)  # JAX checks objects; the data is the same
    cap = _capture(fold_in_same_data_twice)
    [reused] = _reused(cap)
    assert reused.how == "fold_in" and len(reused.made) == 2
    assert len(cap.keys) == 2  # the root and one child, not two children


def test_a_huge_split_stays_bounded():
    from jaxmagic.capture.keys import lineage as key_lineage

    cap = _capture(lambda: jr.normal(jr.split(jr.key(11), key_lineage.MAX_ROWS + 10)[-1]))
    assert any("rows told apart" in n for n in cap.notes)
    assert len(cap.keys) <= 4


def test_errors_inside_eager_transforms_pass_through_unchanged():
    def bad_body(c, _):
        return c + jnp.ones(3), None  # a carry of the wrong shape: JAX's own TypeError

    with pytest.raises(TypeError) as plain:
        jax.lax.scan(bad_body, jr.normal(jr.key(90)), None, length=2)
    with pytest.raises(TypeError) as captured:
        with jaxmagic.capture({}):
            jax.lax.scan(bad_body, jr.normal(jr.key(90)), None, length=2)
    assert str(captured.value) == str(plain.value)
    from jax._src import core

    assert getattr(core.EvalTrace.process_primitive, "_jaxmagic_original", None) is None  # restored


def test_keys_are_called_by_their_namespace_names():
    ns = {"rng": jr.key(95), "jr": jr}
    with jaxmagic.capture(ns) as cap:
        exec("rng, sub = jr.split(rng)\nx = jr.normal(sub)\n", ns)
    [root] = [r for r in cap.keys if r.parent is None]
    assert root.how == "input" and root.label == "rng" and "before the cell" in root.detail
    named = {name: r for r in cap.keys for name in r.names}
    assert named["rng"].how == "row" and named["rng"].index == 0  # the key the cell left in `rng`
    assert named["sub"].index == 1 and named["sub"].state == "consumed"
    doc = jaxmagic.document(cap, "keys")
    assert sorted(n for node in doc["nodes"] for n in node["names"]) == ["rng", "sub"]


# --- property: random eager key programs against a reference that tracks key data on the host ---

_OPS = st.lists(
    st.tuples(st.sampled_from(["split", "fold_in", "normal", "uniform"]), st.integers(0, 50), st.integers(0, 3)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS, legacy=st.booleans())
def test_reuse_matches_a_reference_that_counts_consumption_by_key_data(ops, legacy):
    """Splits and samplers consume, fold_in does not; a key is reused when its data is consumed twice."""
    consumed: dict[bytes, int] = {}

    def words(k) -> bytes:
        return np.asarray(k if legacy else jr.key_data(k)).tobytes()

    with jaxmagic.capture({}) as cap:
        pool = [jr.PRNGKey(123) if legacy else jr.key(123)]
        for op, pick, data in ops:
            k = pool[pick % len(pool)]
            if op in ("split", "normal", "uniform"):
                consumed[words(k)] = consumed.get(words(k), 0) + 1
            if op == "split":
                a, b = jr.split(k)
                pool += [a, b]
            elif op == "fold_in":
                pool.append(jr.fold_in(k, data))
            else:
                getattr(jr, op)(k)
    expected = {w for w, n in consumed.items() if n > 1}
    got = {np.asarray(r.data, dtype=np.uint32).tobytes() for r in cap.keys if r.state == "reused"}
    assert got == expected
    assert {np.asarray(r.data, dtype=np.uint32).tobytes() for r in cap.keys if r.state == "consumed"} == {
        w for w, n in consumed.items() if n == 1
    }


def test_another_threads_key_operation_in_flight_hides_none_of_the_cells():
    """A background thread inside one of the stand-ins (here: inside `quiet`, as a stand-in
    running JAX's function is) leaves the cell's thread recording its own key operations."""
    import threading

    inside, release = threading.Event(), threading.Event()

    def background() -> None:
        with key_patch.quiet():
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=background, daemon=True)
    thread.start()
    try:
        assert inside.wait(30)
        with jaxmagic.capture({}) as cap:
            jr.normal(jr.key(7))
    finally:
        release.set()
        thread.join(30)
    [root] = cap.keys
    assert [u.name for u in root.uses] == ["normal"]
