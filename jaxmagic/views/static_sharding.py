"""The script-free sharding view: the meshes, each array's blocks coloured by device, and each
jitted call's shardings and collectives, as tables and small SVG pictures.

For hosts that run no scripts (GitHub, nbviewer, email) and for `text/plain`. Arrays of rank 3
and more are drawn as their first 2-D slice with a note; at most `MAX_ARRAYS` pictures. A model's
step takes and returns thousands of leaves: a call lists `MAX_LEAF_LINES` of each side (those moved
to another sharding first) and counts the rest by sharding; `MAX_ARRAY_ROWS` arrays are listed and
the rest counted the same way (the widget has every one). Every document string is escaped.

The same order and names as the widget (widgets/sharding/view.js): findings, the meshes by the
names the user bound (`mesh dp`, `mesh_title`) with each axis's type, the jitted calls
(their collectives are what the caption is about, so they come right after the meshes), this
cell's arrays, and last the arrays earlier cells left as one closed
`<details>` row, "14 arrays from earlier cells" (it opens without scripts).
"""

from __future__ import annotations

import re

from ..units import bytes_text, plural
from .html_parts import (
    caption_html,
    caption_text,
    error_html,
    error_text,
    esc,
    findings_html,
    signature_text,
    svg_img,
)

MAX_ARRAYS = 12  # pictures; the rest are listed
MAX_LEAF_LINES = 24  # in / out leaves listed per call; the rest counted by sharding
MAX_ARRAY_ROWS = 200  # arrays listed (this cell's, and earlier cells'); the rest counted by sharding
MAX_TITLED = 64  # blocks with a hover title per picture (a 256-device array stays small)
CELL = 18  # px per mesh cell
SIDE = 140  # px of the longer side of an array picture
FONT = "ui-sans-serif, system-ui, sans-serif"


LEGEND = (
    "Colours: one per device (the mesh pictures show which); a block is drawn in the colour of the "
    "first device holding it; the copies column counts the devices holding each block."
)


NO_DEVICE = "#9e9e9e"  # a device the document gives no colour (the widget's NO_DEVICE)
_HEX = re.compile(r"#[0-9a-fA-F]{6}")


def device_colors(doc: dict) -> dict[int, str]:
    """{device id: `#rrggbb`} as the document says (model/device_colors.py decided them; the widget
    reads the same field, so each device is one colour in both). Anything but a colour is left out."""
    out = {}
    for d in doc.get("devices") or []:
        color = d.get("color") if isinstance(d, dict) else None
        if isinstance(color, str) and _HEX.fullmatch(color):
            out[d.get("id")] = color
    return out


def _spec_text(spec: list | None, kind: str, unreduced: list | None = None) -> str:
    """`P('d', None)` as JAX prints it, with `unreduced={'x'}` where the spec has unreduced axes."""
    if spec is None:
        return kind
    parts = [
        "None" if p is None else repr(p) if isinstance(p, str) else "(" + ", ".join(map(repr, p)) + ")" for p in spec
    ]
    if unreduced:
        parts.append("unreduced={" + ", ".join(map(repr, unreduced)) + "}")
    return f"P({', '.join(parts)})"


def _array_spec(a: dict) -> str:
    s = a["sharding"]
    return _spec_text(s["spec"], s["kind"], s.get("unreduced"))


def mesh_svg(mesh: dict, colors: dict[int, str]) -> str:
    shape = mesh["shape"] if len(mesh["shape"]) >= 2 else [1, *mesh["shape"]]
    rows, cols = shape[0], int(len(mesh["devices"] or []) / max(shape[0], 1)) or shape[-1]
    w, h = cols * CELL + 2, rows * CELL + 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="{FONT}" font-size="8">']
    for k, device in enumerate(mesh["devices"] or []):
        r, c = divmod(k, cols)
        parts.append(
            f'<rect x="{1 + c * CELL}" y="{1 + r * CELL}" width="{CELL - 1}" height="{CELL - 1}" '
            f'fill="{colors.get(device, NO_DEVICE)}"/>'
        )
        if cols <= 32:
            parts.append(
                f'<text x="{1 + c * CELL + CELL / 2}" y="{1 + r * CELL + 12}" text-anchor="middle">{device}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def array_svg(array: dict, colors: dict[int, str]) -> str:
    shape = array["shape"] or [1]
    dims = shape[-2:] if len(shape) >= 2 else [1, shape[0]]
    scale = SIDE / max(dims[0], dims[1], 1)
    row = scale if len(shape) >= 2 else 16.0  # a 1-D array is a strip, not a hairline
    w, h = max(8, dims[1] * scale), max(8, dims[0] * row)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2:.0f}" height="{h + 2:.0f}">']
    for block in array["blocks"]:
        index = block["index"] or [[0, 1]]
        if any(r[0] != 0 for r in index[:-2]):
            continue  # rank 3+: the first slice only
        (r0, r1), (c0, c1) = (index[-2], index[-1]) if len(index) >= 2 else ([0, 1], index[0])
        colour = colors.get(block["devices"][0], NO_DEVICE) if block["devices"] else "#ccc"
        title = ""
        if len(array["blocks"]) <= MAX_TITLED:
            text = f"[{', '.join(f'{a}:{b}' for a, b in index)}] on devices {', '.join(map(str, block['devices']))}"
            title = f"<title>{esc(text)}</title>"
        parts.append(
            f'<rect x="{1 + c0 * scale:.1f}" y="{1 + r0 * row:.1f}" width="{(c1 - c0) * scale:.1f}" '
            f'height="{(r1 - r0) * row:.1f}" fill="{colour}" stroke="#fff" stroke-width="0.5">{title}</rect>'
        )
    parts.append("</svg>")
    return "".join(parts)


