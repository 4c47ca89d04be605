"""Deferred artifacts: a widget's graph document leaves StableHLO/HLO texts, their links and XLA's
cost out, and its view asks the kernel for them (views/requests.py, model/on_demand.py).

Each answer must be what the eager document (jaxmagic.document, exported pages) carries; a bad
request gets a sentence, never a traceback; the widget answers over its comm."""

from __future__ import annotations

import gzip
import json

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.api import _widget
from jaxmagic.model.graph import graph_document
from jaxmagic.model.on_demand import OnDemand
from jaxmagic.views.requests import answer

from .jax_versions import COMPILED, needs, reads_compiled_hlo

COMPILED_HLO = reads_compiled_hlo()  # JAX 0.4 gives no compiled HLO without compiling again: none deferred


@pytest.fixture(scope="module")
def cap():
    @jax.jit
    def step(w, x):
        return jnp.tanh(x @ w).sum() * 2.0

    @jax.jit
    def other(x):
        return jnp.sin(x) + 1

    with jaxmagic.capture() as captured:
        step(jnp.ones((4, 4)), jnp.ones((2, 4)))
        other(jnp.ones(3))
    return captured


def _decoded(reply):
    content, buffers = reply
    assert content["ok"] is True, content
    return json.loads(gzip.decompress(buffers[0]).decode("utf-8"))


@needs(COMPILED_HLO, COMPILED)
def test_widget_document_defers_levels_and_the_answer_equals_the_eager_document(cap):
    eager = jaxmagic.document(cap, "graph")
    on_demand = OnDemand()
    lazy = graph_document(cap, on_demand=on_demand)
    assert [f["name"] for f in lazy["functions"]] == [f["name"] for f in eager["functions"]]
    for lazy_fn, eager_fn in zip(lazy["functions"], eager["functions"]):
        assert lazy_fn["deferred"] == ["levels"]
        assert "levels" not in lazy_fn and "cost" not in lazy_fn
        assert not any("shlo" in n or "hlo" in n for n in lazy_fn["nodes"])
        assert eager_fn["levels"]["stablehlo"]["text"] and eager_fn["levels"]["hlo"]["text"]
        data = _decoded(
            answer(
                on_demand.handlers, {"jm": "request", "id": 7, "what": "levels", "args": {"function": lazy_fn["id"]}}
            )
        )
        assert data["levels"] == eager_fn["levels"]
        assert data["cost"] == json.loads(json.dumps(eager_fn["cost"]))
        assert data["shlo"] == [n.get("shlo") for n in eager_fn["nodes"]]
        assert data["hlo"] == [n.get("hlo") for n in eager_fn["nodes"]]
        assert data["hlo_comp"] == [n.get("hlo_comp") for n in eager_fn["nodes"]]
        assert any(data["shlo"]), "no node was linked to a StableHLO line"
        # everything else of the function is the same as the eager document's
        same = {k: v for k, v in eager_fn.items() if k not in ("levels", "cost", "nodes")}
        assert {k: v for k, v in lazy_fn.items() if k not in ("deferred", "nodes")} == same


@needs(COMPILED_HLO, COMPILED)
def test_exported_pages_and_documents_carry_everything(cap):
    assert all("deferred" not in f and f["levels"] for f in jaxmagic.document(cap, "graph")["functions"])
    page = jaxmagic.to_html(cap)
    assert "HloModule" in page and '"deferred"' not in page


def test_bad_requests_get_sentences_not_tracebacks(cap):
    on_demand = OnDemand()
    graph_document(cap, on_demand=on_demand)
    content, buffers = answer(
        on_demand.handlers, {"jm": "request", "id": 1, "what": "levels", "args": {"function": "f99"}}
    )
    assert content == {"jm": "reply", "id": 1, "ok": False, "error": content["error"]} and not buffers
    assert "no function 'f99'" in content["error"]
    content, _ = answer(on_demand.handlers, {"jm": "request", "id": 2, "what": "nonsense", "args": {}})
    assert content["ok"] is False and "cannot load 'nonsense'" in content["error"]
    content, _ = answer(on_demand.handlers, {"jm": "request", "id": 3, "what": "levels", "args": {"function": 3}})
    assert content["ok"] is False and "needs a 'function' string" in content["error"]
    assert answer(on_demand.handlers, {"method": "something else"}) is None
    assert answer(on_demand.handlers, "not a dict") is None


