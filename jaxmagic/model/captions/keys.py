"""Captions of keys documents (%%prng): see captions/__init__.py."""

from __future__ import annotations

from .words import at_line, counted, first_clause, lines_listed, listed, times_word, user_name
from .words import where as where_of


def keys_caption(doc: dict) -> list[str]:
    nodes = doc.get("nodes") or []
    if not nodes:
        return []
    out: list[str] = []
    bugs = [f for f in doc.get("findings") or [] if f["severity"] == "bug"]
    for f in bugs[:2]:
        out.append(_reuse_sentence(f, nodes))
    if len(bugs) > 2:
        more = len(bugs) - 2
        out.append(
            f"{more} more key was reused: it is marked red."
            if more == 1
            else f"{more:,} more keys were reused: each one is marked red."
        )
    if not bugs:
        out.append("No key was reused: every key was consumed at most once.")
    constant = next((f for f in doc.get("findings") or [] if f["kind"] == "constant_key"), None)
    if constant is not None:
        node = nodes[constant["node"]] if constant.get("node") is not None and constant["node"] < len(nodes) else {}
        where = at_line(constant["sources"][0]) if constant.get("sources") else ""
        fn = f" by {user_name(node['function'])}" if node.get("function") else ""
        out.append(f"A key is captured as a constant{fn}{where}: every call draws the same numbers.")
    for run in (doc.get("runs") or [])[:1]:
        out.append(
            f"The split loop ({user_name(run['label'], 60)}) is folded into one node: "
            f"×{run['length']:,} identical steps."
        )
    s = doc.get("summary") or {}
    if s:
        states = [
            f"{s[k]:,} {words}"
            for k, words in (("consumed", "consumed once"), ("reused", "reused"), ("unused", "never consumed"))
            if s.get(k)
        ]
        programs = f"; keys flow through {counted(s['programs'], 'jitted program')}" if s.get("programs") else ""
        out.append(
            f"{counted(s['keys'], 'key')} from {counted(s['roots'], 'root')}"
            + (f": {', '.join(states)}" if states else "")
            + f"{programs}."
        )
    return out


def _key_name(node: dict) -> str:
    """'key k1' by the name the cell bound it to ('key', 'rng_key' as they are), else by its label
    ('key(1)', 'split 2')."""
    if node.get("names"):
        name = user_name(node["names"][0], 24)
        return name if "key" in name.lower() else f"key {name}"  # 'key k1', but not 'key key'"
    label = user_name(node.get("label") or f"#{node.get('id')}", 24)
    return label if label.startswith("key(") else f"key {label}"


def _reuse_sentence(f: dict, nodes: list[dict]) -> str:
    """'key k1 was used twice: lines 4 and 7.' (and the loop form for a key drawn from in every iteration)."""
    node = nodes[f["node"]] if f.get("node") is not None and f["node"] < len(nodes) else None
    if node is None:
        return first_clause(f["message"]) + at_line((f.get("sources") or [None])[0]) + "."
    name = _key_name(node)
    consuming = [u for u in node["uses"] if u["consuming"]]
    if f["kind"] == "loop_reuse":
        use = next(
            (u for u in consuming if u.get("times") is None or u["times"] > 1), consuming[0] if consuming else None
        )
        if use is not None:
            every = "every iteration" if use.get("times") is None else f"each of {use['times']:,} iterations"
            loop = f" of the {str(use['loop']).split()[0]}" if use.get("loop") else ""  # 'scan ×10': the scan
            return (
                f"{name} is made outside the loop and drawn from by {use['name']} on {every}{loop}"
                f"{at_line(use.get('source'))}: every iteration gets the same numbers."
            )
    lines = [src["line"] for src in f.get("sources") or [] if src and src.get("line") is not None]
    if len(consuming) < 2:
        return (
            f"{name} was used on its own and as a row of the key array it was taken from"
            f"{at_line(consuming[0].get('source')) if consuming else ''}."
        )
    functions = {u.get("function") for u in consuming}
    inside = f" in {user_name(functions.pop(), 24)}" if len(functions) == 1 and None not in functions else ""
    sources = [src for src in f.get("sources") or [] if src and src.get("line") is not None]
    if len(set(lines)) > 1:
        where = ": " + lines_listed(sources) + inside
    elif lines:
        where = f", each time at {where_of(sources[0])}{inside}"
    else:
        where = inside
    samplers = list(dict.fromkeys(u["name"] for u in consuming))
    same = (
        f"{listed(samplers, 3)} draw the same random numbers"
        if len(samplers) > 1
        else f"each {samplers[0]} draws the same random numbers"
    )
    return f"{name} was used {times_word(len(consuming))}{where} ({same})."
