"""Captions ("what to look at", model/captions.py) on real JAX programs: every figure a caption
states is checked against JAX's own answer (make_jaxpr, print_saved_residuals, compiled HLO, the
key-reuse checker, addressable shards), and the lines it names against the lines of this file.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import os
import re
from collections import Counter

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from jaxmagic.model import captions
from jaxmagic.model.captions import words
from jaxmagic.views import fallback_html, text_summary, wire
from jaxmagic.views.html_parts import esc

from .grad_programs import remat_loss, small_mlp
from .jax_versions import COMPILED, auto_mesh, reads_compiled_hlo
from .jaxpr_oracle import jaxprs_preorder
from .kind_documents import documents_of_every_kind
from .test_grads import jax_saved_residuals
from .test_keys import _JAX_CHECKS_EAGER, _jax_says_reuse

jr = jax.random
KINDS = ("graph", "timeline", "grad", "sharding", "keys")
COLLECTIVE = re.compile(r"=\s.*?\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\(")


COMPILED_HLO = reads_compiled_hlo()  # whether this JAX gives a call's compiled HLO (tests/jax_versions.py)
HERE = "test_captions.py"  # lines of a file are named `file.py:N` (capture/source.py where_text)


def _at(fn, marker: str) -> str:
    """`file.py:N`: how captions name the line holding `marker` inside `fn` (a file's line)."""
    return f"{os.path.basename(inspect.getsourcefile(fn))}:{_line(fn, marker)}"


def _line(fn, marker: str) -> int:
    """The line of this file holding `marker` inside `fn`."""
    lines, start = inspect.getsourcelines(fn)
    return next(start + i for i, text in enumerate(lines) if marker in text)


def _caption(doc: dict) -> list[str]:
    """The document's caption, checked for the shape every caption has."""
    sentences = doc["caption"]
    assert 1 <= len(sentences) <= captions.MAX_SENTENCES, sentences
    assert all(isinstance(s, str) and 0 < len(s) < 160 for s in sentences), sentences
    assert sentences == captions.caption(doc)  # what was attached is what the document says
    return sentences


def _one(sentences: list[str], pattern: str) -> re.Match:
    found = [m for m in (re.fullmatch(pattern, s) for s in sentences) if m]
    assert len(found) == 1, (pattern, sentences)
    return found[0]


def _mix(text: str) -> dict[str, int]:
    """'2 integer_pow, 1 sin and 1 add' -> {'integer_pow': 2, 'sin': 1, 'add': 1}."""
    out = {}
    for part in re.split(r", | and ", text):
        count, prim = part.split(" ", 1)
        out[prim] = int(count.replace(",", ""))
    return out


def _hlo_collectives(jitted, *args) -> Counter:
    return Counter(COLLECTIVE.findall(jitted.lower(*args).compile().as_text()))


# --- %%jaxpr ------------------------------------------------------------------------------------


def fresh_trig():
    """A new function object each time: JAX's compile cache is per function, so no earlier test has compiled it."""

    def trig(x):
        return jnp.sin(x) ** 2 + jnp.cos(x) ** 2

    return trig


def control(x):
    def body(c, _):
        return c * 2.0, c

    c, _ = jax.lax.scan(body, x, None, length=4)
    return jax.lax.cond(c.sum() > 0, jnp.sin, jnp.cos, c)


def log_of_double(x):
    y = x * 2.0
    return jnp.log(y) + 1.0  # NaN for negative x


def test_graph_counts_eqns_primitives_calls_and_signatures():
    xs = [jnp.ones(3), jnp.ones(3), jnp.ones(4)]
    trig = fresh_trig()
    with jaxmagic.capture({}) as cap:
        f = jax.jit(trig)
        for x in xs:
            f(x)
    sentences = _caption(jaxmagic.document(cap, "graph"))
    jaxpr = jax.make_jaxpr(trig)(xs[0])
    m = _one(sentences, r"trig traced to (\d+) eqns \((.*)\) for each of (\d) signatures; (\d) calls, compiled (\w+)\.")
    assert int(m[1]) == len(jaxpr.eqns)
    assert _mix(m[2]) == Counter(e.primitive.name for e in jaxpr.eqns)
    signatures = {x.shape for x in xs}
    assert int(m[3]) == len(signatures) and int(m[4]) == len(xs)
    assert m[5] == {1: "once", 2: "twice"}[len(signatures)]
    assert "trig has 2 signatures: argument 1 was f32[3], then f32[4];" in sentences[1]


def test_graph_names_control_flow_with_jaxs_lengths_and_branches():
    x = jnp.ones(3)
    with jaxmagic.capture({}) as cap:
        jax.jit(control)(x)
    sentences = _caption(jaxmagic.document(cap, "graph"))
    closed = jax.make_jaxpr(control)(x)
    scan = next(e for e in closed.jaxpr.eqns if e.primitive.name == "scan")
    cond = next(e for e in closed.jaxpr.eqns if e.primitive.name == "cond")
    m = _one(sentences, r"control traced to (\d+) eqns .*; 1 call, compiled once\.")
    assert int(m[1]) == sum(len(j.eqns) for j in jaxprs_preorder(closed))  # recursive, as the view counts
    m = _one(sentences, r"Control flow: control has a scan of (\d+) iterations and a cond with (\d+) branches: .*")
    assert int(m[1]) == scan.params["length"] and int(m[2]) == len(cond.params["branches"])


def test_graph_values_say_where_a_nan_first_appears():
    x = jnp.array([1.0, -1.0, 2.0, -3.0])
    with jaxmagic.capture({}, values=True) as cap:
        jax.jit(log_of_double)(x)
    sentences = _caption(jaxmagic.document(cap, "graph"))
    nans = int(jnp.isnan(jnp.log(x * 2.0)).sum())  # JAX's answer
    assert sentences[0] == (
        f"NaN first appears in log_of_double at log ({_at(log_of_double, 'NaN for')}): "
        f"{nans} NaN in its output, none in its inputs."
    )
    with jaxmagic.capture({}, values=True) as clean:
        jax.jit(log_of_double)(jnp.abs(x))
    assert _caption(jaxmagic.document(clean, "graph"))[-1] == "No NaN or Inf in any recorded value."


def test_values_under_the_users_debug_nans_find_a_masked_nan_and_leave_the_flag_on():
    """`jnp.where(x > 0, log(x), 0)` masks a NaN; the user's jax_debug_nans checks their compiled
    program (which returns no NaN), while the eqn-by-eqn replay would stop at the log: it is
    replayed with the checks off for its own thread, so the view names the NaN instead of
    claiming there is none."""
    masked = jax.jit(lambda v: jnp.where(v > 0, jnp.log(v), 0.0) * 3)
    x = jnp.array([1.0, -1.0, 2.0])
    masked(x)
    jax.config.update("jax_debug_nans", True)
    try:
        with jaxmagic.capture({}, values=True) as cap:
            out = masked(x)
        assert jax.config.jax_debug_nans is True
    finally:
        jax.config.update("jax_debug_nans", False)
    assert not jnp.isnan(out).any()
    doc = jaxmagic.document(cap, "graph")
    assert (
        doc["caption"][0].startswith("NaN first appears in <lambda> at log")
        and doc["functions"][0].get("values_note") is None
    )


def test_values_that_stopped_early_never_claim_there_is_no_nan():
    from jaxmagic.model.captions.graph import graph_caption

    with jaxmagic.capture({}, values=True) as clean:
        jax.jit(log_of_double)(jnp.abs(jnp.array([1.0, 2.0])))
    doc = jaxmagic.document(clean, "graph")
    doc["functions"][0]["values_note"] = "values are partial: stopped after 1 eqn: the 2 s budget ran out"
    last = graph_caption(doc)[-1]
    assert "No NaN or Inf in any recorded value" not in last and "stopped early" in last


# --- %%trace ------------------------------------------------------------------------------------


def scaled(x, n):
    print("tracing scaled")  # a print at trace time
    return x * n


def test_timeline_tells_the_recompiles_and_the_hits():
    from jaxmagic.capture.jit import monitoring

    xs = [jnp.ones(3), jnp.ones(3), jnp.ones(4), jnp.ones(5)]  # made before: no eager compile inside
    compiles = []
    listener = lambda name, secs, **kw: compiles.append(name) if name.endswith("backend_compile_duration") else None
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        with jaxmagic.capture({}) as cap:
            f = jax.jit(fresh_trig())
            for x in xs:
                f(x)
    finally:
        monitoring.unregister("event_duration")(listener)
    sentences = _caption(jaxmagic.document(cap, "timeline"))
    shapes = list(dict.fromkeys(x.shape for x in xs))
    assert len(compiles) == len(shapes) == 3  # JAX compiled once per distinct signature
    assert sentences[0] == ("trig was compiled 3 times: x changed shape from f32[3] to f32[4], then to f32[5].")
    hits = len(xs) - len(shapes)
    assert sentences[1] == f"{hits} of {len(xs)} calls hit the cache."


def test_timeline_names_a_static_argument_and_the_trace_time_print(capsys):
    x = jnp.ones(3)
    with jaxmagic.capture({}) as cap:
        f = jax.jit(scaled, static_argnames="n")
        for n in (1, 1, 2):
            f(x, n=n)
    assert capsys.readouterr().out.count("tracing scaled") == 2  # Python ran once per compile
    sentences = _caption(jaxmagic.document(cap, "timeline"))
    assert sentences[0] == "scaled was compiled twice: static argument n changed from 1 to 2."
    assert sentences[1] == "1 of 3 calls hit the cache."
    line = _line(scaled, "print(")
    assert sentences[2] == f"print() inside a jitted function runs only while JAX traces it ({HERE}:{line})."


# --- %%grad_graph -------------------------------------------------------------------------------


def _jax_residuals(fn, first, *rest) -> list[tuple[str, int]]:
    """JAX's own residuals (`print_saved_residuals`) of `grad(fn)` (first argument differentiated,
    the rest closed over, as `jax.grad` does) as (aval, bytes), less Python-scalar literals, which
    the document keeps inline in the backward (docs/schema.md)."""
    out = []
    for (aval, kind), count in jax_saved_residuals(lambda a: fn(a, *rest), first).items():
        if kind == "literal":
            continue
        dtype, dims = re.fullmatch(r"(\w+)\[([\d,]*)\]", aval).groups()
        size = math.prod(int(d) for d in dims.split(",") if d) * jnp.dtype(DTYPES[dtype]).itemsize
        out.extend([(aval, size)] * count)
    return out


DTYPES = {"f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16", "i32": "int32", "bool": "bool"}


def nan_loss(w, x):
    return jnp.sum(jnp.log(x * w))  # log of a negative weight


def test_grad_counts_residuals_as_jax_saves_them():
    loss, params, x = small_mlp()
    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(loss)(params, x)
        jax.grad(remat_loss)(jnp.ones((4, 4)), jnp.ones((2, 4)))
    doc = jaxmagic.document(cap, "grad")
    sentences = _caption(doc)
    mlp, remat = doc["entries"]
    for entry, fn, args in ((mlp, loss, (params, x)), (remat, remat_loss, (jnp.ones((4, 4)), jnp.ones((2, 4))))):
        theirs = _jax_residuals(fn, *args)
        m = _one(
            sentences,
            rf"grad of {fn.__name__}: forward (\d+) eqns, backward (\d+) eqns; (\d+) residuals "
            rf"\((\d+) bytes\) saved between them(?:; (\d+) backward eqns recompute checkpointed work)?\.",
        )
        assert int(m[3]) == len(theirs) and int(m[4]) == sum(size for _, size in theirs)
        assert (int(m[1]), int(m[2])) == (entry["forward"]["n_eqns"], entry["backward"]["n_eqns"])
        assert int(m[5] or 0) == len(entry["recomputed"])
    assert remat["recomputed"]  # the checkpointed block is recomputed in the backward
    aval, size = max(_jax_residuals(loss, params, x), key=lambda t: t[1])
    makers = _jax_residual_makers(loss, params, x, aval)  # tanh's and the eqn after it (`sub`, or `one_minus_square`)
    m = _one(sentences, r"The largest residual is (.+) \((\d+) bytes\) in grad of loss, made by (\w+) \((.+)\)\.")
    assert (m[1], int(m[2]), m[4]) == (aval, size, _at(small_mlp, "jnp.tanh")) and m[3] in makers, (m[0], makers)
    assert sentences[-1] == m[0]


def _jax_residual_makers(fn, first, rest, aval: str) -> set[str]:
    """The primitives JAX's `print_saved_residuals` names as making residuals of type `aval` ("output of tanh ...")."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        jax.ad_checkpoint.print_saved_residuals(lambda a: fn(a, rest), first)
    return {m[1] for m in re.finditer(rf"^{re.escape(aval)} output of (\w+)", buf.getvalue(), re.M)}


def test_grad_names_the_nan_and_splits_a_jitted_step():
    loss, params, x = small_mlp()
    w, v = jnp.array([1.0, -1.0, 2.0]), jnp.ones(3)
    with jaxmagic.capture({}, grads=True, values=True) as cap:
        jax.grad(nan_loss)(w, v)

        @jax.jit
        def step(params, x):
            value, grads = jax.value_and_grad(loss)(params, x)
            return value, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)

        step(params, x)
    assert int(jnp.isnan(jnp.log(v * w)).sum()) == 1 and bool(jnp.isnan(nan_loss(w, v)))  # JAX: log makes the NaN
    doc = jaxmagic.document(cap, "grad")
    sentences = _caption(doc)
    assert sentences[0] == f"grad of nan_loss: NaN first appears at log in the forward ({_at(nan_loss, 'log of')})."
    jitted = next(e for e in doc["entries"] if e["origin"] == "jit")
    m = _one(
        sentences,
        r"step: (\d+) forward, (\d+) backward and (\d+) other eqns; (\d+) residuals? \((.*)\) saved "
        r"between the passes\.",
    )
    t = jitted["totals"]
    assert [int(g) for g in m.groups()[:4]] == [t["n_forward"], t["n_backward"], t["n_other"], t["n_residuals"]]
    [outer] = jax.make_jaxpr(step)(params, x).jaxpr.eqns  # `step` is JAX's own jitted object: one jit eqn
    assert sum(int(g) for g in m.groups()[:3]) == sum(len(j.eqns) for j in jaxprs_preorder(outer.params["jaxpr"]))


# --- %%sharding ---------------------------------------------------------------------------------


def _loss(w, x):
    return jnp.mean((x @ w) ** 2)


def test_sharding_says_how_the_batch_is_split_and_counts_the_all_reduce():
    mesh = auto_mesh((8,), ("data",))
    batch = jax.device_put(jnp.ones((64, 16)), NamedSharding(mesh, P("data")))
    w = jax.device_put(jnp.ones((16, 4)), NamedSharding(mesh, P()))

    @jax.jit
    def data_parallel_grad(w, x):
        return jax.grad(_loss)(w, x)

    ns = {"batch": batch, "w": w, "data_parallel_grad": data_parallel_grad}
    with jaxmagic.capture(ns, shardings=True) as cap:
        exec("g = data_parallel_grad(w, batch)", ns)
    sentences = _caption(jaxmagic.document(cap, "sharding"))
    rows = batch.addressable_shards[0].data.shape[0]
    assert sentences[0] == (
        f"batch f32[64,16] is split along 'data' over {len(batch.sharding.device_set)} devices: {rows} rows each."
    )
    assert w.sharding.is_fully_replicated and ns["g"].sharding.is_fully_replicated
    assert sentences[1] == "w and g are replicated: each of the 8 devices holds a full copy."  # inputs first
    _collectives_unknown_here(sentences)
    theirs = _hlo_collectives(data_parallel_grad, w, batch)
    assert theirs == {"all-reduce": 1}
    assert sentences[2] == ("data_parallel_grad: XLA inserted 1 all-reduce to combine the devices' partial results.")


def test_sharding_on_a_2d_mesh_blocks_and_gathers():
    mesh = auto_mesh((2, 4), ("x", "y"))
    a = jax.device_put(jnp.ones((8, 12)), NamedSharding(mesh, P("x", "y")))
    gather = jax.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, P()))
    ns = {"a": a, "gather": gather}
    with jaxmagic.capture(ns, shardings=True) as cap:
        exec("whole = gather(a)", ns)
    sentences = _caption(jaxmagic.document(cap, "sharding"))
    block = a.addressable_shards[0].data.shape
    assert sentences[0] == (
        f"a f32[8,12] is split along 'x' (rows) and 'y' (columns) over 8 devices: "
        f"a f32[{block[0]},{block[1]}] block each."
    )
    _collectives_unknown_here(sentences)
    theirs = _hlo_collectives(gather, a)
    listed = " and ".join(f"{n} {k}{'s' * (n != 1)}" for k, n in theirs.most_common())
    assert theirs and any(s.startswith(f"<lambda>: XLA inserted {listed}") for s in sentences), (theirs, sentences)

    double = jax.jit(lambda v: v + 1)
    ns = {"a": a, "double": double}
    with jaxmagic.capture(ns, shardings=True) as quiet:
        exec("b = double(a)", ns)
    assert not _hlo_collectives(double, a)
    assert "XLA inserted no collectives into <lambda>: no device exchanges data during the call." in _caption(
        jaxmagic.document(quiet, "sharding")
    )


# --- %%prng -------------------------------------------------------------------------------------

REUSE_CELL = "k1 = jr.key(1)\nx = jr.normal(k1)\ny = jr.uniform(k1)\n"  # lines 2 and 3 reuse k1


def _collectives_unknown_here(sentences: list[str]) -> None:
    """Where jaxmagic reads no compiled HLO (JAX 0.4), no caption may claim XLA's collectives either way: skip the rest."""
    if not COMPILED_HLO:
        assert not any("XLA inserted" in s for s in sentences), sentences
        pytest.skip(f"{COMPILED} is not available on JAX {jax.__version__}")


def drawn_in_every_iteration(key):
    def body(c, _):
        return c + jr.normal(key, ()), None  # the outer key, every iteration

    return jax.lax.scan(body, 0.0, None, length=10)[0]


def test_keys_name_the_reused_key_and_its_lines(tmp_path):
    cell = tmp_path / "cell.py"
    cell.write_text(REUSE_CELL)
    code = compile(REUSE_CELL, str(cell), "exec")
    ns = {"jr": jr}
    with jaxmagic.capture(ns) as cap:
        exec(code, ns)
    if _JAX_CHECKS_EAGER():  # JAX's checker is the oracle where it checks eager code (0.9 and later)
        assert _jax_says_reuse(lambda: exec(code, {"jr": jr}))
    sentences = _caption(jaxmagic.document(cap, "keys"))
    assert (
        sentences[0]
        == "key k1 was used twice: cell.py, lines 2 and 3 (normal and uniform draw the same random numbers)."
    )

    ns = {"k": jr.key(6), "run": jax.jit(drawn_in_every_iteration)}
    with jaxmagic.capture(ns) as loop:
        exec("total = run(k)", ns)
    if _JAX_CHECKS_EAGER():  # JAX 0.4's checker flags neither this nor eager reuse (checked on 0.4.38)
        assert _jax_says_reuse(lambda: jax.jit(drawn_in_every_iteration)(jr.key(6)))
    scan = next(e for e in jax.make_jaxpr(drawn_in_every_iteration)(jr.key(6)).eqns if e.primitive.name == "scan")
    line = _line(drawn_in_every_iteration, "the outer key")
    assert _caption(jaxmagic.document(loop, "keys"))[0] == (
        f"key k is made outside the loop and drawn from by normal on each of {scan.params['length']} iterations of "
        f"the scan ({HERE}:{line}): every iteration gets the same numbers."
    )


def test_keys_clean_loop_is_folded_and_says_no_reuse():
    steps = 30

    def clean():
        key = jr.key(3)
        for _ in range(steps):
            key, sub = jr.split(key)
            jr.normal(sub, (2,))

    with jaxmagic.capture({}) as cap:
        clean()
    assert not _jax_says_reuse(clean)
    doc = jaxmagic.document(cap, "keys")
    sentences = _caption(doc)
    assert sentences[0] == "No key was reused: every key was consumed at most once."
    [run] = doc["runs"]
    m = _one(sentences, r"The split loop \(split:\d+ → normal:\d+\) is folded into one node: ×(\d+) identical steps\.")
    assert int(m[1]) == run["length"] and steps - 3 <= run["length"] <= steps  # ends of the chain stay visible
    s = doc["summary"]
    assert sentences[-1] == (
        f"{s['keys']} keys from 1 root: {s['consumed']} consumed once, {s['unused']} never consumed."
    )
    assert s["consumed"] == 2 * steps  # each step: one split, one normal


# --- every kind: empty and errored cells, static views, wire form, failures, hostile names ---------


def test_empty_and_errored_cells_get_one_sentence():
    with jaxmagic.capture({}) as empty:
        pass
    for kind in KINDS:
        assert _caption(jaxmagic.document(empty, kind)) == [captions.EMPTY[kind]]
    with pytest.raises(ZeroDivisionError):
        with jaxmagic.capture({}) as failed:
            line = inspect.currentframe().f_lineno + 1
            1 / 0
    for kind in KINDS:
        assert _caption(jaxmagic.document(failed, kind)) == [
            f"The cell raised ZeroDivisionError: division by zero ({HERE}:{line})."
        ]


@pytest.fixture(scope="module")
def every_kind() -> dict[str, dict]:
    return documents_of_every_kind()


@pytest.mark.parametrize("kind", KINDS)
def test_static_views_show_the_caption_first(every_kind, kind):
    doc = every_kind[kind]
    sentences = _caption(doc)
    page = fallback_html(doc)
    shown = f'<p class="jm-caption">{esc(" ".join(sentences))}</p>'
    assert shown in page and page.index(shown) < page.index("</b></p>") + 20  # right under the title
    text = text_summary(doc).split("\n")
    assert text[1 : 1 + len(sentences)] == sentences


@pytest.mark.parametrize("kind", KINDS)
def test_caption_is_a_plain_top_level_field_of_the_wire_form(every_kind, kind, monkeypatch):
    doc = every_kind[kind]
    assert wire.encode_document(doc)["caption"] == doc["caption"]
    monkeypatch.setattr(wire, "PACK_ABOVE_BYTES", 0)  # every block packed: the caption still is not
    encoded = wire.encode_document(doc)
    assert encoded.get("encoding") in ("packed", "columnar") and encoded["caption"] == doc["caption"]


def test_a_caption_that_fails_costs_only_the_caption(monkeypatch):
    def broken(doc):
        raise RuntimeError("injected")

    monkeypatch.setitem(captions.WRITERS, "graph", broken)
    with jaxmagic.capture({}) as cap:
        jax.jit(fresh_trig())(jnp.ones(2))
    doc = jaxmagic.document(cap, "graph")
    assert doc["caption"] == [] and doc["functions"]
    assert any("could not draw the caption: RuntimeError: injected" in n for n in doc["notes"])
    assert 'class="jm-caption"' not in fallback_html(doc) and "trig" in fallback_html(doc)


@pytest.mark.parametrize("name", ['<img src=x onerror="window.__pwned=1">', "</script><b>x</b>" * 40])
def test_hostile_function_names_pass_as_data_and_are_escaped(name):
    def fn(x):
        return jnp.sin(x) * 2

    fn.__name__ = fn.__qualname__ = name
    with jaxmagic.capture({}) as cap:
        jax.jit(fn)(jnp.ones(3))
    for kind in ("graph", "timeline"):
        doc = jaxmagic.document(cap, kind)
        sentences = _caption(doc)
        shown = name if len(name) <= words.NAME_CHARS else name[: words.NAME_CHARS - 1] + "…"
        assert any(s.startswith(shown + " ") for s in sentences), sentences  # the user's text, untouched
        page = fallback_html(doc)
        assert name[:20] not in page and "<script" not in page and "</script" not in page  # never as markup
        assert f'<p class="jm-caption">{esc(" ".join(sentences))}</p>' in page and esc(shown) in page


def test_long_names_and_many_primitives_still_fit(every_kind):
    """Long names and many primitives still fit: the primitive mix shrinks, names are cut, figures stay."""
    fn = dict(every_kind["graph"]["functions"][0])
    fn["name"] = "a_rather_long_function_name_" * 6
    fn["nodes"] = [{**fn["nodes"][0], "prim": f"primitive_number_{i % 9}"} for i in range(5000)]
    fn["n_eqns"] = 5000
    sentences = captions.caption({**every_kind["graph"], "functions": [fn]})
    assert all(len(s) < 160 for s in sentences)
    assert re.match(r"a_rather_long_function_name_a_rather_lo… traced to 5,000 eqns \(", sentences[0])


def test_captions_read_documents_only():
    """Every drawn kind has a writer, and the module imports no JAX: a saved document can be captioned anywhere."""
    from jaxmagic.model import DRAWN_KINDS

    assert set(captions.WRITERS) == set(DRAWN_KINDS)
    assert not re.search(r"^\s*(import jax|from jax)", inspect.getsource(captions), re.M)


def test_an_error_after_records_is_left_to_the_error_banner() -> None:
    """The header draws the error right above the caption: the caption keeps its figures."""
    with pytest.raises(ZeroDivisionError):
        with jaxmagic.capture({}) as cap:

            @jax.jit
            def before_error(x):
                return x * 2

            before_error(jnp.ones(3))
            1 / 0
    sentences = _caption(jaxmagic.document(cap, "graph"))
    assert sentences and not any("raised" in s for s in sentences), sentences
    assert any("before_error" in s and "1 eqn" in s for s in sentences), sentences


def test_a_key_named_key_is_not_called_key_key() -> None:
    ns = {"jax": jax}
    with jaxmagic.capture(ns) as cap:  # a cell that binds the name `key`, as notebooks do
        exec("key = jax.random.key(0)\njax.random.normal(key, (2,))\njax.random.normal(key, (2,))\n", ns)
    sentences = _caption(jaxmagic.document(cap, "keys"))
    assert sentences[0].startswith("key was used twice"), sentences
