"""The single edge rule of docs/schema.md, shared by the model tests, the DOT export and the front end.

Edges are derived, not stored: one per var use. Pure function of a logical document.
"""

from __future__ import annotations


def derive_edges(function: dict) -> list[tuple[str, str, str]]:
    """The edge rule of docs/schema.md: (source, target, var id) for every var use.

    Sources and targets are node ids, or `in:<var>`, `const:<var>`, `out:<group>:<i>` ports.
    """
    var_by_id = {v["id"]: v for v in function["vars"]}

    def source_of(vid: str) -> str:
        definition = var_by_id[vid]["def"]
        return f"{definition}:{vid}" if definition in ("in", "const", "free") else definition

    edges = []
    for node in function["nodes"]:
        for operand in node["ins"]:
            if "var" in operand:
                edges.append((source_of(operand["var"]), node["id"], operand["var"]))
    for group in function["groups"]:
        for i, operand in enumerate(group["outvars"]):
            if "var" in operand:
                edges.append((source_of(operand["var"]), f"out:{group['id']}:{i}", operand["var"]))
    return edges
