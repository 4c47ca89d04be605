"""Issue 8, hostile content: names, file names, scopes, params and messages holding markup,
script, control characters, a 100,000-character line or invalid Unicode are shown as text,
in every view kind, and nothing in them ever runs or fetches.

Documents are real: a cell run under `jaxmagic.capture` puts each payload of
`tests/hostile_strings.py` through every channel a user has (function names, the cell's
file name and lines, `jax.named_scope`, static arguments, dict keys, mesh axes, namespace
names, exceptions, capture notes), and real documents of every kind get a payload appended
to every free-text field (what users cannot reach today). Each page is opened from file://
in headless Chromium (offline, request-guarded) and interacted with; the script-free
fallback of each kind is loaded with JavaScript on; the widget's comm state must serialise
as Jupyter serialises it.

Decisions this file tests: a lone surrogate is shown as U+FFFD (the browser's own
`toWellFormed()`), and must not stop a document from being serialised (comm JSON, the
fallback HTML as UTF-8); a string too long for a place may be cut there, but the cut is
marked (an ellipsis right after the shown prefix).
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import jaxmagic
from jaxmagic.views import fallback_html

from ..hostile_strings import (
    BY_NAME,
    CORPUS,
    OFFSITE,
    PWNED,
    CellResult,
    Hostile,
    hostile_cell_documents,
    inject_everywhere,
    well_formed,
)
from .harness import GuardedPage, open_guarded_page, poll

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

KINDS = ("graph", "timeline", "grad", "sharding", "keys")
# Payloads whose cases are expected to fail because of a known product bug (none now: lone
# surrogates become U+FFFD and control characters control pictures, views/html_parts.py and
# views/wire.py `safe_document`).
FALLBACK_BUGS: dict[tuple[str, str], str] = {}
KNOWN_BUG_PAYLOADS: frozenset[str] = frozenset()
# What shows that a kind's view has drawn, and what a reader clicks, in order.
READY = {
    "graph": "g.jm-eqn",
    "timeline": ".jm-tl-canvas",
    "grad": ".jm-grad-pane g.jm-eqn",
    "sharding": ".jm-sh-array",
    "keys": ".jm-k-item",
}
CLICKS = {
    "graph": ["g.jm-eqn", ".jm-text .jm-line[data-line]", ".jm-tab"],
    "timeline": [".jm-tl-finding", ".jm-tl-table tr[data-lane]"],
    "grad": [".jm-grad-chip", ".jm-grad-pane g.jm-eqn", ".jm-grad-finding", ".jm-grad-leaf"],
    "sharding": [".jm-sh-array", ".jm-sh-cell", ".jm-sh-coll", ".jm-sh-finding"],
    "keys": [".jm-k-svg .jm-k-item", ".jm-k-finding"],
}


@functools.cache
def cell(name: str) -> CellResult:
    """The documents of the hostile cell for one payload (built once per test session)."""
    return hostile_cell_documents(BY_NAME[name])


@functools.cache
def injected_documents(known_bugs: bool = True) -> tuple[dict, ...]:
    """Real documents of every kind with a payload appended to every free-text field, payloads
    in turn. `known_bugs=False` leaves out the payloads with a known bug of their own (their
    per-payload cases are marked xfail), so this case still checks everything else."""
    from ..kind_documents import documents_of_every_kind

    payloads = [h for h in CORPUS if known_bugs or h.name not in KNOWN_BUG_PAYLOADS]
    docs = []
    for kind, doc in documents_of_every_kind().items():
        doc = dict(
            doc,
            notes=[*doc["notes"], "a note"],
            error={"type": "ValueError", "message": "boom", "file": "cell.py", "line": 3, "code": "f(x)"},
        )
        hostile, used = inject_everywhere(doc, payloads)
        assert set(used) == {h.name for h in payloads}, (kind, used)  # every payload went into this document
        docs.append(hostile)
    return tuple(sorted(docs, key=lambda d: KINDS.index(d["kind"])))


# --------------------------------------------------------------------------------------
# checks run in the page
# --------------------------------------------------------------------------------------

_INERT_JS = """(pwned) => {
  const bad = [];
  const own = document.querySelectorAll('script[data-jaxmagic-doc]').length;
  if (document.scripts.length !== own + 2) bad.push(`${document.scripts.length} scripts for ${own} documents`);
  for (const el of document.querySelectorAll('*')) {
    const tag = el.localName.toLowerCase();
    if (['iframe', 'frame', 'object', 'embed', 'form', 'base', 'link', 'meta', 'video', 'audio', 'source',
         'template', 'math', 'foreignobject'].includes(tag) && !(tag === 'meta' && el.closest('head')))
      bad.push(`<${tag}> element`);
    if (tag === 'script' && el.closest('.jm-root')) bad.push('<script> inside a view');
    if (tag === 'img' && !/^data:image\\//.test(el.getAttribute('src') || '')) bad.push(`<img src=${el.getAttribute('src')}>`);
    if (tag === 'style' && (el.textContent.includes(pwned) || el.textContent.includes('%OFFSITE%')))
      bad.push('payload inside a style sheet');
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith('on')) bad.push(`${tag}[${a.name}]`);
      if (a.name === 'srcdoc' || a.name === 'formaction' || a.name === 'action') bad.push(`${tag}[${a.name}]`);
      if (['href', 'src', 'xlink:href', 'data', 'poster'].includes(a.name) && /^(javascript|vbscript):/.test(v))
        bad.push(`${tag}[${a.name}=${v.slice(0, 40)}]`);
      if (a.name === 'style' && (v.includes('url(') || v.includes('expression('))) bad.push(`${tag}[style=${v.slice(0, 60)}]`);
    }
  }
  return {pwned: typeof window[pwned] !== 'undefined' || typeof window.parent[pwned] !== 'undefined', bad,
          width: document.documentElement.scrollWidth, viewport: window.innerWidth};
}""".replace("%OFFSITE%", OFFSITE)

# Text a reader can get at: every text node of a view except style sheets, as the browser's
# well-formed string. For each needle: "full", "cut" (a prefix, then an ellipsis), or what is missing.
_SHOWN_JS = """([rootIndex, needlesJson]) => {
  const root = document.querySelectorAll('.jm-root')[rootIndex];
  const parts = [];
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => n.parentElement && n.parentElement.closest('style,script') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
  for (let n = walk.nextNode(); n; n = walk.nextNode()) parts.push(n.data);
  const text = parts.join('\\ue000').toWellFormed();  // a separator no payload holds
  return JSON.parse(needlesJson).map((raw) => {
    const needle = raw.toWellFormed();
    if (text.includes(needle)) return 'full';
    let lo = 0, hi = needle.length;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (text.includes(needle.slice(0, mid))) lo = mid; else hi = mid - 1; }
    const need = Math.min(needle.length, 40);
    if (lo < need) return `missing (shown prefix ${lo} of ${needle.length} chars)`;
    let at = text.indexOf(needle.slice(0, lo));
    while (at >= 0) {
      if (/^\\s?(…|\\.\\.\\.)/.test(text.slice(at + lo, at + lo + 4))) return 'cut';
      at = text.indexOf(needle.slice(0, lo), at + 1);
    }
    return `cut without a mark after ${lo} of ${needle.length} chars`;
  });
}"""


def _needles(doc: dict) -> list[str]:
    """Strings of `doc` a reader must be able to read in its view (the document's own, so a
    payload is checked wherever the capture put it): title, notes, error, and each kind's names."""
    out = [doc["title"], *doc["notes"]]
    if doc.get("error"):
        out += [doc["error"]["message"]]
    kind = doc["kind"]
    if kind == "graph":
        out += [f["name"] for f in doc["functions"]]
    elif kind == "timeline":
        out += [lane["name"] for lane in doc["lanes"]] + [f["message"] for f in doc["findings"]]
    elif kind == "grad":
        # headings drop the `outer.<locals>.` prefix (the full name is in the entry's details)
        out += [re.sub(r"^.*<locals>\.", "", e["name"]) for e in doc["entries"]] + [
            f["message"] for f in doc["findings"]
        ]
    elif kind == "sharding":
        out += [a["name"] for a in doc["arrays"] if a["name"]] + [n for m in doc["meshes"] for n in m["axis_names"]]
    elif kind == "keys":
        # a key's names are drawn on roots; other keys' names are in their details, shown on selection
        out += [n for node in doc["nodes"] if node["parent"] is None for n in node["names"]]
        out += [f["message"] for f in doc["findings"]]
    return [s for s in dict.fromkeys(out) if s.strip()]


