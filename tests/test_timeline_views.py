"""Timeline documents on the wire and without scripts: packed columns, escaped text, small pictures."""

from __future__ import annotations

import base64
import gzip
import json

import jax
import jax.numpy as jnp

import jaxmagic
from jaxmagic.views import fallback_html, text_summary
from jaxmagic.views.wire import encode_document

HOSTILE = "<img src=x onerror=alert(1)>"


def storm_capture(n_calls: int = 12):
    ns = {}
    exec(f"def {'evil'}(x):\n    return x * 2\n", ns)
    fn = ns["evil"]
    fn.__qualname__ = HOSTILE
    with jaxmagic.capture({}) as cap:
        f = jax.jit(fn)
        for i in range(n_calls):
            f(jnp.ones(1 + i % 7))
    return cap


def test_large_timelines_travel_packed_and_unpack_to_the_same_document():
    with jaxmagic.capture({}) as cap:
        f = jax.jit(lambda x: x + 1)
        x = jnp.ones(2)
        for _ in range(20_000):
            f(x)
    doc = jaxmagic.document(cap, "timeline")
    wire = encode_document(doc)
    assert wire["encoding"] == "packed" and wire["calls"]["packed"] == "gzip+base64"
    calls = json.loads(gzip.decompress(base64.b64decode(wire["calls"]["data"])))
    assert calls == json.loads(json.dumps(doc["calls"]))
    assert len(json.dumps(wire)) < len(json.dumps(doc)) / 3
    small = jaxmagic.document(storm_capture(3), "timeline")
    assert encode_document(small) is small  # small documents travel as they are


def test_static_fallback_escapes_names_and_lists_the_reasons():
    doc = jaxmagic.document(storm_capture(), "timeline")
    page = fallback_html(doc)
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "Why it recompiled" in page and "changed shape" in page
    svg = base64.b64decode(page.split("base64,")[1].split('"')[0]).decode()
    assert "<img" not in svg and svg.startswith("<svg")
    text = text_summary(doc)
    assert "compiled 7 times" in text and "f32[" in text


def test_static_picture_stays_small_for_many_calls():
    with jaxmagic.capture({}) as cap:
        f = jax.jit(lambda x: x - 1)
        x = jnp.ones(2)
        for _ in range(5_000):
            f(x)
    page = fallback_html(jaxmagic.document(cap, "timeline"))
    assert len(page) < 60_000  # aggregated into columns, never an element per call
