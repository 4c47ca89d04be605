"""Miss reasons: our signature diff on real signatures, and the schema's Miss in plain words."""

from __future__ import annotations

import json
from functools import partial

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jaxmagic.capture import jax_compat
from jaxmagic.capture.jax_compat.explain import KIND_ORDER, parse_explanation
from jaxmagic.capture.jit.signature import diff_signatures, signature_of
from jaxmagic.capture.record import Change
from jaxmagic.model.reasons import FIXES, MAX_CHANGES, change_words, miss_json
from tests.test_explain import RECORDED, explaining

X3, X4 = jnp.ones(3), jnp.ones(4)
# signature_of names arguments from the jit's `_jit_info` (absent in JAX 0.4): without it paths read `args[0]`
named = pytest.mark.skipif(jax_compat.jit_info(jax.jit(abs)) is None, reason="this JAX exposes no _jit_info")
SCHEMA_KINDS = {
    "first",
    "shape",
    "dtype",
    "weak_type",
    "static",
    "pytree",
    "sharding",
    "donation",
    "new_function",
    "new_wrapper",
    "context",
    "unknown",
}


def _recorded(label: str, names=None, static=()):
    text = next(r[1] for r in RECORDED if r[0] == label)
    return parse_explanation(text, names, static_argnums=static)


def _diff(fn, before_args, after_args, before_kwargs=None, after_kwargs=None):
    return diff_signatures(
        signature_of(fn, before_args, before_kwargs or {}), signature_of(fn, after_args, after_kwargs or {})
    )


# ---------------------------------------------------------------- diff_signatures on real signatures


def f1(x):
    return x * 2


def f2(x, y=None):
    return x if y is None else x + y


@partial(jax.jit, static_argnums=1, static_argnames="mode")
def with_statics(x, n, mode="a"):
    return x * n if mode == "a" else x - n


def tree(p):
    return sum(jnp.sum(leaf) for leaf in jax.tree_util.tree_leaves(p))


@named
@pytest.mark.parametrize(
    "before,after,expected",
    [
        ((X3,), (X4,), [Change("x", "shape", "f32[3]", "f32[4]")]),
        ((X3,), (jnp.ones(3, jnp.int32),), [Change("x", "dtype", "f32[3]", "i32[3]")]),
        ((jnp.float32(2),), (2.0,), [Change("x", "weak_type", "f32[]{weak_type=False}", "f32[]{weak_type=True}")]),
        ((2.0,), (2,), [Change("x", "dtype", "f32[]", "i32[]")]),
        ((X3,), (X3,), []),
    ],
)
def test_diff_types(before, after, expected):
    assert list(_diff(jax.jit(f1), before, after)) == expected


@named
def test_diff_static_values():
    assert _diff(with_statics, (X3, 2), (X3, 3)) == (Change("n", "static", "2", "3"),)
    assert _diff(with_statics, (X3, 2), (X3, 2), {"mode": "a"}, {"mode": "b"}) == (
        Change("mode", "static", "'a'", "'b'"),
    )


@named
def test_diff_pytree_structure():
    jt = jax.jit(tree)
    assert _diff(jt, ({"a": X3, "b": X3},), ({"a": X3, "c": X3},)) == (
        Change("p['c']", "pytree", None, "f32[3]"),
        Change("p['b']", "pytree", "f32[3]", None),
    )
    assert _diff(jt, ({"a": [X3, X3]},), ({"a": [X3, None]},)) == (Change("p['a'][1]", "pytree", "f32[3]", None),)
    assert _diff(jt, ((X3, X3),), ((X3, X3, X3),)) == (Change("p[2]", "pytree", None, "f32[3]"),)
    assert _diff(jax.jit(f2), (X3,), (X3,), {}, {"y": X3}) == (Change("y", "pytree", None, "f32[3]"),)


@pytest.mark.skipif(not hasattr(jax.sharding, "AxisType"), reason="mesh axis types arrived in JAX 0.5")
def test_diff_sharding_explicit_and_auto_meshes():
    AxisType = jax.sharding.AxisType
    x8 = jnp.arange(8.0)
    explicit = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Explicit,))
    jf = jax.jit(f1)
    assert _diff(jf, (x8,), (jax.device_put(x8, NamedSharding(explicit, P("d"))),)) == (
        Change("x", "sharding", "default device", "P('d',)"),
    )  # as JAX 0.5+ print it, on every JAX
    auto = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    sharded, replicated = (jax.device_put(x8, NamedSharding(auto, P(*spec))) for spec in (("d",), ()))
    # JAX logs no explanation for this one (a compile-only miss): the diff is all there is
    assert _diff(jf, (sharded,), (replicated,)) == (Change("x", "sharding", "P('d',)", "P()"),)