def _listen(page: Any) -> tuple[list[str], list[str], Callable[[], None]]:
    """The live lists of dialogs the page opens (each dismissed) and of URLs it requests, and the
    function that stops listening."""
    dialogs: list[str] = []
    urls: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    def on_request(request: Any) -> None:
        urls.append(request.url)

    page.on("dialog", on_dialog)
    page.on("request", on_request)

    def stop() -> None:
        page.remove_listener("dialog", on_dialog)
        page.remove_listener("request", on_request)

    return dialogs, urls, stop


def _open(guarded: GuardedPage, path: Path) -> tuple[list[str], list[str]]:
    """Load `path` in the test's own page; returns the live lists of dialogs opened and URLs requested
    (heard until that page closes)."""
    dialogs, urls, _ = _listen(guarded.page)
    guarded.page.goto(path.as_uri(), wait_until="load")
    return dialogs, urls


def _poke(item: Any) -> None:
    """Hover and click `item` like a mouse; when something else covers it (a long label widened
    a graph under a side panel), send it the same events directly."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # here: the module loads without Playwright

    try:
        item.hover(timeout=2_000)
        item.click(timeout=2_000)
    except PlaywrightTimeoutError:
        item.dispatch_event("mouseover")
        item.dispatch_event("click")


def _interact(page: Any, root: Any, kind: str, search: str | None) -> list[str]:
    """What a reader does: expand everything, click and hover the first of each clickable
    thing, search for the payload. Returns what it clicked (for the failure message)."""
    from playwright.sync_api import Error as PlaywrightError

    done = []
    expand = root.locator("button", has_text="Expand all")
    if expand.count():
        expand.first.click(timeout=10_000)
        done.append("Expand all")
    for selector in CLICKS[kind]:
        for attempt in range(3):  # a click may redraw what the next selector finds: look it up again
            items = root.locator(selector).filter(visible=True)
            if not items.count():
                break
            try:
                _poke(items.first)
            except PlaywrightError:
                if attempt == 2:
                    raise
                page.wait_for_timeout(200)
                continue
            done.append(selector)
            break
    canvas = root.locator(".jm-tl-canvas")
    if canvas.count():
        box = canvas.first.bounding_box()
        if box:
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            done.append("hover timeline")
    if search is not None and root.locator(".jm-search").count():
        root.locator(".jm-search").first.fill(search)
        root.locator(".jm-search").first.press("Enter")
        done.append("search")
    for details in root.locator("details").all():
        details.evaluate("(d) => { d.open = true; }")
    return done


def _render_and_check(
    guarded: GuardedPage, tmp_path: Path, docs: list[dict], label: str, search: str | None = None
) -> dict[str, Any]:
    path = tmp_path / f"{label}.html"
    jaxmagic.to_html(docs, path)
    page = guarded.page
    t0 = time.perf_counter()
    dialogs, urls = _open(guarded, path)
    roots = page.locator(".jm-root")
    assert poll(lambda: roots.count() == len(docs), 30), f"{label}: {roots.count()} views for {len(docs)} documents"
    for i, doc in enumerate(docs):
        ready = READY[doc["kind"]]
        assert poll(lambda: roots.nth(i).locator(ready).count() > 0, 30), (
            f"{label}: the {doc['kind']} view drew nothing ({ready}); it reads {roots.nth(i).inner_text()[:400]!r}; "
            f"{guarded.report()}"
        )
    loaded = time.perf_counter() - t0
    clicked = {doc["kind"]: _interact(page, roots.nth(i), doc["kind"], search) for i, doc in enumerate(docs)}
    page.wait_for_timeout(300)  # what the clicks and the search redraw

    inert = page.evaluate(_INERT_JS, PWNED)
    assert not inert["pwned"], f"{label}: a payload ran (window.{PWNED} is set) after {clicked}"
    assert not dialogs, f"{label}: a payload opened a dialog: {dialogs}"
    assert not inert["bad"], f"{label}: payload markup became elements or attributes: {sorted(set(inert['bad']))[:20]}"
    assert not guarded.blocked and not guarded.offsite_seen, f"{label}: requests off the machine: {guarded.report()}"
    strays = [u for u in urls if u != path.as_uri() and not u.startswith(("blob:", "data:"))]
    assert not strays, f"{label}: the page requested {strays[:5]}"
    assert not guarded.page_errors and not guarded.console_errors, f"{label}: {guarded.report()}"
    # A 100,000-character line may scroll inside its pane, never widen the page itself.
    assert inert["width"] <= 2 * inert["viewport"], f"{label}: the page is {inert['width']} px wide"

    missing = {}
    for i, doc in enumerate(docs):
        needles = _needles(doc)
        shown = page.evaluate(_SHOWN_JS, [i, json.dumps(needles)])
        bad = {n[:80]: s for n, s in zip(needles, shown) if s not in ("full", "cut")}
        if bad:
            missing[doc["kind"]] = bad
    assert not missing, f"{label}: document text not shown in its view (after {clicked}): {missing}"
    return {"load_s": round(loaded, 2), "clicked": clicked}


# --------------------------------------------------------------------------------------
# the tests
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", CORPUS, ids=[h.name for h in CORPUS])
def test_a_hostile_cell_is_shown_as_text_in_every_view(
    guarded_page: GuardedPage, tmp_path: Path, payload: Hostile
) -> None:
    t0 = time.perf_counter()
    result = cell(payload.name)
    built = time.perf_counter() - t0
    assert isinstance(result.error, RuntimeError), "the cell raises its own RuntimeError through the capture"
    for kind, doc in result.docs.items():  # the payload really is in every document, not only the error
        text = json.dumps(doc)
        assert doc["error"] and doc["error"]["message"].startswith(payload.text[:1000]), (kind, doc["error"])
        assert text.count(json.dumps(payload.text)[1:-1][:2000]) >= 2, f"{kind}: the payload reached only the error"
    search = None if payload.name in {"control", "lone_surrogate"} else payload.text[:300]
    info = _render_and_check(guarded_page, tmp_path, [result.docs[k] for k in KINDS], payload.name, search)
    print(
        f"[hostile] {payload.name}: documents {built:.2f} s, page {info['load_s']} s; "
        f"channels {len(result.channels)}/{len(result.channels) + len(result.refused)}; "
        f"JAX/Python refused: {sorted(result.refused)}"
    )


def test_the_page_checks_catch_markup_and_silent_cuts(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """The checks above can fail: each markup payload put into a view as HTML (what a view must
    never do) is caught, and so is a long string cut without a mark."""
    path = tmp_path / "probe.html"
    jaxmagic.to_html([cell("script").docs["keys"]], path)
    page = guarded_page.page
    dialogs, _ = _open(guarded_page, path)
    assert poll(lambda: page.locator(".jm-root .jm-k-item").count() > 0, 30), guarded_page.report()
    missed = []
    for h in CORPUS:
        if "<" not in h.text or h.name in {"lone_surrogate", "control", "astral", "entities", "template"}:
            continue
        page.evaluate(
            """(html) => { const d = document.createElement('div'); d.className = 'probe';
                                      document.querySelector('.jm-root').appendChild(d); d.innerHTML = html; }""",
            h.text,
        )
        page.wait_for_timeout(100)  # onerror and ontoggle fire after the parse
        found = page.evaluate(_INERT_JS, PWNED)
        if not (found["pwned"] or found["bad"]):
            missed.append(h.name)
        page.evaluate("() => { document.querySelector('.probe').remove(); delete window.__pwned; }")
    assert not missed, f"markup put in as HTML went unnoticed: {missed}"
    assert dialogs, "the dialog payload put in as HTML opened no dialog: the dialog check could not fail"
    assert any(OFFSITE in u for u in guarded_page.blocked), "markup fetching off-site was not seen by the request guard"
    page.evaluate(
        "(t) => { const d = document.createElement('div'); d.textContent = t; "
        "document.querySelector('.jm-root').appendChild(d); }",
        BY_NAME["long_line"].text[:500] + "X",
    )
    shown = page.evaluate(_SHOWN_JS, [0, json.dumps([BY_NAME["long_line"].text, "never on the page"])])
    assert shown[0].startswith("cut without a mark") and shown[1].startswith("missing"), shown


def test_every_free_text_field_of_every_kind_is_shown_as_text(guarded_page: GuardedPage, tmp_path: Path) -> None:
    info = _render_and_check(
        guarded_page, tmp_path, list(injected_documents()), "injected", search=BY_NAME["img_onerror"].text
    )
    print(f"[hostile] every field injected: page {info['load_s']} s, clicked {info['clicked']}")


def _fallback_cases() -> list[Any]:
    cases = []
    for h in CORPUS:
        for kind in KINDS:
            bug = FALLBACK_BUGS.get((kind, h.name))
            marks = pytest.mark.xfail(strict=True, reason=bug) if bug else ()
            cases.append(pytest.param(h.name, kind, id=f"{kind}-{h.name}", marks=marks))
    cases += [pytest.param("injected", kind, id=f"{kind}-injected") for kind in KINDS]
    return cases


def _document(name: str, kind: str) -> dict:
    if name == "injected":
        return next(d for d in injected_documents(known_bugs=False) if d["kind"] == kind)
    return cell(name).docs[kind]


def _neutral(value: Any, payloads: list[str]) -> Any:
    """`value` with every payload occurrence replaced by as many `x`s: the same document, harmless."""
    if isinstance(value, dict):
        return {_neutral(k, payloads): _neutral(v, payloads) for k, v in value.items()}
    if isinstance(value, list):
        return [_neutral(v, payloads) for v in value]
    if isinstance(value, str):
        for p in payloads:
            value = value.replace(p, "x" * len(p))
        return value
    return value


_STRUCTURE_JS = """() => ({tags: [...document.body.querySelectorAll('*')].map((e) => e.localName),
  images: [...document.images].map((i) => ({ok: i.complete && i.naturalWidth > 0, alt: i.alt.slice(0, 60)})),
  scripts: document.scripts.length, pwned: typeof window.__pwned !== 'undefined'})"""


@pytest.fixture(scope="module")
def fallback_page(chromium_browser: Any) -> Iterator[GuardedPage]:
    """One guarded page for every fallback case: a fallback has no script, so nothing of one case
    is left in the page for the next to see (a fresh page per case cost 0.7 s each, 95 cases)."""
    guarded = open_guarded_page(chromium_browser)
    try:
        yield guarded
    finally:
        guarded.context.close()


@pytest.fixture
def static_page(fallback_page: GuardedPage) -> GuardedPage:
    """The module's fallback page with its records of requests and errors emptied for this case."""
    for heard in (fallback_page.blocked, fallback_page.offsite_seen, fallback_page.console_errors):
        heard.clear()
    fallback_page.page_errors.clear()
    return fallback_page


