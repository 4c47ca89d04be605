"""Real model code, written the way people write it, under every magic in a real IPython shell.

Each program's step is defined and compiled in earlier cells and called in a magic cell. For
each magic: the calls, hits and misses equal JAX's (the step's Python body counts its traces),
the graph exists, its inputs are named as the user wrote them, and "defined" is the user's cell.
"""

from __future__ import annotations

import pytest

import jaxmagic
from jaxmagic.capture import source

pytest.importorskip("flax")
pytest.importorskip("equinox")

MAGICS = ("jaxpr", "trace", "grad_graph", "sharding", "prng")
STEPS = 8

NNX_MLP = """
import jax, jax.numpy as jnp, optax
from flax import nnx

class MLP(nnx.Module):
    def __init__(self, rngs):
        self.hidden = nnx.Linear(4, 8, rngs=rngs)
        self.out = nnx.Linear(8, 1, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.hidden(x)))

def make_optimizer(model, tx):
    try:
        return nnx.Optimizer(model, tx, wrt=nnx.Param)
    except TypeError:  # Flax before 0.11
        return nnx.Optimizer(model, tx)

def apply_update(opt, model, grads):
    try:
        opt.update(model, grads)
    except TypeError:
        opt.update(grads)

traces = []
model = MLP(nnx.Rngs(0))
opt = make_optimizer(model, optax.adam(1e-3))

@nnx.jit
def train_step(model, opt, x, y):
    traces.append(1)
    def loss_fn(model):
        return ((model(x) - y) ** 2).mean()
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    apply_update(opt, model, grads)
    return loss

x, y = jnp.ones((16, 4)), jnp.ones((16, 1))
"""

NNX_TRANSFORMER = """
class Block(nnx.Module):
    def __init__(self, dim, rngs):
        self.norm = nnx.LayerNorm(dim, rngs=rngs)
        self.attention = nnx.MultiHeadAttention(num_heads=2, in_features=dim, decode=False, rngs=rngs)
        self.mlp = nnx.Linear(dim, dim, rngs=rngs)

    def __call__(self, x):
        x = x + self.attention(self.norm(x))
        return x + nnx.gelu(self.mlp(x))

class Transformer(nnx.Module):
    def __init__(self, rngs):
        self.embed = nnx.Embed(32, 16, rngs=rngs)
        self.blocks = nnx.List([Block(16, rngs) for _ in range(2)]) if hasattr(nnx, "List") else [Block(16, rngs) for _ in range(2)]
        self.head = nnx.Linear(16, 32, rngs=rngs)

    def __call__(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)

lm = Transformer(nnx.Rngs(1))
lm_opt = make_optimizer(lm, optax.adamw(1e-3))

@nnx.jit
def lm_step(lm, lm_opt, tokens):
    traces.append(1)
    def loss_fn(lm):
        logits = lm(tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()
    loss, grads = nnx.value_and_grad(loss_fn)(lm)
    apply_update(lm_opt, lm, grads)
    return loss

tokens = jnp.arange(2 * 9).reshape(2, 9) % 32
"""

LINEN = """
import flax.linen as nn

class LinenMLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(8, name="hidden")(x)))

linen_model = LinenMLP()
variables = linen_model.init(jax.random.key(0), x)
apply = jax.jit(linen_model.apply)
tx = optax.sgd(0.1)
linen_state = tx.init(variables)

@jax.jit
def linen_step(variables, linen_state, x, y):
    traces.append(1)
    loss, grads = jax.value_and_grad(lambda v: ((linen_model.apply(v, x) - y) ** 2).mean())(variables)
    updates, linen_state = tx.update(grads, linen_state)
    return optax.apply_updates(variables, updates), linen_state, loss
"""

EQUINOX = """
import equinox as eqx

eqx_model = eqx.nn.MLP(4, 1, 8, 2, key=jax.random.key(0))

@eqx.filter_jit
def eqx_step(model, x, y):
    traces.append(1)
    loss, grads = eqx.filter_value_and_grad(lambda m: ((jax.vmap(m)(x) - y) ** 2).mean())(model)
    return loss, eqx.apply_updates(model, jax.tree.map(lambda g: -0.1 * g, grads))
"""

TRAINER = """
class Trainer:
    def __init__(self, params):
        self.params = params
        self.step = jax.jit(self._step)

    def _step(self, params, x):
        traces.append(1)
        return jax.tree.map(lambda p: p * 0.5, params), (x * 2).sum()

trainer = Trainer({"w": jnp.ones(4)})
"""

CALLS = """
for _ in range({steps}):
    loss = train_step(model, opt, x, y)
    lm_loss = lm_step(lm, lm_opt, tokens)
    apply(variables, x)
    variables, linen_state, _ = linen_step(variables, linen_state, x, y)
    _, eqx_model = eqx_step(eqx_model, x, y)
    trainer.params, _ = trainer.step(trainer.params, x)
"""

# Step name -> (one input the graph must name as the user wrote it, the cell that defines it).
EXPECTED = {
    "train_step": ("model.hidden.kernel", NNX_MLP),
    "lm_step": ("lm.blocks[0].attention.query.kernel", NNX_TRANSFORMER),
    "LinenMLP.apply": ("variables['params']['hidden']['kernel']", LINEN),
    "linen_step": ("variables['params']['hidden']['kernel']", LINEN),
    "eqx_step": ("model.layers[0].weight", EQUINOX),
    "Trainer._step": ("params['w']", TRAINER),
}


@pytest.fixture(scope="module")
def shell(magic_shell):
    for cell in (NNX_MLP, NNX_TRANSFORMER, LINEN, EQUINOX, TRAINER, CALLS.format(steps=1)):
        result = magic_shell.run_cell(cell, store_history=True)
        assert result.success, result.error_in_exec
    return magic_shell


