"""Browser checks shared by the playback and presentation tests of every view.

- `legibility(root)`: every visible piece of text in a view, measured in the page: text smaller
  than a projector can show, text cut by a container that hides overflow, and pairs of texts
  whose boxes overlap. Presentation mode at 1280x720 must have none of them.
- `Playback(root)`: drives the shared controls (widgets/ui/playback.js) the way a speaker does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PROJECTOR = (1280, 720)
MIN_PRESENT_PX = 14.0  # smallest text a 1280x720 projector shows legibly to a room

_LEGIBILITY_JS = r"""
([root, minPx]) => {
  const texts = [];
  const opacityOf = (el) => {
    let o = 1;
    for (let e = el; e && e !== root.parentNode; e = e.parentElement) o *= Number(getComputedStyle(e).opacity || 1);
    return o;
  };
  const describe = (el, text) => {
    const cls = el.getAttribute('class') || '';
    return `${el.tagName.toLowerCase()}${cls ? '.' + cls.trim().split(/\s+/).join('.') : ''} "${text.slice(0, 40)}"`;
  };
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.nodeValue.trim();
    if (!text) continue;
    const el = n.parentElement;
    if (!el || el.closest('style, script, title, desc, option, [hidden], .jm-pb-future')) continue;
    if (el.checkVisibility && !el.checkVisibility({visibilityProperty: true, opacityProperty: false})) continue;
    if (opacityOf(el) < 0.3) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const r = range.getBoundingClientRect();
    if (r.width < 0.5 || r.height < 0.5) continue;
    const cs = getComputedStyle(el);
    let px = parseFloat(cs.fontSize);
    const svg = el.closest('svg');
    if (svg && el.getScreenCTM) {  // an SVG label is as large as its zoom draws it
      const m = el.getScreenCTM();
      if (m) px *= Math.hypot(m.a, m.b);
    }
    // One box per line: a wrapped text's bounding box would span lines it does not draw on.
    const lines = [...range.getClientRects()].filter((b) => b.width >= 0.5 && b.height >= 0.5);
    texts.push({el, text, r, lines, px, what: describe(el, text)});
  }
  const rootBox = root.getBoundingClientRect();
  const small = [], clipped = [], overlaps = [];
  const shown = [];
  for (const t of texts) {
    // Outside every scrolling container's visible box: not shown (scrolled away), not a fault.
    let hiddenAway = false, cut = null;
    for (let a = t.el.parentElement; a && a !== root.parentNode; a = a.parentElement) {
      const cs = getComputedStyle(a);
      const ox = cs.overflowX, oy = cs.overflowY;
      const tag = a.tagName.toLowerCase();
      const clips = tag === 'svg' || [ox, oy].some((v) => v !== 'visible');
      if (!clips) continue;
      const b = a.getBoundingClientRect();
      const inter = Math.max(0, Math.min(b.right, t.r.right) - Math.max(b.left, t.r.left)) *
                    Math.max(0, Math.min(b.bottom, t.r.bottom) - Math.max(b.top, t.r.top));
      if (inter <= 0) { hiddenAway = true; break; }
      const scrolls = [ox, oy].some((v) => v === 'auto' || v === 'scroll') || tag === 'svg';
      // Measured on what the inner scrollers already show: text scrolled out of a scroller is not cut.
      const seen = t.vis || t.r;
      const whole = seen.left >= b.left - 1 && seen.right <= b.right + 1 && seen.top >= b.top - 1 && seen.bottom <= b.bottom + 1;
      if (!whole && !scrolls && !cut) cut = a;
      // What a scroller shows of the text is the part inside it: overlaps count that part only.
      t.vis = t.vis || {left: t.r.left, right: t.r.right, top: t.r.top, bottom: t.r.bottom};
      t.vis = {left: Math.max(t.vis.left, b.left), right: Math.min(t.vis.right, b.right),
               top: Math.max(t.vis.top, b.top), bottom: Math.min(t.vis.bottom, b.bottom)};
    }
    const v = t.vis || t.r;
    t.v = {left: v.left, right: v.right, top: v.top, bottom: v.bottom,
           width: Math.max(0, v.right - v.left), height: Math.max(0, v.bottom - v.top)};
    if (t.v.width <= 0 || t.v.height <= 0) continue;
    if (hiddenAway) continue;
    if (t.r.right < rootBox.left || t.r.left > rootBox.right || t.r.bottom < rootBox.top || t.r.top > rootBox.bottom) continue;
    shown.push(t);
    if (t.px < minPx - 0.01) small.push(`${t.what}: ${t.px.toFixed(1)}px`);
    const ecs = getComputedStyle(t.el);
    const ellipsis = ecs.textOverflow === 'ellipsis' && t.el.scrollWidth > t.el.clientWidth + 1;
    if (cut) clipped.push(`${t.what} cut by ${describe(cut, '')}`);
    else if (ellipsis) clipped.push(`${t.what} ends in an ellipsis`);
  }
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      const a = shown[i], b = shown[j];
      if (a.el === b.el || a.el.contains(b.el) || b.el.contains(a.el)) continue;
      const clip = (box, v) => ({left: Math.max(box.left, v.left), right: Math.min(box.right, v.right),
                                 top: Math.max(box.top, v.top), bottom: Math.min(box.bottom, v.bottom)});
      const hit = a.lines.some((la) => b.lines.some((lb) => {
        const x = clip(la, a.v), y = clip(lb, b.v);
        const w = Math.min(x.right, y.right) - Math.max(x.left, y.left);
        const hgt = Math.min(x.bottom, y.bottom) - Math.max(x.top, y.top);
        if (w <= 1 || hgt <= 1) return false;
        const area = (q) => Math.max(0, q.right - q.left) * Math.max(0, q.bottom - q.top);
        return w * hgt > 0.1 * Math.min(area(x), area(y));
      }));
      if (hit) overlaps.push(`${a.what} overlaps ${b.what}`);
    }
  }
  return {texts: shown.length, small, clipped, overlaps};
}
"""


@dataclass
class Legibility:
    texts: int
    small: list[str] = field(default_factory=list)
    clipped: list[str] = field(default_factory=list)
    overlaps: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return self.small + self.clipped + self.overlaps

    def __str__(self) -> str:
        head = f"{self.texts} texts; {len(self.small)} too small, {len(self.clipped)} clipped, {len(self.overlaps)} overlapping"
        return head + "".join(f"\n  {p}" for p in self.problems[:40])


def legibility(root: Any, min_px: float = MIN_PRESENT_PX) -> Legibility:
    """Measure every visible text of a `.jm-root` locator (see the module docstring)."""
    data = root.evaluate(f"(root) => ({_LEGIBILITY_JS})([root, {float(min_px)}])")
    return Legibility(texts=data["texts"], small=data["small"], clipped=data["clipped"], overlaps=data["overlaps"])


class Playback:
    """The shared controls of one view (widgets/ui/playback.js), driven as a user would."""

    def __init__(self, root: Any):
        self.root = root

    @property
    def shown(self) -> bool:
        return self.root.locator(".jm-pb-slot:not([hidden]) .jm-pb").count() > 0

    def position(self) -> tuple[int, int]:
        text = self.root.locator(".jm-pb-count").first.inner_text()
        pos, total = (int(v) for v in text.split("/"))
        return pos, total

    def label(self) -> str:
        return self.root.locator(".jm-pb-label").first.inner_text()

    def click(self, cls: str) -> None:
        self.root.locator(f".jm-pb-{cls}").first.click()

    def key(self, key: str) -> None:
        """Press a key with the widget focused (the root is focusable), as a speaker does."""
        self.root.focus()
        self.root.press(key)

    def playing(self) -> bool:
        return "jm-playing" in (self.root.get_attribute("class") or "")

    def check_keyboard(self) -> int:
        """The keys every view shares, with the widget focused: Home, → →, ←, space plays (the clock
        steps on its own), space pauses (the clock stops), End. Returns the number of steps."""
        import time

        from .harness import poll

        total = self.position()[1]
        assert self.position() == (total, total), "a view opens complete"
        self.key("Home")
        assert self.position() == (0, total)
        self.key("ArrowRight")
        self.key("ArrowRight")
        assert self.position() == (2, total)
        self.key("ArrowLeft")
        assert self.position() == (1, total)
        self.key(" ")
        assert poll(self.playing, 5), "space did not start playback"
        assert poll(lambda: self.position()[0] >= 2 or self.position()[0] == total, 10), "the clock did not step"
        self.key(" ")
        assert poll(lambda: not self.playing(), 5), "space did not pause"
        paused = self.position()
        time.sleep(1.2)  # longer than one step at 1×: a paused clock does not move
        assert self.position() == paused
        self.key("End")
        assert self.position() == (total, total)
        return total

    def set_speed(self, speed: float) -> None:
        self.root.locator(".jm-pb-speed").first.select_option(str(speed if speed % 1 else int(speed)))

    def play_to_end(self, timeout: float = 60.0, speed: float = 8) -> list[str]:
        """Play from the start at `speed` until the last step; returns the step labels seen."""
        from .harness import poll

        self.set_speed(speed)
        self.click("first")
        labels = [self.label()]
        self.click("play")

        def done() -> bool:
            text = self.label()
            if text and text != labels[-1]:
                labels.append(text)
            pos, total = self.position()
            return pos == total and self.root.locator(".jm-root.jm-playing, :scope.jm-playing").count() == 0

        assert poll(done, timeout, interval=0.05), f"playback stopped at {self.position()}"
        return labels


# Presentation mode, switched in the page as a user does it: the widget's own toggle, scrolled on
# screen and clicked only where nothing covers it, then frames until the view is redrawn in the mode.
# One round trip (a view is switched hundreds of times a run); a string says what went wrong.
_PRESENT_JS = r"""
async ([root, on]) => {
  const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
  const toggle = root.querySelector('.jm-present-toggle');
  if (!toggle) return 'the view has no presentation toggle';
  if (root.classList.contains('jm-present') === on) return null;
  toggle.scrollIntoView({block: 'nearest', inline: 'nearest'});
  await frame();
  const r = toggle.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (!hit || !(hit === toggle || toggle.contains(hit))) {
    const what = hit ? hit.tagName.toLowerCase() + '.' + String(hit.className || '').split(/\s+/).join('.') : 'nothing';
    return `the presentation toggle cannot be clicked: ${what} covers it`;
  }
  toggle.click();
  const start = performance.now();
  while (root.classList.contains('jm-present') !== on) {
    if (performance.now() - start > 10000) return 'presentation mode did not switch';
    await frame();
  }
  await frame();
  await frame();
  return null;
}
"""


# Every view of a page at once (the host tests switch a whole notebook's views): each toggle is
# scrolled on screen, given one frame (Lab's content-visibility renders a cell scrolled into view at
# its next frame; before that nothing there can be hit), scrolled again (the views clicked before
# it redraw in their new size meanwhile) and clicked where nothing covers it; then frames until
# every view is in the mode, and two more for the redraws. index -> what went wrong.
_PRESENT_ALL_JS = r"""
async ([roots, on]) => {
  const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
  const problems = {};
  const clicked = [];
  for (const [i, root] of roots.entries()) {
    const toggle = root.querySelector('.jm-present-toggle');
    if (!toggle) { problems[i] = 'the view has no presentation toggle'; continue; }
    if (root.classList.contains('jm-present') === on) continue;
    // The views switched before this one redraw at their next frames and move it: scrolled again
    // after the frame, and tried once more a frame later while it is still off the viewport or covered
    let hit = null;
    for (let attempt = 0; attempt < 3 && !(hit && (hit === toggle || toggle.contains(hit))); attempt++) {
      toggle.scrollIntoView({block: 'nearest', inline: 'nearest'});
      await frame();
      toggle.scrollIntoView({block: 'nearest', inline: 'nearest'});
      const r = toggle.getBoundingClientRect();
      hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    }
    if (!hit || !(hit === toggle || toggle.contains(hit))) {
      const what = hit ? hit.tagName.toLowerCase() + '.' + String(hit.className || '').split(/\s+/).join('.') : 'nothing';
      problems[i] = `the presentation toggle cannot be clicked: ${what} covers it`;
      continue;
    }
    toggle.click();
    clicked.push(i);
  }
  const start = performance.now();
  while (clicked.some((i) => roots[i].classList.contains('jm-present') !== on)) {
    if (performance.now() - start > 10000) {
      for (const i of clicked) if (roots[i].classList.contains('jm-present') !== on) problems[i] = 'presentation mode did not switch';
      break;
    }
    await frame();
  }
  await frame();
  await frame();
  return problems;
}
"""


def present_all(roots: Any, on: bool = True) -> dict[int, str]:
    """Switch presentation mode in every view `roots` (a locator) finds, as `present` does one by one
    but with one wait for all the redraws; view index -> what went wrong."""
    problems = roots.evaluate_all(f"(rs, on) => ({_PRESENT_ALL_JS})([rs, on])", on)
    return {int(i): text for i, text in problems.items()}


def present(root: Any, on: bool = True) -> None:
    """Switch presentation mode with the widget's own toggle, and wait until the view is redrawn in it."""
    problem = root.evaluate(f"(r, on) => ({_PRESENT_JS})([r, on])", on)
    assert problem is None, problem