@named
def test_diff_donation_and_shape_together():
    donating = jax.jit(f1, donate_argnums=0)
    before, after = signature_of(donating, (X3,), {}), signature_of(jax.jit(f1), (X4,), {})
    assert diff_signatures(before, after) == (
        Change("x", "shape", "f32[3]", "f32[4]"),
        Change("x", "donation", "donated", "not donated"),
    )


# ---------------------------------------------------------------- words


@pytest.mark.parametrize(
    "change,words",
    [
        (Change("x", "shape", "f32[3]", "f32[4]"), "x changed shape from f32[3] to f32[4]"),
        (Change("n", "static", "2", "3"), "static argument n changed from 2 to 3"),
        (Change("", "static", "2", "3"), "a static argument changed from 2 to 3"),
        (Change("x", "dtype", "f32[3]", "i32[3]"), "x changed dtype from f32[3] to i32[3]"),
        (
            Change("x", "weak_type", "f32[]{weak_type=False}", "f32[]{weak_type=True}"),
            "x changed weak type from f32[]{weak_type=False} to f32[]{weak_type=True} (a Python number now, a JAX array before)",
        ),
        (Change("p['c']", "pytree", None, "f32[3]"), "p['c'] is new (f32[3])"),
        (Change("p['b']", "pytree", "f32[3]", None), "p['b'] is gone (was f32[3])"),
        (
            Change("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'y'})"),
            "the keyword arguments changed structure from dict with 0 child to dict with 1 child (keys on one side only: {'y'})",
        ),
        (
            Change("x", "sharding", "single device", "PartitionSpec('d',)"),
            "x changed sharding from single device to PartitionSpec('d',)",
        ),
        (Change("x", "donation", "donated", "not donated"), "x changed donation from donated to not donated"),
        (Change("jax_enable_x64", "context", "False", "True"), "config jax_enable_x64 changed from False to True"),
        (
            Change("trace context [24]", "context", "False", "True"),
            "a config flag or context manager changed (trace context [24]) from False to True",
        ),
        (
            Change("trace context", "context", None, None),
            "a config flag or context manager changed (JAX does not say which)",
        ),
    ],
)
def test_change_words(change, words):
    assert change_words(change) == words


def test_first_call():
    miss = miss_json(0, None, (), first_call=True, redefined=False, name="f")
    assert miss == {
        "call": 0,
        "kind": "first",
        "changes": [],
        "words": "the first call of f: nothing was compiled for it yet",
        "fix": None,
        "jax": None,
        "from": "diff",
        "hint": None,
    }
    e = _recorded("C first call ever")
    miss = miss_json(0, e, (), first_call=True, redefined=False)
    assert (miss["kind"], miss["from"], miss["jax"]) == ("first", "both", e.text)
    assert miss["words"] == "the first call of f_shape: nothing was compiled for it yet"


def test_new_function():
    """Made anew is our fact (another function object from the same definition); JAX's "maybe" is a hint."""
    e = _recorded("C lambda redefined each call (2 iterations same line) #1")
    made_anew = (
        "a new function object: `<lambda>` defined at line 109 was made anew, and JAX caches per function "
        "object (an earlier one made from the same definition was compiled before)"
    )
    miss = miss_json(3, e, (), first_call=False, redefined=True)
    assert (miss["kind"], miss["from"], miss["words"]) == ("new_function", "both", made_anew)
    assert "outside the loop" in miss["fix"]
    assert miss["hint"] == (
        "JAX suggests: seen another function defined on the same line; maybe the function is "
        "being re-defined repeatedly, preventing caching?"
    )
    ours = miss_json(3, None, (), first_call=False, redefined=True, name="g", defined_line=7)
    assert (ours["kind"], ours["from"], ours["hint"]) == ("new_function", "diff", None)
    assert ours["words"].startswith("a new function object: `g` defined at line 7 was made anew")
    # JAX has never seen this function object (a fact), though the capture has seen calls of this lane: made anew
    never_seen = _recorded("C lambda redefined each call (2 iterations same line)")
    assert miss_json(4, never_seen, (), first_call=False, redefined=False)["kind"] == "new_function"
    # JAX's guess alone never makes the reason: a first call stays a first call, the guess a hint
    guess = miss_json(3, e, (), first_call=True, redefined=False)
    assert (guess["kind"], guess["from"]) == ("first", "both")
    assert "made anew" not in guess["words"] and guess["hint"].startswith("JAX suggests: ")
    assert "this cell made no other function object from this definition" in guess["hint"]