def mesh_title(mesh: dict) -> str:
    """How the view and the static page call a mesh (widgets/sharding/model.js meshTitle, the same
    rule): by the user's first name for it, `mesh dp`; else by what set it, `mesh m1 (set with
    jax.set_mesh)`; else `unnamed mesh m0`: the id is only a label, never passed off as a name."""
    names = mesh.get("names") or []
    if names:
        return f"mesh {names[0]}"
    if mesh.get("context"):
        return f"mesh {mesh['id']} (set with jax.set_mesh)"
    return f"unnamed mesh {mesh['id']}"


def axes_text(mesh: dict) -> str:
    """`x=2 (Auto) × y=4 (Auto)`: every axis with its size and, where JAX has axis types, its type."""
    types = mesh.get("axis_types") or []
    return " × ".join(
        f"{a}={s}" + (f" ({types[d]})" if d < len(types) else "")
        for d, (a, s) in enumerate(zip(mesh["axis_names"], mesh["shape"]))
    )


def earlier_text(n: int) -> str:
    """`14 arrays from earlier cells`, `1 array from earlier cells` (the widget's row says the same)."""
    return f"{plural(n, 'array')} from earlier cells"


def _mesh_line(mesh: dict) -> str:
    also = mesh.get("names", [])[1:]
    return f"{mesh_title(mesh)}: {axes_text(mesh)}" + (f", also bound as {', '.join(also)}" if also else "")


def _counted_by_sharding(items: list, spec_of, what: str) -> str:
    """`7,100 more leaves: 7,000 SingleDeviceSharding, 100 P('dp')`: what a list left out, by sharding."""
    counts: dict[str, int] = {}
    for item in items:
        spec = spec_of(item)
        counts[spec] = counts.get(spec, 0) + 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{n:,} {spec}" for spec, n in top[:6])
    more = f" and {plural(len(top) - 6, 'other sharding')}" if len(top) > 6 else ""
    return f"{len(items):,} more {what}: {shown}{more}"


def _array_table(arrays: list[dict]) -> str:
    rows = ["<table><tr><th>array</th><th>shape</th><th>sharding</th><th>blocks</th><th>copies</th><th>bytes</th></tr>"]
    for a in arrays[:MAX_ARRAY_ROWS]:
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{esc(v)}</td>"
                for v in (
                    a["name"] or a["id"],
                    f"{a['dtype']}{a['shape']}",
                    _array_spec(a),
                    len(a["blocks"]),
                    a["replication"],
                    bytes_text(a["bytes"]),
                )
            )
            + "</tr>"
        )
    rows.append("</table>")
    if len(arrays) > MAX_ARRAY_ROWS:
        rows.append(f"<p><i>{esc(_counted_by_sharding(arrays[MAX_ARRAY_ROWS:], _array_spec, 'arrays'))}</i></p>")
    return "".join(rows)


def sharding_html(doc: dict) -> str:
    n = len(doc.get("devices", []))
    colors = device_colors(doc)
    parts = [
        f"<div><p><b>{esc(doc.get('title', 'jaxmagic'))}</b></p>",
        caption_html(doc),
        error_html(doc),
        findings_html(doc),
    ]
    if n:
        parts.append(f"<p><small>{esc(LEGEND)}</small></p>")
    for mesh in doc.get("meshes", []):
        parts.append(f"<p>{esc(_mesh_line(mesh))}</p>")
        if mesh["devices"]:
            parts.append(svg_img(lambda mesh=mesh: mesh_svg(mesh, colors), mesh_title(mesh)))
    for c in doc.get("calls", []):
        parts.append(f"<p><b>{esc(c['name'])}({esc(signature_text(c['signature']))})</b></p><ul>")
        parts.extend(f"<li>{esc(line)}</li>" for line in _call_lines(c))
        parts.append("</ul>")
    arrays = doc.get("arrays", [])
    own = [a for a in arrays if not a.get("earlier")]
    earlier = [a for a in arrays if a.get("earlier")]
    if own:
        parts.append(_array_table(own))
    for a in own[:MAX_ARRAYS]:
        note = " (first 2-D slice)" if len(a["shape"]) > 2 else ""
        parts.append(f"<p>{esc(a['name'] or a['id'])}{esc(note)}</p>")
        parts.append(svg_img(lambda a=a: array_svg(a, colors), f"blocks of {a['name'] or a['id']}"))
        if a.get("note"):
            parts.append(f"<p><i>{esc(a['note'])}</i></p>")
    if earlier:
        parts.append(f"<details><summary>{esc(earlier_text(len(earlier)))}</summary>{_array_table(earlier)}</details>")
    parts.extend(f"<p><i>{esc(note)}</i></p>" for note in doc.get("notes", []))
    parts.append("</div>")
    return "".join(parts)


