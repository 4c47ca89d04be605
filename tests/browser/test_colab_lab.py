"""Every magic's widget in an ipywidgets 7 front end: JupyterLab 3 with jupyterlab_widgets 1.

Colab's runtime runs ipywidgets 7 (tests/test_colab.py checks its kernel side). This runs the
five magics in JupyterLab 3 served from the environment running this test, with its kernel,
and checks that each widget mounts (`.jm-root`, its document drawn) with no page error.

Runs only where this Python has the ipywidgets 7 stack and JupyterLab 3 (skipped elsewhere):
    python3.11 -m venv .venv-colab
    .venv-colab/bin/pip install ipython==7.34.0 ipywidgets==7.7.1 traitlets==5.7.1 anywidget==0.9.21 \
        jax==0.7.2 jaxlib==0.7.2 ipykernel==6.17.1 jupyter_client==6.1.12 \
        "jupyterlab>=3.6,<4" "jupyterlab_widgets<2" pytest pytest-timeout nbclient nbformat playwright
    .venv-colab/bin/pip install --no-deps -e .
    .venv-colab/bin/python -m pytest tests/browser/test_colab_lab.py tests/test_colab.py
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest

from . import harness
from .harness import GuardedPage, jupyter_lab, poll
from .hosts import cell_errors, open_and_run_all, shutdown_kernel

pytestmark = pytest.mark.browser


def _ipywidgets7_lab() -> str | None:
    """Why this environment is not an ipywidgets 7 + JupyterLab 3 one, or None when it is."""
    try:
        import ipywidgets
    except ImportError:
        return "ipywidgets is not installed"
    if not callable(getattr(ipywidgets.Widget, "_ipython_display_", None)):
        return "the installed ipywidgets displays through _repr_mimebundle_ (ipywidgets 8), not ipywidgets 7's path"
    try:
        lab = importlib.metadata.version("jupyterlab")
        manager = importlib.metadata.version("jupyterlab_widgets")
    except importlib.metadata.PackageNotFoundError as exc:
        return f"{exc.name} is not installed"
    if not lab.startswith("3.") or not manager.startswith("1."):
        return f"needs JupyterLab 3 and jupyterlab_widgets 1 (ipywidgets 7's front end), found {lab} and {manager}"
    return None


_NOT_HERE = _ipywidgets7_lab()
# A view's message boxes (unknown kind, a document it cannot read or draw) and how much it drew.
_DRAWN_JS = """(root) => [[...root.querySelectorAll('.jm-unsupported')].map((el) => el.textContent),
                          root.querySelectorAll('*').length]"""


def _notebook(path: Path) -> Path:
    from tests.test_colab import MAGIC_CELLS, SETUP

    cells = [SETUP] + [f"%%{magic}\n{body}" for magic, body in MAGIC_CELLS.items()]
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
    }
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


@pytest.mark.skipif(_NOT_HERE is not None, reason=f"not an ipywidgets 7 front end: {_NOT_HERE}")
def test_every_magic_mounts_in_jupyterlab3_with_ipywidgets7(guarded_page: GuardedPage, tmp_path, monkeypatch) -> None:
    from tests.test_colab import MAGIC_CELLS

    monkeypatch.setattr(harness, "PYTHON", sys.executable)  # this environment's Lab and kernel
    lab4_command = harness._server_command
    # JupyterLab 3 has no `extension_manager` setting: given one, it links no lab extension at all
    monkeypatch.setattr(
        harness,
        "_server_command",
        lambda *args: [arg for arg in lab4_command(*args) if not arg.startswith("--LabApp.extension_manager=")],
    )
    page = guarded_page.page
    with jupyter_lab([_notebook(tmp_path / "colab.ipynb")]) as lab:
        open_and_run_all(page, lab.lab_url("colab.ipynb"), len(MAGIC_CELLS) + 1)
        assert not cell_errors(page), cell_errors(page)
        roots = page.locator("[data-jm-host-current] .jm-root")
        mounted = poll(
            lambda: roots.count() >= len(MAGIC_CELLS) and page.locator(".jm-root .jm-loading").count() == 0, 60
        )
        guarded_page.screenshot("colab-jupyterlab3", full_page=True)
        assert mounted, f"{roots.count()} of {len(MAGIC_CELLS)} views mounted; {guarded_page.report()}"
        drawn = [roots.nth(i).evaluate(_DRAWN_JS) for i in range(roots.count())]
        shutdown_kernel(page)
    assert len(drawn) == len(MAGIC_CELLS), drawn
    for magic, (messages, elements) in zip(MAGIC_CELLS, drawn):
        assert not messages and elements > 20, f"%%{magic}: {messages or f'only {elements} elements drawn'}"
    assert not guarded_page.page_errors, guarded_page.page_errors
    assert not guarded_page.offsite_seen, guarded_page.offsite_seen
