"""One findings list: every finding a view shows is on `Capture.findings`, with one type.

Real JAX throughout: a recompile storm, a NaN a jitted function returns, a reused key, a grad's
residual memory and a replicated array, each found once and read by every view that shows it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from jaxmagic.capture.record import Finding
from jaxmagic.model import findings as model_findings

KINDS = ("graph", "timeline", "grad", "sharding", "keys")


def _on_capture(cap: jaxmagic.Capture) -> set[tuple[str, str]]:
    return {(f.kind, f.message) for f in cap.findings}


def _every_view_reads_the_capture(cap: jaxmagic.Capture) -> dict[str, list[dict]]:
    shown = {kind: jaxmagic.document(cap, kind)["findings"] for kind in KINDS}
    on_capture = _on_capture(cap)
    for kind, found in shown.items():
        missing = [(f["kind"], f["message"]) for f in found if (f["kind"], f["message"]) not in on_capture]
        assert not missing, f"the {kind} view shows findings that are not on Capture.findings: {missing}"
    assert all(isinstance(f, Finding) for f in cap.findings)
    return shown


def test_a_recompile_storm_is_on_the_capture_when_it_stops_and_the_threshold_stays_an_option():
    def scale(x):
        return x * 2.0

    f = jax.jit(scale)
    with jaxmagic.capture({}) as cap:
        for n in range(1, 9):
            f(jnp.ones(n))
    storms = [x for x in cap.findings if x.kind == "recompile_storm"]
    assert len(storms) == 1 and storms[0].severity == "bug" and storms[0].function.endswith("scale")
    assert "8 times" in storms[0].message and "shape" in storms[0].message
    assert storms[0].call == 0  # its first miss; the timeline names every miss
    timeline = jaxmagic.document(cap, "timeline")
    shown = [x for x in timeline["findings"] if x["kind"] == "recompile_storm"]
    assert shown[0]["calls"] == list(range(8)) and shown[0]["message"] == storms[0].message
    # --storm 20: no storm, on the view and on the capture alike
    assert not [x for x in jaxmagic.document(cap, "timeline", storm=20)["findings"] if x["kind"] == "recompile_storm"]
    assert not [x for x in cap.findings if x.kind == "recompile_storm"]
    jaxmagic.document(cap, "timeline")
    assert len([x for x in cap.findings if x.kind == "recompile_storm"]) == 1  # back, and once


def test_a_nan_a_jitted_call_returns_is_shown_by_every_view_with_its_node_in_the_graph():
    def log_likelihood(x, var):
        return -0.5 * jnp.log(var) - x**2 / (2 * var)

    f = jax.jit(log_likelihood)
    x, var = jnp.ones(3), jnp.array([1.0, -1.0, 2.0])
    with jaxmagic.capture({}) as cap:
        out = f(x, var)
    assert bool(jnp.isnan(out).any())  # JAX's answer: log of a negative variance
    nans = [x for x in cap.findings if x.kind == "nan"]
    assert len(nans) == 1 and nans[0].severity == "bug"
    shown = _every_view_reads_the_capture(cap)
    for kind in ("graph", "timeline", "grad", "sharding"):
        assert [x for x in shown[kind] if x["kind"] == "nan"], kind
    assert not [x for x in shown["keys"] if x["kind"] == "nan"]  # the key tree shows key findings only
    graph = jaxmagic.document(cap, "graph")
    item = next(x for x in graph["findings"] if x["kind"] == "nan")
    fn = next(fn for fn in graph["functions"] if fn["id"] == item["fn"])
    node = next(n for n in fn["nodes"] if n["id"] == item["node"])
    assert node["src"]["line"] == nans[0].source.line
    assert graph["caption"][0].startswith(nans[0].message.split(":")[0].split(". ")[0])


def test_view_findings_are_put_on_the_capture_once():
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(8), ("x",))
    big = jax.device_put(jnp.zeros((1024, 1024)), NamedSharding(mesh, P()))  # 4 MiB on each of 8 devices

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    w, x = jnp.ones((512, 512)), jnp.ones((512, 512))
    with jaxmagic.capture({"big": big}, grads=True, shardings=True) as cap:
        jax.grad(loss)(w, x)
    before = len(cap.findings)
    shown = _every_view_reads_the_capture(cap)
    assert [x for x in shown["sharding"] if x["kind"] == "replicated"]
    assert [x for x in shown["grad"] if x["kind"] in ("residual_memory", "large_residual")]
    after = len(cap.findings)
    assert after > before
    _every_view_reads_the_capture(cap)  # built again: nothing added twice
    assert len(cap.findings) == after
    topics = {model_findings.topic(f) for f in cap.findings}
    assert {"grad", "sharding"} <= topics
    # a view's own topic stays in its view: the timeline does not list residual memory
    assert not [
        x for x in jaxmagic.document(cap, "timeline")["findings"] if x["kind"] in ("replicated", "residual_memory")
    ]


def test_a_reused_key_is_on_the_capture_and_in_the_key_tree_and_timeline():
    key = jax.random.key(0)
    with jaxmagic.capture({}) as cap:
        jax.random.normal(key, (3,))
        jax.random.normal(key, (3,))
    shown = _every_view_reads_the_capture(cap)
    assert [x for x in shown["keys"] if x["kind"] == "key_reuse"]
    assert [x for x in shown["timeline"] if x["kind"] == "key_reuse"]
    assert not [x for x in shown["graph"] if x["kind"] == "key_reuse"]


def test_the_graph_fallbacks_say_the_findings_escaped():
    def bad(x):
        return jnp.log(x)

    f = jax.jit(bad)
    x = -jnp.ones(2)
    with jaxmagic.capture({}) as cap:
        f(x)
    from jaxmagic.views import fallback_html, text_summary

    doc = jaxmagic.document(cap, "graph")
    finding = next(x for x in doc["findings"] if x["kind"] == "nan")
    finding["message"] += " <script>alert(1)</script>"
    html, text = fallback_html(doc), text_summary(doc)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert f"bug: {finding['message']}" in text