def test_new_wrapper_says_jax_named_no_cause():
    opts = (Change("compiler_options", "new_wrapper", "{}", "{'xla_cpu_enable_fast_math': True}"),)
    miss = miss_json(1, None, opts, first_call=True, redefined=False, name="h")
    assert (miss["kind"], miss["from"], miss["hint"]) == ("new_wrapper", "diff", None)
    assert miss["words"] == (
        "a new jax.jit wrapper of `h` with other jit options (compiler_options) than an earlier "
        "wrapper was compiled; JAX did not report the cause of this compile"
    )
    assert miss["changes"] == [
        {
            "path": "compiler_options",
            "kind": "new_wrapper",
            "before": "{}",
            "after": "{'xla_cpu_enable_fast_math': True}",
        }
    ]
    same = miss_json(1, None, (Change("", "new_wrapper", None, None),), first_call=True, redefined=False, name="h")
    assert "with the same jit options as an earlier wrapper" in same["words"]
    assert change_words(opts[0]) == (
        "jit option compiler_options is {'xla_cpu_enable_fast_math': True} in this wrapper and {} in an earlier one"
    )


def test_agreeing_change_tells_the_previous_call():
    """JAX compares with its closest entry (f32[3]); our diff with the previous call (f32[4]): ours tells it."""
    e = parse_explanation(
        "TRACING CACHE MISS at a.py:9:1 (<module>):\n  for f defined at a.py:1\n"
        "  all previously seen cache keys differ. For the closest previous key:\n"
        "  different input types:\n  * at x, now f32[5] and before f32[3]"
    )
    miss = miss_json(2, e, (Change("x", "shape", "f32[4]", "f32[5]"),), first_call=False, redefined=False)
    assert (miss["kind"], miss["from"]) == ("shape", "both")
    assert miss["changes"] == [{"path": "x", "kind": "shape", "before": "f32[4]", "after": "f32[5]"}]
    assert miss["words"] == "x changed shape from f32[4] to f32[5]"
    assert miss["fix"] == FIXES["shape"] and "bucket" in miss["fix"]
    assert miss["jax"] == e.text


def test_disagreeing_changes_are_merged_jax_first():
    e = _recorded("C kwarg dtype change scale=jnp.float32(3)", ["x", "y", "scale"])
    ours = (Change("scale", "weak_type", "f32[]{weak_type=True}", "f32[]{weak_type=False}"),)
    miss = miss_json(5, e, ours, first_call=False, redefined=False)
    assert (miss["kind"], miss["from"]) == ("pytree", "jax")
    assert [(c["path"], c["kind"]) for c in miss["changes"]] == [("kwargs", "pytree"), ("scale", "weak_type")]
    assert (
        miss["words"].startswith("the keyword arguments changed structure")
        and "scale changed weak type" in miss["words"]
    )


def test_container_path_agrees_with_a_key_inside():
    e = _recorded("C new kwarg y= (None default -> array)", ["x", "y", "scale"])
    miss = miss_json(1, e, (Change("y", "pytree", None, "f32[3]"),), first_call=False, redefined=False)
    assert (miss["kind"], miss["from"]) == ("pytree", "both")
    assert [c["path"] for c in miss["changes"]] == ["kwargs", "y"]


def test_diff_only_when_jax_is_silent_or_unavailable():
    sharding = (Change("x", "sharding", "PartitionSpec('d',)", "PartitionSpec()"),)
    miss = miss_json(7, None, sharding, first_call=False, redefined=False)
    assert (miss["kind"], miss["from"], miss["jax"]) == ("sharding", "diff", None)
    assert "device_put" in miss["fix"] and "in_shardings" in miss["fix"]
    unavailable = _recorded("A static_argnums value 2->3")
    miss = miss_json(8, unavailable, (Change("n", "static", "2", "3"),), first_call=False, redefined=False)
    assert (miss["kind"], miss["from"], miss["words"]) == ("static", "diff", "static argument n changed from 2 to 3")
    assert miss["jax"].endswith("please open an issue at https://github.com/jax-ml/jax")


