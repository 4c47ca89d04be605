"""A static SVG of a function's top level, for hosts that run no scripts (GitHub, nbviewer).

Sub-jaxprs and name scopes are drawn collapsed, one box each, so the picture stays
small for big programs. The layout is a plain layered one (longest path from the
inputs, barycentre ordering): jaxprs are already in topological order, and the
collapsed top level of a real program is a few hundred boxes at most. Works from
the JSON document alone: no JAX here.
"""

from __future__ import annotations

from collections import defaultdict

from ..units import plural
from .html_parts import esc

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 132, 34, 48, 14, 16
MAX_ITEMS = 400
MAX_PORTS = 24  # more inputs or outputs than this are drawn as one box
FONT = "ui-sans-serif, system-ui, sans-serif"


def _cut(text: str, limit: int = 18) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Item:
    __slots__ = ("key", "label", "sub", "kind", "layer", "order")

    def __init__(self, key: str, label: str, sub: str, kind: str):
        self.key, self.label, self.sub, self.kind = key, label, sub, kind
        self.layer = 0
        self.order = 0.0


def _collapsed_items(function: dict) -> tuple[list[_Item], list[tuple[str, str, str]], int]:
    """Items of the root group (scopes and sub-jaxprs collapsed) and the edges between them."""
    vars_by_id = {v["id"]: v for v in function["vars"]}
    root_group = next(g for g in function["groups"] if g["id"] == function["root"])
    items: dict[str, _Item] = {}
    port_of: dict[str, str] = {}  # "in:<var>" / "const:<var>" / "out:<i>" -> drawn item key
    _input_items(root_group, vars_by_id, items, port_of)
    item_of_node, hidden = _node_items(function, vars_by_id, items)
    _output_items(root_group["outvars"], vars_by_id, items, port_of)
    edges = _edges(function["nodes"], root_group["outvars"], vars_by_id, item_of_node, port_of)
    return list(items.values()), edges, hidden


def _input_items(root_group: dict, vars_by_id: dict, items: dict[str, _Item], port_of: dict[str, str]) -> None:
    """One item per constant and input of the root group, or one box for a pytree of hundreds."""
    ports = [(f"const:{vid}", vid, "const") for vid in root_group["constvars"]] + [
        (f"in:{vid}", vid, "input") for vid in root_group["invars"]
    ]
    for key, vid, kind in ports:
        if len(ports) > MAX_PORTS:  # a pytree of hundreds of params: one box, not a column of hundreds
            port_of[key] = "in:*"
            items.setdefault("in:*", _Item("in:*", plural(len(ports), "input"), "arguments", "input"))
            continue
        port_of[key] = key
        label = f"const {vars_by_id[vid]['name']}" if kind == "const" else vars_by_id[vid]["name"]
        items[key] = _Item(key, label, vars_by_id[vid]["aval"], kind)


def _node_items(function: dict, vars_by_id: dict, items: dict[str, _Item]) -> tuple[dict[str, str], int]:
    """Items of the root group's eqns, a repeated run or a named scope drawn as one box; ({node id:
    its item}, how many eqns past MAX_ITEMS were left out)."""
    root = function["root"]
    group_of = {g["id"]: g for g in function["groups"]}
    item_of_node: dict[str, str] = {}
    hidden = 0
    scope_counts: dict[str, int] = defaultdict(int)
    repeat_of = _root_repeats(function)
    for index, node in enumerate(function["nodes"]):
        if node["group"] != root:
            continue
        subgroups = node["subgroups"]
        inner = sum(group_of[g]["n_eqns"] for g in subgroups) if subgroups else 0
        if index in repeat_of:
            rep = repeat_of[index]
            key = "repeat:" + rep["id"]
            if key not in items:
                start, stop = rep["units"][0][0], rep["units"][-1][1]
                items[key] = _Item(key, f"{len(rep['units'])}× block", f"▸ {plural(stop - start, 'eqn')}", "scope")
        elif node["scope"]:
            key = "scope:" + node["scope"][0]
            scope_counts[key] += 1 + inner
            if key not in items:
                items[key] = _Item(key, node["scope"][0], "", "scope")
        else:
            key = node["id"]
            if len(items) >= MAX_ITEMS:
                hidden += 1
                continue
            sub = f"▸ {plural(inner, 'eqn')}" if subgroups else ", ".join(vars_by_id[v]["aval"] for v in node["outs"])
            items[key] = _Item(key, node["prim"], sub, "group" if subgroups else "eqn")
        item_of_node[node["id"]] = key
    for key, count in scope_counts.items():
        items[key].sub = f"▸ {plural(count, 'eqn')}"
    return item_of_node, hidden


def _output_items(outvars: list[dict], vars_by_id: dict, items: dict[str, _Item], port_of: dict[str, str]) -> None:
    """One item per output of the root group, or one box for hundreds."""
    for i, operand in enumerate(outvars):
        if len(outvars) > MAX_PORTS:
            port_of[f"out:{i}"] = "out:*"
            items.setdefault("out:*", _Item("out:*", plural(len(outvars), "output"), "", "output"))
            continue
        port_of[f"out:{i}"] = f"out:{i}"
        label = vars_by_id[operand["var"]]["name"] if "var" in operand else operand["lit"]
        items[f"out:{i}"] = _Item(
            f"out:{i}",
            f"out {label}",
            vars_by_id[operand["var"]]["aval"] if "var" in operand else operand["aval"],
            "output",
        )


