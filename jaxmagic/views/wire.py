"""The compact wire form of graph documents (docs/schema.md, "Wire form").

The logical document (one object per node and var) costs about 550 bytes per eqn as
JSON, mostly repeated keys and repeated strings (`f32[8,32]`, `dot_general`, file
names). A notebook stores every widget's state and the kernel sends it over a
websocket, so a 50k-eqn train step would cost 27 MB per view. The wire form stores
each table as columns, every string once in a string table, ids as positions, and
what can be derived (ids, node outputs, group inputs, sub-group lists) not at all.
Functions whose wire JSON is still large are gzip-compressed and base64-encoded.
`widgets/graph/decode.js` turns the wire form back into the logical document, so
the view code and the JSON export only ever see the documented logical shape.
"""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

from .. import kinds

ENCODING = "columnar"  # jaxmagic/schema/wire.py declares the form
PACK_ABOVE_BYTES = 256 * 1024  # functions above this (as wire JSON) travel gzip+base64
DEF_CODES = {"in": -1, "const": -2, "free": -3}
# Function fields that travel as they are (small, or already plain text).
_PLAIN = (
    "id",
    "name",
    "signature",
    "source",
    "calls",
    "cache_hits",
    "wrappers",
    "n_eqns",
    "truncated",
    "text",
    "levels",
    "deferred",
    "cost",
    "repeats",
    "values_note",
    "batch_size",
    "batch_note",
)


class _Strings(dict):
    """A string table: each distinct string stored once, referred to by position.

    `s[text]` is the position (a dict lookup; a new string is appended by `__missing__`), -1 for
    None: a 10k-eqn function looks up some 80,000 strings, most of them repeats."""

    def __init__(self) -> None:
        super().__init__()
        self.table: list[str] = []

    def __missing__(self, text: str | None) -> int:
        if text is None:
            return -1
        at = self[text] = len(self.table)
        self.table.append(text)
        return at

    def __call__(self, text: str | None) -> int:
        return self[text]


_ID_CACHE: dict[str, list[str]] = {}  # prefix -> ["v0", "v1", ...]: the positional ids made so far


def _index(items: list[dict], prefix: str) -> dict[str, int]:
    """{id: position}, checking the ids are positional (`v0`, `v1`, ...)."""
    ids = [item["id"] for item in items]
    known = _ID_CACHE.setdefault(prefix, [])
    if len(known) < len(ids):
        known.extend(f"{prefix}{i}" for i in range(len(known), len(ids)))
    if ids != known[: len(ids)]:
        i = next(i for i, (a, b) in enumerate(zip(ids, known)) if a != b)
        raise ValueError(f"wire form needs positional ids, got {ids[i]!r} at {i}")
    return dict(zip(ids, range(len(ids))))


class _Rows:
    """The shared tables of one function's wire form: strings, scope paths and source rows, each
    stored once and referred to by position (most nodes share a few scopes and source lines)."""

    def __init__(self, var_at: dict[str, int]) -> None:
        self.s = _Strings()
        self.var_at = var_at
        self.scopes: dict[tuple, int] = {}
        self.sources: dict[tuple, int] = {}
        self.by_value: dict[tuple, int] = {}  # a source's fields -> its row

    def operand(self, op: dict) -> Any:
        return self.var_at[op["var"]] if "var" in op else [self.s(op["lit"]), self.s(op["aval"])]

    def scope(self, path: list[str]) -> int:
        key = tuple(path)
        at = self.scopes.get(key)
        if at is None:
            at = self.scopes[key] = len(self.scopes)
        return at

    def source(self, src: dict | None) -> int:
        if src is None:
            return -1
        raw = (src.get("file"), src.get("line"), src.get("col"), src.get("func"), src.get("code"), src.get("lib"))
        at = self.by_value.get(raw)
        if at is not None:
            return at
        s = self.s
        key = (s(raw[0]), raw[1], raw[2], s(raw[3]), s(raw[4]))
        if raw[5]:  # the library frame under the user's line, only where there is one
            key += (s(raw[5]),)
        if key not in self.sources:
            self.sources[key] = len(self.sources)
        at = self.by_value[raw] = self.sources[key]
        return at


