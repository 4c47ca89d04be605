"""Playback and presentation mode of the %%prng view in a real browser (Chromium, offline page).

A real capture (`_cell` below, run under `jaxmagic.capture`) exported with `jaxmagic.to_html`:
(a) playback: stepping from Home, the labels tell the key events in the order `_cell` made them,
    at the lines it made them on, with the counts JAX gave back (the keys a split returned);
    an intermediate step shows exactly the keys made so far; the reused key turns red and
    flashes at its second use, not before; `play_to_end` reaches the last step and the drawing
    then equals the drawing before playback (element ids and classes);
(b) keyboard: with the root focused space plays and pauses, arrows step, Home/End jump; with a
    tree item focused the arrows move in the tree and playback stays where it is;
(c) presentation mode at 1280x720: no text too small, clipped or overlapping, at the end and mid
    playback; screenshots in the artifacts dir;
(d) nothing leaves the machine and the console stays clean.
Timings are printed, never asserted.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any

import jax
import pytest

import jaxmagic

from .harness import GuardedPage, open_guarded_page, poll
from .stage import PROJECTOR, Playback, legibility, present

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
jr = jax.random

RUN_STEPS = 6  # `key, step = split(key)` iterations: folded into one run (model/keys.py RUN_MIN = 4)
WIDE = 12  # keys of the wide split: drawn as one aggregate (tree.js AGG_OVER = 8)


def _cell() -> dict[str, Any]:
    """The cell: what JAX returned, for the expectations."""
    key = jr.key(0)
    key, sub = jr.split(key)
    jr.normal(sub, (3,))
    folded = jr.fold_in(key, 7)
    jr.uniform(folded, (2,))
    jr.normal(sub, (2,))  # sub again: the reuse
    for _ in range(RUN_STEPS):
        key, step = jr.split(key)
        jr.bernoulli(step, 0.5, (2,))
    keys = jr.split(jr.key(1), WIDE)
    for k in keys:
        jr.gumbel(k, (2,))
    return {"wide": int(keys.shape[0])}


def _line(marker: str) -> int:
    """The file line of `_cell`'s first statement containing `marker`."""
    lines, start = inspect.getsourcelines(_cell)
    return next(start + i for i, text in enumerate(lines) if marker in text)


def _page(tmp_path: Path) -> tuple[Path, dict, dict]:
    with jaxmagic.capture({}) as cap:
        made = _cell()
    doc = jaxmagic.document(cap, "keys")
    out = tmp_path / "keys-stage.html"
    jaxmagic.to_html(doc, out)
    return out, doc, made


def _open(guarded: GuardedPage, out: Path) -> tuple[Any, Playback]:
    page = guarded.page
    page.goto(out.as_uri(), wait_until="load")
    assert poll(lambda: page.locator(".jm-k-svg .jm-k-item").count() > 0, 30), guarded.report()
    root = page.locator(".jm-root").first
    pb = Playback(root)
    assert pb.shown, "the keys view gives the stage bar no story"
    return root, pb


_SNAPSHOT_JS = """(root) => {
  const svg = root.querySelector('.jm-k-svg');
  return [...svg.querySelectorAll('*')].map((el) => [el.tagName, el.getAttribute('data-key') || '',
    el.getAttribute('class') || '', el.getAttribute('transform') || '', el.tagName === 'path' ? (el.getAttribute('d') || '').length : 0]);
}"""

_ITEMS_JS = """(root) => Object.fromEntries([...root.querySelectorAll('.jm-k-svg [data-key]')].map((g) =>
  [g.getAttribute('data-key'), g.getAttribute('class')]))"""


def _items(root: Any) -> dict[str, str]:
    return root.evaluate(_ITEMS_JS)


def _reached(items: dict[str, str]) -> set[str]:
    return {k for k, cls in items.items() if "jm-pb-future" not in cls.split()}


def _step_labels(root: Any, pb: Playback) -> list[str]:
    """Home, then → to the end: the label of every step, in order (deterministic, no clock)."""
    pb.key("Home")
    assert pb.position()[0] == 0
    total = pb.position()[1]
    labels = []
    for p in range(1, total + 1):
        pb.key("ArrowRight")
        assert pb.position() == (p, total)
        labels.append(pb.label())
    return labels


def _index(labels: list[str], *parts: str) -> int:
    hits = [i for i, text in enumerate(labels) if all(p in text for p in parts)]
    assert len(hits) == 1, (parts, labels)
    return hits[0]