def _edges(
    nodes: list[dict], outvars: list[dict], vars_by_id: dict, item_of_node: dict[str, str], port_of: dict[str, str]
) -> list[tuple[str, str, str]]:
    """(source item, target item, aval) for every value that flows between two drawn items, sorted."""

    def item_for_var(vid: str) -> str | None:
        definition = vars_by_id[vid]["def"]
        if definition in ("in", "const"):
            return port_of.get(f"{definition}:{vid}")
        return item_of_node.get(definition)

    edges: set[tuple[str, str, str]] = set()
    sources: dict[str, str | None] = {}  # var id -> its drawn item: a value feeds several eqns
    for node in nodes:
        target = item_of_node.get(node["id"])
        if target is None:
            continue
        for operand in node["ins"]:
            vid = operand.get("var")
            if vid is None:
                continue
            source = sources[vid] if vid in sources else sources.setdefault(vid, item_for_var(vid))
            if source and source != target:
                edges.add((source, target, vars_by_id[vid]["aval"]))
    for i, operand in enumerate(outvars):
        source = item_for_var(operand["var"]) if "var" in operand else None
        if source:
            edges.add((source, port_of[f"out:{i}"], vars_by_id[operand["var"]]["aval"]))
    return sorted(edges)


def _root_repeats(function: dict) -> dict[int, dict]:
    """Node index -> repeat, for repeated runs at the top of the root group (drawn as one box each)."""
    out: dict[int, dict] = {}
    for rep in function.get("repeats") or []:
        if rep.get("group") == function["root"] and not rep.get("scope"):
            for start, stop in rep["units"]:
                out.update((i, rep) for i in range(start, stop))
    return out


def _layout(items: list[_Item], edges: list[tuple[str, str, str]]) -> dict[int, list[_Item]]:
    by_key = {item.key: item for item in items}
    preds: dict[str, list[str]] = defaultdict(list)
    for source, target, _ in edges:
        preds[target].append(source)
    for item in items:  # items come in topological order (jaxpr order)
        if item.kind != "output":
            item.layer = max((by_key[p].layer + 1 for p in preds[item.key]), default=0)
    last = max((item.layer for item in items if item.kind != "output"), default=0) + 1
    for item in items:
        if item.kind == "output":
            item.layer = last
    layers: dict[int, list[_Item]] = defaultdict(list)
    for item in items:
        layers[item.layer].append(item)
    for i, item in enumerate(items):
        item.order = float(i)
    for layer in sorted(layers)[1:]:  # one barycentre sweep: keeps edges short and mostly straight
        for item in layers[layer]:
            positions = [by_key[p].order for p in preds[item.key]]
            if positions:
                item.order = sum(positions) / len(positions)
        layers[layer].sort(key=lambda it: it.order)
        for rank, item in enumerate(layers[layer]):
            item.order = float(rank)
    return layers


_STYLE = {
    "input": ("#e6f6f3", "#0f9d8a"),
    "output": ("#e6f6f3", "#0f9d8a"),
    "const": ("#fff8e6", "#b07d12"),
    "eqn": ("#f5f5f5", "#8a8a8a"),
    "group": ("#eef1f6", "#5b6b85"),
    "scope": ("#eef1f6", "#5b6b85"),
}


def function_svg(function: dict) -> str:
    """SVG text of the function's collapsed top level."""
    items, edges, hidden = _collapsed_items(function)
    layers = _layout(items, edges)
    height_slots = max((len(v) for v in layers.values()), default=1)
    total_h = PAD * 2 + height_slots * (BOX_H + GAP_Y)
    pos: dict[str, tuple[float, float]] = {}
    for layer, members in layers.items():
        offset = (total_h - len(members) * (BOX_H + GAP_Y)) / 2
        for rank, item in enumerate(members):
            pos[item.key] = (PAD + layer * (BOX_W + GAP_X), offset + rank * (BOX_H + GAP_Y))
    width = PAD * 2 + (max(layers, default=0) + 1) * (BOX_W + GAP_X)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_h + 18}" '
        f'viewBox="0 0 {width} {total_h + 18}" font-family="{FONT}" font-size="12">',
        '<rect width="100%" height="100%" fill="#ffffff"/>',
    ]
    for source, target, aval in edges:
        (x1, y1), (x2, y2) = pos[source], pos[target]
        x1, y1, x2, y2 = x1 + BOX_W, y1 + BOX_H / 2, x2, y2 + BOX_H / 2
        mid = (x1 + x2) / 2
        out.append(
            f'<path d="M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}" '
            f'fill="none" stroke="#9aa3ad" stroke-width="1.2"><title>{esc(aval)}</title></path>'
        )
    for item in items:
        x, y = pos[item.key]
        fill, stroke = _STYLE[item.kind]
        dash = ' stroke-dasharray="4 3"' if item.kind == "const" else ""
        out.append(
            f'<g><rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="6" fill="{fill}" '
            f'stroke="{stroke}"{dash}/>'
            f'<text x="{x + 8:.0f}" y="{y + 14:.0f}" font-weight="600" fill="#1f2328">{esc(_cut(item.label))}</text>'
            f'<text x="{x + 8:.0f}" y="{y + 28:.0f}" fill="#57606a" font-size="11">{esc(_cut(item.sub, 21))}</text></g>'
        )
    if hidden:
        out.append(f'<text x="{PAD}" y="{total_h + 12}" fill="#57606a">{hidden} more eqns not drawn</text>')
    out.append("</svg>")
    return "".join(out)
