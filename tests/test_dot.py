"""DOT export: every eqn is a node and every var use an edge, and Graphviz accepts the text."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import jaxmagic
from jaxmagic.model.edges import derive_edges

from .programs import PROGRAMS

# The `dot` extra: without the graphviz package there is nothing to test but the error (below).
graphviz = pytest.importorskip("graphviz", reason="to_dot needs the graphviz package (pip install 'jaxmagic[dot]')")


@pytest.mark.parametrize("name", ["sin_cos", "control_flow", "nested_jit_and_scopes", "small_transformer"])
def test_dot_has_every_eqn_and_edge(name: str) -> None:
    cap = _capture_of(PROGRAMS[name])
    doc = jaxmagic.document(cap)
    function = doc["functions"][0]
    source = jaxmagic.to_dot(cap).source
    for node in function["nodes"]:
        assert re.search(rf"^\s*{node['id']} \[label=", source, re.M), node["id"]
    assert source.count(" -> ") == len(derive_edges(function))
    # every edge joins declared nodes: an unquoted `a:b` in an edge is node `a`, port `b` to DOT
    declared = set(re.findall(r"^\s*(\S+) \[label=", source, re.M))
    ends = re.findall(r"^\s*(\S+) -> (\S+) ", source, re.M)
    assert ends and {e for pair in ends for e in pair} <= declared, {e for p in ends for e in p} - declared
    assert source.count("subgraph cluster_") >= len(function["groups"])
    if shutil.which("dot"):
        out = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.count('class="node"') >= len(function["nodes"])


def test_dot_escapes_hostile_names() -> None:
    doc = jaxmagic.document(_capture_of(PROGRAMS["sin_cos"]))
    doc["functions"][0]["name"] = 'evil"\n}<script>'
    doc["functions"][0]["nodes"][0]["prim"] = 'x" -> y [label="pwned'
    source = jaxmagic.to_dot(doc).source
    assert "pwned" in source and '" -> y' not in source.replace('\\"', "")


def test_dot_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="no function named"):
        jaxmagic.to_dot(jaxmagic.document(_capture_of(PROGRAMS["sin_cos"])), "nope")


def _capture_of(program):
    with jaxmagic.capture() as cap:  # the program's jit must be made inside the capture
        fn, args, kwargs = program()
        fn(*args, **kwargs)
    return cap
