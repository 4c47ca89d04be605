"""%%sharding capture and document, checked against JAX's own answers on 8 simulated devices.

Blocks must equal `addressable_shards` (device, index, replica id) for every sharding kind and
rank; collectives must be the ones `compiled.as_text()` holds; lowered shardings must parse in
both the Shardy and the GSPMD form; replica groups in all three of XLA's notations.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from jaxmagic.capture.sharding import arrays as sharding
from jaxmagic.capture.sharding import collectives

from . import jax_versions
from .jax_versions import AXIS_TYPES, COMPILED, HAS_AXIS_TYPES, HAS_SET_MESH, SET_MESH, needs, reads_compiled_hlo

COMPILED_HLO = reads_compiled_hlo()  # whether this JAX gives a call's compiled HLO (tests/jax_versions.py)

AxisType = getattr(jax.sharding, "AxisType", None)  # tests that use it are skipped where it is None

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "docs" / "schema.md"
COLLECTIVE_LINE = re.compile(
    r"=\s.*?\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\("
)


def auto_mesh(shape, names):
    return jax_versions.auto_mesh(shape, names)


def placements():
    mesh2 = auto_mesh((2, 4), ("x", "y"))
    mesh1 = auto_mesh((8,), ("d",))
    mesh3 = auto_mesh((2, 2, 2), ("a", "b", "c"))
    return [
        ("1-D split", jnp.arange(16.0), NamedSharding(mesh1, P("d"))),
        ("2-D both axes", jnp.ones((8, 12)), NamedSharding(mesh2, P("x", "y"))),
        ("2-D one axis, replicated over the other", jnp.ones((8, 3)), NamedSharding(mesh2, P("x"))),
        ("2-D two axes on one dim", jnp.ones((16, 2)), NamedSharding(mesh2, P(("x", "y")))),
        ("fully replicated", jnp.ones((4, 4)), NamedSharding(mesh2, P())),
        ("3-D", jnp.ones((4, 8, 6)), NamedSharding(mesh2, P(None, "y", "x"))),
        ("4-D on a 3-D mesh", jnp.ones((2, 4, 2, 3)), NamedSharding(mesh3, P("a", "b", "c", None))),
        ("one device", jnp.ones((3, 5)), SingleDeviceSharding(jax.devices()[3])),
        ("scalar", jnp.float32(2.0), NamedSharding(mesh1, P())),
    ]


@pytest.mark.parametrize("case", range(9))
def test_blocks_equal_addressable_shards(case):
    label, value, where = placements()[case]
    array = jax.device_put(value, where)
    record = sharding.array_record(array, "x", "namespace")
    assert record is not None, label
    theirs = {}
    for shard in array.addressable_shards:
        index = tuple((s.indices(d)[0], s.indices(d)[1]) for s, d in zip(shard.index, array.shape))
        theirs.setdefault(index, []).append((shard.device.id, shard.replica_id))
    ours = {b.index: list(zip(b.devices, b.replicas)) for b in record.blocks}
    assert ours == theirs, label
    assert record.sharding.fully_replicated == array.sharding.is_fully_replicated
    assert record.sharding.device_ids == tuple(sorted(d.id for d in array.sharding.device_set))
    assert record.nbytes == array.nbytes and record.shape == array.shape


def test_replication_and_bytes_per_device_in_the_document():
    mesh = auto_mesh((2, 4), ("x", "y"))
    ns = {
        "mesh": mesh,
        "rows": jax.device_put(jnp.ones((8, 3)), NamedSharding(mesh, P("x"))),
        "everywhere": jax.device_put(jnp.ones((4, 4)), NamedSharding(mesh, P())),
    }
    with jaxmagic.capture(ns, shardings=True) as cap:
        pass
    doc = jaxmagic.document(cap, "sharding")
    arrays = {a["name"]: a for a in doc["arrays"]}
    rows, everywhere = arrays["rows"], arrays["everywhere"]
    assert len(rows["blocks"]) == 2 and rows["replication"] == 4
    assert len(everywhere["blocks"]) == 1 and everywhere["replication"] == 8
    assert rows["bytes_per_device"] == {str(d): 4 * 3 * 4 for d in range(8)}
    (m,) = doc["meshes"]
    assert m["axis_names"] == ["x", "y"] and m["shape"] == [2, 4]
    assert m["devices"] == [int(d.id) for d in mesh.devices.flat] and m["axis_types"] == ["Auto", "Auto"]
    assert rows["sharding"]["mesh"] == m["id"] and rows["sharding"]["spec"] == ["x"]
    assert [d["id"] for d in doc["devices"]] == list(range(8))


@needs(COMPILED_HLO, COMPILED)
def test_jitted_call_shardings_collectives_and_outputs():
    mesh = auto_mesh((2, 4), ("x", "y"))
    ns = {
        "w": jax.device_put(jnp.ones((64, 64)), NamedSharding(mesh, P("x", "y"))),
        "b": jax.device_put(jnp.ones(64), NamedSharding(mesh, P("x"))),
    }
    with jaxmagic.capture(ns, shardings=True) as cap:

        @jax.jit
        def step(w, b):
            return (w @ w).sum(0) + b.sum()

        ns["out"] = step(ns["w"], ns["b"])
        step(ns["w"], ns["b"])  # a hit: no second record of its outputs
    doc = jaxmagic.document(cap, "sharding")
    (call,) = doc["calls"]
    compiled = step.lower(ns["w"], ns["b"]).compile()
    expected = jax.tree_util.tree_leaves(compiled.input_shardings)
    assert [leaf["text"] for leaf in call["inputs"]] == [repr(s) for s in expected]
    assert [leaf["path"] for leaf in call["inputs"]] == ["w", "b"]
    assert [leaf["spec"] for leaf in call["outputs"]] == [list(compiled.output_shardings.spec)]
    hlo_text = compiled.as_text()
    assert len(call["collectives"]) == len(COLLECTIVE_LINE.findall(hlo_text)) > 0
    assert {c["kind"] for c in call["collectives"]} <= set(collectives.KINDS)
    for c in call["collectives"]:
        assert sorted(d for g in c["groups"] for d in g) == list(range(8)) or c["pairs"]
    # The output is bound as `out`: one record, named there, made by the call.
    outs = [a for a in doc["arrays"] if a["call"] == call["call"]]
    assert [a["name"] for a in outs] == ["out"] and outs[0]["origin"] == "namespace"
    assert call["lowered"]["args"][0] is not None


def test_shard_map_specs_shard_avals_and_explicit_collectives():
    mesh = auto_mesh((8,), ("d",))
    x = jax.device_put(jnp.ones((4, 16)), NamedSharding(mesh, P(None, "d")))
    with jaxmagic.capture({}, shardings=True) as cap:

        @jax.jit
        def matmul(x, w):
            def body(x, w):
                return jax.lax.psum(x @ w, "d")

            return jax_versions.shard_map(body, mesh=mesh, in_specs=(P(None, "d"), P("d")), out_specs=P())(x, w)

        matmul(x, jnp.ones((16, 3)))
    (call,) = jaxmagic.document(cap, "sharding")["calls"]
    (smap,) = call["shard_maps"]
    assert smap["in_specs"] == ["P(None, 'd')", "P('d',)"] and smap["out_specs"] == ["P()"]
    assert [a.split("{")[0] for a in smap["shard_avals"]] == ["f32[4,2]", "f32[2,3]"]
    assert smap["in_avals"] == ["f32[4,16]", "f32[16,3]"]
    assert [c["primitive"] for c in smap["collectives"]][0].startswith("psum")
    assert smap["collectives"][0]["axes"] == ["d"] and smap["collectives"][0]["source"]["line"] > 0
    if COMPILED_HLO:  # the all-reduce XLA made of it is read from the compiled HLO
        assert any(c["kind"] == "all-reduce" for c in call["collectives"])
    else:
        assert call["collectives_known"] is False and not call["collectives"]


def test_replica_groups_in_every_notation():
    assert collectives.replica_groups("{{0,1},{2,3}}") == ((0, 1), (2, 3))
    assert collectives.replica_groups("[2,4]<=[8]") == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert collectives.replica_groups("[4,2]<=[2,4]T(1,0)") == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert collectives.replica_groups("mesh['axis_0'=2,'axis_1'=4] {'axis_0'}") == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert collectives.replica_groups("mesh['axis_0'=2,'axis_1'=4] {'axis_1'}") == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert collectives.replica_groups("") == ()
    assert collectives.shape_bytes("(f32[2]{0}, bf16[4,4])") == 8 + 32


def test_lowered_shardings_parse_shardy_and_gspmd(monkeypatch):
    mesh = auto_mesh((2, 4), ("x", "y"))
    a = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("x", "y")))
    f = jax.jit(lambda a: a * 2)
    previous = jax.config.jax_use_shardy_partitioner
    try:
        jax.config.update("jax_use_shardy_partitioner", True)  # newer JAX default; JAX 0.4 has it off
        shardy = collectives.lowered_shardings(f.lower(a).as_text())["args"][0]
        jax.config.update("jax_use_shardy_partitioner", False)
        gspmd = collectives.lowered_shardings(jax.jit(lambda a: a * 3).lower(a).as_text())["args"][0]
    finally:
        jax.config.update("jax_use_shardy_partitioner", previous)
    assert collectives.sdy_dims(shardy) == [["x"], ["y"]]
    assert gspmd.startswith("{devices=[2,4]")


@needs(COMPILED_HLO, COMPILED)
def test_findings_replicated_resharding_and_large_all_gather():
    mesh = auto_mesh((8,), ("d",))
    big = jax.device_put(jnp.ones((1024, 512)), NamedSharding(mesh, P()))
    sharded = jax.device_put(jnp.ones((1024, 512)), NamedSharding(mesh, P("d")))
    ns = {"big": big, "sharded": sharded}
    with jaxmagic.capture(ns, shardings=True) as cap:
        gather = jax.jit(lambda s: s.sum(0) * s[0], out_shardings=NamedSharding(mesh, P()))
        gather(sharded)
        wants_sharded = jax.jit(lambda v: v * 2, in_shardings=NamedSharding(mesh, P("d")))
        wants_sharded(jnp.ones((64, 4)))  # arrives on one device: moved on every call
    doc = jaxmagic.document(cap, "sharding")
    kinds = [f["kind"] for f in doc["findings"]]
    assert "replicated" in kinds and "resharding" in kinds
    replicated = next(f for f in doc["findings"] if f["kind"] == "replicated")
    assert next(a for a in doc["arrays"] if a["id"] == replicated["array"])["name"] == "big"
    resharding = next(f for f in doc["findings"] if f["kind"] == "resharding")
    call = next(c for c in doc["calls"] if c["id"] == resharding["call"])
    assert any(leaf["mismatch"] for leaf in call["inputs"])
    assert [f["severity"] for f in doc["findings"]] == sorted(
        (f["severity"] for f in doc["findings"]), key=lambda s: s != "warning"
    )


def test_document_is_json_names_stay_text_and_schema_documents_every_field():
    mesh = auto_mesh((2, 4), ("x", "y"))
    ns = {"<img src=x onerror=alert(1)>": jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("x", "y")))}
    with jaxmagic.capture(ns, shardings=True) as cap:
        jax.jit(lambda a: a + 1)(ns["<img src=x onerror=alert(1)>"])
    doc = jaxmagic.document(cap, "sharding")
    text = json.dumps(doc, allow_nan=False)
    assert "<img src=x onerror=alert(1)>" in [a["name"] for a in doc["arrays"]]
    section = SCHEMA.read_text().split("## Sharding documents (version 1)", 1)[1]
    code = re.findall(r"```(.*?)```", section, re.S) + re.findall(r"`([^`\n]+)`", section)
    documented = set(re.findall(r"[A-Za-z_]+", " ".join(code)))

    def fields(value):
        if isinstance(value, dict):
            for k, v in value.items():
                if not k.isdigit():
                    yield k
                yield from fields(v)
        elif isinstance(value, list):
            for v in value:
                yield from fields(v)

    missing = (
        set(fields(doc))
        - documented
        - {
            "schema",
            "version",
            "kind",
            "title",
            "caption",
            "notes",
            "error",
            "type",
            "message",
            "file",
            "line",
            "code",
            "func",
            "col",
        }
    )
    assert not missing, f"fields emitted but not in docs/schema.md: {sorted(missing)}"
    assert len(text) < 100_000


def test_no_capture_of_placement_unless_asked_and_nothing_held():
    ns = {"x": jnp.ones(3)}
    with jaxmagic.capture(ns) as cap:
        pass
    assert cap.arrays == [] and cap.meshes == []
    with jaxmagic.capture(ns, shardings=True) as cap:
        pass
    assert all(a.ref is None for a in cap.arrays)  # no reference to any array survives the capture


@needs(HAS_AXIS_TYPES, AXIS_TYPES)  # its cell spells the mesh with AxisType.Auto
def test_256_devices_in_a_fresh_process():
    script = textwrap.dedent("""
        import json, os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=256"
        import jax, jax.numpy as jnp, jaxmagic
        from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((16, 16), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
        ns = {"w": jax.device_put(jnp.ones((64, 64)), NamedSharding(mesh, P("data", "model"))),
              "r": jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P()))}
        with jaxmagic.capture(ns, shardings=True) as cap:
            pass
        doc = jaxmagic.document(cap, "sharding")
        a = {x["name"]: x for x in doc["arrays"]}
        print(json.dumps([len(doc["devices"]), len(a["w"]["blocks"]), a["r"]["replication"], len(json.dumps(doc))]))
    """)
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=256", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    devices, blocks, replication, size = json.loads(out.stdout.strip().splitlines()[-1])
    assert (devices, blocks, replication) == (256, 256, 256)
    assert size < 200_000


def test_static_and_text_views_list_meshes_arrays_and_collectives():
    from jaxmagic.views.static_html import fallback_html, text_summary

    mesh = auto_mesh((2, 4), ("x", "y"))
    ns = {
        "w": jax.device_put(jnp.ones((64, 64)), NamedSharding(mesh, P("x", "y"))),
        "</td><script>alert(1)</script>": jax.device_put(jnp.ones(8), NamedSharding(mesh, P())),
    }
    with jaxmagic.capture(ns, shardings=True) as cap:
        jax.jit(lambda w: (w @ w).sum(0))(ns["w"])
    doc = jaxmagic.document(cap, "sharding")
    page = fallback_html(doc)
    assert "<script>" not in page and "&lt;/td&gt;&lt;script&gt;" in page
    own = [a for a in doc["arrays"] if not a["earlier"]]  # the earlier one is a row of the closed table
    assert page.count("<img") == len(doc["meshes"]) + len(own)
    assert "<details><summary>1 array from earlier cells</summary>" in page
    text = text_summary(doc)
    assert "unnamed mesh m0: x=2 (Auto) × y=4 (Auto)" in text and "w: f32[64, 64] P('x', 'y'), 8 blocks, 1 copy" in text
    (call,) = doc["calls"]
    assert text.count("\n  all-") + text.count("\n  reduce-scatter") == len(call["collectives"])


@needs(HAS_AXIS_TYPES, AXIS_TYPES)  # its cell spells the mesh with AxisType.Auto
def test_sharding_magic_runs_the_cell_and_records_placement(magic_shell, capsys):
    cell = (
        "%%sharding --name scap\n"
        "import jax, jax.numpy as jnp\n"
        "from jax.sharding import NamedSharding, PartitionSpec as P, AxisType\n"
        "m = jax.make_mesh((8,), ('d',), axis_types=(AxisType.Auto,))\n"
        "xs = jax.device_put(jnp.arange(16.0), NamedSharding(m, P('d')))\n"
        "total = jax.jit(lambda v: v.sum())(xs)\n"
        "print('total', float(total))\n"
        "total\n"
    )
    result = magic_shell.run_cell(cell, store_history=True)
    assert result.success and float(result.result) == 120.0
    assert "total 120.0" in capsys.readouterr().out
    doc = jaxmagic.document(magic_shell.user_ns["scap"], "sharding")
    names = {a["name"] for a in doc["arrays"]}
    assert {"xs", "total"} <= names
    assert doc["meshes"][0]["axis_names"] == ["d"]
    magic_shell.user_ns["ran"] = False
    result = magic_shell.run_cell("%%sharding --values\nran = True\n", store_history=True)
    assert not result.success and magic_shell.user_ns["ran"] is False
    assert magic_shell.run_cell("%%sharding --static\nimport jax\njax.numpy.ones(3)\n").success


@needs(HAS_AXIS_TYPES, AXIS_TYPES)
def test_replica_groups_are_device_ids_on_a_permuted_mesh():
    order = [1, 0, 2, 3, 4, 5, 6, 7]  # columns (1, 4), (0, 5): not the logical (0, 4), (1, 5)
    devices = np.array(jax.devices())[order].reshape(2, 4)
    mesh = jax.sharding.Mesh(devices, ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("x", "y")))
    with jaxmagic.capture({"a": a}, shardings=True) as cap:
        jax.jit(lambda a: a.sum(0))(a)
    (call,) = jaxmagic.document(cap, "sharding")["calls"]
    reduce = next(c for c in call["collectives"] if c["kind"] == "all-reduce")
    # Summing over `x` pairs the devices in the same mesh column.
    columns = {tuple(sorted(int(d.id) for d in devices[:, j])) for j in range(4)}
    assert {tuple(sorted(g)) for g in reduce["groups"]} == columns


def test_arrays_the_cell_binds_come_before_those_earlier_cells_left():
    ns = {"old": jnp.ones(2), "kept": jnp.ones(3)}
    with jaxmagic.capture(ns, shardings=True) as cap:
        ns["new"] = jnp.zeros(4)
        ns["old"] = jnp.zeros(5)  # rebound in this cell
    names = [a.name for a in cap.arrays]
    assert sorted(names[:2]) == ["new", "old"] and names[2:] == ["kept"]
    earlier = {a["name"]: a["earlier"] for a in jaxmagic.document(cap, "sharding")["arrays"]}
    assert earlier == {"new": False, "old": False, "kept": True}  # a rebound name is this cell's


def test_an_array_whose_placement_cannot_be_read_is_named_in_a_note_not_left_out(monkeypatch):
    """A live array whose sharding JAX will not index (JAX 0.6 with an unreduced spec raised here) is not
    dropped without a word: the capture's notes name it and say why; the other arrays are recorded."""
    real = sharding._placement
    odd = jnp.arange(6.0)

    def placement(value, shape):
        if value is odd:
            raise AttributeError("'PartitionSpec' object has no attribute 'partitions'")
        return real(value, shape)

    monkeypatch.setattr(sharding, "_placement", placement)
    ns = {"fine": jnp.ones(2)}
    with jaxmagic.capture(ns, shardings=True) as cap:
        ns["odd"] = odd
    assert [a.name for a in cap.arrays] == ["fine"]
    [note] = [n for n in cap.notes if "not shown" in n]
    assert note == (
        "1 array not shown: JAX would not give where it lives: odd (AttributeError: "
        "'PartitionSpec' object has no attribute 'partitions')"
    )
    del ns["odd"]
    odd.delete()  # freed or donated meanwhile: nothing to say
    with jaxmagic.capture({"gone": odd}, shardings=True) as cap:
        pass
    assert not any("not shown" in n for n in cap.notes)


