"""One front-end bundle per document kind: the widget of each kind carries its own bundle, the
timeline's has no graph layout in it, and pages keep the all-kinds bundle (docs/design.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxmagic.model import DRAWN_KINDS
from jaxmagic.views import page
from jaxmagic.views.static_html import BUNDLE
from jaxmagic.views.widget import KIND_WIDGETS, KINDS, JaxmagicWidget, kind_bundles, packed_esm

from .kind_documents import documents_of_every_kind

REPO = Path(__file__).resolve().parent.parent
# What only the graph layout brings: dagre's graph library and the worker start (widgets/ui/layout-client.js).
LAYOUT_MARKERS = ("isMultigraph", "new Worker(")


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    return documents_of_every_kind()


def test_the_built_bundles_are_the_entries():
    entries = {p.stem for p in (REPO / "widgets" / "entries").glob("*.js")}
    assert set(kind_bundles()) == entries == set(KINDS)
    assert entries >= DRAWN_KINDS, "every kind the widget draws needs widgets/entries/<kind>.js"


def test_each_kind_widget_carries_the_bundle_of_its_kind(docs):
    everything = BUNDLE.read_text(encoding="utf-8")
    for kind, doc in docs.items():
        widget = JaxmagicWidget(doc)
        assert isinstance(widget, KIND_WIDGETS[kind]) and isinstance(
            widget, JaxmagicWidget
        )  # traitlets subclasses per instance
        assert widget.document is doc and widget.doc["kind"] == kind
        own = (BUNDLE.parent / f"jaxmagic-{kind}.js").read_text(encoding="utf-8")
        assert widget._esm == packed_esm(own) != packed_esm(everything), kind
        assert unpacked(widget._esm) == own, kind
        assert len(own) < len(everything), kind
        # anywidget's id names the class; the fallback html is still the kind's own
        assert widget._anywidget_id.endswith(type(widget).__name__)
        assert widget._repr_mimebundle_()[0]["text/html"]


def test_timeline_sharding_and_keys_bundles_have_no_dagre_and_no_layout_worker():
    bundles = kind_bundles()
    for marker in LAYOUT_MARKERS:
        for kind in ("timeline", "sharding", "keys"):
            assert marker not in bundles[kind].read_text(encoding="utf-8"), (kind, marker)
        # the markers are real: every bundle that lays out graphs has them
        for kind in ("graph", "grad"):
            assert marker in bundles[kind].read_text(encoding="utf-8"), (kind, marker)
        assert marker in BUNDLE.read_text(encoding="utf-8"), marker


def test_unknown_kinds_fall_back_to_the_all_kinds_bundle():
    widget = JaxmagicWidget({"schema": "jaxmagic", "kind": "from_the_future", "version": 1, "title": "t"})
    assert not any(isinstance(widget, cls) for cls in KIND_WIDGETS.values())
    assert unpacked(widget._esm) == BUNDLE.read_text(encoding="utf-8")


def unpacked(esm: str) -> str:
    """The bundle a packed `_esm` carries (its one long base64 string, gunzipped)."""
    import base64
    import gzip
    import re

    (payload,) = re.findall(r'"([A-Za-z0-9+/=]{1000,})"', esm)
    return gzip.decompress(base64.b64decode(payload)).decode("utf-8")


def test_widgets_carry_their_bundle_packed_at_half_its_size(docs):
    """A saved notebook keeps each widget's `_esm`: packed it is at most 60% of the bundle (measured 49-55%:
    gzip leaves ~36%, base64 adds a third, the loader ~5 KB)."""
    for kind in KINDS:
        own = (BUNDLE.parent / f"jaxmagic-{kind}.js").read_text(encoding="utf-8")
        esm = KIND_WIDGETS[kind]._esm
        assert len(esm) <= 0.6 * len(own), (kind, len(esm), len(own))
        assert packed_esm(own) == esm  # deterministic: every widget of a kind carries the same text


def test_a_stray_bundle_is_no_widget_class(tmp_path):
    assert "stray" not in kind_bundles() and set(KIND_WIDGETS) == set(KINDS)


def test_a_page_mixing_kinds_includes_the_all_kinds_bundle_once(docs):
    text = page(list(docs.values()))
    assert text.count('<script type="module">') == 1
    assert BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script") in text
    assert text.count('<script type="application/json" data-jaxmagic-doc>') == len(docs)
