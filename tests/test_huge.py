"""Huge content degrades, never hangs: a million-eqn jaxpr, a 10,000-element literal, 100,000
calls, 10,000 keys and 512 devices give documents of bounded size in bounded time, and say
what they left out. Sizes are asserted; times are printed, never asserted."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxmagic
from jaxmagic.capture import jax_compat
from jaxmagic.model.graph import MAX_EQNS_PER_FUNCTION, MAX_PARAM_CHARS, function_graph
from jaxmagic.views.wire import encode_document

REPO = Path(__file__).resolve().parents[1]
jr = jax.random


def _var(core, aval):
    """A new jaxpr Var: `Var(aval)`, or `Var(suffix, aval)` on JAX 0.4."""
    try:
        return core.Var(aval)
    except TypeError:
        return core.Var("", aval)


def _chain(n: int):
    """A ClosedJaxpr of `n` eqns (sin, add, ...) built by copying eqns: tracing a million Python ops
    would take minutes, and the model only reads the jaxpr."""
    from jax._src import core

    closed = jax.make_jaxpr(lambda x: jnp.sin(x) + 1.0)(jnp.ones(3))
    jaxpr, eqns, current = closed.jaxpr, [], closed.jaxpr.invars[0]
    for _ in range(n // len(jaxpr.eqns)):
        renamed = {jaxpr.invars[0]: current}
        for eqn in jaxpr.eqns:
            outs = [_var(core, v.aval) for v in eqn.outvars]
            eqns.append(
                eqn.replace(
                    invars=[renamed.get(v, v) if isinstance(v, core.Var) else v for v in eqn.invars], outvars=outs
                )
            )
            renamed.update(zip(eqn.outvars, outs))
        current = renamed[jaxpr.outvars[0]]
    chain = core.Jaxpr(jaxpr.constvars, jaxpr.invars, [current], eqns, jaxpr.effects)
    return jax_compat.closed_jaxpr_with(closed, chain, closed.consts)  # JAX 0.12: one Jaxpr type, holding its consts


def test_a_million_eqn_program_is_cut_in_bounded_time_and_size():
    big = _chain(1_000_000)
    start = time.perf_counter()
    fn = function_graph("f0", "big", big, MAX_EQNS_PER_FUNCTION)
    took = time.perf_counter() - start
    assert fn["truncated"] and fn["n_eqns"] == len(fn["nodes"]) == MAX_EQNS_PER_FUNCTION
    assert fn["text"].count("\n") < 2 * MAX_EQNS_PER_FUNCTION  # only the kept eqns are printed
    doc = {
        "schema": "jaxmagic",
        "version": 2,
        "kind": "graph",
        "title": "big",
        "notes": [],
        "error": None,
        "functions": [fn],
    }
    wire = len(json.dumps(encode_document(doc)))
    assert wire < 8_000_000
    print(
        f"[huge] 1,000,000 eqns: graph of the first {MAX_EQNS_PER_FUNCTION} in {took:.1f} s, "
        f"{len(json.dumps(fn)) / 1e6:.1f} MB logical, {wire / 1e6:.1f} MB on the wire"
    )


def test_a_10000_element_literal_is_shown_short():
    table = np.arange(10_000, dtype=np.float32)
    with jaxmagic.capture({}) as cap:
        jax.jit(lambda x: x + jnp.asarray(table))(jnp.ones(10_000))
    doc = jaxmagic.document(cap, "graph")
    texts = [json.dumps(n.get("params", {})) for f in doc["functions"] for n in f["nodes"]]
    assert max(len(t) for t in texts) < 4 * MAX_PARAM_CHARS
    assert len(json.dumps(doc)) < 2_000_000


def test_100000_calls_give_a_bounded_timeline():
    ns = {"f": jax.jit(lambda x: x + 1)}
    x = jnp.ones(())
    with jaxmagic.capture(ns) as cap:
        call = ns["f"]  # the recorded stand-in, as a notebook's global name is
        for _ in range(100_000):
            x = call(x)
    assert len(cap.calls) == 100_000
    doc = jaxmagic.document(cap, "timeline")
    wire = len(json.dumps(encode_document(doc)))
    assert wire < 6_000_000
    print(f"[huge] 100,000 calls: timeline {len(json.dumps(doc)) / 1e6:.1f} MB logical, {wire / 1e6:.1f} MB wire")


def test_10000_keys_fold_into_a_small_tree():
    def run():
        key = jr.key(0)
        for _ in range(5_000):
            key, sub = jr.split(key)
            jr.normal(sub)

    with jaxmagic.capture({}) as cap:
        run()
    doc = jaxmagic.document(cap, "keys")
    assert doc["summary"]["keys"] >= 10_000 and doc["summary"]["reused"] == 0
    [run_] = doc["runs"]
    folded = sum(n["run"] is not None for n in doc["nodes"])
    assert len(doc["nodes"]) - folded < 20  # what the widget draws before anything is opened
    wire = len(json.dumps(encode_document(doc)))
    assert wire < 2_000_000
    print(
        f"[huge] {doc['summary']['keys']} keys: one run of {run_['length']} steps; "
        f"{len(json.dumps(doc)) / 1e6:.1f} MB logical, {wire / 1e6:.2f} MB wire"
    )


def test_512_devices_give_a_bounded_sharding_document():
    script = textwrap.dedent(
        """
        import json, sys
        sys.path.insert(0, %r)
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        import jaxmagic
        from jaxmagic.views.wire import encode_document
        AxisType = getattr(jax.sharding, "AxisType", None)  # older JAX: every mesh axis is Auto
        types = {"axis_types": (AxisType.Auto, AxisType.Auto)} if AxisType else {}
        mesh = jax.make_mesh((16, 32), ("x", "y"), **types)
        ns = {"mesh": mesh,
              "a": jax.device_put(jnp.ones((512, 512)), NamedSharding(mesh, P("x", "y"))),
              "b": jax.device_put(jnp.ones((512, 512)), NamedSharding(mesh, P("x"))),
              "c": jax.device_put(jnp.ones((512,)), NamedSharding(mesh, P()))}
        with jaxmagic.capture(ns, shardings=True) as cap:
            f = jax.jit(lambda a, b: (a @ b).sum(0))
            f(ns["a"], ns["b"])
        doc = jaxmagic.document(cap, "sharding")
        print(json.dumps({"devices": len(doc["devices"]), "arrays": len(doc["arrays"]),
                          "logical": len(json.dumps(doc)), "wire": len(json.dumps(encode_document(doc))),
                          "html": len(jaxmagic.static_html(cap, "sharding"))}))
    """  # noqa: UP031
        % str(REPO)
    )
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=512", "JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=280, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    sizes = json.loads(run.stdout.strip().splitlines()[-1])
    assert sizes["devices"] == 512 and sizes["arrays"] >= 3
    assert sizes["wire"] < 3_000_000 and sizes["html"] < 1_000_000
    print(f"[huge] 512 devices: {sizes}")