def test_an_earlier_array_the_cell_passes_to_a_jitted_call_is_part_of_its_story():
    ns = {"batch": jnp.ones(4), "unused": jnp.ones(3), "jnp": jnp, "jax": jax}
    with jaxmagic.capture(ns, shardings=True) as cap:
        exec("f = jax.jit(lambda x: x * 2)\nf(batch)\nf(batch + 1)\nout = f(batch)\n", ns)
    earlier = {a["name"]: a["earlier"] for a in jaxmagic.document(cap, "sharding")["arrays"]}
    assert earlier["batch"] is False and earlier["unused"] is True and earlier["out"] is False


@needs(HAS_AXIS_TYPES, AXIS_TYPES)
@needs(HAS_SET_MESH, SET_MESH)
def test_intermediate_shardings_constraints_and_explicit_types():
    auto = auto_mesh((2, 4), ("a", "b"))
    explicit = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Explicit,))
    x = jax.device_put(jnp.ones((16, 4)), NamedSharding(explicit, P("d")))
    with jaxmagic.capture({}, shardings=True) as cap:
        constrained = jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, NamedSharding(auto, P("a"))).sum(0))
        constrained(jnp.ones((16, 4)))
        with jax.set_mesh(explicit):
            typed = jax.jit(lambda v: jax.sharding.reshard(v * 2, P(None, None)).sum(0))
            typed(x)
    first, second = jaxmagic.document(cap, "sharding")["calls"]
    (constraint,) = first["intermediates"]
    assert (
        constraint["primitive"] == "sharding_constraint" and constraint["spec"] == "P('a',)" and constraint["requested"]
    )
    by_prim = {i["primitive"]: i for i in second["intermediates"]}
    assert by_prim["mul"]["aval"] == "f32[16@d,4]" and not by_prim["mul"]["requested"]
    assert by_prim["reshard"]["requested"] and by_prim["reshard"]["spec"] == "P(None, None)"
    assert by_prim["mul"]["source"]["line"] > 0