def test_vague_jax_change_gives_way_to_ours():
    """0.4's "never seen passing 1 positional args …" for a dict key change; B's unnamed static value."""
    a = _recorded("A dict keys changed {'a','b'} -> {'a','c'}")
    ours = (Change("p['c']", "pytree", None, "f32[3]"), Change("p['b']", "pytree", "f32[3]", None))
    miss = miss_json(1, a, ours, first_call=False, redefined=False)
    assert (miss["kind"], miss["from"]) == ("pytree", "both")
    assert miss["words"] == "p['c'] is new (f32[3]); p['b'] is gone (was f32[3])"
    b = _recorded("B static_argnums value 2->3")  # parsed without static_argnums: path ""
    miss = miss_json(1, b, (Change("n", "static", "2", "3"),), first_call=False, redefined=False)
    assert (miss["from"], miss["changes"]) == ("both", [{"path": "n", "kind": "static", "before": "2", "after": "3"}])
    positional = _recorded("A same kwarg passed positionally")  # invisible to signatures: JAX's text stays
    miss = miss_json(1, positional, (), first_call=False, redefined=False)
    assert (miss["kind"], miss["from"], len(miss["changes"])) == ("pytree", "jax", 1)


def test_unknown():
    miss = miss_json(9, None, (), first_call=False, redefined=False)
    assert (miss["kind"], miss["from"], miss["changes"]) == ("unknown", "diff", [])
    assert "committed to another device" in miss["words"] and miss["fix"] == FIXES["unknown"]
    debug = parse_explanation(
        "TRACING CACHE MISS at a.py:9:1 (<module>):\n  for f defined at a.py:1\n"
        "  all previously seen cache keys differ. For the closest previous key:\n"
        "  Debug info doesn't match."
    )
    miss = miss_json(9, debug, (), first_call=False, redefined=False)
    assert (miss["kind"], miss["from"]) == ("unknown", "jax")
    assert miss["words"].startswith("JAX's debug info") and "signature did not change" in miss["words"]


def test_context_and_first_call_seen_before_capture():
    e = _recorded("C trace context: enable_x64 toggled")
    miss = miss_json(0, e, (), first_call=True, redefined=False)
    assert (miss["kind"], miss["from"]) == ("context", "jax")
    assert miss["words"] == (
        "config jax_enable_x64 changed from False to True (compared with a call JAX saw before this capture)"
    )
    assert "jax_enable_x64" in miss["fix"]


def test_many_changes_are_counted_and_capped():
    ours = tuple(Change(f"p[{i}]", "shape", "f32[3]", "f32[4]") for i in range(40))
    miss = miss_json(1, None, ours, first_call=False, redefined=False)
    assert len(miss["changes"]) == MAX_CHANGES
    assert miss["words"].endswith("; and 37 more changes") and miss["words"].count("changed shape") == 3


def test_every_recorded_explanation_gives_a_valid_miss():
    for label, text, names, static, *_ in RECORDED:
        e = parse_explanation(text, names, static_argnums=static)
        for first_call in (True, False):
            miss = miss_json(0, e, (), first_call=first_call, redefined=False)
            json.dumps(miss)
            assert miss["kind"] in SCHEMA_KINDS and miss["from"] in ("jax", "diff", "both"), label
            assert miss["words"] and miss["jax"] == text
            assert (miss["fix"] is None) == (miss["kind"] == "first")
    assert set(KIND_ORDER) == SCHEMA_KINDS


# ---------------------------------------------------------------- live: JAX's text and our diff together


@named
def test_live_shape_storm_reason():
    def f_storm(x):
        return x + 1

    jf = jax.jit(f_storm)
    sigs = [signature_of(jf, (jnp.ones(n),), {}) for n in (3, 4, 5)]
    with explaining() as texts:
        for n in (3, 4):
            jf(jnp.ones(n))
        texts.clear()
        jf(jnp.ones(5))
    (text,) = [t for t in texts if "f_storm" in t]
    miss = miss_json(
        2, parse_explanation(text, ["x"]), diff_signatures(sigs[1], sigs[2]), first_call=False, redefined=False
    )
    assert (miss["kind"], miss["from"]) == ("shape", "both")
    assert miss["words"] == "x changed shape from f32[4] to f32[5]"


def test_words_lead_with_the_main_kind():
    ours = (Change("a", "shape", "f32[3]", "f32[4]"), Change("n", "static", "2", "3"))
    miss = miss_json(1, None, ours, first_call=False, redefined=False)
    assert miss["kind"] == "static"
    assert miss["words"] == "static argument n changed from 2 to 3; a changed shape from f32[3] to f32[4]"


