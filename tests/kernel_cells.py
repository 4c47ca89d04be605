"""The corpus of notebook cells run in a real kernel with and without each magic (tests/test_same_result.py).

`CELLS` is a list of (name, source) run in order in one kernel per mode, so later cells use
what earlier ones defined and execution counts line up. Sources carry no magic line: the
test puts `%%<magic> <options>` on top, or a `#` comment in the plain run, so the cell's
lines have the same numbers in both (a traceback's "Cell In[n], line k" is comparable).

Cells that the test interrupts (SIGINT through the kernel manager) are named in `INTERRUPTS`
with the moment to send it.
"""

from __future__ import annotations

INTERRUPT_MARKER = "<<interrupt me now>>"

# A Python loop unrolled into a long jitted program: 0.2-2 s for XLA to compile on the 2-core test
# machine, depending on load. The test sends SIGINT when JAX reports the compile's start.
UNROLLED_STEPS = 1500

CELLS: list[tuple[str, str]] = [
    (
        "imports",
        """\
import asyncio, sys, time
import jax, jax.numpy as jnp
import numpy as np
from functools import partial
from jax import grad, jit, value_and_grad
from jax.random import split
from jax.sharding import NamedSharding, PartitionSpec as P
from tests.grad_programs import small_mlp, softplus, clip_gradient, remat_loss
from tests.jax_versions import shard_map
""",
    ),
    (
        "definitions",
        """\
class Scaler:
    \"\"\"A class defined here, used by later cells.\"\"\"
    def __init__(self, factor):
        self.factor = factor
    def __call__(self, x):
        return x * self.factor

def mse(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)

def init(key, n_in=4, n_out=2):
    kw, kb = split(key)
    return {"w": jax.random.normal(kw, (n_in, n_out)), "b": jax.random.normal(kb, (n_out,)) * 0.1}
""",
    ),
    (
        "no_jax",
        """\
words = "the quick brown fox jumps over the lazy dog".split()
counts = {w: len(w) for w in sorted(set(words))}
total = sum(counts.values())
""",
    ),
    (
        "jit_basic",
        """\
@jax.jit
def f(x, y):
    return jnp.dot(x + 1, y + 1)

out = f(jnp.ones((3, 4)), jnp.ones(4))
""",
    ),
    (
        "jit_static_recompile",
        """\
@partial(jax.jit, static_argnames="n")
def power_sum(x, n):
    acc = x
    for _ in range(n - 1):
        acc = acc * x
    return acc.sum()

powers = [power_sum(jnp.arange(3.0), n=n) for n in (1, 2, 3, 2)]
shapes = [power_sum(jnp.ones(k), n=2) for k in (2, 3, 4, 5, 6, 7)]
weak = [power_sum(2.0, n=2), power_sum(jnp.float32(2.0), n=2)]
""",
    ),
    (
        "jit_pytree",
        """\
@jit
def affine(params, batch):
    x, y = batch
    return {"pred": x @ params["w"] + params["b"], "target": y}, (x.sum(), [y.mean()])

params = init(jax.random.key(0))
batch = (jnp.linspace(-1, 1, 12).reshape(3, 4), jnp.zeros((3, 2)))
tree_out = affine(params, batch)
tree_out2 = affine(params, (batch[0] * 2, batch[1]))
""",
    ),
    (
        "jit_earlier_function",
        """\
again = [f(jnp.ones((3, 4)) * k, jnp.ones(4)) for k in range(3)]
scaled = jax.jit(Scaler(3.0))(jnp.arange(4.0))
""",
    ),
    (
        "grad_family",
        """\
x_in = jnp.linspace(-1, 1, 12).reshape(3, 4)
y_in = jnp.ones((3, 2))
g = grad(mse)(params, x_in, y_in)
loss, g2 = value_and_grad(mse)(params, x_in, y_in)
primal_out, pullback = jax.vjp(lambda p: mse(p, x_in, y_in), params)
(ct,) = pullback(jnp.float32(1.0))
tangent_out = jax.jvp(jnp.sin, (jnp.arange(3.0),), (jnp.ones(3),))
mlp_loss, mlp_params, mlp_x = small_mlp()
mlp_grads = jax.grad(mlp_loss)(mlp_params, mlp_x)
custom = jax.grad(lambda v: jnp.sum(softplus(clip_gradient(v)) * 10.0))(jnp.array([-2.0, 0.5, 3.0]))
remat = jax.grad(remat_loss)(jnp.eye(3) * 0.5, jnp.ones((2, 3)))
""",
    ),
    (
        "jacobians",
        """\
jr = jax.jacrev(jnp.sin)(jnp.arange(3.0))
jf = jax.jacfwd(lambda v: v ** 3)(jnp.arange(3.0))
hess = jax.hessian(lambda v: jnp.sum(v ** 3))(jnp.arange(3.0))
lin_out, lin_fn = jax.linearize(jnp.tanh, jnp.arange(3.0))
lin_tangent = lin_fn(jnp.ones(3))
""",
    ),
    (
        "vmap",
        """\
per_example = jax.jit(jax.vmap(jax.grad(mse), in_axes=(None, 0, 0)))(params, x_in[:, None, :], y_in[:, None, :])
batched = jax.vmap(lambda v: jnp.outer(v, v))(jnp.arange(6.0).reshape(2, 3))
""",
    ),
    (
        "control_flow",
        """\
@jax.jit
def flow(x):
    x = jax.lax.cond(x.sum() > 0, jnp.tanh, jnp.sin, x)
    total, hist = jax.lax.scan(lambda c, xi: (c * 0.9 + xi, c), 0.0, x)
    shrunk = jax.lax.while_loop(lambda t: t > 1.0, lambda t: t / 2, total)
    return shrunk, hist

flow_out = flow(jnp.arange(5.0))
eager_loop = jax.lax.fori_loop(0, 4, lambda i, acc: acc + i, 0.0)
""",
    ),
    (
        "train_step",
        """\
@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(mse)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss

trained = params
losses = []
for _ in range(3):
    trained, step_loss = train_step(trained, x_in, y_in)
    losses.append(step_loss)
""",
    ),
    (
        "shard_map",
        """\
mesh = jax.make_mesh((8,), ("data",))
sharded = jax.device_put(jnp.arange(32.0), NamedSharding(mesh, P("data")))

@jax.jit
def global_sum(x):
    return shard_map(lambda b: jax.lax.psum(b.sum(), "data"), mesh=mesh, in_specs=P("data"), out_specs=P())(x)

gsum = global_sum(sharded)
doubled = jax.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, P("data")))(sharded)
""",
    ),
    (
        "prng",
        """\
key = jax.random.key(42)
draws = []
for _ in range(5):
    key, sub = split(key)
    draws.append(jax.random.normal(sub, (2,)))
legacy = jax.random.PRNGKey(7)
reused_a = jax.random.uniform(legacy, (3,))
reused_b = jax.random.uniform(legacy, (3,))  # key reuse, shown by %%prng, legal JAX

@jax.jit
def noisy(key, x):
    k1, k2 = jax.random.split(key)
    return x + jax.random.normal(k1, x.shape), jax.random.bernoulli(k2, 0.5, x.shape)

noise, mask = noisy(jax.random.fold_in(key, 3), jnp.zeros(4))
""",
    ),
    (
        "prints",
        """\
print("to stdout", 1, 2.5)
print("to stderr", file=sys.stderr)

@jax.jit
def chatty(x):
    print("tracing chatty with", x.shape)  # runs only while JAX traces
    jax.debug.print("chatty sees {}", x.sum())
    return x * 2

chatty_out = chatty(jnp.arange(3.0)).block_until_ready()
chatty_again = chatty(jnp.arange(3.0) + 1).block_until_ready()
print("done", chatty_out.tolist())
""",
    ),
    (
        "jax_logs",
        """\
import logging
logging.getLogger("jax").warning("jax says: %s", "watch out")
logging.getLogger("jax._src.dispatch").error("a jax error record")
logging.getLogger("jax._src.interpreters.pxla").info("below the last resort's level: never shown")
logged = jax.jit(lambda v: v * 7)(jnp.ones(2)).block_until_ready()
""",
    ),
    (
        "display",
        """\
from IPython.display import HTML, Markdown, display
display(HTML("<b>bold</b> <i>html</i>"))
display(Markdown("# A title\\n\\nsome *markdown*"))
displayed = True
""",
    ),
    (
        "returns_value",
        """\
shown = jnp.arange(5.0) * 2
jax.jit(lambda v: v.cumsum())(shown)
""",
    ),
    (
        "returns_dict",
        """\
{"total": total, "first": words[0], "loss": float(losses[-1])}
""",
    ),
    (
        "raise_in_jit",
        """\
@jax.jit
def bad_shapes(a, b):
    c = a + 1
    return jnp.dot(c, b)

before_error = 1
bad_shapes(jnp.ones((3, 4)), jnp.ones(5))
after_error = 2
""",
    ),
    (
        "raise_in_python",
        """\
def lookup(table, name):
    return table[name]

lookup_result = lookup(counts, "quick")
lookup(counts, "missing")
""",
    ),
    (
        "sys_exit",
        """\
exit_before = "set"
sys.exit(3)
""",
    ),
    (
        "top_level_await",
        """\
await asyncio.sleep(0)
awaited = jax.jit(jnp.cos)(0.5)
awaited
""",
    ),
    (
        "syntax_error",
        """\
ok_line = 1
broken = (1,
nope = 2
""",
    ),
    (
        "after_errors",
        """\
still_fine = f(jnp.ones((3, 4)), jnp.ones(4)) + Scaler(2.0)(jnp.ones(3))
print("runs normally", still_fine.tolist())
""",
    ),
    (
        "interrupt_sleep",
        f"""\
interrupt_started = True
print("{INTERRUPT_MARKER}", flush=True)
time.sleep(60)
never_bound = True
""",
    ),
    (
        "after_interrupt_sleep",
        """\
next_ok = f(jnp.ones((3, 4)), jnp.ones(4)).sum()
next_ok
""",
    ),
    (
        "interrupt_compile",
        f"""\
def unrolled(x):
    for i in range({UNROLLED_STEPS}):
        x = jnp.sin(x) * 1.0001 + i
    return x

big = jax.jit(unrolled)
big_out = big(jnp.ones(8))
never_bound_either = True
""",
    ),
    (
        "after_interrupt_compile",
        """\
small_after = jax.jit(lambda v: v + 1)(jnp.arange(3.0))
print("runs normally", small_after.tolist(), interrupt_started)
small_after
""",
    ),
]

# Cell name -> when the test sends SIGINT: `after_marker` seconds after INTERRUPT_MARKER shows on
# stdout, or as soon as XLA starts compiling the function named `on_compile_of`.
INTERRUPTS: dict[str, dict] = {
    "interrupt_sleep": {"after_marker": 0.3},
    "interrupt_compile": {"on_compile_of": "unrolled"},
}