def test_an_uneven_constraint_inside_a_program_is_a_padding_finding():
    mesh = auto_mesh((8,), ("d",))
    with jaxmagic.capture({}, shardings=True) as cap:
        padded = jax.jit(lambda x: jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("d"))).sum())
        assert float(padded(jnp.ones((10, 3)))) == 60.0
    doc = jaxmagic.document(cap, "sharding")
    (x,) = doc["calls"][0]["intermediates"]
    assert x["uneven"] == [[0, 10, 8]]
    (finding,) = [f for f in doc["findings"] if f["kind"] == "uneven"]
    assert "dim 0 of size 10 into 8" in finding["message"] and finding["call"] == doc["calls"][0]["id"]
    assert "pad" in jax.jit(padded).lower(jnp.ones((10, 3))).compile().as_text()  # XLA does pad it


def test_registered_pytrees_are_walked_and_opaque_objects_are_not():
    import dataclasses

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Layer:  # as Flax, Equinox and Optax states are: registered pytree nodes
        w: jax.Array
        b: jax.Array

        def __call__(self, x):
            return x @ self.w + self.b

    class Opaque:
        def __init__(self):
            self.hidden = jnp.ones(3)

    ns = {
        "layer": Layer(jnp.ones((2, 2)), jnp.zeros(2)),
        "opaque": Opaque(),
        "fn": jnp.sin,
        "mixed": [jnp.ones(1), 2.0, "text"],
    }
    records, _ = sharding.namespace_arrays(ns)
    assert [r.name for r in records] == ["layer.w", "layer.b", "mixed[0]"]