@pytest.mark.parametrize(("name", "kind"), _fallback_cases())
def test_the_static_fallback_is_inert_and_keeps_its_shape(
    static_page: GuardedPage, tmp_path: Path, name: str, kind: str
) -> None:
    """The script-free fallback, loaded as a page with JavaScript on: nothing runs, nothing is
    fetched, every picture decodes, and its elements are exactly those of the same document
    with each payload replaced by harmless text of the same length."""
    doc = _document(name, kind)
    payloads = (
        [h.text for h in CORPUS if h.name not in KNOWN_BUG_PAYLOADS] if name == "injected" else [BY_NAME[name].text]
    )
    shapes = {}
    for variant, d in (("hostile", doc), ("neutral", _neutral(doc, payloads))):
        path = tmp_path / f"{variant}.html"
        # Lone surrogates cannot be written as UTF-8 (test_the_static_fallback_encodes_as_utf8); the shape
        # check takes them as U+FFFD, which is what a browser would make of them.
        path.write_text(
            f"<!doctype html><html><head><meta charset='utf-8'></head><body>"
            f"{well_formed(fallback_html(d))}</body></html>",
            encoding="utf-8",
        )
        dialogs, urls, stop = _listen(static_page.page)  # the page is the module's: stop before the next case
        try:
            static_page.page.goto(path.as_uri(), wait_until="load")
            shapes[variant] = static_page.page.evaluate(_STRUCTURE_JS)
        finally:
            stop()
        assert not dialogs, f"{variant}: a dialog opened: {dialogs}"
        strays = [u for u in urls if u != path.as_uri() and not u.startswith("data:")]
        assert not strays, f"{variant}: the fallback requested {strays[:5]}"
    hostile, neutral = shapes["hostile"], shapes["neutral"]
    assert not hostile["pwned"] and hostile["scripts"] == 0, hostile
    assert not static_page.blocked and not static_page.offsite_seen, static_page.report()
    assert not static_page.page_errors, static_page.report()
    broken = [i["alt"] for i in hostile["images"] if not i["ok"]]
    assert not broken, f"pictures that do not decode (the hostile text is in them): {broken}"
    diff = [
        line for line in difflib.unified_diff(neutral["tags"], hostile["tags"], "neutral", "hostile", n=1, lineterm="")
    ]
    assert hostile["tags"] == neutral["tags"], f"the payload changed the fallback's elements: {diff[:30]}"