def _inputs(fn: dict) -> list[str | None]:
    by_id = {v["id"]: v for v in fn["vars"]}
    return [by_id[v].get("path") for v in fn["groups"][0]["invars"]]


@pytest.mark.parametrize("magic", MAGICS)
def test_model_steps_defined_earlier_are_recorded_with_the_users_names(shell, magic):
    traces = shell.user_ns["traces"]
    before = len(traces)
    result = shell.run_cell(f"%%{magic} --name reached\n" + CALLS.format(steps=STEPS), store_history=True)
    assert result.success, result.error_in_exec
    assert len(traces) == before  # JAX traced nothing: every call is a hit
    cap = shell.user_ns["reached"]
    names = [c.name for c in cap.calls]
    assert collections_count(names) == {name: STEPS for name in EXPECTED}, names
    assert all(c.cache_hit for c in cap.calls)
    graph = jaxmagic.document(cap, "graph")
    by_name = {fn["name"]: fn for fn in graph["functions"]}
    for name, (input_name, cell) in EXPECTED.items():
        fn = by_name[name]
        assert fn["nodes"] and input_name in _inputs(fn), (name, _inputs(fn)[:8])
        assert source.is_cell_file(fn["source"]["file"]) and fn["source"]["code"] in cell, (name, fn["source"])
    linear = [
        n["src"]
        for n in by_name["train_step"]["nodes"]
        if n["src"] and (n["src"].get("lib") or "").startswith("flax/nnx/nn/linear.py")
    ]
    assert linear and all(s["code"] == "return self.out(nnx.relu(self.hidden(x)))" for s in linear)  # user's line first


def collections_count(names: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_a_new_shape_is_a_miss_with_its_graph_and_reason(shell):
    from jaxmagic.capture import jax_compat

    if not jax_compat.explaining_is_safe():  # the reason's paths come from JAX's explanation
        pytest.skip(
            f"jaxmagic leaves jax_explain_cache_misses off on JAX {jax_compat.jax.__version__}: it breaks programs"
        )
    traces = shell.user_ns["traces"]
    before = len(traces)
    cell = "%%trace --name missed\nfor n in (4, 4, 6):\n    eqx_step(eqx_model, jnp.ones((n, 4)), jnp.ones((n, 1)))\n"
    assert shell.run_cell(cell, store_history=True).success
    cap = shell.user_ns["missed"]
    assert [c.cache_hit for c in cap.calls] == [False, True, False] and len(traces) - before == 2
    changed = {c.path for c in cap.calls[2].miss_reason.explanation.changes}
    assert changed == {"x", "y"}  # JAX's explanation names Equinox's partition; told with the user's names
    caption = jaxmagic.document(cap, "timeline")["caption"][0]
    assert caption.startswith(
        "eqx_step was compiled twice: x changed shape from f32[16,4] to f32[4,4]; "
        "y changed shape from f32[16,1] to f32[4,1]"
    ), caption


def test_identical_model_blocks_fold_forward_and_backward(shell):
    """The NNX transformer's two blocks (a Python loop, no name scopes) fold into one box in the
    forward pass (`jvp(…)`) and one in the backward (`transpose(…)` › `jvp(…)`). The blocks'
    einsums run under `vmap(…)` scopes of their own: one box per block, so a block stays whole."""
    assert shell.run_cell("%%jaxpr --name folded\nlm_step(lm, lm_opt, tokens)\n", store_history=True).success
    [fn] = jaxmagic.document(shell.user_ns["folded"], "graph")["functions"]
    by_scope = {tuple(r["scope"]): r for r in fn["repeats"] if len(r["units"]) == 2 and r["scope"]}
    assert set(by_scope) == {("jvp(…)",), ("transpose(…)", "jvp(…)")}, [r["scope"] for r in fn["repeats"]]
    for scope, repeat in by_scope.items():
        first, second = repeat["units"]
        assert second[0] == first[1] and second[1] - second[0] == first[1] - first[0] > 40
        nodes = fn["nodes"]
        assert any(tuple(nodes[i]["scope"][: len(scope) + 1]) == (*scope, "vmap(…)") for i in range(*first))
    caption = " ".join(jaxmagic.document(shell.user_ns["folded"], "graph")["caption"])
    assert "identical blocks" in caption and "folded" in caption


def test_the_view_says_why_an_nnx_model_has_no_module_boxes(shell):
    """NNX modules add no name scopes: the caption says so (and how to get boxes); Linen and
    Equinox's layers do add them, so their steps get boxes and no such sentence."""
    cell = (
        "%%jaxpr --name boxes\ntrain_step(model, opt, x, y)\nlinen_step(variables, linen_state, x, y)\n"
        "eqx_step(eqx_model, x, y)\n"
    )
    assert shell.run_cell(cell, store_history=True).success
    doc = jaxmagic.document(shell.user_ns["boxes"], "graph")
    assert any(s.startswith("No module boxes: model's modules leave no name scopes") for s in doc["caption"])
    by_name = {fn["name"]: fn for fn in doc["functions"]}
    linen_scopes = {tuple(n["scope"]) for n in by_name["linen_step"]["nodes"]}
    assert ("jvp(…)", "LinenMLP", "hidden") in linen_scopes and (
        "transpose(…)",
        "jvp(…)",
        "LinenMLP",
        "hidden",
    ) in linen_scopes
    assert any("eqx.nn.Linear" in n["scope"] for n in by_name["eqx_step"]["nodes"])
    from jaxmagic.model.captions.graph import _unscoped_model

    assert _unscoped_model([by_name["linen_step"]]) is None and _unscoped_model([by_name["eqx_step"]]) is None
    assert _unscoped_model([by_name["train_step"]]) == "model"
