"""How the product names things for a reader (issue 19).

- A notebook cell's line is `cell [N], line L`, N the kernel's own execution count of that cell and L
  the line in it (a real ipykernel kernel; the document carries `cells`, captions and text/plain say it).
- A function's "defined" and an eqn's source are the user's code, not a library's, when a user frame exists.
- Counts read `1 key`, `2 keys` (units.plural) in titles and static views.
- The HLO note on ops XLA's labels cannot tell apart sits in the HLO pane, in a reader's words.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.capture import source
from jaxmagic.model.captions import caption
from jaxmagic.units import bytes_text, plural, times_word
from jaxmagic.views import text_summary

HERE = Path(__file__).resolve()


# --- cells named as the kernel numbers them ------------------------------------------------------

CELL = """%%prng -n kcap
import jax, jax.numpy as jnp
k1 = jax.random.key(1)
x = jax.random.normal(k1, (3,))
y = jax.random.uniform(k1, (3,))
"""
JIT_CELL = """%%jaxpr -n gcap
import jax, jax.numpy as jnp
def f(v):
    return jnp.sin(v) * 2
out = jax.jit(f)(jnp.ones(3))
"""


@pytest.fixture(scope="module")
def kernel_cells():
    """One real kernel: two plain cells first (so counts are not 1), then a %%prng and a %%jaxpr cell."""
    pytest.importorskip("jupyter_client")
    from tests.test_same_result import Kernel

    kernel = Kernel()
    try:
        out = {}
        for code in ("%load_ext jaxmagic", "a = 1"):
            assert kernel.execute(code).content["status"] == "ok"
        for name, code in (("keys", CELL), ("graph", JIT_CELL)):
            reply = kernel.execute(code)
            assert reply.content["status"] == "ok", reply.content
            plain = [m["content"]["data"].get("text/plain", "") for m in reply.messages if m["type"] == "display_data"]
            var = "kcap" if name == "keys" else "gcap"
            doc = json.loads(
                kernel.expression(f"__import__('json').dumps(__import__('jaxmagic').document({var}, {name!r}))")
            )
            out[name] = {"count": reply.content["execution_count"], "doc": doc, "plain": "\n".join(plain)}
        return out
    finally:
        kernel.shutdown()


def test_a_cells_lines_are_named_by_the_kernels_execution_count(kernel_cells):
    keys = kernel_cells["keys"]
    n = keys["count"]
    assert n == 3  # %load_ext, a = 1, then this cell
    doc = keys["doc"]
    ((file, number),) = doc["cells"].items()
    assert number == n and source.is_cell_file(file)
    uses = [u for node in doc["nodes"] for u in node["uses"] if u.get("source")]
    assert sorted({u["source"]["line"] for u in uses}) == [4, 5]  # the two samplers, lines of the cell
    said = f"key k1 was used twice: cell [{n}], lines 4 and 5 (normal and uniform draw the same random numbers)."
    assert doc["caption"][0] == said
    assert said in keys["plain"]  # text/plain of the output names it the same way
    # a document written elsewhere from the same data says the same thing
    assert caption(doc)[0] == said
    assert source.where_text(file, 4, doc["cells"]) == f"cell [{n}], line 4"
    assert source.where_text(file, 4, {}) == "line 4"  # unknown number: IPython 7 falls back to `line 4`


def test_graph_sources_are_lines_of_the_cell(kernel_cells):
    graph = kernel_cells["graph"]
    doc, n = graph["doc"], graph["count"]
    assert n == 4
    (fn,) = doc["functions"]
    assert fn["source"]["line"] == 3 and doc["cells"][fn["source"]["file"]] == n  # `def f(v):`
    sin = next(node for node in fn["nodes"] if node["prim"] == "sin")
    assert sin["src"]["line"] == 4 and sin["src"]["code"] == "return jnp.sin(v) * 2"
    assert source.where_text(sin["src"]["file"], sin["src"]["line"], doc["cells"]) == f"cell [{n}], line 4"


def test_without_ipython_no_cells_are_claimed():
    with jaxmagic.capture({}) as cap:
        jax.jit(lambda v: v + 1)(jnp.ones(2))
    doc = jaxmagic.document(cap, "graph")
    assert "cells" not in doc  # a script's lines are files: `test_words.py:N`
    src = doc["functions"][0]["source"]
    assert source.where_text(src["file"], src["line"]) == f"test_words.py:{src['line']}"


def test_ipython_7_file_names_carry_the_number():
    assert source.cell_number("<ipython-input-12-4be2d0a1>") == 12
    assert source.where_text("<ipython-input-12-4be2d0a1>", 3) == "cell [12], line 3"
    assert source.lines_where("<ipython-input-12-4be2d0a1>", [5, 3]) == "cell [12], lines 3–5"
    assert source.where_text("/tmp/ipykernel_77/123.py", 3) == "line 3"  # no IPython map here
    assert source.where_text("/home/me/train.py", 12) == "train.py:12"


# --- "defined" is the user's code -----------------------------------------------------------------


def loss(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _def_line(fn) -> int:
    return fn.__code__.co_firstlineno


def test_defined_is_the_users_function_under_a_library_decorator():
    nnx = pytest.importorskip("flax.nnx")
    eqx = pytest.importorskip("equinox")
    for wrapped in (
        nnx.remat(loss),
        eqx.filter_checkpoint(loss),
        functools.partial(loss),
        jax.jit(loss),
        jax.checkpoint(loss),
    ):
        loc = source.function_location(wrapped)
        assert (loc.file, loc.line) == (str(HERE), _def_line(loss)), (wrapped, loc)
    with jaxmagic.capture({}, grads=True) as cap:
        jax.grad(nnx.remat(loss))(jnp.ones(3))
    (entry,) = jaxmagic.document(cap, "grad")["entries"]
    assert entry["source"]["file"] == str(HERE) and entry["source"]["line"] == _def_line(loss)


def test_an_eqn_made_inside_a_library_points_at_the_users_line():
    nnx = pytest.importorskip("flax.nnx")
    layer = nnx.Linear(3, 2, rngs=nnx.Rngs(0))

    def apply(x):
        return layer(x) * 2  # the user's line; dot_general is made in flax/nnx/nn/linear.py

    with jaxmagic.capture({}) as cap:
        jax.jit(apply)(jnp.ones((4, 3)))
    (fn,) = jaxmagic.document(cap, "graph")["functions"]
    dot = next(node for node in fn["nodes"] if node["prim"] == "dot_general")
    assert dot["src"]["file"] == str(HERE) and "layer(x) * 2" in dot["src"]["code"]
    assert not any("site-packages" in (node["src"] or {}).get("file", "") for node in fn["nodes"])


def test_a_library_only_function_keeps_its_library_line():
    loc = source.function_location(jnp.sin)
    assert loc is None or not source.is_user_file(loc.file)


# --- plurals ---------------------------------------------------------------------------------------


def test_plural():
    assert [
        plural(1, "key"),
        plural(2, "key"),
        plural(0, "root"),
        plural(1, "miss"),
        plural(3, "miss"),
        plural(2_614, "eqn"),
        plural(2, "cache hit"),
        plural(2, "branch"),
    ] == ["1 key", "2 keys", "0 roots", "1 miss", "3 misses", "2,614 eqns", "2 cache hits", "2 branches"]
    assert [bytes_text(1), bytes_text(16), times_word(1), times_word(3)] == ["1 byte", "16 bytes", "once", "3 times"]


def test_titles_and_static_views_count_right():
    with jaxmagic.capture({}) as cap:
        key = jax.random.key(0)
        jax.random.normal(key, (2,))
        jax.jit(lambda v: -v)(jnp.ones(2))
    keys = jaxmagic.document(cap, "keys")
    assert keys["title"] == "%%prng — 1 key from 1 root, no reuse"
    html = jaxmagic.static_html(cap, "keys")
    graph = jaxmagic.document(cap, "graph")
    assert graph["title"] == "%%jaxpr: 1 function, 1 eqn"
    text = text_summary(jaxmagic.document(cap, "trace"))
    assert "%%trace — 1 call of 1 jitted function, 1 miss, " in text
    assert ": 1 call, 0 hits, 1 miss, 1 compile; compile phases" in text
    assert "1 calls" not in text and "1 hits" not in text and "1 compiles" not in text
    assert "1 keys" not in html and "1 roots" not in html
    assert "1 jitted call (0 cache hits) to 1 function" in cap.summary()


# --- the HLO note -----------------------------------------------------------------------------------


def test_ops_xla_cannot_tell_apart_are_noted_in_the_hlo_pane_only():
    def twins(x):
        return jnp.sin(x) + jnp.sin(x * 2)  # two sin eqns from one line, same scope: XLA labels them alike

    with jaxmagic.capture({}) as cap:
        jax.jit(twins)(jnp.ones(3))
    if cap.calls[0].compiled_text is None:  # JAX 0.4 would compile a second time for it: said in a note
        pytest.skip(f"JAX {jax.__version__} gives no compiled HLO without compiling again")
    doc = jaxmagic.document(cap, "graph")
    (fn,) = doc["functions"]
    assert not any("HLO" in note for note in doc["notes"])
    note = fn["levels"]["hlo"]["note"] or ""
    unlinked = [n for n in fn["nodes"] if n["prim"] == "sin" and not n["hlo"]]
    if unlinked:
        assert f"{plural(len(unlinked), 'op')} of this function came from the same line" in note
        assert "metadata" not in note and "eqn" not in note
