"""Script-free views: the text/html fallback, the SVG picture, exported pages. Hostile names stay text."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp

import jaxmagic
from jaxmagic.views import fallback_html, page, text_summary
from jaxmagic.views.static_html import embed_json
from jaxmagic.views.static_svg import function_svg

from .programs import PROGRAMS

HOSTILE = '<img src=x onerror="alert(1)"></script><script>alert(2)</script>'


def hostile_capture():
    def fn(x):
        return jnp.sin(x) * 2

    fn.__name__ = fn.__qualname__ = HOSTILE
    with jaxmagic.capture() as cap:
        jax.jit(fn)(jnp.ones(3))
    return cap


def test_fallback_escapes_names_and_carries_a_valid_svg():
    doc = jaxmagic.document(hostile_capture())
    html = fallback_html(doc)
    assert "<img src=x" not in html and "<script>" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    for encoded in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", html):
        ET.fromstring(base64.b64decode(encoded))  # well-formed XML: names were escaped


def test_svg_draws_the_collapsed_top_level():
    with jaxmagic.capture() as cap:
        fn, args, kwargs = PROGRAMS["small_transformer"]()
        fn(*args, **kwargs)
    graph = jaxmagic.document(cap)["functions"][0]
    svg = ET.fromstring(function_svg(graph))
    labels = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    root_eqns = [n for n in graph["nodes"] if n["group"] == graph["root"] and not n["scope"]]
    assert graph["n_eqns"] > 40
    assert len(labels) < graph["n_eqns"]  # collapsed: fewer boxes than eqns
    assert {n["prim"] for n in root_eqns} <= set(labels)


def test_embedded_json_cannot_close_its_script_tag():
    doc = jaxmagic.document(hostile_capture())
    text = embed_json(doc)
    assert "</script" not in text and "<" not in text
    assert json.loads(text) == json.loads(json.dumps(doc))
    assert page([doc]).count("<script") == 3  # the document, the static flag, the bundle


def test_text_summary_has_the_jaxpr():
    with jaxmagic.capture() as cap:
        fn, args, kwargs = PROGRAMS["sin_cos"]()
        fn(*args, **kwargs)
    text = text_summary(jaxmagic.document(cap))
    assert "sin" in text and "cos" in text and "f32[3]" in text


def test_unknown_view_and_wrong_object_get_clear_errors():
    import pytest

    with pytest.raises(ValueError, match="available: graph, jaxpr"):
        jaxmagic.document(hostile_capture(), "nonsense")
    with pytest.raises(TypeError, match="expected a jaxmagic Capture"):
        jaxmagic.document({"not": "a capture"})


def test_to_html_writes_a_page(tmp_path):
    target = tmp_path / "page.html"
    text = jaxmagic.to_html(hostile_capture(), target)
    assert target.read_text() == text and "window.__jaxmagic_static = true" in text


def test_big_program_degrades_to_a_collapsed_overview():
    """A 4k-eqn train step: repeated layers are one box each, hundreds of params one port."""
    from bench.programs import transformer_step
    from jaxmagic.model.graph import function_graph

    fn, args = transformer_step(18)
    doc = function_graph("f0", "train_step", fn.trace(*args).jaxpr)
    assert doc["n_eqns"] > 3000
    svg = function_svg(doc)
    ET.fromstring(svg)
    assert len(svg) < 20_000
    assert "18× block" in svg and "inputs" in svg
    assert svg.count("<rect") < 20


def test_text_summary_of_a_big_program_is_bounded():
    from bench.programs import transformer_step
    from jaxmagic.model.graph import function_graph

    fn, args = transformer_step(6)
    function = function_graph("f0", "train_step", fn.trace(*args).jaxpr)
    doc = {"title": "t", "functions": [dict(function, signature="")], "notes": []}
    text = text_summary(doc)
    assert text.count("\n") < 420 and "more lines" in text
    assert function["text"].split("\n")[0] in text


def test_a_long_signature_is_cut_at_an_argument_with_the_count():
    from jaxmagic.views.html_parts import signature_text, top_level_items

    short = "f32[2,3], i32[]"
    assert signature_text(short) == short and top_level_items(short) == 2 and top_level_items("") == 0
    long = ", ".join(["f32[32,32]", "f32[32]"] * 3600)
    cut = signature_text(long)
    assert len(cut) < 300 and cut.endswith(", … (7,200 arguments in all)")
    assert long.startswith(cut.split(", …")[0] + ", ")  # cut between arguments, never inside one


def test_grad_fallbacks_list_the_largest_residuals_and_count_the_rest():
    """A step saving more residuals than are listed: the fallbacks list the largest (in JAX's
    order among equal sizes) and say how many more there are."""
    from jaxmagic.views.static_grad import MAX_ROWS

    def loss(params, x):
        for i, w in enumerate(params):  # residuals of growing width: f32[2,8], f32[2,9], ...
            x = jnp.tanh(x @ w)
        return jnp.sum(x)

    widths = list(range(8, 8 + MAX_ROWS + 12))
    params = [jnp.ones((a, b)) for a, b in zip([8, *widths], widths)]
    with jaxmagic.capture(grads=True) as cap:
        jax.block_until_ready(jax.jit(jax.grad(loss))(params, jnp.ones((2, 8))))
    doc = jaxmagic.document(cap, "grad")
    (entry,) = doc["entries"]
    residuals = [r for region in entry["regions"] for r in region["residuals"]]
    assert len(residuals) > MAX_ROWS
    expected = [r["aval"] for r in sorted(residuals, key=lambda r: -r["bytes"])[:MAX_ROWS]]
    text = text_summary(doc)
    assert re.findall(r"residual (\S+): ", text) == expected
    assert f"… and {len(residuals) - MAX_ROWS} more residuals" in text
    html = fallback_html(doc)
    table = html[html.index("<th>residual</th>") : html.index("</table>")]
    assert re.findall(r"<tr><td>([^<]+)</td>", table) == expected
    assert f"… and {len(residuals) - MAX_ROWS} more residuals" in html
