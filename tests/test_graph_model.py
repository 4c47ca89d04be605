"""The graph document against JAX's own jaxpr: eqns per group, edges per var use, avals, text lines."""

from __future__ import annotations

import json
from collections import Counter

import jax
import jax.numpy as jnp
import pytest

import jaxmagic
from jaxmagic.model import derive_edges, graph_document

from .jaxpr_oracle import jaxprs_preorder, total_eqns, var_uses
from .programs import PROGRAMS


def _capture(program):
    with jaxmagic.capture() as cap:  # jitted inside the block, as in a notebook cell
        fn, args, kwargs = program()
        fn(*args, **kwargs)
    return fn, args, kwargs, cap


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_graph_matches_jaxpr(name):
    fn, args, kwargs, cap = _capture(PROGRAMS[name])
    doc = graph_document(cap)
    assert len(doc["functions"]) == 1, doc["notes"]
    graph = doc["functions"][0]
    expected = fn.trace(*args, **kwargs).jaxpr  # JAX's own answer, via the public AOT API
    jaxprs = jaxprs_preorder(expected)

    assert graph["n_eqns"] == total_eqns(expected)
    assert len(graph["groups"]) == len(jaxprs)
    nodes_per_group = Counter(n["group"] for n in graph["nodes"])
    edges_per_group = Counter()
    var_group = {v["id"]: v["group"] for v in graph["vars"]}
    for source, target, vid in derive_edges(graph):
        edges_per_group[var_group[vid]] += 1
    for group, jaxpr in zip(graph["groups"], jaxprs):
        gid = group["id"]
        assert nodes_per_group[gid] == len(jaxpr.eqns), gid
        assert edges_per_group[gid] == var_uses(jaxpr), gid
        assert [v for v in group["invars"]] and len(group["invars"]) == len(jaxpr.invars) or not jaxpr.invars
        avals = {v["id"]: v["aval"] for v in graph["vars"]}
        assert [avals[v] for v in group["invars"]] == [v.aval.str_short(short_dtypes=True) for v in jaxpr.invars]
        assert [avals[v] for v in group["constvars"]] == [v.aval.str_short(short_dtypes=True) for v in jaxpr.constvars]
        group_nodes = [n for n in graph["nodes"] if n["group"] == gid]
        for node, eqn in zip(group_nodes, jaxpr.eqns):
            assert node["prim"] == eqn.primitive.name
            assert [avals[v] for v in node["outs"]] == [v.aval.str_short(short_dtypes=True) for v in eqn.outvars]
            assert len(node["ins"]) == len(eqn.invars)
    json.dumps(doc, allow_nan=False)  # the document is plain JSON


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_eqn_has_its_text_line(name):
    _, _, _, cap = _capture(PROGRAMS[name])
    graph = graph_document(cap)["functions"][0]
    lines = graph["text"].split("\n")
    vars_by_id = {v["id"]: v for v in graph["vars"]}
    for node in graph["nodes"]:
        assert node["line"] is not None, node
        line = lines[node["line"]]
        if node["outs"]:
            first = vars_by_id[node["outs"][0]]
            assert f"{first['name']}:{first['aval']}" in line
        else:
            assert node["prim"] in line


def test_sub_jaxpr_kinds_become_groups():
    labels = {}
    for name in (
        "control_flow",
        "custom_rules",
        "remat_and_grad",
        "shard_map_psum",
        "nested_jit_and_scopes",
        "switch_three_branches",
    ):
        graph = graph_document(_capture(PROGRAMS[name])[3])["functions"][0]
        prims = {n["id"]: n["prim"] for n in graph["nodes"]}
        labels[name] = {(prims[g["node"]], g["label"]) for g in graph["groups"] if g["node"]}
    assert {
        ("cond", "branches[0]"),
        ("cond", "branches[1]"),
        ("scan", "jaxpr"),
        ("while", "body_jaxpr"),
        ("while", "cond_jaxpr"),
    } <= labels["control_flow"]
    assert {"branches[0]", "branches[1]", "branches[2]"} <= {lbl for _, lbl in labels["switch_three_branches"]}
    assert any(p == "custom_jvp_call" for p, _ in labels["custom_rules"])
    assert any(p == "custom_vjp_call" or p.startswith("custom_vjp") for p, _ in labels["custom_rules"])
    assert any(p in ("remat", "checkpoint", "remat2") for p, _ in labels["remat_and_grad"])
    assert any(p == "shard_map" for p, _ in labels["shard_map_psum"])
    assert any(p in ("jit", "pjit") for p, _ in labels["nested_jit_and_scopes"])


