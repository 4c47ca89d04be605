"""Graphviz DOT of a graph document, for users who want the graph in their own tools.

Built with the `graphviz` package from the logical document alone (no JAX): every eqn
is a node, every var use an edge labelled with its aval, sub-jaxprs and name scopes
are nested clusters, group inputs/outputs are small port nodes. Rendering it needs
Graphviz's `dot` binary, which lays out big graphs very slowly (bench/ compares it
with the widget); the DOT text itself is produced in linear time.
"""

from __future__ import annotations

from typing import Any

from ..model.edges import derive_edges


def _label(text: str, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def function_dot(fn: dict) -> Any:
    """A `graphviz.Digraph` of one logical `Function` (docs/schema.md)."""
    import graphviz

    graph = graphviz.Digraph(
        name=_label(fn["name"]),
        graph_attr={"rankdir": "LR", "fontname": "monospace"},
        node_attr={"shape": "box", "fontname": "monospace", "fontsize": "10"},
        edge_attr={"fontname": "monospace", "fontsize": "9"},
    )
    writer = _ClusterWriter(fn)
    writer.group(graph, fn["root"])
    variables = writer.variables
    for source, target, vid in derive_edges(fn):
        graph.edge(_port(source), _port(target), label=_label(variables[vid]["aval"], 24))
    return graph


class _ClusterWriter:
    """Nodes and nested clusters of one function (a class, not closures calling each other: those
    would be a reference cycle, kept alive until Python's cyclic collector runs)."""

    def __init__(self, fn: dict) -> None:
        self.groups = {g["id"]: g for g in fn["groups"]}
        self.variables = {v["id"]: v for v in fn["vars"]}
        self.by_group: dict[str, list[dict]] = {}
        for node in fn["nodes"]:
            self.by_group.setdefault(node["group"], []).append(node)
        self.clusters = iter(range(1 << 62))

    def group(self, parent: Any, gid: str) -> None:
        group, variables = self.groups[gid], self.variables
        with parent.subgraph(name=f"cluster_{gid}") as cluster:
            cluster.attr(label=_label(group["label"]), style="rounded", color="grey60")
            for vid in group["constvars"] + group["invars"]:
                kind = "const " if variables[vid]["def"] == "const" else ""
                cluster.node(
                    f"{vid}",
                    _label(f"{kind}{variables[vid]['name']}: {variables[vid]['aval']}"),
                    shape="ellipse",
                    fontsize="9",
                )
            for i, op in enumerate(group["outvars"]):
                text = variables[op["var"]]["aval"] if "var" in op else f"{op['lit']}: {op['aval']}"
                cluster.node(_port(f"out:{gid}:{i}"), _label(f"out {i}: {text}"), shape="ellipse", fontsize="9")
            self.items(cluster, gid, self.by_group.get(gid, []), depth=0)

    def items(self, parent: Any, gid: str, nodes: list[dict], depth: int) -> None:
        runs: dict[str, list[dict]] = {}
        order: list[tuple[str, Any]] = []
        for node in nodes:
            if len(node["scope"]) > depth:
                name = node["scope"][depth]
                if name not in runs:
                    runs[name] = []
                    order.append(("scope", name))
                runs[name].append(node)
            else:
                order.append(("node", node))
        for kind, item in order:
            if kind == "scope":
                with parent.subgraph(name=f"cluster_scope{next(self.clusters)}") as cluster:
                    cluster.attr(label=_label(item), style="dashed", color="grey70")
                    self.items(cluster, gid, runs[item], depth + 1)
                continue
            lits = [op["lit"] for op in item["ins"] if "lit" in op]
            label = item["prim"] + (" " + ", ".join(_label(x, 12) for x in lits[:3]) if lits else "")
            parent.node(item["id"], _label(label))
            for sub in item["subgroups"]:
                self.group(parent, sub)


def _port(endpoint: str) -> str:
    """The DOT node of an endpoint of derive_edges: `in:<var>`/`const:<var>` ports are the var ids;
    `out:<group>:<i>` becomes `out_<group>_<i>`: in an edge, DOT reads `a:b` as node `a`, port `b`."""
    for prefix in ("in:", "const:", "free:"):
        if endpoint.startswith(prefix):
            return endpoint[len(prefix) :]
    return endpoint.replace(":", "_")


def document_dot(doc: dict, function: int | str = 0) -> Any:
    """DOT of one function of a graph document, by position or by name."""
    functions = doc.get("functions", [])
    if not functions:
        raise ValueError("this document has no functions to draw")
    if isinstance(function, str):
        matches = [f for f in functions if f["name"] == function]
        if not matches:
            raise ValueError(f"no function named {function!r}; have: {', '.join(f['name'] for f in functions)}")
        return function_dot(matches[0])
    return function_dot(functions[function])
