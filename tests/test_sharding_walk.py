"""`%%sharding`'s namespace walk is bounded: what a notebook binds besides arrays costs nothing.

The walk looks where `jax.Array`s can be: it finds exactly what `jax.tree_util.tree_flatten_with_path`
finds in the pytrees people bind (params dicts, lists of layers, NamedTuples, registered nodes,
Equinox modules, Optax states), passes over big containers of Python scalars and strings in O(1),
stops at its item and time caps, and says by name what it did not look into.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from jaxmagic.capture.sharding import arrays as sharding

from . import jax_versions


def oracle(ns: dict) -> tuple[list[str], list[str]]:
    """(array names, mesh names) as a full `tree_flatten_with_path` of each value names them."""
    arrays, meshes = [], []
    for name, value in ns.items():
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            where = name + jax.tree_util.keystr(tuple(path))
            if isinstance(leaf, jax.Array):
                arrays.append(where)
            elif type(leaf).__name__ in sharding.MESH_TYPES:
                meshes.append(where)
    return arrays, meshes


def walked(ns: dict) -> tuple[list[str], list[str], list[str]]:
    """(array names, mesh names, notes) from the walk `%%sharding` runs when a cell ends."""
    meshes: dict = {}
    notes: list[str] = []
    records, extra = sharding.namespace_arrays(ns, meshes=meshes, notes=notes)
    assert extra == 0
    return [r.name for r in records], [n for _, names in meshes.values() for n in names], notes


class Batch(NamedTuple):
    x: jax.Array
    y: jax.Array
    size: int


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    w: jax.Array
    b: jax.Array | None


def test_the_walk_finds_what_flattening_finds_in_the_pytrees_people_bind(monkeypatch):
    """Same leaves, same order (dict keys sorted as JAX sorts them), same paths; a big list of arrays
    and a big dict with arrays among ints are walked, not skipped."""
    monkeypatch.setattr(sharding, "MAX_ARRAYS", 10_000)  # every array recorded, to compare them all
    mesh = jax_versions.auto_mesh((2, 4), ("x", "y"))
    a, b = jnp.ones((2, 3)), jnp.zeros(3)
    ns = {
        "params": {"dense": {"w": a, "b": b}, "embed": jnp.ones((4, 2)), "scale": 1.0},
        "layers": [{"w": a, "b": b}, {"w": jnp.ones(2), "b": None}, (a, "relu")],
        "ordered": collections.OrderedDict([("z", a), ("a", b)]),
        "counts": collections.defaultdict(int, {"k": jnp.int32(3), "j": 4}),
        "batch": Batch(a, b, 32),
        "stack": [Layer(a, None), Layer(b, a)],
        "sharded": {"mesh": mesh, "w": jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("x")))},
        "top": a,
        "many": [jnp.float32(i) for i in range(1_500)],  # more than SAMPLE_ABOVE, all arrays
        "mixed": {**{f"n{i}": i for i in range(1_200)}, "zz": a},  # its last value is an array: sampled, walked
        "empty": [],
        "nothing": None,
    }
    arrays, meshes, notes = walked(ns)
    want_arrays, want_meshes = oracle(ns)
    assert arrays == want_arrays and meshes == want_meshes and notes == []
    assert "params['dense']['b']" in arrays and "batch.x" in arrays and "stack[1].b" in arrays
    assert "mixed['zz']" in arrays and "many[1499]" in arrays and meshes == ["sharded['mesh']"]


def test_equinox_modules_and_optax_states_are_found_as_flattening_finds_them():
    eqx = pytest.importorskip("equinox")
    optax = pytest.importorskip("optax")
    model = eqx.nn.MLP(3, 2, 8, 2, key=jax.random.key(0))
    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
    ns = {"model": model, "opt_state": optax.adam(1e-3).init(params), "params": params}
    arrays, meshes, notes = walked(ns)
    assert (arrays, meshes) == oracle(ns) and notes == []
    assert any(name.startswith("model.layers[0]") for name in arrays)


def test_a_list_that_holds_itself_is_walked_once():
    loop = [jnp.ones(2), {"w": jnp.zeros(1)}]
    loop.append(loop)
    arrays, _, notes = walked({"loop": loop})
    assert arrays == ["loop[0]", "loop[1]['w']"] and notes == []


def test_big_containers_of_plain_values_cost_nothing_and_a_note_names_them(magic_shell):
    """The namespace of the issue: 3M ints, a 1M-item str->int dict, 1M strings, and 100 params
    arrays beside them. An empty `%%sharding` cell costs well under a second more than a plain one
    (it cost seconds when every item was walked), the params are all found, and the view's notes
    name what was not looked into."""
    setup = (
        "import jax.numpy as jnp\n"
        "big = list(range(3_000_000))\n"
        "vocab = {str(i): i for i in range(1_000_000)}\n"
        "words = [str(i) for i in range(1_000_000)]\n"
        "pairs = [(str(i), i) for i in range(100_000)]\n"
        "params = {f'w{i}': jnp.full((4,), i, jnp.float32) for i in range(100)}\n"
    )
    assert magic_shell.run_cell(setup).success

    def seconds(cell: str) -> float:
        start = time.perf_counter()
        assert magic_shell.run_cell(cell).success
        return time.perf_counter() - start

    plain = seconds("pass\n")
    magic = seconds("%%sharding --name walk_cap\npass\n")
    try:
        assert magic - plain < 1.0, (plain, magic)
        doc = jaxmagic.document(magic_shell.user_ns["walk_cap"], "sharding")
        names = {a["name"] for a in doc["arrays"]}
        assert {f"params['w{i}']" for i in range(100)} <= names
        (note,) = [n for n in doc["notes"] if "not looked into" in n]
        assert note.startswith("4 containers with more than 1,000 items were not looked into for arrays")
        for name, items in (("big", "3,000,000"), ("vocab", "1,000,000"), ("words", "1,000,000"), ("pairs", "100,000")):
            assert f"{name} ({items} items)" in note
        from jaxmagic.views.static_html import text_summary

        assert f"note: {note}" in text_summary(doc)
    finally:
        magic_shell.run_cell("del big, vocab, words, pairs, params, walk_cap\n")


def test_the_walk_stops_at_its_item_cap_and_names_what_it_left(monkeypatch):
    """Past the cap, a bound array or mesh is still found (O(1)); containers are listed, not walked;
    a container bigger than what is left of the walk is listed without being walked."""
    monkeypatch.setattr(sharding, "WALK_ITEMS", 300)
    a = jnp.ones(2)
    ns = {
        "layers": [{"w": a, "b": a} for _ in range(600)],  # 1,800 items: the walk stops inside it
        "later": {"w": a},
        "late": a,
        "flag": True,
        "name": "text",
        "fn": print,
    }
    arrays, _, notes = walked(ns)
    assert arrays[0] == "layers[0]['b']" and "late" in arrays and "later['w']" not in arrays
    assert len(arrays) < 300
    (note,) = notes
    assert note.startswith("the namespace walk stopped after 301 items") and note.endswith(": layers, later")

    arrays, _, notes = walked({"huge": [a] * 2_000, "w": a})
    assert arrays == ["w"]
    assert notes == [
        "1 container larger than what was left of the 300 items the namespace walk looks at was "
        "not looked into for arrays: huge (2,000 items)"
    ]


def test_the_walk_stops_at_its_time_cap(monkeypatch):
    monkeypatch.setattr(sharding, "WALK_SECONDS", 0.0)
    a = jnp.ones(2)
    ns = {"layers": [[a, a] for _ in range(400)], "late": a}
    arrays, _, notes = walked(ns)
    assert "late" in arrays and len(arrays) < 800
    (note,) = notes
    assert note.startswith("the namespace walk stopped after 256 items") and note.endswith(": layers")