def write_page(doc: dict, tmp_path: Any, name: str) -> Any:
    """An offline page of one document (`jaxmagic.to_html`), as a user exports it."""
    import jaxmagic

    path = tmp_path / f"{name}.html"
    jaxmagic.to_html(doc, path)
    return path


def open_view(guarded: Any, path: Any) -> Any:
    """Open a page and return its first view's `.jm-root` once it is on screen."""
    page = guarded.page
    page.goto(path.as_uri(), wait_until="load")
    root = page.locator(".jm-root").first
    root.wait_for(state="visible", timeout=30_000)
    return root


def assert_clean(guarded: Any) -> None:
    """Nothing left the machine and the page logged no error."""
    assert not guarded.blocked and not guarded.offsite_seen, guarded.report()
    assert not guarded.page_errors, guarded.page_errors
    assert not guarded.console_errors, guarded.console_errors


def css_colour(root: Any, value: str, inside: str | None = None) -> str:
    """A CSS colour as the page computes it inside the widget, or inside the element `inside`
    selects (`var(--jm-teal)` -> `rgb(...)`)."""
    return root.evaluate(
        """(r, [v, sel]) => { const host = sel ? r.querySelector(sel) : r;
      const d = document.createElement('div'); d.style.color = v; host.appendChild(d);
      const c = getComputedStyle(d).color; d.remove(); return c; }""",
        [value, inside],
    )