def _utf8_cases() -> list[Any]:
    return [pytest.param(h.name, id=h.name) for h in CORPUS]


@pytest.mark.parametrize("name", _utf8_cases())
def test_the_static_fallback_encodes_as_utf8(name: str) -> None:
    """A notebook stores the text/html fallback as UTF-8 JSON: every hostile string must survive that."""
    for kind in KINDS:
        html = fallback_html(cell(name).docs[kind])
        html.encode("utf-8")
        if name == "lone_surrogate":
            assert "\ufffd" in html


def _packed(obj: Any) -> Any:
    """What Jupyter does with a comm message or a display: `jupyter_client.session.json_packer`
    (ensure_ascii=False, then UTF-8), read back."""
    from jupyter_client.session import json_packer

    return json.loads(json_packer(obj).decode("utf-8"))


@pytest.mark.parametrize("name", _utf8_cases())
def test_the_widget_serialises_hostile_documents(name: str) -> None:
    """`JaxmagicWidget(doc)`: its synced state and its mime bundle go through Jupyter's JSON
    packer without raising, and come back as the same strings (lone surrogates as U+FFFD)."""
    from jaxmagic.views import JaxmagicWidget
    from jaxmagic.views.wire import encode_document

    for kind in KINDS:
        doc = cell(name).docs[kind]
        widget = JaxmagicWidget(doc)
        state = _packed(widget.get_state())
        data, _ = widget._repr_mimebundle_()
        bundle = _packed(data)
        assert bundle["text/plain"] and bundle["text/html"], kind
        expected = json.loads(well_formed(json.dumps(encode_document(doc), ensure_ascii=False)))
        assert state["doc"] == expected, f"{kind}: the widget's doc changed on the way"


def test_the_widget_serialises_every_injected_field() -> None:
    from jaxmagic.views import JaxmagicWidget
    from jaxmagic.views.wire import encode_document, safe_document

    for doc in injected_documents(known_bugs=False):
        widget = JaxmagicWidget(doc)
        # packed blocks are gzip of their JSON, so compare with the scrubbed document's own encoding
        assert _packed(widget.get_state())["doc"] == json.loads(json.dumps(encode_document(safe_document(doc)))), doc[
            "kind"
        ]
        _packed(widget._repr_mimebundle_()[0])


def test_the_cell_error_is_kept_when_a_frame_file_name_has_a_lone_surrogate() -> None:
    """A plain Python error (no JAX involved) raised from code compiled under such a name: the
    error banner must still say what the cell raised."""
    with pytest.raises(ValueError):
        with jaxmagic.capture({}) as cap:
            exec(compile("raise ValueError('boom')", "<cell \ud800>", "exec"), {})
    doc = jaxmagic.document(cap, "timeline")
    assert doc["error"] is not None and doc["error"]["message"] == "boom", doc["notes"]