def _node_columns(nodes: list[dict], rows: _Rows, group_at: dict[str, int]) -> dict[str, list]:
    """The nodes table, one column per field (cost and level columns only where a node has them)."""
    s, operand = rows.s, rows.operand
    columns: dict[str, list] = {
        "group": [group_at[n["group"]] for n in nodes],
        "prim": [s[n["prim"]] for n in nodes],
        "scope": [rows.scope(n["scope"]) for n in nodes],
        "params": [[s[x] for kv in n["params"].items() for x in kv] for n in nodes],
        "ins": [[operand(op) for op in n["ins"]] for n in nodes],
        "line": [-1 if n["line"] is None else n["line"] for n in nodes],
        "src": [rows.source(n["src"]) for n in nodes],
    }
    if any("cost" in n for n in nodes):
        columns["cost"] = [_cost(n.get("cost"), s) for n in nodes]
    if any("shlo" in n for n in nodes):
        columns["shlo"] = [n.get("shlo") or [] for n in nodes]
        columns["hlo"] = [n.get("hlo") or [] for n in nodes]
        columns["hlo_comp"] = [s(n.get("hlo_comp")) for n in nodes]
    return columns


def encode_function(fn: dict) -> dict:
    """The wire form of one logical `Function`."""
    var_at = _index(fn["vars"], "v")
    node_at = _index(fn["nodes"], "n")
    group_at = _index(fn["groups"], "g")
    rows = _Rows(var_at)
    s, operand = rows.s, rows.operand
    columns = _node_columns(fn["nodes"], rows, group_at)
    variables = fn["vars"]
    wire = {key: fn[key] for key in _PLAIN if key in fn}
    wire.update(
        {
            "root": group_at[fn["root"]],
            "groups": {
                "node": [-1 if g["node"] is None else node_at[g["node"]] for g in fn["groups"]],
                "label": [s(g["label"]) for g in fn["groups"]],
                "outvars": [[operand(op) for op in g["outvars"]] for g in fn["groups"]],
                "n_eqns": [g["n_eqns"] for g in fn["groups"]],
            },
            "nodes": columns,
            "vars": {
                "name": [s[v["name"]] for v in variables],
                "aval": [s[v["aval"]] for v in variables],
                "group": [group_at[v["group"]] for v in variables],
                "def": [DEF_CODES[v["def"]] if v["def"] in DEF_CODES else node_at[v["def"]] for v in variables],
            },
            "scopes": [[s(part) for part in path] for path in rows.scopes],
            "sources": [list(key) for key in rows.sources],
        }
    )
    paths = {str(i): s(v["path"]) for i, v in enumerate(variables) if v.get("path")}
    if paths:  # a function's inputs: their pytree paths, few and sparse
        wire["paths"] = paths
    if fn.get("values") is not None:
        wire["values"] = {str(var_at[vid]): summary for vid, summary in fn["values"].items() if vid in var_at}
    if fn.get("batch") is not None:
        batch = fn["batch"]
        wire["batch"] = [-1 if batch.get(v["id"]) is None else batch[v["id"]] for v in variables]
    wire["strings"] = s.table
    return wire


def _cost(cost: dict | None, s: _Strings) -> list | int:
    """`[flops, bytes, transcendentals, note]` of a node's estimate, 0 when it has none."""
    if not cost:
        return 0
    return [cost.get("flops"), cost.get("bytes"), cost.get("transcendentals", 0), s(cost.get("note"))]


def pack(wire_fn: dict) -> dict:
    """gzip + base64 a wire function when its JSON is large (the front end inflates it)."""
    return _pack(wire_fn)[0]


