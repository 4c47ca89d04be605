"""Google Colab's runtime: its IPython 7 / ipywidgets 7 / traitlets 5.7 / anywidget 0.9 pins.

jaxmagic's dependency floors are ones Colab's runtime already meets, so installing it there
upgrades none of the kernel's own packages (`test_colab_pins_are_kept`, tools/check_colab_pins.py).
On ipywidgets 7 a widget displays through `_ipython_display_`, not `_repr_mimebundle_`, so
these tests check the displayed output itself: the widget view, `text/html` (summary and
picture) and `text/plain`, whichever ipywidgets runs this test. Run them in a venv with
Colab's pins to check Colab's path (README, "Colab"); in the main venv they check ipywidgets 8's.
"""

from __future__ import annotations

import html
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

# One small cell per magic: what each output must carry is checked, not what the views draw.
SETUP = """\
%load_ext jaxmagic
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

@jax.jit
def f(x):
    return jnp.sin(x) * 2
"""
MAGIC_CELLS = {
    "jaxpr": "f(jnp.arange(3.0))",
    "trace": "f(jnp.arange(4.0))\nf(jnp.arange(5.0))",
    "grad_graph": "g = jax.grad(lambda w: jnp.sum(jnp.tanh(w) ** 2))(jnp.arange(3.0))",
    "sharding": (
        "mesh = Mesh(np.array(jax.devices()), ('d',))\n"
        "xs = jax.device_put(jnp.arange(8.0 * len(jax.devices())), NamedSharding(mesh, P('d')))\n"
        "ys = jax.jit(lambda v: v * 2)(xs)"
    ),
    "prng": "k1, k2 = jax.random.split(jax.random.key(0))\nz = jax.random.normal(k1, (3,))",
}
VERSIONS = (
    "import IPython, ipywidgets, traitlets\nprint(IPython.__version__, ipywidgets.__version__, traitlets.__version__)"
)
KINDS = {"jaxpr": "graph", "trace": "timeline", "grad_graph": "grad", "sharding": "sharding", "prng": "keys"}


def _versions() -> list[str]:
    import IPython
    import ipywidgets
    import traitlets

    return [IPython.__version__, ipywidgets.__version__, traitlets.__version__]


def _check_output(magic: str, data: dict, state: dict | None) -> None:
    """One magic's displayed output: the widget view of a live model, a real summary, the text."""
    view = data.get(WIDGET_VIEW)
    assert view and view.get("model_id"), f"%%{magic}: no widget view in {sorted(data)}"
    if state is not None:  # the view names the model whose `doc` is this magic's document
        doc = state[view["model_id"]]["state"]["doc"]
        assert doc["kind"] == KINDS[magic], (magic, doc.get("kind"))
    plain, page = data.get("text/plain", ""), data.get("text/html", "")
    assert plain.startswith(f"%%{magic}"), f"%%{magic}: text/plain is {plain[:120]!r}"
    title = plain.split("\n", 1)[0]
    assert html.escape(title, quote=False) in page or html.escape(title) in page, (
        f"%%{magic}: text/html has no summary titled {title!r}: {page[:200]!r}"
    )
    assert "data:image/svg+xml;base64," in page, f"%%{magic}: text/html has no picture: {page[:300]!r}"


def test_displayed_widget_carries_view_html_and_text(magic_shell):
    """In this process's IPython, displaying as a kernel does: all three parts on ipywidgets 7 and 8."""
    from IPython.utils.capture import capture_output

    import jaxmagic
    from jaxmagic.views.static_html import fallback_html, text_summary

    magic_shell.run_cell("import jax, jax.numpy as jnp\nf = jax.jit(lambda x: jnp.cos(x) + 1)\n")
    with jaxmagic.capture(magic_shell.user_ns) as cap:
        magic_shell.run_cell("f(jnp.ones(3))\n")
    widget = jaxmagic.view(cap, "graph")
    hook = magic_shell.display_formatter.ipython_display_formatter
    was, hook.enabled = hook.enabled, True  # as in a kernel (ipykernel turns it on, a terminal shell off)
    try:
        with capture_output() as shown:
            jaxmagic.show(cap, "graph")
    finally:
        hook.enabled = was
    assert len(shown.outputs) == 1, [sorted(o.data) for o in shown.outputs]
    data = shown.outputs[0].data
    assert data["text/html"] == fallback_html(widget.document)
    assert data["text/plain"] == text_summary(widget.document)
    assert data[WIDGET_VIEW]["model_id"] and data[WIDGET_VIEW]["model_id"] != widget.model_id
    assert len(cap.calls) == 1
    widget.close()


@pytest.mark.notebook
def test_every_magic_shows_widget_and_fallbacks_in_a_kernel(tmp_path):
    """Every magic in a real kernel of this venv: one output with the view, `text/html`, `text/plain`."""
    pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(
        cells=[new_code_cell(SETUP)]
        + [new_code_cell(f"%%{magic}\n{body}") for magic, body in MAGIC_CELLS.items()]
        + [new_code_cell(VERSIONS)]
    )
    nbclient.NotebookClient(
        nb, timeout=240, kernel_name="python3", store_widget_state=True, resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    versions = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    assert versions.split() == _versions(), "the kernel runs another environment than this test"
    for magic, cell in zip(MAGIC_CELLS, nb.cells[1:]):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, (magic, errors)
        shown = [o for o in cell.outputs if o.output_type == "display_data"]
        assert len(shown) == 1, (magic, [o.get("data", {}).keys() for o in cell.outputs])
        _check_output(magic, shown[0]["data"], state)
        doc = state[shown[0]["data"][WIDGET_VIEW]["model_id"]]["state"]["doc"]
        if magic != "jaxpr":  # lines are named as the reader knows them: IPython 7 keeps no map of its own
            assert doc.get("cells") and cell.execution_count in doc["cells"].values(), (magic, doc.get("cells"))
    from jaxmagic.export import notebook_html  # the saved ipywidgets 7 state exports as 8's does

    assert notebook_html(nb).count('<script type="application/json" data-jaxmagic-doc>') == len(MAGIC_CELLS)
    prng = nb.cells[1 + list(MAGIC_CELLS).index("prng")]
    text = next(o for o in prng.outputs if o.output_type == "display_data")["data"]["text/plain"]
    assert f"cell [{prng.execution_count}], line 2" in text, text


def test_colab_pins_are_kept():
    """pip's resolver (metadata only, ~5 s) installs jaxmagic's declared dependencies for Colab's Python
    under Colab's pins: every pin is kept. The floors before Colab support (ipython>=8, ipywidgets>=8,
    traitlets>=5.9) are refused by the same check, so it can fail."""
    if importlib.util.find_spec("tomllib") is None and importlib.util.find_spec("tomli") is None:
        pytest.skip("reading pyproject.toml needs tomllib (Python 3.11+) or tomli")
    if importlib.util.find_spec("pip") is None:
        pytest.skip("pip is not installed in this environment")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_colab_pins as pins
    finally:
        sys.path.remove(str(ROOT / "tools"))
    code, lines = pins.check_fresh()
    if code == 2:
        pytest.skip(f"pip reached no package index: {lines}")
    assert code == 0, "\n".join(lines)
    assert sorted(line.split("==")[0] for line in lines) == sorted(pins.COLAB_PINS)
    old = ["jax>=0.4.38", "ipython>=8.0", "anywidget>=0.9", "ipywidgets>=8.0", "traitlets>=5.9"]
    assert pins.check_fresh(requirements=old)[0] == 1
