"""Recompile reasons told as JAX tells them: JAX's hedged guesses are hints, never the reason.

Each case runs first under plain JAX with `jax_explain_cache_misses` on (JAX's own words are the
oracle: hedged or not, given or not), then under a capture, whose miss must agree: a guess of
JAX's ("maybe the function is being re-defined repeatedly") shows as "JAX suggests: …" beside the
capture's own reason, and a compile JAX does not explain says that JAX did not report its cause.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.capture.jax_compat.explain import parse_explanation
from jaxmagic.model.timeline import timeline_document
from tests.jax_versions import places_unreduced_arrays
from tests.test_explain import RECORDED, explaining

HEDGED = "maybe the function is being re-defined repeatedly, preventing caching?"


def _jax_records(texts: list[str], name: str) -> list:
    """JAX's parsed records about the function called `name`."""
    parsed = [parse_explanation(t) for t in texts]
    return [e for e in parsed if e is not None and e.function and e.function.rsplit(".", 1)[-1] == name]


def _misses(cap) -> list[dict]:
    """The timeline document's misses, in call order."""
    return timeline_document(cap)["misses"]


def test_two_functions_called_from_one_line_are_two_first_calls():
    """`for fn in (f, g): fn(x)`: JAX guesses g is "maybe re-defined repeatedly" (it has seen a miss at
    that call line before); g is simply another function, compiled for the first time."""

    def f_one(x):
        return x + 1

    def g_one(x):
        return x * 2

    with explaining() as texts:
        for fn in (jax.jit(f_one), jax.jit(g_one)):
            fn(1.0)
    [jax_f], [jax_g] = _jax_records(texts, "f_one"), _jax_records(texts, "g_one")
    assert jax_f.hints == () and HEDGED in " ".join(jax_g.hints)  # JAX's own verdict: a guess, about g only

    def f_two(x):
        return x + 1

    def g_two(x):
        return x * 2

    with jaxmagic.capture({}) as cap:
        for fn in (jax.jit(f_two), jax.jit(g_two)):
            fn(1.0)
    f_miss, g_miss = _misses(cap)
    assert [f_miss["kind"], g_miss["kind"]] == ["first", "first"]
    assert g_miss["words"] == "the first call of g_two: nothing was compiled for it yet"
    assert "made anew" not in g_miss["words"] and g_miss["fix"] is None
    assert g_miss["hint"].startswith("JAX suggests: ") and HEDGED in g_miss["hint"]
    assert "this cell made no other function object from this definition" in g_miss["hint"]
    assert f_miss["hint"] is None
    assert "being re-defined repeatedly" in g_miss["jax"]  # JAX's text itself, verbatim beside


def test_a_lambda_made_anew_is_new_function_by_the_capture_with_jax_hint():
    """A lambda jitted anew each iteration: the capture saw two function objects of one definition (its
    fact); JAX's guess goes along as a hint."""
    with explaining() as texts:
        for _ in range(2):
            jax.jit(lambda v: v + 1)(jnp.ones(3))
    jax_lambdas = _jax_records(texts, "<lambda>")
    assert [bool(e.hints) for e in jax_lambdas] == [False, True]

    with jaxmagic.capture({}) as cap:
        for _ in range(2):
            jax.jit(lambda v: v + 2)(jnp.ones(3))
    first, again = _misses(cap)
    assert (first["kind"], again["kind"], again["from"]) == ("first", "new_function", "diff")
    assert "was made anew" in again["words"]
    assert again["hint"] == "JAX suggests: seen another function defined on the same line; " + HEDGED


def test_a_wrapper_with_other_compiler_options_says_jax_reported_no_cause():
    """Two `jax.jit(h, compiler_options=...)` wrappers: JAX logs no explanation for the second (its trace
    is cached) though it compiles again. The capture names the option and says JAX gave no cause."""

    def h_plain(x):
        return x - 1

    slow = {"xla_cpu_enable_fast_math": False}
    fast = {"xla_cpu_enable_fast_math": True}
    with explaining() as texts:
        jax.jit(h_plain, compiler_options=slow)(1.0)
        texts.clear()
        jax.jit(h_plain, compiler_options=fast)(1.0)
    assert _jax_records(texts, "h_plain") == []  # JAX's verdict: nothing to explain

    def h_opts(x):
        return x - 1

    with jaxmagic.capture({}) as cap:
        jax.jit(h_opts, compiler_options=slow)(1.0)
        jax.jit(h_opts, compiler_options=fast)(1.0)
    assert not cap.calls[1].cache_hit and "compile" in cap.calls[1].phases  # compiled again, truly
    assert cap.calls[1].explanations == ()
    first, again = _misses(cap)
    assert first["kind"] == "first"
    assert (again["kind"], again["from"], again["hint"]) == ("new_wrapper", "diff", None)
    assert again["words"] == (
        "a new jax.jit wrapper of `h_opts` with other jit options (compiler_options) than an "
        "earlier wrapper was compiled; JAX did not report the cause of this compile"
    )
    assert again["changes"] == [
        {
            "path": "compiler_options",
            "kind": "new_wrapper",
            "before": "{'xla_cpu_enable_fast_math': False}",
            "after": "{'xla_cpu_enable_fast_math': True}",
        }
    ]
    assert "made anew" not in again["words"]


