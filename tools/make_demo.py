"""Writes demo.ipynb from the cells below (the notebook is committed; this keeps it reviewable)."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

cells = [
    new_markdown_cell("# jaxmagic demo\n\nEvery cell runs exactly as it would without the magic; "
                      "below its output, jaxmagic shows what JAX did. Click a node for its source line, "
                      "search for a primitive, expand a group (▸) to see a sub-jaxpr."),
    new_code_cell("import os\nos.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=8')\n"
                  "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n%load_ext jaxmagic"),
    new_code_cell("%jaxmagic"),
    new_markdown_cell("## Tracing: a pure function becomes a jaxpr\n`jit` traces `f` with abstract values "
                      "(`f32[3]`), records each primitive, and compiles the result."),
    new_code_cell("%%jaxpr\n@jax.jit\ndef f(x):\n    return jnp.sin(x) ** 2 + jnp.cos(x) ** 2\n\nf(jnp.arange(3.0))"),
    new_code_cell("%%jaxpr\n@jax.jit\ndef g(x, y):\n    return jnp.dot(x + 1, y + 1)\n\ng(jnp.ones((3, 4)), jnp.ones(4))"),
    new_markdown_cell("## Control flow: `cond`, `scan` and `while` carry sub-jaxprs\nEach branch and loop body "
                      "is a group of its own; collapse it and its inputs and outputs stay visible."),
    new_code_cell("%%jaxpr\n@partial(jax.jit, static_argnames='steps')\ndef loop(x, steps):\n"
                  "    x = jax.lax.cond(x.sum() > 0, jnp.tanh, jnp.sin, x)\n"
                  "    def body(carry, xi):\n        return carry * 0.9 + xi, carry\n"
                  "    total, history = jax.lax.scan(body, 0.0, x)\n"
                  "    return jax.lax.fori_loop(0, steps, lambda i, t: t / 2, total), history\n\n"
                  "loop(jnp.arange(4.0), steps=3)"),
    new_markdown_cell("## Custom derivatives and rematerialisation"),
    new_code_cell("%%jaxpr\n@jax.custom_jvp\ndef safe_log(x):\n    return jnp.log(jnp.maximum(x, 1e-6))\n\n"
                  "safe_log.defjvp(lambda primals, tangents: (safe_log(primals[0]), tangents[0] / primals[0]))\n\n"
                  "@jax.jit\ndef loss(w, x):\n    h = jax.checkpoint(lambda v: jnp.tanh(v @ w))(x)\n"
                  "    return safe_log(jnp.sum(h ** 2))\n\nloss(jnp.ones((4, 4)), jnp.ones((2, 4)))"),
    new_markdown_cell("## Sharding over 8 devices with `shard_map`"),
    new_code_cell("%%jaxpr\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
                  "mesh = jax.make_mesh((8,), ('data',))\n\n"
                  "@jax.jit\ndef global_mean(x):\n"
                  "    local = jax.shard_map(lambda b: jax.lax.psum(b.sum(), 'data'), mesh=mesh,\n"
                  "                          in_specs=P('data'), out_specs=P())(x)\n"
                  "    return local / x.size\n\n"
                  "x = jax.device_put(jnp.arange(32.0), NamedSharding(mesh, P('data')))\nglobal_mean(x)"),
    new_markdown_cell("## A small transformer train step\nName scopes (`jax.named_scope`, or Flax module "
                      "names) become collapsible layers."),
    new_code_cell('''%%jaxpr --name step_capture
def block(params, x):
    with jax.named_scope("attention"):
        q, k, v = x @ params["wq"], x @ params["wk"], x @ params["wv"]
        weights = jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1)
        x = x + weights @ v
    with jax.named_scope("mlp"):
        x = x + jax.nn.gelu(x @ params["w1"]) @ params["w2"]
    return x

@jax.jit
def train_step(params, x):
    loss_fn = lambda p: jnp.mean(block(p, x) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    return loss, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

key = jax.random.key(0)
params = {name: 0.1 * jax.random.normal(jax.random.fold_in(key, i), shape)
          for i, (name, shape) in enumerate([("wq", (16, 16)), ("wk", (16, 16)), ("wv", (16, 16)),
                                              ("w1", (16, 32)), ("w2", (32, 16))])}
loss, params = train_step(params, jnp.ones((8, 16)))
loss'''),
    new_code_cell("step_capture.calls[0]"),
    new_markdown_cell("## Real models: repeated layers, linked levels, cost\nA 24-layer MLP written as a Python loop "
                      "unrolls into hundreds of eqns. jaxmagic recognises the identical layers and shows each run "
                      "as one collapsed box with its count. Beside the graph, the jaxpr, the StableHLO JAX lowered "
                      "it to and the HLO XLA compiled are linked: select an eqn and its ops light up in each. "
                      "*Colour* shades nodes by estimated FLOPs or bytes."),
    new_code_cell('''%%jaxpr
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
grads = deep_grad(layers, jnp.ones((4, 32)))'''),
    new_markdown_cell("## Forward and vmap modes\n`--values` records a summary of every intermediate value of the "
                      "first call (switch the graph to *forward*); `--vmap` records where the batch dimension sits "
                      "in every value of a vmapped program (switch to *vmap*). Here `log` of a negative number "
                      "makes a NaN, and the summary shows where it first appears."),
    new_code_cell('''%%jaxpr --values --vmap
@jax.jit
def per_example(w, xs):
    def loss(w, x):
        return jnp.log(x @ w).sum()
    return jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, xs)

per_example(jnp.array([[1.0, -1.0], [0.5, 2.0]]), jnp.arange(6.0).reshape(3, 2))'''),
    new_markdown_cell("## Recompiles: a new shape means a new trace\n`f` from the first cell is already compiled "
                      "for `f32[3]` (a cache hit); a new shape traces and compiles again, so the view has two tabs, "
                      "one per signature. The repeat call is a hit."),
    new_code_cell("%%jaxpr\nf(jnp.arange(3.0))\nf(jnp.arange(4.0))\nf(jnp.arange(4.0))"),
]
nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                        "language": "python"}})
nbformat.write(nb, "demo.ipynb")
print("wrote demo.ipynb")