@needs(HAS_AXIS_TYPES, AXIS_TYPES)
@needs(HAS_SET_MESH, SET_MESH)
def test_meshes_carry_the_names_the_namespace_binds_and_their_axis_types():
    """Mesh names are the namespace's names for the very Mesh object (an alias is a second name;
    inside a dict, its path); an Auto and an Explicit mesh over the same devices are two meshes,
    each with JAX's own `mesh.axis_types`; a mesh set with `jax.set_mesh` at a call is recorded."""
    dp = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    ex = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
    assert list(dp.devices.flat) == list(ex.devices.flat) and dp.axis_names == ex.axis_names
    grid = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    hidden = jax.make_mesh((4, 2), ("a", "b"), axis_types=(AxisType.Explicit,) * 2)
    ns = {"dp": dp, "alias": dp, "meshes": {"grid": grid}}
    with jaxmagic.capture(ns, shardings=True) as cap:
        ns["ex"] = ex
        ns["batch"] = jax.device_put(jnp.ones((16, 4)), NamedSharding(ex, P("data")))
        with jax.set_mesh(hidden):  # named nowhere: recorded from the call's context
            ns["y"] = jax.jit(lambda v: v * 2)(jax.device_put(jnp.ones((8, 4)), P("a")))
    doc = jaxmagic.document(cap, "sharding")
    by_names = {tuple(m["names"]): m for m in doc["meshes"]}
    want = {("ex",): ex, ("dp", "alias"): dp, ("meshes['grid']",): grid}
    for names, mesh in want.items():
        m = by_names[names]
        assert m["axis_types"] == [t.name for t in mesh.axis_types]
        assert m["devices"] == [int(d.id) for d in mesh.devices.flat] and m["axis_names"] == list(mesh.axis_names)
    assert by_names[("ex",)]["id"] != by_names[("dp", "alias")]["id"]  # Auto and Explicit: two meshes
    (context,) = [m for m in doc["meshes"] if m["context"]]
    assert context["names"] == [] and context["axis_names"] == ["a", "b"]
    assert context["axis_types"] == [t.name for t in hidden.axis_types]
    batch = next(a for a in doc["arrays"] if a["name"] == "batch")
    assert batch["sharding"]["mesh"] == by_names[("ex",)]["id"]  # an Explicit array names the Explicit mesh
    from jaxmagic.views.static_sharding import mesh_title

    assert mesh_title(by_names[("dp", "alias")]) == "mesh dp"
    assert mesh_title(context) == f"mesh {context['id']} (set with jax.set_mesh)"