def test_playback_tells_the_key_events_in_program_order(guarded_page: GuardedPage, tmp_path: Path) -> None:
    out, doc, made = _page(tmp_path)
    root, pb = _open(guarded_page, out)
    before = root.evaluate(_SNAPSHOT_JS)
    file = Path(__file__).name
    at = lambda marker: f"{file}:{_line(marker)}"
    step_at = lambda marker: f"{at(marker)} ·"
    [run] = doc["runs"]

    t0 = time.perf_counter()
    labels = _step_labels(root, pb)
    print(f"[keys stage] {len(labels)} steps stepped with → in {1000 * (time.perf_counter() - t0):.0f} ms")
    for text in labels:
        print("   ", text)

    # (a) the events in the order _cell made them, at their lines, with JAX's counts
    order = [
        _index(labels, step_at("key = jr.key(0)"), "makes root key key(0)"),
        _index(labels, step_at("key, sub = jr.split(key)"), "splits key(0) into split 2"),
        _index(labels, step_at("jr.normal(sub, (3,))"), "consumes"),
        _index(labels, step_at("folded = jr.fold_in"), "derives fold_in 7"),
        _index(labels, step_at("jr.uniform(folded"), "consumes fold_in 7"),
        _index(
            labels, step_at("jr.normal(sub, (2,))"), "second use: reuse", f"(first at {at('jr.normal(sub, (3,))')})"
        ),
        _index(labels, f"×{run['length']} identical steps", "folded into one run"),
        _index(labels, "makes root key key(1)"),
        _index(labels, step_at("keys = jr.split(jr.key(1)"), f"splits key(1) into split {made['wide']}"),
        _index(labels, step_at("jr.gumbel(k, (2,))"), f"consumes {made['wide']} keys of split {made['wide']}"),
    ]
    # the loop's iterations: the first and last outside the run, the rest in it; none lost
    assert run["length"] >= RUN_STEPS - 2
    loop_splits = [t for t in labels if t.startswith(step_at("key, step = jr.split(key)"))]
    assert len(loop_splits) + run["length"] == RUN_STEPS, labels
    assert order == sorted(order), order
    reuse_step = order[5] + 1  # labels[i] is step i + 1

    # the reused key: red and flashing at its second use, not before
    [reused] = [n for n in doc["nodes"] if n["state"] == "reused"]
    key = f"n{reused['id']}"
    pb.key("Home")
    for p in range(1, reuse_step):
        pb.key("ArrowRight")
        cls = _items(root)[key].split()
        assert "jm-k-s-reused" not in cls and "jm-pb-flash" not in cls, (p, cls)
    consumed_cls = _items(root)[key].split()
    assert "jm-k-s-consumed" in consumed_cls, consumed_cls  # its first use made it orange
    pb.key("ArrowRight")
    assert pb.position()[0] == reuse_step
    cls = _items(root)[key].split()
    assert {"jm-k-s-reused", "jm-pb-flash", "jm-pb-current"} <= set(cls), cls
    fill = root.locator(f'.jm-k-svg [data-key="{key}"] .jm-k-shape').evaluate("(el) => getComputedStyle(el).fill")
    assert fill != root.locator('.jm-k-svg [data-key="n0"] .jm-k-shape').evaluate("(el) => getComputedStyle(el).fill")
    pb.key("ArrowRight")
    cls = _items(root)[key].split()
    assert "jm-k-s-reused" in cls and "jm-pb-flash" not in cls, cls

    # an intermediate step shows exactly the keys made so far: after the first split and normal,
    # key(0), its split array and the array's two rows
    pb.key("Home")
    for _ in range(3):
        pb.key("ArrowRight")
    root0 = next(n for n in doc["nodes"] if n["label"] == "key(0)")
    split = next(n for n in doc["nodes"] if n["parent"] == root0["id"])
    rows = [n for n in doc["nodes"] if n["parent"] == split["id"]]
    assert len(rows) == 2
    assert _reached(_items(root)) == {f"n{i}" for i in [root0["id"], split["id"], *(r["id"] for r in rows)]}
    assert pb.label() == labels[2]

    # play_to_end reaches the last step; the drawing equals the one before playback
    seen = pb.play_to_end()
    assert pb.position()[0] == pb.position()[1] == len(labels)
    assert all(text in labels or text == seen[0] for text in seen), seen
    assert root.evaluate(_SNAPSHOT_JS) == before
    assert "jm-pb-active" not in (root.get_attribute("class") or "")

    # (d) offline, clean console
    assert not guarded_page.blocked and not guarded_page.offsite_seen, guarded_page.report()
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


def test_keyboard_root_steps_playback_tree_items_keep_their_arrows(guarded_page: GuardedPage, tmp_path: Path) -> None:
    out, _, _ = _page(tmp_path)
    root, pb = _open(guarded_page, out)
    total = pb.check_keyboard()

    # a tree item owns its arrows: focus moves in the tree, playback does not step
    pb.key("Home")
    first = root.locator('.jm-k-svg [data-key="n0"]')
    first.focus()
    first.press("ArrowDown")
    focused = guarded_page.page.evaluate("() => document.activeElement.getAttribute('data-key')")
    assert focused and focused != "n0"
    guarded_page.page.keyboard.press("ArrowRight")
    guarded_page.page.keyboard.press("ArrowLeft")
    guarded_page.page.keyboard.press("ArrowRight")
    assert pb.position() == (0, total)
    assert not guarded_page.console_errors and not guarded_page.page_errors, guarded_page.report()


