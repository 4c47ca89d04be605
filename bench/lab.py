"""From a cell's end to its graph drawn, in a real JupyterLab in headless Chromium.

    .venv/bin/python bench/lab.py                 # 10k-eqn %%jaxpr step, then the 50k document
    .venv/bin/python bench/lab.py --rounds 3 --no-50k
    .venv/bin/python bench/lab.py --rounds 0 --rounds-50k 3   # the 50k document alone

Starts a JupyterLab on 127.0.0.1 (tests/browser/harness.py `jupyter_lab`: throwaway dirs,
the venv's kernel), opens a notebook made here and runs its cells one at a time, in turn:

* plain: a fresh ~10k-eqn jitted train step (bench/programs.transformer_step(46), or --program), built
  and first-called (compiled) without a magic: the cell's own time (`time.time()` at its
  first and last line, in the kernel);
* %%jaxpr: the same cell (a fresh function again) under `%%jaxpr`: its own time, and from
  the cell's last line to the graph's first drawn frame (the status line "N of M eqns
  shown", not busy, and the animation frame after it, as bench/browser.py times a first
  render), i.e. the capture's document, the transfer and the first render; and to the whole
  jaxpr text shown in its pane (a big function's document carries its first eqns; the view
  asks the kernel for the rest once the graph is drawn);
* 50k (unless --no-50k): a ~50k-eqn program does not compile in 24 GiB, so its graph
  document is built beforehand from its trace (bench/browser.py's transformer_50k, with
  repeats) and shown with `display(JaxmagicWidget(document))` (what `%%jaxpr` displays):
  from just before the widget is made to the first drawn frame (the document's wire form,
  the transfer and the first render; not the capture).

The kernel's `time.time()` and the page's `Date.now()` are the same machine's clock.
The page is offline (requests that would leave the machine are aborted). Nothing here
is a test: it prints the figures, best-of and median over rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SETUP = f"""import os, sys, time, json
sys.path.insert(0, {str(REPO)!r})
import jax
from bench import programs
from IPython.display import display
from jaxmagic.views.widget import JaxmagicWidget
%load_ext jaxmagic"""

STEP = """_t0 = time.time()
step, args = programs.{program}
out = jax.block_until_ready(step(*args))
_t1 = time.time()"""

TIMES = "print(json.dumps({'t0': _t0, 't1': _t1}))"

DOC_50K = """_doc = json.loads(open({path!r}).read())
_t0 = _t1 = time.time()
display(JaxmagicWidget(_doc))"""

# Armed before a cell runs: the time (Date.now()) its output first shows a graph drawn
# (status "N of M eqns shown", not busy, and the frame after) and a view root at all.
ARM_JS = r"""
(i) => {
  const cell = document.querySelectorAll('[data-jm-host-current] .jp-Notebook .jp-Cell')[i];
  window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs.clear(); // no last round's view
  window.__jmLab = { drawn: null, root: null, text: null };
  const st = () => cell.querySelector('.jm-status');
  const drawn = () => {
    const s = st();
    return !!s && !s.classList.contains('jm-busy') && /\d+ of \d+ eqns shown/.test(s.textContent);
  };
  // the whole jaxpr text shown: the pane has lines and no note says the rest is loading
  const whole = () => {
    const note = cell.querySelector('.jm-pane-note-top');
    return !!cell.querySelector('.jm-text[data-pane="jaxpr"] .jm-line') && (!note || note.hidden);
  };
  const obs = new MutationObserver(() => {
    const lab = window.__jmLab;
    if (lab.root == null && cell.querySelector('.jm-root')) lab.root = Date.now();
    if (lab.drawn == null && drawn()) {
      lab.drawn = -1;
      requestAnimationFrame(() => setTimeout(() => { lab.drawn = Date.now(); }, 0));
    }
    if (lab.text == null && lab.drawn != null && whole()) lab.text = Date.now();
    if (lab.drawn != null && lab.text != null) obs.disconnect();
  });
  obs.observe(cell, { subtree: true, childList: true, characterData: true, attributes: true });
  cell.scrollIntoView();
}
"""

RUN_CELL_JS = r"""
(i) => {
  const panel = window.jupyterapp.shell.currentWidget;
  panel.content.activeCellIndex = i;
  return window.jupyterapp.commands.execute('notebook:run-cell');
}
"""

OUTPUT_JS = r"""
(i) => document.querySelectorAll('[data-jm-host-current] .jp-Notebook .jp-Cell')[i]
  .querySelector('.jp-OutputArea').innerText
