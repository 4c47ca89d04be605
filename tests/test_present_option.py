"""`--present` (and `present=True` in the Python API): the widget opens in presentation mode.

The document carries the hint (`"present": true`, docs/schema.md) on the wire, so a widget and an
exported page open the same way; without the option the document has no such field.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython

import jaxmagic
from jaxmagic.views import JaxmagicWidget

CELLS = {
    "jaxpr": "@jax.jit\ndef p(x):\n    return jnp.sin(x) * 2\np(jnp.ones(3))\n",
    "trace": "@jax.jit\ndef p(x):\n    return x + 1\np(jnp.ones(3))\n",
    "grad_graph": "jax.grad(lambda x: jnp.sum(jnp.sin(x)))(jnp.ones(3))\n",
    "sharding": "jax.device_put(jnp.ones(8))\n",
    "prng": "k = jax.random.key(0)\njax.random.normal(k, (2,))\n",
}


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()
    shell.run_line_magic("load_ext", "jaxmagic")
    shell.run_cell("import jax, jax.numpy as jnp\n")
    yield shell
    shell.run_line_magic("unload_ext", "jaxmagic")


@pytest.fixture
def shown(monkeypatch):
    """Every widget the magics display, instead of sending it to a front end."""
    import IPython.display

    out: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: out.extend(objs))
    return out


@pytest.mark.parametrize("magic", sorted(CELLS))
def test_present_option_opens_every_view_in_presentation_mode(ip, shown, magic):
    assert ip.run_cell(f"%%{magic} --present\n{CELLS[magic]}").success
    assert ip.run_cell(f"%%{magic}\n{CELLS[magic]}").success
    with_option, without = [w for w in shown if isinstance(w, JaxmagicWidget)]
    assert with_option.document.get("present") is True and with_option.doc.get("present") is True  # logical and wire
    assert "present" not in without.document and "present" not in without.doc


def test_present_with_static_is_the_static_view(ip, shown):
    """`--static` draws the script-free fallback: there is nothing to present, and it says nothing."""
    assert ip.run_cell(f"%%trace --present --static\n{CELLS['trace']}").success
    assert shown and not any(isinstance(w, JaxmagicWidget) for w in shown)


def test_python_api_present_keyword():
    with jaxmagic.capture({}) as cap:

        @jax.jit
        def q(x):
            return x * 3

        q(jnp.ones(2))
    assert jaxmagic.view(cap, "trace", present=True).document["present"] is True
    assert "present" not in jaxmagic.view(cap, "trace").document
    assert "present" not in jaxmagic.document(cap, "trace")  # data, not display: only views carry the hint
