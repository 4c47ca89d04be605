"""The documents' declarations (jaxmagic/schema/) catch what they exist to catch, and the front
end's types are generated from them: a misspelt, missing, added or mistyped field fails the
check every builder runs under strict mode (the test suite), and documents.d.ts is current."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic import strict
from jaxmagic.model import DOCUMENT_BUILDERS
from jaxmagic.schema import DOCUMENTS, typescript
from jaxmagic.schema.validate import SchemaError, check

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def graph_doc() -> dict:
    return json.loads((FIXTURES / "graph_control_flow.json").read_text())


def _broken(doc: dict, change) -> dict:
    out = copy.deepcopy(doc)
    change(out)
    return out


def _rename(d: dict, old: str, new: str) -> None:
    d[new] = d.pop(old)


BREAKS = {
    "a misspelt node field": lambda d: _rename(d["functions"][0]["nodes"][0], "prim", "primitive"),
    "a missing var field": lambda d: d["functions"][0]["vars"][0].pop("aval"),
    "a missing envelope field": lambda d: d.pop("caption"),
    "an unknown top-level field": lambda d: d.update(colour="red"),
    "a string where an int is due": lambda d: d["functions"][0].update(n_eqns="17"),
    "a bool where an int is due": lambda d: d["functions"][0].update(calls=True),
    "a number where a string is due": lambda d: d["functions"][0]["nodes"][0].update(prim=3),
    "a tuple where JSON has a list": lambda d: d["functions"][0]["nodes"][0].update(scope=("a",)),
    "an undeclared literal": lambda d: d.update(version=3),
    "a null where none may be": lambda d: d["functions"][0].update(text=None),
    "a literal operand without its aval": lambda d: _lit_without_aval(d),
}


def _lit_without_aval(doc: dict) -> None:
    node = next(n for f in doc["functions"] for n in f["nodes"] if any("lit" in op for op in n["ins"]))
    next(op for op in node["ins"] if "lit" in op).pop("aval")


def test_a_real_document_passes(graph_doc: dict) -> None:
    assert check(graph_doc) is graph_doc


@pytest.mark.parametrize("what", list(BREAKS))
def test_the_check_fails_on(graph_doc: dict, what: str) -> None:
    with pytest.raises(SchemaError):
        check(_broken(graph_doc, BREAKS[what]))


def test_every_kind_is_declared_and_checked_by_its_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The builders check under strict mode and only there: a document the model gets wrong fails
    the test suite, never a user's cell."""
    assert set(DOCUMENTS) == set(DOCUMENT_BUILDERS)
    with jaxmagic.capture() as cap:
        jax.jit(lambda x: x * 2)(jnp.ones(3))
    assert strict.enabled(), "tests/conftest.py runs the suite strict"
    calls = []
    import jaxmagic.schema.validate as validate

    monkeypatch.setattr(validate, "check", lambda doc, declared=None: calls.append(doc["kind"]) or doc)
    for build in DOCUMENT_BUILDERS.values():
        build(cap)
    assert calls == list(DOCUMENT_BUILDERS)
    monkeypatch.setenv(strict.ENV, "0")
    DOCUMENT_BUILDERS["graph"](cap)
    assert calls == list(DOCUMENT_BUILDERS), "no check outside strict mode"


def test_documents_d_ts_is_generated_from_the_declarations() -> None:
    """widgets/types/documents.d.ts is what `python -m jaxmagic.schema.typescript` writes now."""
    assert typescript.OUT.read_text(encoding="utf-8") == typescript.render(), (
        "widgets/types/documents.d.ts is stale: run ./dev fixtures (or python -m jaxmagic.schema.typescript)"
    )


def test_typescript_marks_optional_fields_and_literals() -> None:
    text = typescript.render()
    assert 'schema: "jaxmagic";' in text
    assert "  levels?: Levels;" in text  # NotRequired
    assert "  col: number | null;" in text
    assert "export type Operand = VarOperand | LiteralOperand;" in text
    assert '  "def": string;' in text or "  def: string;" in text


def test_the_widget_kernel_messages_are_declared() -> None:
    """docs/schema.md "Requests": a request, both replies, and a reply that is neither fails."""
    from jaxmagic.schema.validate import MESSAGES

    check({"jm": "request", "id": 1, "what": "levels", "args": {"function": "f0"}}, MESSAGES["request"])
    check({"jm": "reply", "id": 1, "ok": True}, MESSAGES["reply"])
    check({"jm": "reply", "id": 1, "ok": False, "error": "the kernel could not compute it"}, MESSAGES["reply"])
    with pytest.raises(SchemaError):
        check({"jm": "reply", "id": 1, "ok": True, "error": "both at once"}, MESSAGES["reply"])
    with pytest.raises(SchemaError):
        check({"jm": "request", "id": 1, "what": "hlo", "args": {"function": "f0"}}, MESSAGES["request"])