def test_name_scopes_and_source_lines():
    graph = graph_document(_capture(PROGRAMS["nested_jit_and_scopes"])[3])["functions"][0]
    scopes = {tuple(n["scope"]) for n in graph["nodes"]}
    assert ("encoder", "layer0") in scopes and ("encoder", "layer1") in scopes
    tanh = [n for n in graph["nodes"] if n["prim"] == "tanh"]
    assert tanh and all(n["src"]["file"].endswith("programs.py") for n in tanh)
    assert all("jnp.tanh(inner(x))" in n["src"]["code"] for n in tanh)


def test_globals_become_constvars_and_literals_are_marked():
    graph = graph_document(_capture(PROGRAMS["global_constant"])[3])["functions"][0]
    dot = graph_document(_capture(PROGRAMS["dot_plus_one"])[3])["functions"][0]
    root = graph["groups"][0]
    const_defs = [v for v in graph["vars"] if v["def"] == "const"]
    # JAX either hoists the global into a constvar or inlines it as a literal; both are marked
    literals = [o for n in graph["nodes"] for o in n["ins"] if "lit" in o]
    assert const_defs or literals
    assert any("lit" in o and o["aval"] for n in dot["nodes"] for o in n["ins"])
    assert root["label"] == graph["name"]


double = jax.jit(lambda x: x * 2)  # bound in the namespace before the capture, like an earlier cell


def test_one_graph_per_function_and_signature():
    with jaxmagic.capture() as cap:
        double(jnp.ones(3))
        double(jnp.ones(3))
        double(jnp.ones(4))
    doc = graph_document(cap)
    assert [(fn["signature"], fn["calls"], fn["cache_hits"]) for fn in doc["functions"]] == [
        ("f32[3]", 2, 1),
        ("f32[4]", 1, 0),
    ]


def test_empty_capture_says_nothing_was_recorded():
    with jaxmagic.capture() as cap:
        pass
    doc = graph_document(cap)
    assert doc["functions"] == [] and "nothing was recorded" in doc["title"]


def test_truncation_is_reported():
    fn, args, kwargs, cap = _capture(PROGRAMS["small_transformer"])
    doc = graph_document(cap, max_eqns=20)
    assert doc["functions"][0]["truncated"] and doc["functions"][0]["n_eqns"] == 20
    assert any("only the first 20 eqns" in n for n in doc["notes"])