@needs(HAS_AXIS_TYPES, AXIS_TYPES)  # its cell spells the mesh with AxisType.Auto
def test_the_earlier_arrays_are_those_bound_before_the_cell_that_its_calls_do_not_read(magic_shell):
    """Through the magic, as a notebook runs it: 30 arrays left by earlier cells, then a cell on a
    2x4 mesh that reads two of them. Earlier = bound before the cell, not rebound, not read by its calls;
    the document lists this cell's arrays first and the earlier ones last."""
    setup = "import jax, jax.numpy as jnp\n" + "".join(f"old{i} = jnp.full((4,), {i}.0)\n" for i in range(30))
    assert magic_shell.run_cell(setup).success
    bound = {n for n, v in magic_shell.user_ns.items() if isinstance(v, jax.Array) and not n.startswith("_")}
    names_before = set(magic_shell.user_ns)
    cell = (
        "%%sharding --name scap\n"
        "from jax.sharding import NamedSharding, PartitionSpec as P, AxisType\n"
        "grid = jax.make_mesh((2, 4), ('x', 'y'), axis_types=(AxisType.Auto,) * 2)\n"
        "x = jax.device_put(jnp.ones((64, 32)), NamedSharding(grid, P('x', 'y')))\n"
        "w = jax.device_put(jnp.ones((32, 16)), NamedSharding(grid, P('y', None)))\n"
        "out = jax.jit(lambda a, b, c: a @ b + c.sum())(x, w, old3)\n"
        "old7 = old7 + 1\n"
    )
    assert magic_shell.run_cell(cell).success
    doc = jaxmagic.document(magic_shell.user_ns["scap"], "sharding")
    earlier = {a["name"] for a in doc["arrays"] if a["earlier"]}
    rebound = {"grid", "x", "w", "out", "old7"}  # names the cell assigns (an earlier test may have bound them)
    assert {n for n in earlier if n.isidentifier()} == bound - rebound - {"old3"}  # old3 is read by the call
    # arrays inside containers that earlier tests left in this shell (`lm.blocks[1].norm.scale.value`) are
    # earlier by the name they are bound to
    assert {re.match(r"[A-Za-z_]\w*", n).group(0) for n in earlier} <= names_before - rebound - {"old3"}
    assert {f"old{i}" for i in range(30)} - {"old3", "old7"} <= earlier
    flags = [a["earlier"] for a in doc["arrays"]]
    assert flags == sorted(flags)  # this cell's arrays first, then the earlier ones
    assert doc["meshes"][0]["names"] == ["grid"]  # the cell's own name first
    own = len(doc["arrays"]) - len(earlier)
    assert doc["title"].startswith(f"%%sharding: {own} arrays on 8 devices")  # the cell's own; the row says the rest
    from jaxmagic.views.static_sharding import sharding_html, sharding_text

    text = sharding_text(
        doc
    )  # the static page and text: the call (its collectives), this cell's arrays, the earlier ones
    assert (
        text.index("<lambda>(")
        < text.index("x: f32[64, 32]")
        < text.index(f"{len(earlier)} arrays from earlier cells:")
    )
    page = sharding_html(doc)
    assert (
        page.index("&lt;lambda&gt;")
        < page.index("blocks of x")
        < page.index(f"<details><summary>{len(earlier)} arrays from earlier cells</summary>")
    )