"""


def notebook(path: Path, doc_50k: Path | None, program: str) -> list[str]:
    """Write the bench notebook (`program`: a bench/programs.py call); returns its cells' roles."""
    import nbformat

    step = STEP.format(program=program)
    cells, roles = [SETUP], ["setup"]
    cells += [step, TIMES, "%%jaxpr\n" + step, TIMES]
    roles += ["plain", "times", "jaxpr", "times"]
    if doc_50k:
        cells += [DOC_50K.format(path=str(doc_50k)), TIMES]
        roles += ["50k", "times"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return roles


def run_cell(page, i: int, timeout: float) -> None:
    """Run cell i and wait until the kernel is idle again with the cell numbered."""
    from tests.browser.harness import poll
    from tests.browser.hosts import _IDLE_JS, _PROMPTS_JS, dismiss_dialogs

    page.evaluate(RUN_CELL_JS, i)
    state = {"stable": 0}

    def done() -> bool:
        dismiss_dialogs(page)
        prompts = page.evaluate(_PROMPTS_JS)
        ok = i < len(prompts) and "*" not in prompts[i] and page.evaluate(_IDLE_JS)
        state["stable"] = state["stable"] + 1 if ok else 0
        return state["stable"] >= 2

    if not poll(done, timeout, interval=0.2):
        raise RuntimeError(f"cell {i} did not finish in {timeout:.0f}s")


def measure_cell(page, roles: list[str], i: int, timeout: float) -> dict:
    """Run cell i (a step or the 50k display) and its times cell; the figures in seconds."""
    from tests.browser.harness import poll

    page.evaluate(ARM_JS, i)
    run_cell(page, i, timeout)
    run_cell(page, i + 1, 60)
    times = json.loads(page.evaluate(OUTPUT_JS, i + 1).strip().splitlines()[-1])
    row = {"cell": roles[i], "cell s": round(times["t1"] - times["t0"], 3)}
    if roles[i] != "plain":
        poll(lambda: (page.evaluate("window.__jmLab.drawn") or 0) > 0, timeout)
        lab = page.evaluate("window.__jmLab")
        row["end→root s"] = round(lab["root"] / 1000 - times["t1"], 3) if lab["root"] else None
        row["end→drawn s"] = round(lab["drawn"] / 1000 - times["t1"], 3) if (lab["drawn"] or 0) > 0 else None
        poll(lambda: page.evaluate("window.__jmLab.text") is not None, 30)
        text_at = page.evaluate("window.__jmLab.text")
        row["end→whole text s"] = round(max(text_at, lab["drawn"]) / 1000 - times["t1"], 3) if text_at else None
        status = page.evaluate(
            "(i) => { const s = document.querySelectorAll('[data-jm-host-current] .jp-Notebook "
            ".jp-Cell')[i].querySelector('.jm-status'); return s ? s.textContent : null; }",
            i,
        )
        row["status"] = status
    return row


def build_50k() -> Path:
    """bench/browser.py's transformer_50k graph document, with repeats (built once into /tmp/jm-big)."""
    from bench.browser import load_documents, with_repeats

    ((_, path),) = load_documents([], ["transformer_50k"])
    out = Path(tempfile.gettempdir()) / "jm-lab-transformer_50k.json"
    if not out.exists() or out.stat().st_mtime < path.stat().st_mtime:
        out.write_text(json.dumps(with_repeats(json.loads(path.read_text(encoding="utf-8")), True)), encoding="utf-8")
    return out


def summary(rows: list[dict]) -> None:
    """Best-of and median per cell and figure."""
    for role in dict.fromkeys(r["cell"] for r in rows):
        rs = [r for r in rows if r["cell"] == role]
        for key in ("cell s", "end→root s", "end→drawn s", "end→whole text s"):
            xs = [r[key] for r in rs if r.get(key) is not None]
            if xs:
                print(f"| {role} | {key} | best {min(xs):.2f} | median {statistics.median(xs):.2f} | n={len(xs)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2, help="plain and %%jaxpr cells, in turn, this many times")
    ap.add_argument("--no-50k", action="store_true", help="skip the 50k-eqn document")
    ap.add_argument("--rounds-50k", type=int, default=None, help="rounds of the 50k document (default: --rounds)")
    ap.add_argument(
        "--program",
        default="transformer_step(46)",
        help="the step, a bench/programs.py call (mlp_grad(560): ~9.8k eqns that compile in seconds)",
    )
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per cell")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    from tests.browser.harness import jupyter_lab, launch_chromium, open_guarded_page, poll
    from tests.browser.hosts import _IDLE_JS, _MARK_CURRENT_JS, dismiss_dialogs

    doc_50k = None if args.no_50k else build_50k()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="jm-lab-") as tmp:
        nb_path = Path(tmp) / "lab_bench.ipynb"
        roles = notebook(nb_path, doc_50k, args.program)
        with sync_playwright() as pw, jupyter_lab([nb_path]) as lab:
            browser = launch_chromium(pw)
            guarded = open_guarded_page(browser)
            page = guarded.page
            page.goto(lab.lab_url(nb_path.name), wait_until="domcontentloaded", timeout=60_000)
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="visible", timeout=60_000)
            poll(lambda: page.evaluate(_MARK_CURRENT_JS) == nb_path.name, 30)
            poll(lambda: (dismiss_dialogs(page), page.evaluate(_IDLE_JS))[1], 90, interval=0.5)
            run_cell(page, 0, args.timeout)
            for _ in range(args.rounds):
                for i in (roles.index("plain"), roles.index("jaxpr")):
                    row = measure_cell(page, roles, i, args.timeout)
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr)
            if doc_50k:
                for _ in range(args.rounds if args.rounds_50k is None else args.rounds_50k):
                    row = measure_cell(page, roles, roles.index("50k"), args.timeout)
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr)
            if guarded.page_errors:
                print(f"page errors: {guarded.page_errors[:3]}", file=sys.stderr)
            browser.close()
    print("| cell | figure | best | median | n |")
    print("|---|---|---|---|---|")
    summary(rows)


if __name__ == "__main__":
    main()