def _leaf_spec(leaf: dict) -> str:
    return _spec_text(leaf["spec"], leaf["kind"] or "?", leaf.get("unreduced"))


def _leaf_lines(side: str, leaves: list[dict]) -> list[str]:
    """A call's in or out leaves: MAX_LEAF_LINES of them (moved ones first), the rest counted."""
    shown = sorted(leaves, key=lambda leaf: not leaf.get("mismatch"))[:MAX_LEAF_LINES]
    keep = {id(leaf) for leaf in shown}
    lines = [
        f"{side} {leaf['path']} {leaf['aval']}: {_leaf_spec(leaf)}"
        + (f" (given {leaf['given'] or 'one device'}: moved)" if leaf.get("mismatch") else "")
        for leaf in leaves
        if id(leaf) in keep
    ]
    rest = [leaf for leaf in leaves if id(leaf) not in keep]
    if rest:
        lines.append(f"{side} {_counted_by_sharding(rest, _leaf_spec, 'leaves')}")
    return lines


def _call_lines(c: dict) -> list[str]:
    lines = _leaf_lines("in", c["inputs"]) + _leaf_lines("out", c["outputs"])
    for col in c["collectives"]:
        groups = f", {plural(len(col['groups']), 'group')} of {len(col['groups'][0])}" if col["groups"] else ""
        lines.append(
            f"{col['kind']} {', '.join(col['operands'])} -> {col['result']} "
            f"({bytes_text(col['result_bytes'])} per device{groups})"
            + (f" from {col['op_name']}" if col["op_name"] else "")
        )
    for x in c.get("intermediates", [])[:20]:
        where = f" (line {x['source']['line']})" if x.get("source") else ""
        lines.append(f"{'requested ' if x['requested'] else ''}{x['primitive']} {x['aval']}: {x['spec']}{where}")
    for m in c["shard_maps"]:
        ops = ", ".join(f"{k['primitive']} over {', '.join(k['axes'])}" for k in m["collectives"]) or "no collectives"
        lines.append(
            f"shard_map in {', '.join(m['in_specs'])} out {', '.join(m['out_specs'])}; per shard "
            f"{', '.join(m['shard_avals'])}; {ops}"
        )
    return lines


def _array_line(a: dict) -> str:
    line = (
        f"{a['name'] or a['id']}: {a['dtype']}{a['shape']} {_array_spec(a)}, "
        f"{plural(len(a['blocks']), 'block')}, {plural(a['replication'], 'copy', 'copies')}, "
        f"{bytes_text(a['bytes'])}"
    )
    return line + (f" ({a['note']})" if a.get("note") else "")


def _array_lines(arrays: list[dict], indent: str) -> list[str]:
    lines = [indent + _array_line(a) for a in arrays[:MAX_ARRAY_ROWS]]
    if len(arrays) > MAX_ARRAY_ROWS:
        lines.append(indent + _counted_by_sharding(arrays[MAX_ARRAY_ROWS:], _array_spec, "arrays"))
    return lines


def sharding_text(doc: dict) -> str:
    lines = [doc.get("title", "jaxmagic"), *caption_text(doc), *error_text(doc)]
    lines.extend(f"{f['severity']}: {f['message']}" for f in doc.get("findings", []))
    lines.extend(_mesh_line(mesh) for mesh in doc.get("meshes", []))
    for c in doc.get("calls", []):
        lines.append(f"{c['name']}({signature_text(c['signature'])}):")
        lines.extend("  " + line for line in _call_lines(c))
    arrays = doc.get("arrays", [])
    lines.extend(_array_lines([a for a in arrays if not a.get("earlier")], ""))
    earlier = [a for a in arrays if a.get("earlier")]
    if earlier:
        lines.append(f"{earlier_text(len(earlier))}:")
        lines.extend(_array_lines(earlier, "  "))
    lines.extend(f"note: {n}" for n in doc.get("notes", []))
    return "\n".join(lines)