def test_a_one_device_program_has_no_collectives_and_its_compiled_text_is_not_read(monkeypatch):
    """XLA inserts no collective into a program on one device: the view says "none" (known) without
    printing and parsing the compiled HLO, which is 40 MB for a 10k-eqn train step."""
    from jaxmagic.capture import record

    namespace = {"f": jax.jit(lambda x: (x @ x.T).sum())}
    with jaxmagic.capture(namespace) as cap:
        namespace["f"](jnp.ones((4, 4)))
    reads: list[int] = []
    printed = record.Artifacts.compiled_text
    monkeypatch.setattr(record.Artifacts, "compiled_text", property(lambda self: reads.append(1) or printed.fget(self)))
    call = jaxmagic.document(cap, "sharding")["calls"][0]
    assert call["collectives"] == [] and call["collectives_known"] is True
    assert reads == []


@needs(HAS_SET_MESH, SET_MESH)
def test_an_unreduced_array_is_shown_with_its_sharding_and_a_note():
    """`out_sharding=P(..., unreduced={'x'})` leaves partial sums on the devices along x. JAX cannot
    index such an array (its shards' `index` raises): it is shown, not dropped, with its spec, blocks where
    the partitions put them, and a note; the holders of each block sum to what JAX's own reshard gives."""
    if not jax_versions.places_unreduced_arrays():
        pytest.skip(f"{jax_versions.UNREDUCED} are not available on JAX {jax.__version__}")
    from jaxmagic.views.static_html import fallback_html, text_summary

    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    with jax.set_mesh(mesh):
        ns = {
            "a": jax.device_put(jnp.arange(32.0).reshape(4, 8), NamedSharding(mesh, P("x", "y"))),
            "b": jax.device_put(jnp.ones((4, 4)), NamedSharding(mesh, P("x", None))),
        }
        with jaxmagic.capture(ns, shardings=True) as cap:
            step = jax.jit(lambda a, b: jnp.einsum("ij,jk->ik", a.T, b, out_sharding=P("y", None, unreduced={"x"})))
            ns["partial"] = step(ns["a"], ns["b"])
        total = np.asarray(jax.sharding.reshard(ns["partial"], P("y", None)))
    partial = ns["partial"]
    with pytest.raises(Exception):  # JAX's own verdict: it cannot index this array
        partial.addressable_shards[0].index
    doc = jaxmagic.document(cap, "sharding")
    [arr] = [x for x in doc["arrays"] if x["name"] == "partial"]
    s = arr["sharding"]
    assert (s["spec"], s["unreduced"], s["reduced"]) == (["y", None], ["x"], [])
    assert s["text"] == repr(partial.sharding) and "unreduced={'x'}" in s["text"]
    assert (arr["partial_sums"], arr["replication"], len(arr["blocks"])) == (4, 1, 2)
    assert arr["note"].startswith("JAX cannot index partial: it is unreduced over mesh axis x")
    held = {int(sh.device.id): np.asarray(sh.data) for sh in partial.addressable_shards}
    for block in arr["blocks"]:
        (r0, r1), (c0, c1) = block["index"]
        assert len(block["devices"]) == 4 and block["replicas"] == [-1] * 4
        np.testing.assert_allclose(sum(held[d] for d in block["devices"]), total[r0:r1, c0:c1])
    assert arr["bytes_per_device"] == {str(d): 4 * 4 * 4 for d in range(8)}
    (call,) = doc["calls"]
    assert call["outputs"][0]["unreduced"] == ["x"]
    assert not any(f.get("array") == arr["id"] for f in doc["findings"])  # not "replicated": partial sums
    text = text_summary(doc)
    assert "partial: f32[8, 4] P('y', None, unreduced={'x'})" in text and "JAX cannot index partial" in text
    assert "each block as 4 partial sums over 'x' (unreduced: JAX cannot index it)" in text  # the caption
    assert "JAX cannot index partial" in fallback_html(doc)
    # `reduced` axes JAX indexes as copies: read as any other sharding, the axes recorded
    with jax.set_mesh(mesh):
        copies = jax.device_put(jnp.ones(8), NamedSharding(mesh, P(None, reduced={"x"})))
    record = sharding.array_record(copies, "copies", "namespace")
    assert record.sharding.reduced == ("x",) and record.sharding.unreduced == ()
    assert record.blocks[0].replicas == tuple(int(sh.replica_id) for sh in copies.addressable_shards)