def _pack(block: Any) -> tuple[Any, bool]:
    """(`block` or its packed form, whether a lone surrogate in it became U+FFFD).

    Its one JSON pass both sizes the block and checks it is valid Unicode (the UTF-8 encoding
    the gzip needs anyway fails on a lone surrogate): the view's state needs no other check.
    """
    text = json.dumps(block, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    scrubbed = False
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        block, scrubbed = _scrub(block), True
        text = json.dumps(block, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
        data = text.encode("utf-8")
    if len(data) <= PACK_ABOVE_BYTES:
        return block, scrubbed
    packed = base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode()
    return {"packed": "gzip+base64", "data": packed, "bytes": len(data)}, scrubbed


PACKED_FIELDS = kinds.PACKED_FIELDS  # large blocks, per document kind (jaxmagic/kinds.py)


def _columnar_programs(doc: dict) -> dict:
    """A grad document with each entry's step `program` (a graph `Function`) in the columnar form:
    its JSON is ~2.8x smaller and encodes faster (a 3.9k-eqn step: 0.9 MB instead of 2.6 MB). The
    document is then a wire form (`"encoding": "packed"`) whatever its size, so the front end
    decodes the programs (widgets/graph/decode.js). Other kinds pass unchanged."""
    entries = doc.get("entries") if doc.get("kind") == "grad" else None
    if not entries or not any(isinstance(e, dict) and isinstance(e.get("program"), dict) for e in entries):
        return doc
    encoded = [
        {**e, "program": encode_function(e["program"])}
        if isinstance(e, dict) and isinstance(e.get("program"), dict)
        else e
        for e in entries
    ]
    return {**doc, "entries": encoded, "encoding": "packed"}


def encode_document(doc: dict, compress: bool = True) -> dict:
    """The wire form of a logical document.

    Graphs become columnar (and large functions packed); timelines keep their logical
    shape but large column blocks (100,000 calls are about 4 MB of JSON) travel packed.
    """
    return _encode(doc, compress)[0]


def _encode(doc: dict, compress: bool) -> tuple[dict, set[str], bool]:
    """(wire form, top-level fields whose JSON `_pack` checked, whether a check scrubbed one)."""
    packable = PACKED_FIELDS.get(doc.get("kind", ""))
    if packable and doc.get("encoding") is None:
        doc = _columnar_programs(doc)
        if not compress:
            return doc, set(), False
        results = {name: _pack(doc[name]) for name in packable if name in doc}
        scrubbed = any(was for _, was in results.values())
        packed = {name: block for name, (block, _) in results.items()}
        if not any(isinstance(block, dict) and "packed" in block for block in packed.values()):
            return ({**doc, **packed} if scrubbed else doc), set(packed), scrubbed
        return {**doc, **packed, "encoding": "packed"}, set(packed), scrubbed
    if doc.get("kind") != "graph" or doc.get("encoding") == ENCODING:
        return doc, set(), False
    functions = [encode_function(fn) for fn in doc.get("functions", [])]
    if not compress:
        return {**doc, "encoding": ENCODING, "functions": functions}, set(), False
    results = [_pack(f) for f in functions]
    return (
        {**doc, "encoding": ENCODING, "functions": [block for block, _ in results]},
        {"functions"},
        any(was for _, was in results),
    )


def safe_wire(doc: dict, compress: bool = True) -> tuple[dict, dict]:
    """(logical document, its wire form), both valid Unicode, serialised once.

    What a view sends (widget state, a page's embedded JSON) is the wire form; its big blocks
    are checked by the JSON pass that packs them, and only the small rest gets a pass of its
    own. The logical document (for the fallbacks) is copied with U+FFFD only when a lone
    surrogate was found, which a well-formed program never has. This replaces `safe_document`
    on the logical document followed by encoding: three JSON passes of the whole document.
    """
    wire, checked, scrubbed = _encode(doc, compress)
    rest = {key: value for key, value in wire.items() if key not in checked}
    safe_rest = safe_document(rest)
    if safe_rest is not rest:
        wire, scrubbed = {**wire, **safe_rest}, True
    if scrubbed:
        doc = _scrub(doc)
    return doc, wire


def safe_document(doc: dict) -> dict:
    """`doc`, or a copy whose strings are valid Unicode: a lone surrogate (an undecodable byte of a
    file name, a hostile string) becomes U+FFFD. Jupyter encodes widget state and mime bundles as
    UTF-8, which a lone surrogate makes fail. One JSON pass to check; a copy only when needed."""
    try:
        json.dumps(doc, ensure_ascii=False, allow_nan=True).encode("utf-8")
        return doc
    except UnicodeEncodeError:
        return _scrub(doc)
    except (TypeError, ValueError):
        return doc


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v) for v in value]
    return value
