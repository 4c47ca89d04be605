"""Notebooks in a real Jupyter kernel (nbclient): the demo, top-level await, Run All stopping on error."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat.v4 import new_code_cell, new_notebook

from jaxmagic.export import notebook_html
from jaxmagic.magics import MAGIC_VIEWS

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
pytestmark = pytest.mark.notebook


def execute(nb, tmp_path):
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
                   store_widget_state=True).execute()
    return nb


def magic_outputs(nb):
    return [(cell, [o for o in cell.outputs if WIDGET_VIEW in o.get("data", {})])
            for cell in nb.cells if cell.cell_type == "code" and cell.source.startswith(MAGIC_PREFIXES)]


MAGIC_PREFIXES = tuple(f"%%{magic}" for magic in MAGIC_VIEWS)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return execute(nbformat.read(ROOT / "demo.ipynb", as_version=4), tmp_path_factory.mktemp("demo"))


def test_demo_runs_and_every_magic_cell_has_the_widget_and_fallbacks(demo):
    cells = magic_outputs(demo)
    assert len(cells) >= 6
    state = demo.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    for cell, outputs in cells:
        assert len(outputs) == 1, cell.source  # exactly one widget per magic cell
        data = outputs[0]["data"]
        assert "data:image/svg+xml;base64," in data["text/html"]
        magic = cell.source.split()[0][2:]
        assert data["text/plain"].startswith(f"%%{magic}")
        doc = state[data[WIDGET_VIEW]["model_id"]]["state"]["doc"]
        assert doc["kind"] == MAGIC_VIEWS[magic], cell.source
        assert (doc.get("functions") or doc.get("entries") or doc.get("lanes") or doc.get("arrays")
                or doc.get("nodes")), cell.source
        assert not [o for o in cell.outputs if o.output_type == "error"]
    assert {cell.source.split()[0] for cell, _ in cells} == set(MAGIC_PREFIXES)  # every magic is shown


def test_demo_export_embeds_every_view(demo):
    page = notebook_html(demo)
    assert page.count('<script type="application/json" data-jaxmagic-doc>') == len(magic_outputs(demo))
    assert "window.__jaxmagic_static = true" in page and "https://" not in page.split("<script type=\"module\">")[0]


def test_top_level_await_and_run_all_stopping_on_error(tmp_path):
    nb = new_notebook(cells=[
        new_code_cell("%load_ext jaxmagic\nimport asyncio, jax, jax.numpy as jnp"),
        new_code_cell("%%jaxpr --name cap\nawait asyncio.sleep(0)\njax.jit(jnp.sin)(1.0)"),
        new_code_cell("%%jaxpr\nraise ValueError('boom')"),
        new_code_cell("print('must not run')"),
    ])
    with pytest.raises(CellExecutionError) as err:
        execute(nb, tmp_path)
    assert "ValueError: boom" in re.sub(r"\x1b\[[0-9;]*m", "", str(err.value))
    assert nb.cells[1].outputs[0]["data"]["text/plain"].startswith("Array(0.84")
    assert WIDGET_VIEW in nb.cells[1].outputs[1]["data"]
    error_cell = nb.cells[2].outputs
    assert [o.output_type for o in error_cell][0] == "error"
    assert any(WIDGET_VIEW in o.get("data", {}) for o in error_cell)  # the view still shows after the traceback
    assert nb.cells[3].outputs == []
