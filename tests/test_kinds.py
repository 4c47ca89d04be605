"""One registry of kinds (jaxmagic/kinds.py): every table reads it, and the widgets agree with it."""

from __future__ import annotations

import re
from pathlib import Path

from jaxmagic import api, kinds, magics, schema
from jaxmagic.model import DOCUMENT_BUILDERS, DRAWN_KINDS
from jaxmagic.views import static_html, widget, wire

WIDGETS = Path(__file__).resolve().parent.parent / "widgets"


def _kind_js(name: str) -> tuple[str, list[int]]:
    """(`kind`, `versions`) of widgets/<name>/kind.js, read as text (the front end's own declaration)."""
    text = (WIDGETS / name / "kind.js").read_text(encoding="utf-8")
    match = re.search(r'export default \{\s*kind:\s*"([a-z]+)",\s*versions:\s*\[([\d,\s]*)\]', text)
    assert match, f"widgets/{name}/kind.js exports no {{kind, versions}}"
    return match.group(1), [int(v) for v in match.group(2).split(",") if v.strip()]


def test_every_table_is_the_registry() -> None:
    assert list(DOCUMENT_BUILDERS) == list(kinds.NAMES) and set(kinds.NAMES) == DRAWN_KINDS
    assert api.VIEW_ALIASES is kinds.VIEW_ALIASES and magics.MAGIC_VIEWS is kinds.MAGIC_VIEWS
    assert wire.PACKED_FIELDS is kinds.PACKED_FIELDS and widget.KINDS == kinds.NAMES
    assert set(static_html.STATIC_VIEWS) == {k.name for k in kinds.KINDS if k.static_html}
    assert {k.name: k.version for k in kinds.KINDS} == schema.VERSIONS
    for kind in kinds.KINDS:
        assert {kind.name, kind.magic} <= set(kind.aliases)
        assert DOCUMENT_BUILDERS[kind.name].__wrapped__.__wrapped__ is kind.build()


def test_the_widgets_kinds_match_the_registry() -> None:
    """widgets/<kind>/kind.js names the kind and reads the versions the registry says, the emitted
    version among them; widgets/entries/ has one bundle entry per kind and no other."""
    for kind in kinds.KINDS:
        name, versions = _kind_js(kind.name)
        assert name == kind.name
        assert tuple(versions) == kind.reads and kind.version in versions
        entry = (WIDGETS / "entries" / f"{kind.name}.js").read_text(encoding="utf-8")
        assert f'from "../{kind.name}/kind.js"' in entry
    assert {p.stem for p in (WIDGETS / "entries").glob("*.js")} == set(kinds.NAMES)
    assert {p.parent.name for p in WIDGETS.glob("*/kind.js")} == set(kinds.NAMES)