def test_capture_never_turns_on_an_explainer_that_breaks_the_program():
    """JAX 0.9's `jax_explain_cache_misses` raises ValueError when a `cond` branch is traced again at
    another shape: with the flag on, a correct program fails. jaxmagic turns the flag on only where JAX's
    explainer leaves programs running (JAX's own answer, asked plainly here, is the oracle), and under a
    capture the program gives its plain result on every JAX."""
    import jaxmagic

    def plain_branch(x):
        return x * 2

    before = jax.config.jax_explain_cache_misses
    jax.config.update("jax_explain_cache_misses", True)
    try:
        for n in (2, 3):
            jax.lax.cond(True, plain_branch, plain_branch, jnp.ones(n))
        breaks = False
    except ValueError:
        breaks = True
    finally:
        jax.config.update("jax_explain_cache_misses", before)
    assert jax_compat.explaining_is_safe() is (not breaks)

    def branch(x):  # a new function: nothing of it is cached yet
        return x * 2

    with jaxmagic.capture({}) as cap:
        out = [jax.lax.cond(True, branch, branch, jnp.ones(n)) for n in (2, 3)]
    assert [o.tolist() for o in out] == [[2.0, 2.0], [2.0, 2.0, 2.0]]
    assert any("stays off" in note for note in cap.notes) is breaks
    assert jax.config.jax_explain_cache_misses is before


def _key_reuse_then_trace(g, flag_on: bool):
    """JAX's key-reuse check of `g` (it traces `g` with a tree of JAX's default registry), then
    `make_jaxpr` and `jit` of `g`: what each gave, or the error JAX raised."""
    from jax.experimental.key_reuse._core import function_type_signature

    before = jax.config.jax_explain_cache_misses
    if flag_on:
        jax.config.update("jax_explain_cache_misses", True)
    try:
        function_type_signature(g, jnp.ones(3))
        return str(jax.make_jaxpr(g)(jnp.ones(3))), jax.jit(g)(jnp.ones(4)).tolist()
    except ValueError as exc:
        return type(exc).__name__
    finally:
        jax.config.update("jax_explain_cache_misses", before)


def test_a_jax_failure_inside_its_explanation_never_fails_the_program():
    """JAX 0.12 fails while explaining a miss of a function its key-reuse checker traced before
    ("PyTree registries of PyTreeDefs passed to Tuple() must match"): with explanations on, as a
    capture turns them on, `check_key_reuse(f, key)` then `jax.jit(f)` raised ValueError. Under a
    capture the program gives its plain result on every JAX; where the user turns explanations on
    themselves, it fails exactly where plain JAX with that setting fails (plain JAX is the oracle)."""
    import jaxmagic

    pytest.importorskip("jax.experimental.key_reuse._core")
    plain = _key_reuse_then_trace(lambda x: jnp.sin(x)[None], flag_on=False)
    with jaxmagic.capture({}):
        captured = _key_reuse_then_trace(lambda x: jnp.sin(x)[None], flag_on=False)
    assert captured == plain
    assert not isinstance(plain, str), plain  # a correct program: it runs

    plain_flag = _key_reuse_then_trace(lambda x: jnp.sin(x)[None], flag_on=True)
    with jaxmagic.capture({}):
        captured_flag = _key_reuse_then_trace(lambda x: jnp.sin(x)[None], flag_on=True)
    assert captured_flag == plain_flag  # "ValueError" on JAX 0.12, the results elsewhere


def test_the_guarded_key_differ_stands_in_only_for_jaxmagics_explanations():
    """`jax_compat.guarded_key_diff`: found on every JAX whose `partial_eval.explain` calls
    `diff_tracing_cache_keys`; JAX's own failure becomes "explanation unavailable" unless the user
    asked for explanations; after a capture JAX's function is back."""
    from jax._src.interpreters import partial_eval as pe

    import jaxmagic

    guard = jax_compat.guarded_key_diff(lambda: False)
    if not hasattr(pe, "diff_tracing_cache_keys"):
        assert guard is None
        pytest.skip("this JAX explains misses elsewhere, with another contract")
    assert guard is not None
    module, name, stand_in = guard
    assert (module, name) == (pe, "diff_tracing_cache_keys")
    original = pe.diff_tracing_cache_keys
    assert stand_in(None, None)[-1] == "explanation unavailable"  # JAX's differ raises on these keys
    _, _, strict = jax_compat.guarded_key_diff(lambda: True)
    with pytest.raises(Exception):  # whatever JAX raises, raised as JAX raises it
        strict(None, None)
    with jaxmagic.capture({}):
        assert pe.diff_tracing_cache_keys is not original
    assert pe.diff_tracing_cache_keys is original