def test_presentation_mode_is_legible_at_1280x720(chromium_browser: Any, tmp_path: Path) -> None:
    out, doc, _ = _page(tmp_path)
    guarded = open_guarded_page(chromium_browser, PROJECTOR)
    try:
        root, pb = _open(guarded, out)
        present(root)
        assert poll(lambda: "jm-present" in (root.get_attribute("class") or ""), 10)
        assert poll(lambda: root.locator(".jm-k-svg .jm-k-item").count() > 0, 10)
        label_px = root.locator(".jm-k-svg .jm-k-label").first.evaluate(
            "(el) => parseFloat(getComputedStyle(el).fontSize)"
        )
        assert label_px >= 16
        full = legibility(root)
        print(f"[keys stage] present, end: {full}")
        assert full.problems == [], str(full)
        assert root.locator(".jm-search").is_hidden()  # clutter hidden
        guarded.screenshot("keys-present-end", root)
        width = root.evaluate("(el) => el.getBoundingClientRect().width")
        assert width >= PROJECTOR[0] - 40, width  # the full output width

        # mid playback: the reuse step, and the step where the run appears
        [reused] = [n for n in doc["nodes"] if n["state"] == "reused"]
        pb.key("Home")
        total = pb.position()[1]
        shots = 0
        for p in range(1, total + 1):
            pb.key("ArrowRight")
            text = pb.label()
            if "reuse" in text or "identical steps" in text:
                mid = legibility(root)
                print(f"[keys stage] present, step {p}: {mid}")
                assert mid.problems == [], f"step {p}: {text}\n{mid}"
                guarded.screenshot(f"keys-present-step{p}", root)
                shots += 1
        assert shots >= 2
        assert f"n{reused['id']}" in _items(root)
        assert not guarded.blocked and not guarded.console_errors and not guarded.page_errors, guarded.report()
    finally:
        guarded.context.close()


def _demo_keys_pages(tmp_path: Path) -> list[Path]:
    """The %%prng cells of demo.ipynb, run under jaxmagic.capture and exported one page each."""
    import json

    import jax.numpy as jnp

    from .harness import DEMO_NOTEBOOK

    cells = [
        "".join(c["source"])
        for c in json.loads(DEMO_NOTEBOOK.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code" and "".join(c["source"]).startswith("%%prng")
    ]
    assert cells, "demo.ipynb has no %%prng cell"
    pages = []
    for i, src in enumerate(cells):
        body = src.split("\n", 1)[1]
        with jaxmagic.capture({}) as cap:
            exec(compile(body, f"demo_prng_{i}.py", "exec"), {"jax": jax, "jnp": jnp, "print": lambda *a, **k: None})
        out = tmp_path / f"demo-keys-{i}.html"
        jaxmagic.to_html(jaxmagic.document(cap, "keys"), out)
        pages.append(out)
    return pages


def test_demo_key_trees_presenting_show_the_reused_key_and_its_findings(chromium_browser: Any, tmp_path: Path) -> None:
    """Presentation mode at 1280x720, the view's top at the top of the screen: the reused key's
    node and the first finding are both on screen, and the tree's text is at least 14 px."""
    guarded = open_guarded_page(chromium_browser, PROJECTOR)
    try:
        for i, out in enumerate(_demo_keys_pages(tmp_path)):
            root, _ = _open(guarded, out)
            present(root)
            assert poll(lambda: root.locator("[data-jm-key-element]").count() == 1, 10), (
                f"demo keys {i}: no key element"
            )
            root.evaluate("(r) => r.scrollIntoView({block: 'start'})")
            guarded.page.wait_for_timeout(300)
            pane = root.locator('[data-jm-pane="keys"]')
            key = root.locator("[data-jm-key-element]").bounding_box()
            finding = root.locator(".jm-k-finding").first.bounding_box()
            guarded.screenshot(f"keys-demo{i}-present-1280x720", guarded.page)
            print(
                f"[keys framing] demo {i} presenting: {pane.get_attribute('data-jm-framed')}, "
                f"text {pane.get_attribute('data-jm-text-px')} px, key {key}, first finding {finding}"
            )
            on_screen = lambda b: (
                b
                and b["x"] >= 0
                and b["y"] >= 0
                and b["x"] + b["width"] <= PROJECTOR[0]
                and b["y"] + b["height"] <= PROJECTOR[1]
            )
            assert on_screen(key), f"demo keys {i}: the reused key is off screen: {key}"
            assert finding and finding["y"] >= 0 and finding["y"] + 60 <= PROJECTOR[1], (
                f"demo keys {i}: the finding is off screen: {finding}"
            )
            assert float(pane.get_attribute("data-jm-text-px")) >= 14
            assert root.locator("[data-jm-legend]").is_visible()
            found = legibility(root)
            assert found.problems == [], f"demo keys {i}: {found}"
        assert not guarded.blocked and not guarded.page_errors, guarded.report()
    finally:
        guarded.context.close()