def test_a_handler_that_fails_answers_with_its_error():
    def broken(args):
        raise RuntimeError("HLO <b>gone</b>")

    content, buffers = answer(
        {"levels": broken}, {"jm": "request", "id": 5, "what": "levels", "args": {"function": "f0"}}
    )
    assert content["ok"] is False and "RuntimeError: HLO <b>gone</b>" in content["error"] and not buffers


@needs(COMPILED_HLO, COMPILED)
def test_the_widget_answers_its_front_end_over_the_comm(cap, monkeypatch):
    widget = _widget(cap, "graph", {}, present=False)
    fn = widget.document["functions"][0]
    assert fn["deferred"] == ["levels"]
    sent = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append((content, buffers)))
    widget._handle_custom_msg({"jm": "request", "id": 11, "what": "levels", "args": {"function": fn["id"]}}, [])
    assert len(sent) == 1 and sent[0][0]["id"] == 11
    data = _decoded(sent[0])
    assert "HloModule" in data["levels"]["hlo"]["text"]
    # a second view of the same output asks again: the answer is computed once
    widget._handle_custom_msg({"jm": "request", "id": 12, "what": "levels", "args": {"function": fn["id"]}}, [])
    assert _decoded(sent[1]) == data


@needs(COMPILED_HLO, COMPILED)
def test_the_magic_shows_a_deferred_view_and_the_capture_keeps_the_texts(magic_shell):
    magic_shell.run_cell("import jax, jax.numpy as jnp\nf = jax.jit(lambda x: jnp.cos(x) * 2)")
    from IPython.utils.capture import capture_output

    with capture_output() as out:
        result = magic_shell.run_cell("%%jaxpr --name dcap\ny = f(jnp.ones(5))\n")
    assert result.success
    widgets = [o for o in out.outputs if "application/vnd.jupyter.widget-view+json" in o.data]
    assert widgets, [o.data.keys() for o in out.outputs]
    model_id = widgets[0].data["application/vnd.jupyter.widget-view+json"]["model_id"]
    import ipywidgets

    registry = getattr(ipywidgets.widgets.widget, "_instances", None) or ipywidgets.Widget.widgets
    state = json.dumps(registry[model_id].get_state()["doc"])
    assert '"deferred":["levels"]' in state.replace(" ", "") and "HloModule" not in state
    cap = magic_shell.user_ns["dcap"]
    assert "HloModule" in cap.calls[0].compiled_text


# -- the jaxpr text ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_cap():
    """A program past HEAD_EQNS eqns, with a scan and a nested jit (their bodies print inline)."""

    @jax.jit
    def inner(x):
        return jnp.tanh(x) * 2.0

    @jax.jit
    def deep(w, x):
        for _ in range(40):
            x = inner(jnp.sin(x @ w) + 1.0)
        x = jax.lax.scan(lambda c, _: (jnp.cos(c) * c, c.sum()), x, None, length=3)[0]
        for _ in range(40):
            x = jnp.exp(-x * x) + x
        return x.sum()

    with jaxmagic.capture() as captured:
        deep(jnp.ones((4, 4)), jnp.ones((2, 4)))
    return captured


