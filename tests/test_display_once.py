"""A view's document is serialised once on its way out, and the shortcuts that make building it
cheap (memoised sources and avals, paused GC) change nothing in what it says."""

from __future__ import annotations

import base64
import gc
import gzip
import json

import jax
import jax.numpy as jnp
import pytest

from jaxmagic.api import paused_gc
from jaxmagic.model import graph as graph_model
from jaxmagic.views import wire


def _layers(x):
    for _ in range(6):  # one source line, many eqns: the memoised case
        x = jnp.tanh(x @ x.T) + 1.0
    return x.sum()


def _graph_doc(name: str = "f") -> dict:
    fn = graph_model.function_graph("f0", name, jax.make_jaxpr(_layers)(jnp.ones((4, 4))))
    fn.update(signature="f32[4,4]", calls=1, cache_hits=0)
    return {"kind": "graph", "version": 2, "title": name, "notes": [], "functions": [fn]}


def _inflate(block: dict) -> dict:
    return json.loads(gzip.decompress(base64.b64decode(block["data"])).decode("utf-8"))


@pytest.mark.parametrize("pack_above", [wire.PACK_ABOVE_BYTES, 100])
def test_a_clean_document_is_not_copied_and_travels_as_encoded(monkeypatch, pack_above: int) -> None:
    monkeypatch.setattr(wire, "PACK_ABOVE_BYTES", pack_above)
    doc = _graph_doc()
    logical, sent = wire.safe_wire(doc)
    assert logical is doc
    assert sent == wire.encode_document(doc)
    fn = sent["functions"][0]
    if pack_above == 100:
        assert fn["packed"] == "gzip+base64" and _inflate(fn) == wire.encode_function(doc["functions"][0])
    else:
        assert "packed" not in fn


@pytest.mark.parametrize("pack_above", [wire.PACK_ABOVE_BYTES, 100])
def test_a_lone_surrogate_becomes_u_fffd_in_packed_and_plain_blocks(monkeypatch, pack_above: int) -> None:
    """The pass that packs a block is its Unicode check; the envelope gets one of its own."""
    monkeypatch.setattr(wire, "PACK_ABOVE_BYTES", pack_above)
    doc = _graph_doc("bad\ud800name")
    doc["notes"] = ["note \udfff"]
    logical, sent = wire.safe_wire(doc)
    assert logical is not doc and logical["functions"][0]["name"] == "bad\ufffdname"
    assert logical["notes"] == ["note \ufffd"]
    json.dumps(sent, ensure_ascii=False).encode("utf-8")  # what Jupyter does with the state
    fn = sent["functions"][0]
    decoded = _inflate(fn) if "packed" in fn else fn
    assert decoded["name"] == "bad\ufffdname" and sent["notes"] == ["note \ufffd"]
    assert doc["functions"][0]["name"] == "bad\ud800name"  # the caller's document is left alone


def test_wire_ids_must_be_positional() -> None:
    fn = _graph_doc()["functions"][0]
    fn["vars"][3]["id"] = "v99"
    with pytest.raises(ValueError, match=r"positional ids, got 'v99' at 3"):
        wire.encode_function(fn)


def test_memoised_sources_are_each_nodes_own_and_match_the_direct_answer() -> None:
    closed = jax.make_jaxpr(_layers)(jnp.ones((4, 4)))
    fn = graph_model.function_graph("f0", "f", closed)
    direct = [graph_model._eqn_source(eqn) for eqn in closed.jaxpr.eqns]
    assert [node["src"] for node in fn["nodes"]] == direct
    sources = [node["src"] for node in fn["nodes"] if node["src"] is not None]
    assert len(sources) > 6 and len({id(src) for src in sources}) == len(sources)
    assert {"f32[4,4]", "f32[]"} <= {v["aval"] for v in fn["vars"]}  # each aval's text, once per graph


@pytest.mark.parametrize("enabled", [True, False])
def test_paused_gc_restores_the_collector_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with pytest.raises(RuntimeError):
            with paused_gc():
                assert not gc.isenabled()
                raise RuntimeError("the view failed")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def _registry() -> dict:
    import ipywidgets

    return dict(getattr(ipywidgets.widgets.widget, "_instances", None) or ipywidgets.Widget.widgets)


def test_a_view_is_opened_before_its_document_is_built_and_ends_with_it(monkeypatch) -> None:
    """The widget's comm opens first (its front end loads the bundle while the document is built);
    its state then holds the whole document, and a build that fails closes the widget it opened."""
    import jaxmagic
    from jaxmagic import api
    from jaxmagic.views import JaxmagicWidget

    namespace = {"f": jax.jit(_layers)}
    with jaxmagic.capture(namespace) as cap:
        namespace["f"](jnp.ones((4, 4)))
    opened: list = []
    build = api._drawable

    def spy(*args, **kwargs):
        opened.extend(w for w in _registry().values() if isinstance(w, JaxmagicWidget) and w.doc.get("pending"))
        return build(*args, **kwargs)

    monkeypatch.setattr(api, "_drawable", spy)
    view = api.view(cap, "graph")
    assert opened == [view] and type(view).__name__ == "JaxmagicGraphWidget"
    assert "pending" not in view.doc and view.doc == wire.safe_wire(view.document)[1]
    assert [fn["name"] for fn in view.document["functions"]] == ["_layers"]
    view.close()

    def broken(*args, **kwargs):
        raise RuntimeError("no document")

    monkeypatch.setattr(api, "_drawable", broken)
    before = set(_registry())
    with pytest.raises(RuntimeError, match="no document"):
        api.view(cap, "graph")
    assert set(_registry()) <= before  # the widget opened for it is closed again
    with pytest.raises(ValueError, match="unknown jaxmagic view"):
        api.view(cap, "nonsense")
    assert set(_registry()) <= before
