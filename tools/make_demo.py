"""Writes demo.ipynb from the cells below: the notebook is committed, and this keeps its text reviewable
in one place. Run from the repository root after editing a cell here (or edit demo.ipynb and regenerate
this file's cells from it); tests/test_notebook.py checks that the two agree.

Every sentence of a markdown cell says only what the view under the next code cell shows: check a
change against the executed page (`python -m jaxmagic.export demo.ipynb --execute -o build/demo.html`).
"""

import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def md(cell_id: str, text: str):
    return new_markdown_cell(text, id=cell_id)


def code(cell_id: str, text: str):
    return new_code_cell(text, id=cell_id)


CELLS = [
    md(
        "intro",
        """\
# A guided tour of JAX, with jaxmagic

Ten short stops through the ideas behind JAX: tracing, compilation and its cache, static arguments, control flow, `vmap`, pytrees, gradients, random keys, sharding, and a training loop that puts them together. Every cell runs exactly as it would without its magic line; below the cell's own output, jaxmagic shows what JAX did. In the graph views, click a node to see the line it came from, search for a primitive, and expand a group (▸) to open a sub-jaxpr.

Every view can also be replayed: ▶ in the bar under its title (or space, with the view focused) plays what JAX did step by step, ←/→ step through it, and the line beside the controls says what each step is. **Present** switches a view to large text and high contrast for a projector; `--present` on any magic opens it that way.""",
    ),
    md(
        "setup-md",
        """\
## Setup
`XLA_FLAGS` must be set before JAX starts: it gives this CPU 8 simulated devices for the sharding stop. `%jaxmagic` prints the JAX version, the backend and its devices, and the magics available.""",
    ),
    code(
        "setup",
        """\
import os
os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')
import numpy as np
import jax
import jax.numpy as jnp
from functools import partial
%load_ext jaxmagic""",
    ),
    code(
        "env",
        """\
%jaxmagic""",
    ),
    md(
        "s1-md",
        """\
## 1. Pure functions and tracing
`jax.jit` does not start by running `f` on your numbers. It calls `f` once with *tracers*, stand-ins that carry only a shape and a dtype (`f32[3]`), and records every primitive operation they pass through. The record is a **jaxpr**: typed inputs, a list of equations, outputs, which XLA then compiles. Look at the five nodes: `x ** 2` became `integer_pow[y=2]`, and nothing simplified sin² + cos² to 1, because a jaxpr records what the code did, not what it means.""",
    ),
    code(
        "s1",
        """\
%%jaxpr
@jax.jit
def f(x):
    return jnp.sin(x) ** 2 + jnp.cos(x) ** 2

f(jnp.arange(3.0))""",
    ),
    md(
        "s2-md",
        """\
## 2. `jit` and its cache: a new shape means a new compile
A jitted function keeps a cache of compiled programs keyed by the *shapes and dtypes* of its arguments, not their values. The first call traces and compiles; another `f32[3]` is a cache hit that runs the compiled program directly; an `f32[4]` is a new key, so JAX traces and compiles again. In the timeline, find the trace and compile spans of the first and third calls, the cheap hit between them, and the reason given for the recompile. The `print` is a Python side effect, so it runs only while tracing: twice for three calls (the timeline flags it).""",
    ),
    code(
        "s2",
        """\
%%trace
@jax.jit
def normalize(x):
    print("tracing normalize for shape", x.shape)
    return (x - x.mean()) / x.std()

x3 = np.array([1.0, 2.0, 3.0], np.float32)  # NumPy inputs: making them compiles nothing
normalize(x3)
normalize(x3 * 2)                            # same shape and dtype: cache hit, no print
normalize(np.arange(4, dtype=np.float32))    # new shape: traced and compiled again""",
    ),
    md(
        "s3-md",
        """\
## 3. Static and traced arguments
A traced argument has no value at trace time, so Python cannot loop over it: `range(n)` on a tracer raises an error. `static_argnames='n'` passes `n` as a plain Python value instead, and the value becomes part of the cache key. So new values of the traced `x` reuse the compiled program, while a new `n` is traced and compiled again: the timeline gives that reason for the third call.""",
    ),
    code(
        "s3",
        """\
%%trace
@partial(jax.jit, static_argnames='n')
def power_sum(x, n):
    total = x
    for k in range(2, n + 1):   # a Python loop: it runs while tracing, so n must be static
        total = total + x ** k
    return total

x3 = np.arange(3, dtype=np.float32)
power_sum(x3, n=2)
power_sum(x3 + 10, n=2)   # new values of a traced argument: cache hit
power_sum(x3, n=3)        # new value of a static argument: retraced""",
    ),
    md(
        "s3b-md",
        """\
The static value is baked into the program. The Python loop ran during tracing and left no loop behind: each tab below is one value of `n` (see the signature), with one `integer_pow` and one `add` per term and the exponents written into the equations.""",
    ),
    code(
        "s3b",
        """\
%%jaxpr
power_sum(x3, n=2)
power_sum(x3, n=3)""",
    ),
    md(
        "s4-md",
        """\
## 4. Control flow: `lax.cond` and `lax.scan`
A Python `if` on a traced value fails for the same reason: the tracer has no value to test. `lax.cond` traces *both* branches into sub-jaxprs and picks one when the program runs. `lax.scan` traces its loop body once, however long the loop, where a Python `for` would unroll it. Expand the `cond` node (▸) to see its two branches, and the `scan` node to see the body, with the carry going in and coming out.""",
    ),
    code(
        "s4",
        """\
%%jaxpr
@jax.jit
def squash(x):
    # `if x.sum() > 0:` would raise here: the condition is a tracer
    return jax.lax.cond(x.sum() > 0, jnp.tanh, jnp.sin, x)

@jax.jit
def running_mean(xs):
    def body(mean, x):            # (carry, one element) -> (new carry, one output)
        mean = 0.9 * mean + 0.1 * x
        return mean, mean
    return jax.lax.scan(body, 0.0, xs)

squash(jnp.arange(4.0))
running_mean(jnp.arange(8.0))""",
    ),
    md(
        "s5-md",
        """\
## 5. `vmap`: write it for one example, run it on a batch
`jax.vmap` traces a function with tracers that carry one extra *batch dimension*, and rewrites each primitive to handle it. `predict` is written for a single input vector; `vmap` maps it over the rows of `xs`, while `in_axes=None` shares the weights. Switch the graph to *vmap* mode to see where the batch dimension sits in every value: the weights have none, and the vector-matrix product became one matrix-matrix product over the whole batch.""",
    ),
    code(
        "s5",
        """\
%%jaxpr --vmap
def predict(w, b, x):             # one example: x is f32[3]
    return jnp.tanh(x @ w + b)

@jax.jit
def batched_predict(w, b, xs):    # a batch: xs is f32[4, 3]
    return jax.vmap(predict, in_axes=(None, None, 0))(w, b, xs)

batched_predict(jnp.ones((3, 2)), jnp.zeros(2), jnp.arange(12.0).reshape(4, 3))""",
    ),
    md(
        "s6-md",
        """\
## 6. Pytrees: parameters as nested dicts and lists
JAX functions take *pytrees*, nested dicts, lists and tuples of arrays, as arguments. `jit` flattens the tree into its leaf arrays, which become the jaxpr's inputs (the graph's input ports, and the avals of the tab's signature), and keeps the tree's structure as part of the cache key: an extra layer would mean a new trace. Each input port of the graph names its leaf by its path (`params['layers'][0]['w'] · c: f32[3,4]`): the paths the cell prints, in flattening order (dict keys are sorted, so `head` comes first). The *StableHLO* pane beside the graph names the program's arguments by the same paths.""",
    ),
    code(
        "s6",
        """\
%%jaxpr
@jax.jit
def mlp(params, x):
    for layer in params['layers']:
        x = jnp.tanh(x @ layer['w'] + layer['b'])
    return x @ params['head']

params = {'layers': [{'w': jnp.ones((3, 4)), 'b': jnp.zeros(4)},
                     {'w': jnp.ones((4, 4)), 'b': jnp.zeros(4)}],
          'head': jnp.ones((4, 1))}
for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
    print(jax.tree_util.keystr(path), leaf.shape)
mlp(params, jnp.ones((2, 3)))""",
    ),
    md(
        "s7-md",
        """\
## 7. Gradients: forward, backward, and what is saved between them
`jax.grad` transforms the program. JAX runs the forward pass, keeps the intermediate values the derivative will need (the *residuals*), and builds a backward pass that carries the gradient from the loss back to each input. `%%grad_graph` shows JAX's own split: the forward graph, the backward graph mirrored below it (gradients flow right to left), and the residuals between them. Click a residual to see which forward op made it and which backward op reads it.""",
    ),
    code(
        "s7",
        """\
%%grad_graph
def loss(w, x, y):
    pred = jnp.tanh(x @ w)
    return jnp.mean((pred - y) ** 2)

w = jnp.array([0.5, -0.3, 0.8])
x = jnp.arange(12.0).reshape(4, 3) / 10
y = jnp.array([0.1, 0.2, 0.3, 0.4])
jax.grad(loss)(w, x, y)""",
    ),
    md(
        "s7b-md",
        """\
`jax.value_and_grad` returns the loss and the gradients from one forward pass. With `--values` the view also records the numbers: the cotangent on every backward edge and the gradient of every parameter. This loss hides a classic trap: `jnp.where(y > 0, jnp.sqrt(y), 0.0)` is finite at `y = 0`, but the derivative of `sqrt` there is infinite, and the backward multiplies it by 0, a NaN that reaches every gradient (the bias gradient is printed below). The findings name both ops; the first layer is under `jax.checkpoint`, so its work is recomputed in the backward instead of saved.""",
    ),
    code(
        "s7b",
        """\
%%grad_graph --values
def mlp_loss(params, x):
    h = jax.checkpoint(lambda w, x: jnp.tanh(x @ w))(params['layer1']['w'], x)
    y = h @ params['layer2']['w'] + params['layer2']['b']
    return jnp.mean(jnp.where(y > 0, jnp.sqrt(y), 0.0))

mlp_params = {'layer1': {'w': 0.5 * jnp.abs(jax.random.normal(jax.random.key(2), (4, 8)))},
              'layer2': {'w': jnp.full((8, 1), 0.3), 'b': jnp.zeros(1)}}
x = jnp.concatenate([jnp.zeros((1, 4)), jnp.ones((3, 4))])
loss_value, grads = jax.value_and_grad(mlp_loss)(mlp_params, x)
loss_value, grads['layer2']['b']""",
    ),
    md(
        "s8-md",
        """\
## 8. Random numbers: a key is used once
JAX random numbers are a pure function of a key: the same key always gives the same numbers, so each key should be used once and `key, sub = jax.random.split(key)` makes fresh ones. `%%prng` draws the tree of every key the cell touched: roots, splits, and each sampler that consumed a key (teal: never used, orange: used once, red: reused), with 98 of the loop's 100 identical steps folded into one node (×98). `noise_a` and `noise_b` come from the same key, so they are the same numbers (printed below), and that reuse is drawn in red with both lines.""",
    ),
    code(
        "s8",
        """\
%%prng
key = jax.random.key(0)
for _ in range(100):                     # the usual pattern: split, then use the new subkey
    key, sub = jax.random.split(key)
    w = jax.random.normal(sub, (3,))

noise_a = jax.random.normal(key, (3,))
noise_b = jax.random.normal(key, (3,))   # bug: the same key again
print("noise_a == noise_b:", bool((noise_a == noise_b).all()))""",
    ),
    md(
        "s9-md",
        """\
## 9. Sharding over 8 devices
A `NamedSharding` places an array's blocks on a mesh of devices: `P('data')` splits the rows over the `data` axis, `P()` replicates. Under `jit`, XLA carries the shardings through the program and inserts the communication it needs: in `data_parallel_grad`, an all-reduce that sums the 8 shards' contributions to the weights' gradient. `shard_map` instead lets you write the per-device program yourself, with explicit collectives such as `psum`. `%%sharding` draws the meshes and every array as a grid of blocks coloured by device (here also a 2x4 mesh sharding `w` as `P('x', 'y')`); click a device to light up everything it holds.""",
    ),
    code(
        "s9",
        """\
%%sharding
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
dp = jax.make_mesh((8,), ('data',), axis_types=(AxisType.Auto,))
grid = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)
batch = jax.device_put(jnp.ones((64, 16)), NamedSharding(dp, P('data')))
weights = jax.device_put(0.1 * jnp.ones((16, 4)), NamedSharding(dp, P()))
w = jax.device_put(jnp.arange(64.0).reshape(8, 8), NamedSharding(grid, P('x', 'y')))

@jax.jit
def data_parallel_grad(weights, batch):
    return jax.grad(lambda w: jnp.mean((batch @ w) ** 2))(weights)

grads = data_parallel_grad(weights, batch)

@jax.jit
def sharded_matmul(x, w):
    return jax.shard_map(lambda x, w: jax.lax.psum(x @ w, 'data'), mesh=dp,
                         in_specs=(P(None, 'data'), P('data')), out_specs=P())(x, w)

y = sharded_matmul(jax.device_put(jnp.ones((4, 64)), NamedSharding(dp, P(None, 'data'))), batch)
grads.shape, y.shape""",
    ),
    md(
        "s10-md",
        """\
## 10. Putting it together: a small training loop
An MLP (a list of dicts) learns y = sin(3x) on 128 points. The first cell makes the data and the parameters; the second defines a jitted `train_step`, which computes `value_and_grad` of the loss and applies plain SGD to every leaf of the parameter pytree with `jax.tree.map`, and runs it 501 times.""",
    ),
    code(
        "s10-setup",
        """\
def init_mlp(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [{'w': jax.random.normal(k, (m, n)) / jnp.sqrt(m), 'b': jnp.zeros(n)}
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

def mlp_apply(params, x):
    for layer in params[:-1]:
        x = jnp.tanh(x @ layer['w'] + layer['b'])
    return x @ params[-1]['w'] + params[-1]['b']

def mse(params, x, y):
    return jnp.mean((mlp_apply(params, x) - y) ** 2)

xs = jnp.linspace(-1, 1, 128)[:, None]
ys = jnp.sin(3 * xs)
model = init_mlp(jax.random.key(0), [1, 32, 32, 1])""",
    ),
    md(
        "s10b-md",
        """\
The timeline shows what `jit` buys: one trace and compile on the first step, then 500 cache hits that only run the compiled program. Compare the one compile with the 500 steps together: for a model this small, compiling is most of the cost. The printed loss goes down.""",
    ),
    code(
        "s10",
        """\
%%trace
@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(mse)(params, x, y)
    return loss, jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)

for step in range(501):
    loss, model = train_step(model, xs, ys)
    if step % 100 == 0:
        print(f"step {step:3d}  loss {loss:.4f}")""",
    ),
    md(
        "gf-md",
        """\
# Going further
The same views on bigger programs, and what else they show.""",
    ),
    md(
        "gf1-md",
        """\
## Custom derivatives and rematerialisation
`jax.custom_jvp` gives a function your own derivative rule (here a `log` that stays finite near 0), and `jax.checkpoint` marks a computation to be recomputed in the backward pass instead of saved. Both show as groups holding a sub-jaxpr of their own: expand them to see the wrapped computation.""",
    ),
    code(
        "gf1",
        """\
%%jaxpr
@jax.custom_jvp
def safe_log(x):
    return jnp.log(jnp.maximum(x, 1e-6))

safe_log.defjvp(lambda primals, tangents: (safe_log(primals[0]), tangents[0] / primals[0]))

@jax.jit
def remat_loss(w, x):
    h = jax.checkpoint(lambda v: jnp.tanh(v @ w))(x)
    return safe_log(jnp.sum(h ** 2))

remat_loss(jnp.ones((4, 4)), jnp.ones((2, 4)))""",
    ),
    md(
        "gf2-md",
        """\
## A transformer block: name scopes, and the capture in Python
Name scopes (`jax.named_scope`, or Flax module names) become collapsible boxes. In this train step `attention` and `mlp` each appear twice: in the forward pass (`jvp(attention)`) and in the backward pass (`transpose(jvp(attention))`), the names JAX gives the differentiated code. `--name step_capture` also keeps the capture in a variable, so Python can read what was recorded: the next cell shows the first recorded call.""",
    ),
    code(
        "gf2",
        """\
%%jaxpr --name step_capture
def block(params, x):
    with jax.named_scope("attention"):
        q, k, v = x @ params["wq"], x @ params["wk"], x @ params["wv"]
        weights = jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1)
        x = x + weights @ v
    with jax.named_scope("mlp"):
        x = x + jax.nn.gelu(x @ params["w1"]) @ params["w2"]
    return x

@jax.jit
def block_step(params, x):
    loss_fn = lambda p: jnp.mean(block(p, x) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    return loss, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

key = jax.random.key(0)
block_params = {name: 0.1 * jax.random.normal(jax.random.fold_in(key, i), shape)
                for i, (name, shape) in enumerate([("wq", (16, 16)), ("wk", (16, 16)), ("wv", (16, 16)),
                                                   ("w1", (16, 32)), ("w2", (32, 16))])}
block_loss, block_params = block_step(block_params, jnp.ones((8, 16)))
block_loss""",
    ),
    code(
        "gf2b",
        """\
step_capture.calls[0]""",
    ),
    md(
        "gf3-md",
        """\
## Real models: repeated layers, linked levels, cost
A 24-layer MLP written as a Python loop unrolls into hundreds of eqns. jaxmagic recognises the identical layers and shows each run as one collapsed box with its count. Beside the graph, the jaxpr, the StableHLO JAX lowered it to and the HLO XLA compiled are linked: select an eqn and its ops light up in each. *Colour* shades nodes by estimated FLOPs or bytes.""",
    ),
    code(
        "gf3",
        """\
%%jaxpr
@jax.jit
def deep_grad(layers, x):
    def loss(layers):
        h = x
        for i, w in enumerate(layers):
            with jax.named_scope(f"dense_{i}"):
                h = jnp.tanh(h @ w)
        return jnp.mean(h ** 2)
    return jax.grad(loss)(layers)

layers = [0.1 * jax.random.normal(jax.random.fold_in(jax.random.key(1), i), (32, 32)) for i in range(24)]
deep_grads = deep_grad(layers, jnp.ones((4, 32)))""",
    ),
    md(
        "gf4-md",
        """\
## Forward values and vmap batch dims together
`--values` records a summary of every intermediate value of the first call (switch the graph to *forward*); `--vmap` records where the batch dimension sits in every value of a vmapped program (switch to *vmap*). Here `x @ w` is negative for two of the examples, so `log` makes a NaN: the caption and the *forward* summaries show where it first appears. The per-example gradients stay finite (the derivative of `log` needs only `1 / (x @ w)`).""",
    ),
    code(
        "gf4",
        """\
%%jaxpr --values --vmap
@jax.jit
def per_example(w, xs):
    def loss(w, x):
        return jnp.log(x @ w).sum()
    return jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, xs)

per_example(jnp.array([[1.0, -1.0], [0.5, 0.2]]), jnp.arange(6.0).reshape(3, 2))""",
    ),
    md(
        "gf5-md",
        """\
## Keys inside programs
`%%prng` also follows keys into jitted functions and loops. `dropout_step` splits its key inside the program and returns the next one, the correct pattern. `noisy` draws from the same key on every one of its 10 scan iterations: one line of code, ten reuses. Legacy `PRNGKey` arrays are checked too, where JAX's own checker does not see them.""",
    ),
    code(
        "gf5",
        """\
%%prng
@jax.jit
def dropout_step(key, x):
    key, sub = jax.random.split(key)
    keep = jax.random.bernoulli(sub, 0.9, x.shape)
    return key, jnp.where(keep, x / 0.9, 0.0)

key, h = jax.random.key(3), jnp.ones(4)
for _ in range(5):
    key, h = dropout_step(key, h)

@jax.jit
def noisy(key, x):
    def body(h, _):
        return h + jax.random.normal(key, h.shape), None   # the same key every iteration
    return jax.lax.scan(body, x, None, length=10)[0]

legacy = jax.random.PRNGKey(42)
a = jax.random.uniform(legacy)
b = jax.random.uniform(legacy)   # reused: a legacy key
noisy(jax.random.key(1), h)""",
    ),
]


def notebook() -> nbformat.NotebookNode:
    nb = new_notebook(
        cells=CELLS, metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    )
    nb.nbformat_minor = 5
    return nb


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else "demo.ipynb"
    nbformat.write(notebook(), path)
    print(f"wrote {path}")