def test_a_big_functions_text_is_deferred_and_the_answer_equals_the_eager_document(big_cap):
    from jaxmagic.model.graph import HEAD_EQNS

    eager = jaxmagic.document(big_cap, "graph")["functions"][0]
    on_demand = OnDemand()
    lazy = graph_document(big_cap, on_demand=on_demand)["functions"][0]
    assert eager["n_eqns"] > HEAD_EQNS and "deferred" not in eager
    assert lazy["deferred"] == ["jaxpr", "levels"]
    # the head: the whole text's first lines, up to its own `in (...)`, with its nodes' lines
    head, whole = lazy["text"].split("\n"), eager["text"].split("\n")
    assert head[-1] == "    …" and 10 < len(head) < len(whole) // 2 and head[:-1] == whole[: len(head) - 1]
    located = [(n["line"], e["line"]) for n, e in zip(lazy["nodes"], eager["nodes"]) if n["line"] is not None]
    assert located and all(a == b for a, b in located)
    assert sum(n["line"] is None for n in lazy["nodes"]) > eager["n_eqns"] - HEAD_EQNS - 1
    # the answer is the eager document's text and lines, and the graphs are the same
    request = {"jm": "request", "id": 3, "what": "jaxpr", "args": {"function": lazy["id"]}}
    data = _decoded(answer(on_demand.handlers, request))
    assert data == {"text": eager["text"], "lines": [n["line"] for n in eager["nodes"]]}
    assert all(isinstance(line, int) for line in data["lines"])
    same = ("text", "deferred", "nodes", "levels", "cost")
    assert {k: v for k, v in lazy.items() if k not in same} == {k: v for k, v in eager.items() if k not in same}
    drop = ("line", "shlo", "hlo", "hlo_comp")
    assert [{k: v for k, v in n.items() if k not in drop} for n in lazy["nodes"]] == [
        {k: v for k, v in n.items() if k not in drop} for n in eager["nodes"]
    ]


def test_a_small_functions_text_travels_whole(cap):
    lazy = graph_document(cap, on_demand=OnDemand())
    eager = jaxmagic.document(cap, "graph")
    for lazy_fn, eager_fn in zip(lazy["functions"], eager["functions"]):
        assert "jaxpr" not in lazy_fn["deferred"] and lazy_fn["text"] == eager_fn["text"]
        assert [n["line"] for n in lazy_fn["nodes"]] == [n["line"] for n in eager_fn["nodes"]]


def test_the_text_plain_fallback_of_a_deferred_text_says_how_big_it_is(big_cap):
    from jaxmagic.views.static_html import text_summary

    doc = graph_document(big_cap, on_demand=OnDemand())
    fn = doc["functions"][0]
    text = text_summary(doc)
    assert fn["text"].split("\n")[1] in text
    assert f"… the jaxpr has {fn['n_eqns']:,} eqns in all (the whole text is in the widget and in the capture)" in text
    shown = text.split("… the jaxpr has")[0].split("\n")
    assert not any(line.startswith("  in (") for line in shown)  # the head's own ending is left out


def test_the_widget_answers_a_jaxpr_request_and_keeps_the_head_only(big_cap, monkeypatch):
    widget = _widget(big_cap, "graph", {}, present=False)
    fn = widget.document["functions"][0]
    sent = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append((content, buffers)))
    widget._handle_custom_msg({"jm": "request", "id": 4, "what": "jaxpr", "args": {"function": fn["id"]}}, [])
    data = _decoded(sent[0])
    assert len(data["text"]) > 1.5 * len(fn["text"]) and data["text"].startswith(fn["text"].split("\n")[0])
    state = json.dumps(widget.get_state()["doc"])
    assert data["text"].split("\n")[-2] not in state  # the saved state holds the head, not the whole text


def test_a_grad_widgets_big_graphs_defer_their_text_and_exports_carry_it_whole(monkeypatch):
    """%%grad_graph's compact graphs show no text pane: a widget's document carries the head of a
    big program's text (its playback captions read it) and answers "jaxpr" with the whole text."""

    @jax.jit
    def step(w, x):
        def loss(w):
            h = x
            for _ in range(40):
                h = jnp.tanh(h @ w) + h
            return (h * h).sum()

        return jax.grad(loss)(w)

    with jaxmagic.capture() as captured:
        step(jnp.eye(4) * 0.1, jnp.ones((2, 4)))
    eager = jaxmagic.document(captured, "grad")["entries"][0]["program"]
    widget = _widget(captured, "grad", {}, present=False)
    lazy = widget.document["entries"][0]["program"]
    assert "deferred" not in eager and lazy["deferred"] == ["jaxpr"]
    assert lazy["text"].endswith("    …") and len(lazy["text"]) < len(eager["text"]) // 2
    sent = []
    monkeypatch.setattr(widget, "send", lambda content, buffers=None: sent.append((content, buffers)))
    widget._handle_custom_msg({"jm": "request", "id": 1, "what": "jaxpr", "args": {"function": lazy["id"]}}, [])
    assert _decoded(sent[0]) == {"text": eager["text"], "lines": [n["line"] for n in eager["nodes"]]}