def test_text_has_no_terminal_colours_and_eager_ops_are_not_reported(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    jax.config.update("jax_pprint_use_color", True)
    try:
        _, _, _, cap = _capture(PROGRAMS["sin_cos"])
    finally:
        jax.config.update("jax_pprint_use_color", False)
    doc = graph_document(cap)
    assert "\x1b[" not in doc["functions"][0]["text"]
    assert not any("jit(iota)" in n for n in doc["notes"])  # jnp.arange is an eager op, not a hidden jit


def test_a_failing_extra_costs_only_that_extra(monkeypatch):
    """If linking the levels breaks (a new JAX text format), the graph and a note remain."""
    import jaxmagic
    from jaxmagic.model import graph

    def broken(*args):
        raise RuntimeError("unexpected text")

    monkeypatch.setattr(graph, "link_levels", broken)
    monkeypatch.setattr(graph, "find_repeats", broken)
    with jaxmagic.capture() as cap:
        fn, args, kwargs = PROGRAMS["sin_cos"]()
        fn(*args, **kwargs)
    doc = jaxmagic.document(cap)
    function = doc["functions"][0]
    assert function["n_eqns"] == len(function["nodes"]) > 0 and function["repeats"] == []
    assert any("StableHLO/HLO links left out: RuntimeError" in n for n in doc["notes"])
    assert any("repeated layers left out" in n for n in doc["notes"])
    assert all("cost" in node for node in function["nodes"])


def test_function_inputs_carry_their_pytree_paths():
    """The input ports name the leaves as `jax.tree_util.keystr` does, from JAX's own debug info."""
    params = {"layers": [{"w": jnp.ones((3, 4)), "b": jnp.zeros(4)}], "head": jnp.ones((4, 1))}
    with jaxmagic.capture({}) as cap:

        @jax.jit
        def mlp(params, x):
            for layer in params["layers"]:
                x = jnp.tanh(x @ layer["w"] + layer["b"])
            return x @ params["head"]

        mlp(params, jnp.ones((2, 3)))
    fn = jaxmagic.document(cap, "graph")["functions"][0]
    by_id = {v["id"]: v for v in fn["vars"]}
    root = next(g for g in fn["groups"] if g["id"] == fn["root"])
    expected = ["params" + jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(params)[0]] + ["x"]
    assert [by_id[v].get("path") for v in root["invars"]] == expected
    inner = [v for v in fn["vars"] if v["group"] != fn["root"]]
    assert not any("path" in v for v in inner)  # only the function's own inputs have a pytree path


def test_the_graphs_names_are_the_ones_jaxs_printer_gives():
    """jaxmagic names the variables before printing, in the printer's order; printed with those
    names, the text is exactly what JAX's printer writes with its own (scan, cond, while, nested
    jit, custom rules, remat, shard_map, a vmapped grad of a loop)."""
    from jaxmagic.capture import jax_compat
    from jaxmagic.model.graph import function_graph

    from .programs import PROGRAMS

    printer = jax_compat.jaxpr_pretty_printer()
    closed = {name: (lambda f, a, k: f.trace(*a, **k).jaxpr)(*make()) for name, make in PROGRAMS.items()}
    loop = lambda x: jax.lax.fori_loop(0, 3, lambda i, c: jnp.sin(c) * i, x)
    closed["vmapped grad"] = jax.make_jaxpr(jax.vmap(jax.grad(loop)))(jnp.ones(3))
    for name, jaxpr in closed.items():
        printouts: dict = {}
        doc = function_graph("f0", name, jaxpr, printouts=printouts)
        text = printouts["f0"].data()["text"] if printouts else doc["text"]
        assert text == printer(jaxpr.jaxpr)[0], name
        lines = text.split("\n")
        names = {v["id"]: v["name"] for v in doc["vars"]}
        for node in doc["nodes"]:
            for out in node["outs"]:
                assert f"{names[out]}:" in lines[node["line"]], (name, node["prim"])


def test_an_optimizers_eqns_name_the_users_line_and_each_library_frame_is_resolved_once(monkeypatch):
    """Optax's Adam over 300 parameters makes thousands of eqns on a few of Optax's lines: each
    names the user's line that called it with Optax's frame beside it, and that answer is found
    once per (library frame, user stack), not per eqn (path resolution per eqn: 0.6 s at 16k eqns)."""
    optax = pytest.importorskip("optax")  # the floor's environment has no Optax

    from jaxmagic.model import graph as graph_model

    params = [{"w": jnp.ones((2, 2)), "b": jnp.zeros(2)} for _ in range(150)]
    opt = optax.adam(1e-3)

    def update(ps, state):
        updates, state = opt.update(ps, state, ps)  # the user's line Optax's eqns name
        return optax.apply_updates(ps, updates), state

    resolved = []
    called_from = graph_model._called_from_user_code
    monkeypatch.setattr(graph_model, "_called_from_user_code", lambda *a: resolved.append(1) or called_from(*a))
    with jaxmagic.capture() as cap:
        jax.jit(update)(params, opt.init(params))
    (fn,) = graph_document(cap)["functions"]
    from_optax = [n["src"] for n in fn["nodes"] if n["src"] and (n["src"].get("lib") or "").startswith("optax/")]
    assert len(from_optax) > 1000
    users_lines = {"updates, state = opt.update(ps, state, ps)  # the user's line Optax's eqns name"}
    users_lines.add("return optax.apply_updates(ps, updates), state")
    assert {s["code"] for s in from_optax} == users_lines
    assert len(resolved) < len(from_optax) / 20