def test_main_shardings_read_from_the_module_equal_those_read_from_its_text():
    """`@main`'s shardings come from its attributes (the module is not printed); the text says the same."""
    from jaxmagic.capture.sharding import collectives as hlo

    mesh = jax.make_mesh((4, 2), ("x", "y"))
    cases = [
        (jax.jit(lambda a, b: (a @ b, a.sum())), (jnp.ones((8, 8)), jnp.ones((8, 8)))),
        (
            jax.jit(
                lambda a: a * 2,
                in_shardings=NamedSharding(mesh, P("x", "y")),
                out_shardings=NamedSharding(mesh, P(None, "y")),
            ),
            (jnp.ones((8, 8)),),
        ),
        (jax.jit(lambda t: {"w": t["w"] + 1, "b": t["b"]}), ({"w": jnp.ones(4), "b": jnp.ones(2)},)),
    ]
    for fn, args in cases:
        lowered = fn.lower(*args)
        from_module = hlo.lowered_shardings_of(lowered)
        assert from_module is not None
        assert from_module == hlo.lowered_shardings(lowered.as_text())
        assert len(from_module["args"]) == len(jax.tree_util.tree_leaves(args))


@needs(COMPILED_HLO, COMPILED)  # JAX 0.4: no compiled shardings, so no leaves
def test_a_models_thousands_of_leaves_are_counted_in_the_fallbacks_not_listed():
    """A step over 400 layers takes and returns 800 leaves and leaves 800 arrays: the text and HTML
    fallbacks list 24 leaves a side (moved ones chosen first) and 200 arrays, and count the rest by
    sharding; the signature is cut at an argument with the count (the widget has them all)."""
    from jaxmagic.views import static_sharding
    from jaxmagic.views.static_sharding import sharding_html, sharding_text

    params = [{"w": jnp.ones((4, 4)), "b": jnp.zeros(4)} for _ in range(400)]
    namespace = {"step": jax.jit(lambda ps: jax.tree_util.tree_map(lambda x: x * 2, ps)), "params": params}
    with jaxmagic.capture(namespace, shardings=True) as cap:
        namespace["out"] = namespace["step"](params)
    doc = jaxmagic.document(cap, "sharding")
    (call,) = doc["calls"]
    assert len(call["inputs"]) == len(call["outputs"]) == 800 and len(doc["arrays"]) >= 800
    moved = call["inputs"][500]
    moved.update(mismatch=True, given="P('x')")  # as a leaf given another sharding reads
    text, page = sharding_text(doc), sharding_html(doc)
    assert len(text) < 40_000 and len(page) < 80_000
    lines = text.splitlines()
    ins = [line for line in lines if line.startswith("  in ")]
    assert len(ins) == static_sharding.MAX_LEAF_LINES + 1  # a moved leaf is always among those listed
    assert any(moved["path"] in line and line.endswith("(given P('x'): moved)") for line in ins)
    spec = static_sharding._leaf_spec(call["inputs"][0])
    assert ins[-1] == f"  in {800 - static_sharding.MAX_LEAF_LINES:,} more leaves: {800 - 24:,} {spec}"
    assert any(line.startswith("  out 776 more leaves: 776 ") for line in lines)
    n_arrays = len([a for a in doc["arrays"] if not a["earlier"]])
    assert f"{n_arrays - static_sharding.MAX_ARRAY_ROWS:,} more arrays: " in text
    assert f"{n_arrays - static_sharding.MAX_ARRAY_ROWS:,} more arrays: " in page
    header = next(line for line in lines if line.startswith(call["name"] + "("))
    assert len(header) < len(call["name"]) + 300 and header.endswith(", … (800 arguments in all)):")
