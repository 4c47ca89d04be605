"""The grad document (`model/grad.py`): every residual, link and gradient checked against JAX's own answers.

Residuals are compared with `saved_residuals` (what JAX's vjp keeps for the backward pass) as
multisets of avals and in total bytes; every id the document names must be a real node or var of
the graph it points into, and the var a residual names must be what that node produces or reads.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmagic
from bench.programs import transformer_step
from jaxmagic.capture import jax_compat
from jaxmagic.capture.grads.split import grad_split
from jaxmagic.capture.record import ArgSpec, Capture, GradCall, SourceLocation
from jaxmagic.model import grad as grad_model
from jaxmagic.model.grad import MAX_LISTED_BY_SOURCE, grad_document
from jaxmagic.model.grad_findings import LARGE_RESIDUAL_BYTES, LARGE_RESIDUAL_SHARE, is_large_residual
from tests.grad_programs import block_args, block_loss, clip_gradient, remat_loss, softplus, stacked_blocks

try:  # the public name moved between JAX versions; the function is the same
    from jax.ad_checkpoint import saved_residuals  # type: ignore[attr-defined]
except ImportError:
    from jax._src.ad_checkpoint import saved_residuals

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schema.md"


# ---------------------------------------------------------------------------------------------
# Programs


def mlp_loss(params, x):
    h = x
    for name in ("w1", "w2", "w3"):
        h = jnp.tanh(h @ params[name] + params["b"])
    return jnp.mean(h**2)


def mlp_args():
    ks = jax.random.split(jax.random.key(0), 3)
    params = {f"w{i + 1}": jax.random.normal(k, (6, 6)) * 0.3 for i, k in enumerate(ks)}
    params["b"] = jnp.full(6, 0.1)
    return params, jax.random.normal(jax.random.key(1), (4, 6))


def remat_args():
    return jnp.ones((4, 4)) * 0.3, jnp.ones((3, 4))


def tanh_chain(params, x):
    for _ in range(6):
        x = jnp.tanh(x * params["scale"] + params["shift"])
    return jnp.sum(x)


def tanh_args():
    return {"scale": jnp.full(5, 1.5), "shift": jnp.linspace(-1.0, 1.0, 5)}, jnp.linspace(-2.0, 2.0, 5)


def custom_jvp_loss(params, x):
    return jnp.mean(softplus(x @ params["w"]) ** 2)


def custom_jvp_args():
    return {"w": jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)}, jnp.ones((2, 4))


CASES = {
    "mlp": (mlp_loss, mlp_args),
    "transformer_block": (block_loss, block_args),
    "remat": (remat_loss, remat_args),
    "tanh_chain": (tanh_chain, tanh_args),
    "custom_jvp": (custom_jvp_loss, custom_jvp_args),
}


def arg_specs(names, args) -> tuple[ArgSpec, ...]:
    """One spec per leaf, named as the capture names arguments (`params['w1']`)."""
    return tuple(
        ArgSpec(path=name + jax.tree_util.keystr(kp), aval=jax_compat.short_aval(jax_compat.aval_of(leaf)))
        for name, value in zip(names, args)
        for kp, leaf in jax.tree_util.tree_flatten_with_path(value)[0]
    )


def grad_call(f, args, name=None, names=("params", "x"), index=0, specs=True, split=None) -> GradCall:
    return GradCall(
        index=index,
        kind="grad",
        name=name or f.__name__,
        source=None,
        call_site=None,
        argnums=(0,),
        has_aux=False,
        args=arg_specs(names, args) if specs else (),
        traced=False,
        split=split if split is not None else grad_split(f, args),
    )


def split_entry(f, args, **kw) -> dict:
    doc = grad_document(Capture(grads=[grad_call(f, args, **kw)]))
    assert [e["origin"] for e in doc["entries"]] == ["split"]
    return doc["entries"][0]


def jax_residuals(f, *args) -> collections.Counter:
    """JAX's residuals as avals, less those "from a literal": a constant known at trace time stays
    inline in the backward eqn that reads it (see docs/design.md), so no memory holds it."""
    return collections.Counter(
        jax_compat.short_aval(aval) for aval, src in saved_residuals(f, *args) if src != "from a literal"
    )


def nbytes(aval_text: str) -> int:
    dtype, dims = re.fullmatch(r"(\w+)\[([\d,]*)\]", aval_text).groups()
    size = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2, "f64": 8, "bool": 1}[dtype]
    return size * int(np.prod([int(d) for d in dims.split(",") if d], dtype=np.int64))


def by_id(items):
    return {item["id"]: item for item in items}


# ---------------------------------------------------------------------------------------------
# Eager splits


@pytest.mark.parametrize("name", sorted(CASES))
def test_split_residuals_equal_saved_residuals(name):
    f, make = CASES[name]
    args = make()
    entry = split_entry(f, args, names=("w", "x") if name == "remat" else ("params", "x"))
    kept = [r for r in entry["residuals"] if not (isinstance(r["producer"], dict) and "literal" in r["producer"])]
    theirs = jax_residuals(lambda p: f(p, *args[1:]), args[0])
    assert collections.Counter(r["aval"] for r in kept) == theirs
    assert sum(r["bytes"] for r in kept) == sum(nbytes(a) * n for a, n in theirs.items()) > 0
    assert entry["residual_bytes"] == sum(r["bytes"] for r in entry["residuals"])

    fwd, bwd = entry["forward"], entry["backward"]
    fwd_nodes, bwd_nodes = by_id(fwd["nodes"]), by_id(bwd["nodes"])
    fwd_vars, bwd_vars = by_id(fwd["vars"]), by_id(bwd["vars"])
    fwd_outs = [o.get("var") for o in fwd["groups"][0]["outvars"]]
    bwd_ins = bwd["groups"][0]["invars"]
    for r in entry["residuals"]:
        assert r["backward_vars"] and all(v in bwd_ins and bwd_vars[v]["aval"] == r["aval"] for v in r["backward_vars"])
        if isinstance(r["producer"], str):  # a forward node makes it, and its output is what the forward returns
            assert r["forward_var"] in fwd_nodes[r["producer"]]["outs"] and r["forward_var"] in fwd_outs
            assert fwd_vars[r["forward_var"]]["aval"] == r["aval"] and r["source"] is not None
        elif "input" in r["producer"]:
            k = r["producer"]["input"]
            assert fwd["groups"][0]["invars"][k] == r["forward_var"]
        for c in r["consumers"]:  # every consumer is a backward node reading it
            assert any(op.get("var") in r["backward_vars"] for op in bwd_nodes[c]["ins"])
        assert r["consumers"] or any(o.get("var") in r["backward_vars"] for o in bwd["groups"][0]["outvars"])


def test_mlp_links_every_backward_node_to_a_forward_node():
    entry = split_entry(mlp_loss, mlp_args())
    fwd_nodes, bwd_nodes = by_id(entry["forward"]["nodes"]), by_id(entry["backward"]["nodes"])
    links, users = entry["links"], by_id(entry["user_ops"])
    assert set(links["backward"]) == set(bwd_nodes) and len(bwd_nodes) > 20
    assert set(links["forward"]) == set(fwd_nodes)
    assert set(links["forward"].values()) | set(links["backward_user"].values()) <= set(users)
    for b, f in links["backward"].items():
        assert f in fwd_nodes
        # the backward node and its forward node come from the same user op
        assert links["backward_user"][b] == links["forward"][f]
        if bwd_nodes[b]["prim"] == "dot_general":
            assert fwd_nodes[f]["prim"] == "dot_general"
        if users[links["forward"][f]]["prim"] == "tanh":
            assert fwd_nodes[f]["prim"] == "tanh"  # the user's op, not the `1 - y` JAX adds beside it
    dots = {b for b, n in bwd_nodes.items() if n["prim"] == "dot_general"}
    assert len(dots) >= 5  # x @ w differentiates into two dot_generals per layer, less the unneeded first dx
    for u in entry["user_ops"]:
        assert u["src"] is not None and u["src"]["func"] == "mlp_loss"


def test_checkpointed_block_marks_recomputed_backward_nodes():
    entry = split_entry(remat_loss, remat_args(), names=("w", "x"))
    bwd_nodes = by_id(entry["backward"]["nodes"])
    assert entry["recomputed"] and all(n in bwd_nodes for n in entry["recomputed"])
    groups = by_id(entry["backward"]["groups"])
    # recomputation happens inside the backward's checkpoint body, never at its top level
    assert all(bwd_nodes[n]["group"] != entry["backward"]["root"] for n in entry["recomputed"])
    owners = {groups[bwd_nodes[n]["group"]]["node"] for n in entry["recomputed"]}
    assert all(
        bwd_nodes[o]["prim"] in ("remat2", "checkpoint") or bwd_nodes[o]["group"] != entry["backward"]["root"]
        for o in owners
    )
    # what is recomputed is forward work of the checkpointed body, and never the user's sin itself: its
    # output is "a", which the policy saves (its derivative cos is recomputed, as is -sin for the cos)
    users = by_id(entry["user_ops"])
    remat = next(u["path"][0] for u in entry["user_ops"] if u["prim"] in ("remat2", "checkpoint"))
    for n in entry["recomputed"]:
        user = users[entry["links"]["backward_user"][n]]
        assert user["path"][0] == remat and len(user["path"]) == 2
        assert (user["prim"], bwd_nodes[n]["prim"]) != ("sin", "sin")
    assert {bwd_nodes[n]["prim"] for n in entry["recomputed"]} & {"cos", "tanh", "exp"}
    assert split_entry(mlp_loss, mlp_args())["recomputed"] == []


def test_grads_of_names_each_param_leaf_with_its_aval():
    params, x = mlp_args()
    entry = split_entry(mlp_loss, (params, x))
    want = {f"params[{name!r}]": jax_compat.short_aval(jax_compat.aval_of(v)) for name, v in params.items()}
    got = {g["path"]: g["aval"] for g in entry["grads_of"]}
    assert got == want
    outs = entry["backward"]["groups"][0]["outvars"]
    bwd_vars = by_id(entry["backward"]["vars"])
    for g in entry["grads_of"]:
        assert outs[g["output"]]["var"] == g["var"] and bwd_vars[g["var"]]["aval"] == g["aval"]
    # without the call's argument specs, paths fall back to positions in the same pytree
    entry = split_entry(mlp_loss, (params, x), specs=False)
    assert {g["path"] for g in entry["grads_of"]} == {f"args[0][{name!r}]" for name in params}
    inputs = [r["producer"] for r in entry["residuals"] if isinstance(r["producer"], dict) and "input" in r["producer"]]
    assert "args[1]" in {p["path"] for p in inputs}  # x, saved for dw


def test_calls_sharing_a_split_are_one_entry_and_errors_are_notes():
    params, x = mlp_args()
    first = grad_call(mlp_loss, (params, x))
    again = grad_call(mlp_loss, (params, x), index=1, split=first.split)
    failed = GradCall(
        index=2,
        kind="vjp",
        name="broken",
        source=None,
        argnums=(0,),
        has_aux=False,
        args=(),
        traced=False,
        call_site=SourceLocation("cell.py", 7),
        error="TypeError: not differentiable",
    )
    stray = GradCall(
        index=3,
        kind="grad",
        name="per_example",
        source=None,
        call_site=None,
        argnums=(0,),
        has_aux=False,
        args=(),
        traced=True,
        batch="vmap over 32",
    )
    doc = grad_document(Capture(grads=[first, again, failed, stray]))
    assert [(e["origin"], e["calls"]) for e in doc["entries"]] == [("split", 2)]
    assert any("broken at cell.py:7" in n and "not differentiable" in n for n in doc["notes"])
    assert any("per_example" in n for n in doc["notes"])
    assert jaxmagic.document(Capture(grads=[first]), "grad_graph")["kind"] == "grad"
    empty = jaxmagic.document(Capture(), "grad")
    assert empty["entries"] == [] and empty["findings"] == [] and "nothing" in empty["title"]


def test_findings_name_the_largest_residuals_and_the_total():
    """Small residuals (a few hundred bytes) are counted in the total and never called large."""
    entry_doc = grad_document(Capture(grads=[grad_call(block_loss, block_args())]))
    findings = entry_doc["findings"]
    total = [f for f in findings if f["kind"] == "residual_memory"]
    large = [f for f in findings if f["kind"] == "large_residual"]
    residuals = by_id(entry_doc["entries"][0]["residuals"])
    sizes = sorted((r["bytes"] for r in residuals.values()), reverse=True)
    assert len(total) == 1 and sizes[0] < LARGE_RESIDUAL_BYTES and large == []
    assert entry_doc["residual_bytes"] == sum(sizes)


def wide_layer(w, x):
    return jnp.sum(jnp.tanh(x @ w) * 0.5) + jnp.sum(jnp.sin(w[0, :4]))  # cos(w[0, :4]): a 16-byte residual


def test_large_residuals_are_big_in_bytes_and_in_share_as_jax_counts_them():
    """The large ones are JAX's own residuals (saved_residuals, as print_saved_residuals prints them) of
    at least LARGE_RESIDUAL_BYTES and LARGE_RESIDUAL_SHARE of the total; the 16-byte ones are not."""
    from jax._src.ad_checkpoint import saved_residuals

    w, x = jnp.ones((1024, 512)), jnp.ones((256, 1024))  # w 2 MiB, x 1 MiB
    theirs = sorted(
        (
            aval.size * aval.dtype.itemsize
            for aval, src in saved_residuals(lambda w: wide_layer(w, x), w)
            if "literal" not in src
        ),
        reverse=True,
    )  # jax.grad differentiates w, closes over x; a Python
    # scalar literal stays inline in the backward (docs/schema.md), as in tests/test_captions.py
    doc = grad_document(Capture(grads=[grad_call(wide_layer, (w, x), names=("w", "x"))]))
    residuals = by_id(doc["entries"][0]["residuals"])
    ours = sorted((r["bytes"] for r in residuals.values()), reverse=True)
    assert ours == theirs
    total = doc["residual_bytes"]
    expected = [size for size in ours[:5] if size >= LARGE_RESIDUAL_BYTES and size >= LARGE_RESIDUAL_SHARE * total]
    large = [residuals[f["residual"]]["bytes"] for f in doc["findings"] if f["kind"] == "large_residual"]
    assert large == expected and expected and min(ours) < 1024  # some large, and a small one left out
    assert all(is_large_residual(size, total) == (size in expected) for size in ours[:5])
    assert not is_large_residual(16, 16) and not is_large_residual(2 << 20, 100 << 20)
    assert is_large_residual(1 << 20, 1 << 20)


# ---------------------------------------------------------------------------------------------
# Jitted train step


def sgd(params, grads):
    with jax.named_scope("sgd"):
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


@jax.jit
def train_step(params, x):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x)
    return loss, sgd(params, grads)


def test_jitted_train_step_roles_residuals_and_links():
    params, x = mlp_args()
    with jaxmagic.capture(grads=True) as cap:
        train_step(params, x)
        train_step(params, x)
    call = cap.calls[0]
    if not cap.grads:  # before capture/grads/patch.py records them, the traced call is made by hand
        cap.grads.append(
            GradCall(
                index=0,
                kind="value_and_grad",
                name="mlp_loss",
                source=None,
                argnums=(0,),
                has_aux=False,
                args=(),
                traced=True,
                call=call.index,
                call_site=SourceLocation(__file__, 200),
            )
        )
    doc = grad_document(cap)
    assert [e["origin"] for e in doc["entries"]] == ["jit"]
    entry = doc["entries"][0]
    program, roles = entry["program"], entry["roles"]
    nodes = by_id(program["nodes"])
    # traced once (the second call hits the cache): one differentiation ran inside, at one site
    assert entry["calls"] == 2 and entry["grad_calls"] == len(cap.grads) == 1
    assert entry["grad_sites"][0]["count"] == 1 and entry["grad_sites"][0]["kind"] == "value_and_grad"
    assert set(roles) == set(nodes) and set(roles.values()) == {"forward", "backward", "other"}
    # the optimizer is "other": exactly the eqns of the update traced alone (the recorded jaxpr is the
    # step's own body, with no jit eqn around it)
    others = [n for n, role in roles.items() if role == "other"]
    update_alone = jax.make_jaxpr(sgd)(params, params)
    assert len(others) == len(update_alone.jaxpr.eqns)
    assert all(roles[n["id"]] == "other" for n in program["nodes"] if n["scope"][:1] == ["sgd"])
    assert entry["totals"]["n_other"] == len(others)

    (region,) = entry["regions"]
    assert region["container"] is None  # value_and_grad ran at the top level of the step
    avals = collections.Counter(r["aval"] for r in region["residuals"])
    assert avals == jax_residuals(lambda p: mlp_loss(p, x), params)
    assert region["residual_bytes"] == entry["residual_bytes"] == sum(r["bytes"] for r in region["residuals"])
    for r in region["residuals"]:
        if r["origin"] == "forward":
            assert roles[r["producer"]] == "forward" and r["source"] is not None
        assert r["consumers"] and all(roles[c] == "backward" for c in r["consumers"])
    assert region["links"]
    for b, link in region["links"].items():
        assert roles[b] == "backward" and link["forward"] and all(roles[f] == "forward" for f in link["forward"])
        if nodes[b]["prim"] == "dot_general" and link["kind"] == "exact":
            assert any(nodes[f]["prim"] == "dot_general" for f in link["forward"])


def loop_line_loss(params):
    return sum(jnp.sum(jnp.tanh(p["w"]) * 2.0) + jnp.sum(p["b"] ** 2) for p in params)  # every layer, one line


def test_a_loop_lines_by_source_links_are_counted_and_the_document_stays_linear(monkeypatch):
    """A jitted grad over 300 layers written on one line: each backward op of that line could
    differentiate any of 300 forward ops (JAX records the span, nothing finer). Those links count
    them; listed, 2,000 backward nodes x 300 ids made the document quadratic (56 MB at 1,000 layers)."""
    params = [{"w": jnp.ones((4, 4)), "b": jnp.zeros(4)} for _ in range(300)]
    with jaxmagic.capture(grads=True) as cap:
        jax.jit(jax.grad(loop_line_loss))(params)
    (region,) = grad_document(cap)["entries"][0]["regions"]
    monkeypatch.setattr(grad_model, "MAX_LISTED_BY_SOURCE", 10**9)
    (every,) = grad_document(cap)["entries"][0]["regions"]  # the same links, all listed
    assert region["links"].keys() == every["links"].keys()
    counted = 0
    for b, link in region["links"].items():
        whole = every["links"][b]
        if "n_forward" in link:
            counted += 1
            assert link["kind"] == whole["kind"] == "by_source" and link["forward"] == []
            assert link["n_forward"] == len(whole["forward"]) > MAX_LISTED_BY_SOURCE
            assert len(whole["forward"]) % 300 == 0  # as many of each layer
        else:
            assert link == whole and 0 < len(link["forward"]) <= MAX_LISTED_BY_SOURCE
    assert counted > 300
    compact, listed = len(json.dumps(region["links"])), len(json.dumps(every["links"]))
    assert compact < 200 * len(region["links"]) and 10 * compact < listed


def test_jit_without_differentiation_gets_no_entry():
    with jaxmagic.capture(grads=True) as cap:
        jax.jit(mlp_loss)(*mlp_args())
    assert grad_document(cap)["entries"] == []


# ---------------------------------------------------------------------------------------------
# JSON, hostile strings, schema, size


HOSTILE = '<img src=x onerror="alert(1)">'


def emitted_fields(doc: dict) -> set[str]:
    """Every field name the grad document adds (graph-document functions are documented with %%jaxpr)."""
    fields = set(doc)
    for entry in doc["entries"]:
        fields |= set(entry)
        for key in ("residuals", "grads_of", "user_ops", "regions", "grad_sites"):
            for item in entry.get(key, []):
                fields |= set(item)
        fields |= set(entry.get("links", {})) | set(entry.get("totals", {}))
        for r in entry.get("residuals", []):
            if isinstance(r["producer"], dict):
                fields |= set(r["producer"])
        for region in entry.get("regions", []):
            for item in region["residuals"]:
                fields |= set(item)
            for link in region["links"].values():
                fields |= set(link)
    for finding in doc["findings"]:
        fields |= set(finding)
    return fields


def test_document_is_json_hostile_names_stay_text_and_schema_documents_every_field():
    params, x = mlp_args()
    with jaxmagic.capture(grads=True) as cap:
        train_step(params, x)
    cap.grads[:] = [
        grad_call(mlp_loss, (params, x), name=HOSTILE),
        grad_call(remat_loss, remat_args(), names=("w", "x"), index=1),
    ]
    doc = grad_document(cap)
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text) == doc
    entry = doc["entries"][0]
    assert entry["name"] == HOSTILE and entry["forward"]["name"] == f"forward of {HOSTILE}"
    assert {"split", "jit"} == {e["origin"] for e in doc["entries"]}
    assert doc["schema"] == "jaxmagic" and doc["kind"] == "grad" and doc["version"] == 1

    section = SCHEMA.read_text().split("## Grad documents (version 1)", 1)[1]
    # field names written in code: table keys (`residuals`), object shapes (`{forward: node id[], kind}`)
    # and the document's outline block
    code = re.findall(r"```(.*?)```", section, re.S) + re.findall(r"`([^`\n]+)`", section)
    documented = set(re.findall(r"[A-Za-z_]+", " ".join(code)))
    missing = emitted_fields(doc) - documented
    assert not missing, f"fields emitted but not in docs/schema.md: {sorted(missing)}"


def test_cut_graphs_keep_every_id_real():
    doc = grad_document(Capture(grads=[grad_call(block_loss, block_args())]), max_eqns=40)
    entry = doc["entries"][0]
    assert entry["forward"]["truncated"] and any("cut at 40" in n for n in doc["notes"])
    fwd, bwd = by_id(entry["forward"]["nodes"]), by_id(entry["backward"]["nodes"])
    assert len(fwd) == len(bwd) == 40
    for r in entry["residuals"]:
        assert r["producer"] is None or isinstance(r["producer"], dict) or r["producer"] in fwd
        assert all(c in bwd for c in r["consumers"])
    assert all(b in bwd and f in fwd for b, f in entry["links"]["backward"].items())


def test_stacked_transformer_documents_stay_compact_and_complete():
    """Scale as correctness: sizes per eqn bounded, every node placed (bench/grad.py times it)."""
    loss, args = stacked_blocks(12)
    doc = grad_document(Capture(grads=[grad_call(loss, args, name="loss")]))
    entry = doc["entries"][0]
    eqns = entry["forward"]["n_eqns"] + entry["backward"]["n_eqns"]
    assert len(json.dumps(doc, allow_nan=False)) / eqns < 2000
    assert len(entry["links"]["backward"]) == len({n["id"] for n in entry["backward"]["nodes"]})

    with jaxmagic.capture(grads=True) as cap:  # jitted inside the block, so recorded
        step, step_args = transformer_step(2)
        step(*step_args)
    entry = grad_document(cap)["entries"][0]
    assert len(json.dumps(entry, allow_nan=False)) / entry["program"]["n_eqns"] < 2000
    assert set(entry["roles"]) == {n["id"] for n in entry["program"]["nodes"]}


def test_custom_rules_are_named_with_the_nodes_they_became():
    def f(w):
        return jnp.sum(softplus(clip_gradient(jnp.sin(w) * 10.0)) ** 2)

    entry = split_entry(f, (jnp.arange(3.0),), names=("w",))
    rules = {r["prim"]: r for r in entry["custom_rules"]}
    if "custom_vjp_call_jaxpr" in rules:  # the primitive's name before JAX 0.7
        rules["custom_vjp_call"] = rules.pop("custom_vjp_call_jaxpr")
    assert set(rules) == {"custom_vjp_call", "custom_jvp_call"}
    users = by_id(entry["user_ops"])
    assert all(users[r["user"]]["prim"] == r["prim"] for r in rules.values())
    fwd, bwd = by_id(entry["forward"]["nodes"]), by_id(entry["backward"]["nodes"])
    # The bwd rule's clip became max/min in the backward, found by the rule's own lines.
    vjp = rules["custom_vjp_call"]
    assert vjp["rules"] == ["clip_bwd"]
    assert {"max", "min"} <= {bwd[n]["prim"] for n in vjp["backward"]}
    assert all(
        bwd[n]["src"] is None
        or bwd[n]["src"]["func"] == "clip_bwd"
        or entry["links"]["backward_user"].get(n) == vjp["user"]
        for n in vjp["backward"]
    )
    # The jvp rule's sigmoid is in the forward, linked to the custom_jvp op.
    jvp = rules["custom_jvp_call"]
    assert "logistic" in {fwd[n]["prim"] for n in jvp["forward"]}


def test_forward_mode_is_one_program_with_primal_and_tangent_nodes():
    def f(x):
        return jnp.sin(x) * x

    x, t = jnp.arange(3.0), jnp.ones(3)
    with jaxmagic.capture({}, grads=True) as cap:
        out, tangent_out = jax.jvp(f, (x,), (t,))
        jax.jacfwd(f)(x)
    jvp, jacfwd = jaxmagic.document(cap, "grad")["entries"]
    assert jvp["origin"] == jacfwd["origin"] == "tangent" and "one pass" in jvp["note"]
    program = jvp["program"]
    nodes = by_id(program["nodes"])
    # JAX's own jvp program, and every node reading the tangent (or a tangent result) is a tangent node.
    expected = jax.make_jaxpr(lambda x, t: jax.jvp(f, (x,), (t,)))(x, t)
    assert [n["prim"] for n in program["nodes"]] == [e.primitive.name for e in expected.jaxpr.eqns]
    tangent_vars = {jvp["tangents_of"][0]["var"]}
    for n in program["nodes"]:
        reads = any(op.get("var") in tangent_vars for op in n["ins"])
        assert jvp["roles"][n["id"]] == ("tangent" if reads else "primal"), n
        if reads:
            tangent_vars.update(n["outs"])
    assert {nodes[k]["prim"] for k, r in jvp["roles"].items() if r == "primal"} >= {"sin", "cos"}
    assert jvp["totals"] == {
        "n_primal": sum(r == "primal" for r in jvp["roles"].values()),
        "n_tangent": sum(r == "tangent" for r in jvp["roles"].values()),
    }
    assert jvp["tangents_of"][0]["path"] == "x" and jvp["residual_bytes"] == 0
    assert "once per element" in jacfwd["note"]


def test_hessian_is_the_jvp_of_the_gradient():
    def f(x):
        return jnp.sum(jnp.sin(x) * x**2)

    x = jnp.arange(3.0)
    expected = jax.hessian(f)(x)
    with jaxmagic.capture({}, grads=True) as cap:
        got = jax.hessian(f)(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    (rec,) = cap.grads  # JAX's inner jacfwd(jacrev) are its own functions: one record
    assert rec.kind == "hessian" and rec.tangent is not None
    (entry,) = jaxmagic.document(cap, "grad")["entries"]
    assert entry["origin"] == "tangent" and "jvp of the gradient" in entry["note"]
    theirs = jax.make_jaxpr(lambda x, t: jax.jvp(jax.grad(f), (x,), (t,)))(x, jnp.ones(3))
    assert [n["prim"] for n in entry["program"]["nodes"]] == [e.primitive.name for e in theirs.jaxpr.eqns]
    assert entry["totals"]["n_tangent"] > 0 and entry["totals"]["n_primal"] > 0


def _every_file(value) -> set[str]:
    """Every string `file` anywhere in a JSON value, nothing skipped (the oracle for `files_in`)."""
    if isinstance(value, dict):
        found = {value["file"]} if isinstance(value.get("file"), str) else set()
        return found.union(*(_every_file(v) for v in value.values()))
    if isinstance(value, (list, tuple)):
        return set().union(*(_every_file(v) for v in value))
    return set()


@pytest.mark.parametrize("kind", ["grad", "graph"])
def test_the_files_a_document_names_are_all_found_by_the_walk_that_skips_sourceless_keys(kind):
    """`files_in` (which names a document's cells) skips the keys that hold no sources (links,
    consumers, params...): on a real document it finds every file a full walk finds."""
    from jaxmagic.model.document import files_in

    def loss(params, x):  # its ops' sources are in this file and in tests/grad_programs.py (softplus's)
        return softplus(mlp_loss(params, x))

    with jaxmagic.capture(grads=True) as cap:
        jax.block_until_ready(jax.jit(jax.grad(loss))(*mlp_args()))
    doc = jaxmagic.document(cap, kind)
    expected = _every_file(doc)
    assert {Path(f).name for f in expected} >= {"test_grad_model.py", "grad_programs.py"}
    assert files_in(doc) == expected
