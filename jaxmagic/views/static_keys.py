"""The script-free key tree: findings, then each root's tree as nested lists, coloured by state.

For hosts that run no scripts (GitHub, nbviewer, email) and for `text/plain`. Runs are
folded as in the widget, wide splits list their first rows, and at most `MAX_ITEMS` keys are
written. Every document string is escaped.
"""

from __future__ import annotations

from ..model.captions.words import at_line, lines_listed, where
from ..units import plural
from .html_parts import caption_html, caption_text, error_html, error_text, esc, svg_img

MAX_ITEMS = 400  # keys written out; the rest are counted
MAX_DRAWN = 150  # keys in the picture
ROW, COL = 18, 110  # px between rows and between generations in the picture
FONT = "ui-sans-serif, system-ui, sans-serif"
MAX_ROWS = 8  # rows of one key array listed before "N more"
COLOURS = {"unused": "#1a9e8f", "consumed": "#e8883a", "reused": "#d62728"}  # teal, orange, red, as the widget


def _use_text(use: dict) -> str:
    place = where(use["source"]) if use.get("source") else ""
    inside = f" in {use['function']}" if use.get("function") else ""
    times = (
        f" ×{use['times']}"
        if use.get("times") not in (1, None)
        else " on every iteration"
        if use.get("times") is None
        else ""
    )
    return f"{use['name']}{' at ' + place if place else ''}{inside}{times}"


def _node_text(node: dict) -> str:
    uses = "; ".join(_use_text(u) for u in node["uses"]) or "not used"
    made = at_line(node["made"][0]) if node.get("made") else ""
    return f"{node['label']}{made} [{node['state']}]: {uses}"


class _Tree:
    """Children lists with runs folded: a run stands in for its nodes, its `last` hangs below it."""

    def __init__(self, doc: dict) -> None:
        self.nodes = doc.get("nodes", [])
        self.runs = {r["id"]: r for r in doc.get("runs", [])}
        self.children: dict[int | tuple[str, int] | None, list] = {}  # parent: node id, ("run", id), None (roots)
        for node in self.nodes:
            if node.get("run") is not None:
                run = self.runs[node["run"]]
                if node["id"] == run["first"]:
                    self.children.setdefault(node["parent"], []).append(("run", run))
                continue
            parent = node["parent"]
            for run in self.runs.values():
                if run["last"] == node["id"]:
                    parent = ("run", run["id"])
            self.children.setdefault(parent, []).append(("node", node))

    def kids(self, item: tuple) -> list:
        kind, value = item
        return self.children.get(("run", value["id"]) if kind == "run" else value["id"], [])


def _walk(tree: _Tree, emit, budget: list[int]) -> None:
    _visit(tree, emit, budget, tree.children.get(None, []), 0)


def _visit(tree: _Tree, emit, budget: list[int], items: list, depth: int) -> None:
    """`_walk` below `items` (a module function: a recursive closure is a reference cycle, which
    keeps the tree alive until Python's cyclic collector runs)."""
    rows = [i for i in items if i[0] == "node" and i[1]["how"] == "row"]
    shown = items if len(rows) <= MAX_ROWS else [i for i in items if i not in rows[MAX_ROWS:]]
    for item in shown:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        emit(item, depth)
        _visit(tree, emit, budget, tree.kids(item), depth + 1)
    if len(shown) < len(items):
        emit(("more", len(items) - len(shown)), depth)


def tree_svg(doc: dict) -> str:
    """The folded tree as a picture: generations left to right, one row per key, lines to parents."""
    placed: list[tuple[tuple, int]] = []
    _walk(_Tree(doc), lambda item, depth: placed.append((item, depth)), [MAX_DRAWN])
    width = (max((d for _, d in placed), default=0) + 1) * COL + 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{len(placed) * ROW + 8}" '
        f'font-family="{FONT}" font-size="11">'
    ]
    parent_at: dict[int, tuple[float, float]] = {}
    for row, (item, depth) in enumerate(placed):
        x, y = 8 + depth * COL, 10 + row * ROW
        if depth in parent_at and depth > 0:
            px, py = parent_at[depth - 1]
            parts.append(f'<path d="M{px + 5},{py} H{px + COL / 2} V{y} H{x - 5}" fill="none" stroke="#999"/>')
        parent_at[depth] = (x, y)
        kind, value = item
        if kind == "more":
            parts.append(f'<text x="{x}" y="{y + 4}" fill="#888">… {esc(value)} more</text>')
            continue
        if kind == "run":
            colour, label = "#888", f"×{value['length']} steps"
        else:
            colour, label = COLOURS.get(value["state"], "#888"), value["label"]
        parts.append(f'<circle cx="{x}" cy="{y}" r="5" fill="{colour}"/>')
        parts.append(f'<text x="{x + 9}" y="{y + 4}">{esc(label[:24])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def keys_html(doc: dict) -> str:
    s = doc.get("summary", {})
    parts = [f"<p><b>{esc(doc.get('title', 'jaxmagic'))}</b></p>", caption_html(doc), error_html(doc)]
    for f in doc.get("findings", []):
        lines = esc(lines_listed(f.get("sources", [])))
        parts.append(f"<p><b>{esc(f['severity'])}</b>: {esc(f['message'])}{' (' + lines + ')' if lines else ''}</p>")
    if not doc.get("nodes"):
        parts.append("<p>No PRNG key was used in this cell.</p>")
    else:
        parts.append(
            f"<p>{esc(plural(s.get('keys', 0), 'key'))} · {esc(plural(s.get('roots', 0), 'root'))} · {esc(s.get('reused', 0))} "
            f"reused · {esc(s.get('unused', 0))} unused</p>"
        )
        parts.append(svg_img(lambda: tree_svg(doc), "key tree"))
        out: list[str] = []
        depth_now = [-1]

        def emit(item: tuple, depth: int) -> None:
            while depth_now[0] < depth:
                out.append('<ul style="margin:0;padding-left:1.2em;list-style:none">')
                depth_now[0] += 1
            while depth_now[0] > depth:
                out.append("</ul>")
                depth_now[0] -= 1
            kind, value = item
            if kind == "more":
                out.append(f"<li>… {esc(value)} more</li>")
            elif kind == "run":
                out.append(
                    f'<li><span style="color:#888">●</span> ×{esc(value["length"])} steps: {esc(value["label"])}</li>'
                )
            else:
                colour = COLOURS.get(value["state"], "#888")
                out.append(f'<li><span style="color:{colour}">●</span> {esc(_node_text(value))}</li>')

        budget = [MAX_ITEMS]
        _walk(_Tree(doc), emit, budget)
        out.extend("</ul>" for _ in range(depth_now[0] + 1))
        parts.extend(out)
        if budget[0] <= 0:
            parts.append(f"<p>(the first {MAX_ITEMS} keys are listed)</p>")
    parts.extend(f"<p><i>{esc(n)}</i></p>" for n in doc.get("notes", []))
    return "<div>" + "".join(parts) + "</div>"


def keys_text(doc: dict) -> str:
    lines = [doc.get("title", "jaxmagic"), *caption_text(doc), *error_text(doc)]
    lines.extend(f"{f['severity']}: {f['message']}" for f in doc.get("findings", []))

    def emit(item: tuple, depth: int) -> None:
        kind, value = item
        pad = "  " * depth
        if kind == "more":
            lines.append(f"{pad}… {value} more")
        elif kind == "run":
            lines.append(f"{pad}×{value['length']} steps: {value['label']}")
        else:
            lines.append(pad + _node_text(value))

    _walk(_Tree(doc), emit, [MAX_ITEMS])
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    return "\n".join(lines)
