"""Playback and presentation mode of the %%trace timeline in a real browser.

A real capture (`jaxmagic.capture` + `jaxmagic.document(cap, "trace")`, what `%%trace` does) of
calls we drive with known signatures is exported with `jaxmagic.to_html` and opened from file://
in headless Chromium (offline). Checked:
(a) playback reaches the last step; the labels seen are exactly the calls we made, in order,
    with hit or miss as JAX reported them (a miss per distinct signature, which JAX's own cache
    size confirms) and each recompile naming the argument that changed; an intermediate step
    counts exactly the calls made so far and veils the calls still to come; at the end the view
    is the one it started from (elements, classes, texts and canvas pixels);
(b) the keyboard: space plays and pauses, arrows step, Home and End, panning stays on a / d;
(c) presentation mode at 1280x720: no text too small, clipped or overlapping, at the end, mid
    playback and at the start; the canvas draws its text at 14 px or more; screenshots saved;
(d) nothing leaves the machine and the console stays clean.
One step's time in Chromium is printed, never asserted.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import jaxmagic

from .harness import GuardedPage, poll
from .stage import PROJECTOR, Playback, legibility, present

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

LOOP = 6  # hits of f in a loop at the end: its first hit, then one step for the rest


def _drive() -> tuple[jaxmagic.Capture, list[tuple[str, str, str]], dict[str, int]]:
    """Run a %%trace-like cell; return the capture, the calls made as (function, signature
    text as labels write it, argument change expected in the label or "") and JAX's own number
    of compiled entries per function."""
    ns: dict = {}
    made: list[tuple[str, str, str]] = []
    with jaxmagic.capture(ns) as cap:

        @jax.jit
        def f(x):
            return (jnp.sin(x) * 2).sum()

        @partial(jax.jit, static_argnames="n")
        def g(x, n):
            return x * n

        a3, a4, i3 = jnp.ones(3), jnp.ones(4), jnp.arange(3)
        for arg, sig, change in [
            (a3, "x: f32[3]", ""),
            (a3, "x: f32[3]", ""),
            (a4, "x: f32[4]", "x changed shape f32[3] → f32[4]"),
            (a4, "x: f32[4]", ""),
            (i3, "x: i32[3]", "x changed dtype f32[3] → i32[3]"),
        ]:
            f(arg)
            made.append(("f", sig, change))
        for n, change in [(2, ""), (2, ""), (3, "static argument n changed 2 → 3")]:
            g(a4, n=n)
            made.append(("g", f"x: f32[4], n={n}", change))
        for _ in range(LOOP):
            f(a4)
            made.append(("f", "x: f32[4]", ""))
        ns.update(f=f, g=g)
    return cap, made, {"f": ns["f"]._cache_size(), "g": ns["g"]._cache_size()}


def _expected(doc: dict, made: list[tuple[str, str, str]]) -> list[str]:
    """The call labels playback must show, as regular expressions, from the calls we made: a
    miss for every signature not seen before (our own count), the reason for a recompile, the
    run of hits at the end as one step after its first hit."""
    names = {
        short: next(lane["name"] for lane in doc["lanes"] if lane["name"].rsplit(".", 1)[-1] == short)
        for short in ("f", "g")
    }
    totals = {s: sum(1 for m in made if m[0] == s) for s in names}
    seen: set[tuple[str, str]] = set()
    number = {s: 0 for s in names}
    out: list[str] = []
    for fn, sig, change in made[: -(LOOP - 1)]:
        number[fn] += 1
        head = re.escape(f"call {number[fn]} of {totals[fn]} · {names[fn]}({sig}) · ")
        if (fn, sig) in seen:
            out.append(head + r"cache hit · [\d.]+ [µm]s$")
        else:
            reason = re.escape(change) if change else "first call, nothing compiled for it yet"
            out.append(head + f"miss: {reason}( \\(\\+\\d+ other changes?\\))? · traced .*compiled [\\d.]+ [µm]?s")
        seen.add((fn, sig))
    first = number["f"] + 1
    out.append(
        re.escape(f"calls {first}–{totals['f']} of {totals['f']} · {names['f']} · {LOOP - 1} cache hits in a row · ")
        + r"[\d.]+ [µm]s each on average$"
    )
    return out


@pytest.fixture(scope="module")
def trace_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list[str]]:
    cap, made, cache_sizes = _drive()
    doc = jaxmagic.document(cap, "trace")
    # JAX's answers: one compiled entry per distinct signature, one miss per entry.
    distinct = {fn: len({sig for f, sig, _ in made if f == fn}) for fn in ("f", "g")}
    assert cache_sizes == distinct, (cache_sizes, distinct)
    hits = [h for lane, h in zip(doc["calls"]["lane"], doc["calls"]["hit"]) if doc["lanes"][lane]["origin"] == "call"]
    assert len(hits) == len(made) and hits.count(0) == sum(distinct.values())
    out = tmp_path_factory.mktemp("timeline-stage") / "trace.html"
    jaxmagic.to_html(doc, out)
    return out, doc, _expected(doc, made)


def _open(guarded: GuardedPage, url: str) -> tuple[object, Playback]:
    page = guarded.page
    page.goto(url, wait_until="load")
    root = page.locator(".jm-root").first
    assert poll(lambda: root.locator(".jm-pb-count").count() == 1 and root.locator(".jm-tl-canvas").count() == 1, 30), (
        guarded.report()
    )
    return root, Playback(root)


def _call_labels(labels: list[str]) -> list[str]:
    return [t for t in labels if t.startswith("call")]


def _check_story(labels: list[str], expected: list[str]) -> None:
    calls = _call_labels(labels)
    assert len(calls) == len(expected), "\n".join(calls)
    for got, want in zip(calls, expected):
        assert re.match(want, got), f"{got!r} does not match {want!r}"
    for other in labels[1:]:
        if not other.startswith("call"):  # what JAX compiled outside the calls (eager ops)
            assert other.startswith("outside your calls · JAX compiled "), other
    assert labels[0].startswith("start of the cell · nothing traced or compiled yet")


_SNAPSHOT_JS = """(root) => {
  const c = root.querySelector('.jm-tl-canvas');
  c.jmProbe.flush();
  return {
    // the step line is left out: as opened it invites to play, after the last step it names that step
    items: [...root.querySelectorAll('.jm-timeline *:not(.jm-pb-label)')].map((e) => `${e.tagName}[${e.getAttribute('data-lane') ?? ''}].${e.getAttribute('class') ?? ''}`),
    table: root.querySelector('.jm-tl-table').innerText,
    details: root.querySelector('.jm-tl-details').innerText,
    caption: root.querySelector('.jm-tl-caption').innerText,
    pixels: c.toDataURL(),
    playback: c.jmProbe.playback(),
  };
}"""

# Coloured pixels (bars, markers) in a 3 px column through the middle of call `c`'s row,
# composited over white: the veil over what has not happened yet leaves almost none.
_INK_JS = """(root, [c, start, end, lane]) => {
  const canvas = root.querySelector('.jm-tl-canvas'), probe = canvas.jmProbe;
  probe.flush();
  const box = probe.rowBox(lane), b = canvas.getBoundingClientRect(), w = probe.window();
  const x = box.left + (((start + end) / 2 - w.t0) / (w.t1 - w.t0)) * (box.right - box.left);
  const k = canvas.width / b.width;
  const d = canvas.getContext('2d').getImageData(Math.round((x - b.left) * k) - 1, Math.round((box.top - b.top) * k), 3, Math.round(box.height * k)).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) {
    const a = d[i + 3] / 255, px = [0, 1, 2].map((j) => a * d[i + j] + (1 - a) * 255);
    if (Math.max(...px) - Math.min(...px) > 60) n++;
  }
  return n;
}"""

_STEP_TIME_JS = """(root) => {
  const slider = root.querySelector('.jm-pb-slider'), probe = root.querySelector('.jm-tl-canvas').jmProbe;
  const n = Number(slider.max), times = [];
  for (let i = 1; i <= 30; i++) {
    slider.value = String(Math.round((i / 31) * n));
    const t = performance.now();
    slider.dispatchEvent(new Event('input'));
    probe.flush();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return [times[15], times[28]];
}"""


def _clean(guarded: GuardedPage) -> None:
    assert not guarded.blocked and not guarded.offsite_seen, guarded.report()
    assert not guarded.console_errors and not guarded.page_errors, guarded.report()


def test_playback_tells_the_calls_in_order_and_ends_on_the_static_view(guarded_page: GuardedPage, trace_page) -> None:
    out, doc, expected = trace_page
    root, pb = _open(guarded_page, out.as_uri())
    page = guarded_page.page
    before = root.evaluate(_SNAPSHOT_JS)
    assert before["playback"] is None
    n_steps = pb.position()[1]

    # Every label change is recorded in the page, so none is missed between two polls.
    root.evaluate("""(root) => { window.__labels = [];
      new MutationObserver(() => window.__labels.push(root.querySelector('.jm-pb-label').textContent))
        .observe(root.querySelector('.jm-pb-label'), {childList: true, characterData: true, subtree: true}); }""")
    pb.play_to_end(speed=8)
    assert pb.position() == (n_steps, n_steps)
    seen = page.evaluate("window.__labels")
    deduped = [t for i, t in enumerate(seen) if t and (i == 0 or t != seen[i - 1])]
    start = deduped.index(next(t for t in deduped if t.startswith("start of the cell")))
    _check_story(deduped[start:], expected)
    # The end is the static view: same elements and classes, texts and pixels.
    assert poll(lambda: root.locator(".jm-tl-plot[data-sweeping]").count() == 0, 10)
    after = root.evaluate(_SNAPSHOT_JS)
    assert after == before

    # An intermediate step: f's third call (the shape recompile) has just returned.
    pb.key("Home")
    shape = next(i for i, t in enumerate(deduped[start:]) if "changed shape" in t)
    for _ in range(shape):
        pb.key("ArrowRight")
    assert pb.position()[0] == shape and "x changed shape f32[3] → f32[4]" in pb.label()
    assert poll(lambda: root.locator(".jm-tl-plot[data-sweeping]").count() == 0, 10)
    f_lane = next(i for i, lane in enumerate(doc["lanes"]) if lane["name"].endswith("f"))
    g_lane = next(i for i, lane in enumerate(doc["lanes"]) if lane["name"].endswith("g"))
    f_row = root.locator(f'.jm-tl-table tr[data-lane="{f_lane}"]')
    cells = f_row.locator("td").all_inner_texts()
    assert cells[1:5] == ["3", "1", "2", "2"], cells  # calls, hits, misses, compiles so far
    assert "jm-pb-current" in f_row.get_attribute("class")
    g_row = root.locator(f'.jm-tl-table tr[data-lane="{g_lane}"]')
    assert "jm-pb-future" in g_row.get_attribute("class") and g_row.locator("td").all_inner_texts()[1] == "0"
    assert "changed shape" in root.locator(".jm-tl-details").inner_text()
    calls = doc["calls"]
    third_f = [c for c, lane in enumerate(calls["lane"]) if lane == f_lane][2]
    state = root.evaluate("(r) => r.querySelector('.jm-tl-canvas').jmProbe.playback()")
    assert state["now"] == calls["end"][third_f] and state["marks"][0]["t0"] == calls["start"][third_f]
    first_f = calls["lane"].index(f_lane)
    first_g = calls["lane"].index(g_lane)
    ink = lambda c: root.evaluate(_INK_JS, [c, calls["start"][c], calls["end"][c], calls["lane"][c]])
    past_now, future_now = ink(first_f), ink(first_g)
    pb.key("End")
    past_end, future_end = ink(first_f), ink(first_g)
    print(
        f"[timeline stage] ink of a past call {past_now} (at the end {past_end}), of a future one {future_now} (at the end {future_end})"
    )
    assert past_now >= 0.8 * past_end and past_end > 10
    assert future_now <= 0.1 * future_end and future_end > 10

    median, p95 = root.evaluate(_STEP_TIME_JS)
    print(
        f"[timeline stage] one step in Chromium ({n_steps} steps): {median:.2f} ms median, {p95:.2f} ms p95 (show, counters, details, one frame)"
    )
    _clean(guarded_page)


def test_keyboard_drives_playback_and_a_d_pan(guarded_page: GuardedPage, trace_page) -> None:
    out, doc, expected = trace_page
    root, pb = _open(guarded_page, out.as_uri())
    n = pb.position()[1]
    window = "(r) => r.querySelector('.jm-tl-canvas').jmProbe.window()"
    w0 = root.evaluate(window)
    pb.key("Home")
    assert pb.position() == (0, n)
    labels = [pb.label()]
    for p in range(1, n + 1):
        pb.key("ArrowRight")
        assert pb.position() == (p, n)
        labels.append(pb.label())
    _check_story(labels, expected)
    assert root.evaluate(window) == w0  # stepping never moves the axis
    pb.key("ArrowLeft")
    assert pb.position() == (n - 1, n)
    pb.key("ArrowLeft")
    assert pb.position() == (n - 2, n) and pb.label() == labels[n - 2]
    pb.key(" ")
    assert poll(lambda: "jm-playing" in (root.get_attribute("class") or ""), 5)
    pb.key(" ")
    assert poll(lambda: "jm-playing" not in (root.get_attribute("class") or ""), 5)
    pb.key("End")
    assert pb.position() == (n, n)
    pb.key("d")
    assert root.evaluate(window)["t0"] > w0["t0"]
    pb.key("a")
    pb.key("f")
    assert root.evaluate(window) == w0
    _clean(guarded_page)


_FONTS_JS = """(root) => {
  const canvas = root.querySelector('.jm-tl-canvas'), ctx = canvas.getContext('2d'), fill = ctx.fillText, sizes = [];
  ctx.fillText = function (...a) { sizes.push(parseFloat(/([\\d.]+)px/.exec(this.font)[1])); return fill.apply(this, a); };
  canvas.jmProbe.flush();
  ctx.fillText = fill;
  return {min: Math.min(...sizes), texts: sizes.length, scale: canvas.jmProbe.scale};
}"""


def test_presentation_mode_is_legible_at_1280x720(guarded_page: GuardedPage, trace_page) -> None:
    out, doc, expected = trace_page
    page = guarded_page.page
    page.set_viewport_size({"width": PROJECTOR[0], "height": PROJECTOR[1]})
    root, pb = _open(guarded_page, out.as_uri())
    present(root)
    assert poll(lambda: "jm-present" in (root.get_attribute("class") or ""), 10)
    box = root.bounding_box()
    assert box["width"] >= PROJECTOR[0] - 40, box  # the full output width
    fonts = root.evaluate(_FONTS_JS)
    assert fonts["scale"] > 1 and fonts["min"] >= 14, fonts
    for el in root.locator(".jm-clutter").all():
        assert not el.is_visible()

    report = legibility(root)
    assert report.problems == [], str(report)
    guarded_page.screenshot("timeline-present-end", root)

    pb.key("Home")
    report = legibility(root)
    assert report.problems == [], str(report)
    guarded_page.screenshot("timeline-present-start", root)

    # Mid playback: the dtype recompile, with JAX's explanation in the details.
    n = pb.position()[1]
    for _ in range(n):
        pb.key("ArrowRight")
        if "changed dtype" in pb.label():
            break
    assert "changed dtype" in pb.label()
    assert poll(lambda: root.locator(".jm-tl-plot[data-sweeping]").count() == 0, 10)
    report = legibility(root)
    assert report.problems == [], str(report)
    guarded_page.screenshot("timeline-present-recompile", root)
    guarded_page.screenshot("timeline-present-recompile-viewport")  # what the room sees
    _clean(guarded_page)


def test_5000_calls_step_at_any_position(guarded_page: GuardedPage, tmp_path: Path) -> None:
    """Two functions called in turn 2,500 times each: 5,000 steps (no run of hits to merge).
    Jumps anywhere with the slider; one step's time is printed."""
    with jaxmagic.capture({}) as cap:
        f = jax.jit(lambda x: x + 1)
        g = jax.jit(lambda x: x * 2)
        x = jnp.ones(8)
        for _ in range(2500):
            f(x)
            g(x)
    doc = jaxmagic.document(cap, "trace")
    out = tmp_path / "calls5000.html"
    jaxmagic.to_html(doc, out)
    root, pb = _open(guarded_page, out.as_uri())
    n = pb.position()[1]
    assert n >= 5000
    median, p95 = root.evaluate(_STEP_TIME_JS)
    print(f"[timeline stage] one step in Chromium ({n} steps, 5,000 calls): {median:.2f} ms median, {p95:.2f} ms p95")
    pb.key("Home")
    pb.key("ArrowRight")
    pb.key("ArrowRight")
    assert pb.position() == (2, n) and pb.label().startswith("call 1 of 2500 · ")
    pb.key("End")
    assert root.evaluate("(r) => r.querySelector('.jm-tl-canvas').jmProbe.playback()") is None
    _clean(guarded_page)
