"""Writes tests/notebooks/larger_programs.ipynb from the cells below.

The notebook holds programs larger than the demo's stops, the sizes at which framing, legends and
colours go wrong first: a 2-layer transformer's gradient, a loop that compiles for 30 shapes, a
Flax NNX train step, and a 2x4-mesh matmul after a cell that left 30 arrays bound. The browser
tests run it in JupyterLab and Notebook 7 (tests/browser/test_hosts.py). The notebook is
committed; this script keeps it reviewable. Every cell runs in well under 5 s on 2 CPU cores.

    .venv/bin/python tools/make_larger_notebook.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

OUT = Path(__file__).resolve().parents[1] / "tests" / "notebooks" / "larger_programs.ipynb"

SETUP = """\
import os
os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')
import jax
import jax.numpy as jnp
%load_ext jaxmagic"""

TRANSFORMER_GRAD = """\
%%grad_graph
def attention(p, x):
    q, k, v = x @ p['wq'], x @ p['wk'], x @ p['wv']
    weights = jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1)
    return x + (weights @ v) @ p['wo']

def mlp(p, x):
    return x + jax.nn.gelu(x @ p['w1']) @ p['w2']

def transformer_loss(layers, x, y):
    for p in layers:
        x = mlp(p, attention(p, x))
    return jnp.mean((x.mean(axis=-1) - y) ** 2)

def init_layer(key, d=16, hidden=32):
    names = [('wq', (d, d)), ('wk', (d, d)), ('wv', (d, d)), ('wo', (d, d)),
             ('w1', (d, hidden)), ('w2', (hidden, d))]
    keys = jax.random.split(key, len(names))
    return {n: 0.1 * jax.random.normal(k, s) for k, (n, s) in zip(keys, names)}

layers = [init_layer(jax.random.key(i)) for i in range(2)]
tokens = jax.random.normal(jax.random.key(7), (8, 16))
targets = jnp.linspace(-1.0, 1.0, 8)
grads = jax.grad(transformer_loss)(layers, tokens, targets)"""

RECOMPILE_LOOP = """\
%%trace
@jax.jit
def normalise(x):
    return (x - x.mean()) / (x.std() + 1e-6)

for n in range(1, 31):          # a new shape each time: 30 traces and compiles
    normalise(jnp.arange(float(n)))"""

NNX_TRAIN_STEP = """\
%%jaxpr
from flax import nnx

class MLP(nnx.Module):
    def __init__(self, rngs):
        self.hidden = nnx.Linear(8, 32, rngs=rngs)
        self.out = nnx.Linear(32, 1, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.hidden(x)))

@nnx.jit
def train_step(model, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    params = nnx.state(model, nnx.Param)
    nnx.update(model, jax.tree.map(lambda p, g: p - 0.05 * g, params, grads))
    return loss

model = MLP(nnx.Rngs(0))
xs, ys = jnp.ones((16, 8)), jnp.zeros((16, 1))
loss = train_step(model, xs, ys)"""


def thirty_arrays() -> str:
    """One plain cell that binds 30 arrays to 30 names, written out so a reader sees them."""
    names = [f"a{i:02d}" for i in range(30)]
    rows = [", ".join(names[i : i + 10]) for i in range(0, 30, 10)]
    return (
        "# 30 arrays left bound by an earlier cell: the sharding view must not lead with them\n"
        "(" + ",\n ".join(rows) + ") = [jnp.full((4, 4), float(i)) for i in range(30)]"
    )


SHARDED_MATMUL = """\
%%sharding
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(AxisType.Auto,) * 2)
acts = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P('data', 'model')))
kernel = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P('model', None)))

@jax.jit
def sharded_matmul(acts, kernel):
    # the contracted dimension is split over 'model': each device holds a partial sum,
    # and XLA adds them up with an all-reduce
    return acts @ kernel

out = sharded_matmul(acts, kernel)
out.shape"""

KEY_REUSE = """\
%%prng
key = jax.random.key(0)
for _ in range(20):
    key, sub = jax.random.split(key)
    noise = jax.random.normal(sub, (4,))
dropout_a = jax.random.bernoulli(key, 0.5, (4,))
dropout_b = jax.random.bernoulli(key, 0.5, (4,))   # the same key again: the same mask"""


def build() -> nbformat.NotebookNode:
    """The notebook, cell by cell, each with a line of prose that says what it exercises."""
    cells = [
        new_markdown_cell(
            "# Larger programs\n\nPrograms a little bigger than the demo's stops, for the "
            "host tests: every view must open framed, legible and in colour."
        ),
        new_code_cell(SETUP),
        new_markdown_cell("## The gradient of a 2-layer transformer (attention + MLP per layer)"),
        new_code_cell(TRANSFORMER_GRAD),
        new_markdown_cell("## A jitted function called on 30 shapes: 30 compiles"),
        new_code_cell(RECOMPILE_LOOP),
        new_markdown_cell("## A Flax NNX model and its jitted train step"),
        new_code_cell(NNX_TRAIN_STEP),
        new_markdown_cell("## Arrays from earlier cells, then a matmul on a 2x4 mesh"),
        new_code_cell(thirty_arrays()),
        new_code_cell(SHARDED_MATMUL),
        new_markdown_cell("## A key used twice"),
        new_code_cell(KEY_REUSE),
    ]
    for i, cell in enumerate(cells):
        cell["id"] = f"cell-{i:02d}"  # stable ids: rerunning the script changes nothing
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build(), OUT)
    print(f"wrote {OUT}")