def test_a_new_wrapper_with_other_static_argnums_keeps_jax_reason():
    """Where JAX does explain a new wrapper's miss (other static arguments: traced anew), JAX's reason
    stands, and the wrapper's option change is listed with it."""

    def k_static(x, n):
        return x * n

    with explaining() as texts:
        jax.jit(k_static)(1.0, 2)
        texts.clear()
        jax.jit(k_static, static_argnums=1)(1.0, 2)
    [jax_k] = _jax_records(texts, "k_static")
    assert jax_k.kind != "first" and jax_k.hints == ()  # JAX 0.7 reports it and cannot explain it: "unknown"

    def k_again(x, n):
        return x * n

    with jaxmagic.capture({}) as cap:
        jax.jit(k_again)(1.0, 2)
        jax.jit(k_again, static_argnums=1)(1.0, 2)
    again = _misses(cap)[1]
    ours = parse_explanation(cap.calls[1].explanations[-1]).kind
    if jax_k.kind == "unknown":  # JAX 0.7 cannot explain it: the wrapper's changed option is the reason
        assert ours == "unknown" and again["kind"] == "new_wrapper"
        assert "with other jit options (static_argnums" in again["words"]
    else:
        assert again["kind"] == ours == jax_k.kind
        assert "earlier jax.jit wrapper" in again["words"]
    assert any(c["kind"] == "new_wrapper" and c["path"] == "static_argnums" for c in again["changes"])
    assert again["hint"] is None


def test_every_recorded_jax_record_with_a_guess_is_a_first_call_with_a_hint():
    """JAX 0.4.30 to 0.10 records (verbatim, tests/test_explain.py): the only hedged sentence is the
    "maybe re-defined" one, it is a hint wherever it appears, and it never sets the kind."""
    hedged = 0
    for label, text, names, static, *_ in RECORDED:
        e = parse_explanation(text, names, static_argnums=static)
        if "maybe" in text:
            hedged += 1
            assert e.kind == "first" and e.redefined_hint, label
            assert e.hints == ("seen another function defined on the same line; " + HEDGED,), label
        else:
            assert e.hints == () and not e.redefined_hint, label
    assert hedged == 7


@pytest.mark.parametrize(
    "line",
    [
        "  but seen another function defined on the same line; maybe the function is",
        "  possibly a guess of a future JAX.",
    ],
)
def test_hedged_lines_are_hints_never_changes(line):
    text = (
        "TRACING CACHE MISS at /u/a.py:3:4 (<module>):\n  never seen function:\n"
        "    f id=1 defined at /u/a.py:1\n" + line + "\n  being re-defined repeatedly, preventing caching?"
    )
    e = parse_explanation(text)
    assert e.kind == "first" and e.changes == ()
    assert e.hints and e.hints[0].startswith(line.strip()[4:] if line.strip().startswith("but ") else line.strip())


def test_trace_and_sharding_magics_in_a_real_shell(magic_shell, capsys):
    """Under %%trace in IPython: the same results and output as the plain cell; g's miss a first call with
    JAX's guess as a hint; the second compiler-options wrapper a new_wrapper miss. Under %%sharding: an
    unreduced array is listed with its note."""
    body = (
        "import jax, jax.numpy as jnp\n"
        "def f_sh(x):\n    return x + 1\n"
        "def g_sh(x):\n    return x * 2\n"
        "outs = [fn(1.0) for fn in (jax.jit(f_sh), jax.jit(g_sh))]\n"
        "def h_sh(x):\n    return x - 1\n"
        "opts = [jax.jit(h_sh, compiler_options={'xla_cpu_enable_fast_math': v})(2.0) for v in (False, True)]\n"
        "print('outs', [float(o) for o in outs + opts])\n"
        "float(sum(outs + opts))\n"
    )
    plain = magic_shell.run_cell(body, store_history=True)
    plain_out = capsys.readouterr().out
    result = magic_shell.run_cell("%%trace --name tcap\n" + body, store_history=True)
    assert result.success and result.result == plain.result == 6.0
    assert "outs [2.0, 2.0, 1.0, 1.0]" in capsys.readouterr().out and "outs [2.0, 2.0, 1.0, 1.0]" in plain_out
    misses = {m["call"]: m for m in jaxmagic.document(magic_shell.user_ns["tcap"], "timeline")["misses"]}
    assert [misses[c]["kind"] for c in sorted(misses)] == ["first", "first", "first", "new_wrapper"]
    assert misses[1]["hint"].startswith("JAX suggests: ") and "made anew" not in misses[1]["words"]
    assert misses[3]["words"].endswith("JAX did not report the cause of this compile")

    if not places_unreduced_arrays():
        return  # this JAX has no unreduced arrays
    cell = (
        "%%sharding --name scap_u\n"
        "import jax, jax.numpy as jnp\n"
        "from jax.sharding import NamedSharding, PartitionSpec as P, AxisType\n"
        "mu = jax.make_mesh((4, 2), ('x', 'y'), axis_types=(AxisType.Explicit,) * 2)\n"
        "su = jax.device_put(jnp.ones(8), NamedSharding(mu, P('y', unreduced={'x'})))\n"
    )
    assert magic_shell.run_cell(cell, store_history=True).success
    doc = jaxmagic.document(magic_shell.user_ns["scap_u"], "sharding")
    [su] = [a for a in doc["arrays"] if a["name"] == "su"]
    assert su["sharding"]["unreduced"] == ["x"] and su["note"].startswith("JAX cannot index su")
