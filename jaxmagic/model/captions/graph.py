"""Captions of graph documents (%%jaxpr): see captions/__init__.py."""

from __future__ import annotations

from collections import Counter

from ...capture.jax_compat.explain import split_top_level
from .words import (
    MAX_CHAIN,
    MAX_LISTED,
    at_line,
    counted,
    finding_sentence,
    fit,
    fitting,
    listed,
    times_word,
    top_findings,
    user_name,
)


def graph_caption(doc: dict) -> list[str]:
    functions = doc.get("functions") or []
    if not functions:
        return []
    by_name: dict[tuple, list[dict]] = {}
    for fn in functions:
        src = fn.get("source") or {}
        by_name.setdefault((fn["name"], src.get("file"), src.get("line")), []).append(fn)
    groups = sorted(by_name.values(), key=lambda fns: -max(f["n_eqns"] for f in fns))
    main = groups[0]
    problems = _value_sentences(functions)  # with values: where a NaN first appears, which a finding may only guess
    problems += [finding_sentence(f) for f in top_findings(doc, skip=("nan", "inf") if problems else ())]
    out = [*problems, _function_sentence(main), *folded_sentences(doc)]
    if len(main) > 1:
        out.append(_signatures_sentence(main))
    structure = [s for s in (_structure(fns) for fns in groups) if s]
    if structure:
        out.append(fit("Control flow: " + "; ".join(structure) + ": each body is a sub-jaxpr you can open."))
    repeats = [(r, fn) for fn in main for r in fn.get("repeats") or []]
    if repeats:
        r, fn = max(repeats, key=lambda t: sum(stop - start for start, stop in t[0]["units"]))
        where = f" in {' › '.join(r['scope'])}" if r.get("scope") else ""
        more = f" ({counted(len(repeats) - 1, 'more run')} of repeats folded too)" if len(repeats) > 1 else ""
        out.append(f"{user_name(fn['name'])}: {r['label']}{where} are folded into one box{more}.")
    unscoped = _unscoped_model(main)
    if unscoped:
        out.append(
            fit(
                f"No module boxes: {user_name(unscoped, 24)}'s modules leave no name scopes in what JAX "
                "records; a jax.named_scope in a module's __call__ makes it a box."
            )
        )
    if len(groups) > 1:
        others = [f"{user_name(fns[0]['name'], 24)} ({counted(fns[0]['n_eqns'], 'eqn')})" for fns in groups[1:]]
        out.append(f"Also recorded: {listed(others, 3)}.")
    batch = next((fn for fn in functions if fn.get("batch_size")), None)
    if batch is not None:
        out.append(
            f"{user_name(batch['name'])} is vmapped over a batch of {batch['batch_size']:,}: "
            "each value shows where its batch dimension is."
        )
    if any(fn.get("values") for fn in functions) and not problems:
        stopped = [fn for fn in functions if str(fn.get("values_note") or "").startswith("values are partial")]
        out.append(
            fit(
                f"No NaN or Inf in the values recorded, but evaluating {user_name(stopped[0]['name'])} "
                "stopped early (its values note says why): the rest is not known."
            )
            if stopped
            else "No NaN or Inf in any recorded value."
        )
    return out


def folded_sentences(doc: dict) -> list[str]:
    """What a document of many functions folded: '16,540 jit wrappers of f folded into one entry
    (...)' and '1,800 more functions listed without graphs (...)' (model/folding.py)."""
    out = []
    folded = [fn for fn in doc.get("functions") or [] if (fn.get("wrappers") or 1) > 1]
    folded += [fn for fn in doc.get("listed") or [] if (fn.get("wrappers") or 1) > 1]
    if folded:
        fn = max(folded, key=lambda f: f["wrappers"])
        more = f" ({counted(len(folded) - 1, 'more entry', 'more entries')} folded too)" if len(folded) > 1 else ""
        out.append(
            fit(
                f"{fn['wrappers']:,} jit wrappers of {user_name(fn['name'])} folded into one entry{more}: "
                "one definition, signature and program, jitted anew each time."
            )
        )
    summary = doc.get("folded") or {}
    listed = len(doc.get("listed") or [])
    if listed:
        how = (
            "open one to load its graph"
            if summary.get("listed_graphs") == "on request"
            else "not in this page (listed only)"
        )
        out.append(fit(f"{counted(listed, 'more function')} listed without graphs ({how})."))
    if summary.get("unlisted"):
        out.append(
            fit(
                f"{counted(summary['unlisted'], 'more function')} recorded but not listed (counted by "
                "name in the notes)."
            )
        )
    return out


def _unscoped_model(fns: list[dict]) -> str | None:
    """The argument holding a model (inputs named `model.hidden.kernel`) when no eqn of the
    function carries a name scope of its own (transform levels such as `jvp(…)` do not count)."""
    fn = max(fns, key=lambda f: f["n_eqns"])
    if any(not part.endswith("(…)") for node in fn.get("nodes") or [] for part in node["scope"]):
        return None
    by_id = {v["id"]: v for v in fn.get("vars") or []}
    groups = fn.get("groups") or []
    paths = [by_id.get(v, {}).get("path") or "" for v in (groups[0]["invars"] if groups else [])]
    owners = [path.split(".")[0] for path in paths if path.count(".") >= 2 and "[" not in path.split(".")[0]]
    return owners[0] if owners else None  # the first model among the inputs


def _function_sentence(fns: list[dict]) -> str:
    """'f traced to 5 eqns (2 integer_pow, 1 sin, 1 cos, 1 add); 2 calls, compiled once.'

    The primitive mix names as many kinds (at most 4) as the sentence has room for.
    """
    fn = max(fns, key=lambda f: f["n_eqns"])
    prims = Counter(node["prim"] for node in fn.get("nodes") or []).most_common()
    calls = sum(f["calls"] for f in fns)
    compiles = calls - sum(f["cache_hits"] for f in fns)
    if not calls:
        tail = ""
    elif compiles:
        tail = f"; {counted(calls, 'call')}, compiled {times_word(compiles)}"
    else:
        tail = (
            "; its only call hit JAX's cache (compiled before the cell)"
            if calls == 1
            else f"; all {counted(calls, 'call')} hit JAX's cache (compiled before the cell)"
        )
    each = f" for each of {len(fns)} signatures" if len(fns) > 1 and len({f["n_eqns"] for f in fns}) == 1 else ""
    up_to = "up to " if len(fns) > 1 and not each else ""
    candidates = []
    for k in range(min(MAX_LISTED, len(prims)), -1, -1):
        mix = ", ".join(f"{count:,} {prim}" for prim, count in prims[:k])
        rest = sum(count for _, count in prims[k:])
        if mix and rest:
            mix += f" and {counted(rest, 'other')}"
        size = counted(fn["n_eqns"], "eqn") + (f" ({mix})" if mix else "")
        candidates.append(f"{user_name(fn['name'])} traced to {up_to}{size}{each}{tail}.")
    return fitting(*candidates)


def _signatures_sentence(fns: list[dict]) -> str:
    """What differs between the signatures of one function, in the order they were first called:
    'f has 3 signatures: argument 1 was f32[3], then f32[4], then f32[5]; ...'."""
    split = [split_top_level(f["signature"]) for f in fns]
    name = user_name(fns[0]["name"])
    tail = "; each one is traced and compiled on its own."
    if len({len(sig) for sig in split}) == 1:
        changed = [i for i in range(len(split[0])) if len({sig[i] for sig in split}) > 1]
        if len(changed) == 1:
            i = changed[0]
            seen = list(dict.fromkeys(sig[i] for sig in split))
            what = f"argument {i + 1}"
            static = [v.split("=", 1) for v in seen]
            if all(len(kv) == 2 and kv[0].isidentifier() for kv in static) and len({k for k, _ in static}) == 1:
                what, seen = f"static argument {user_name(static[0][0], 24)}", [v for _, v in static]
            more = ", …" if len(seen) > MAX_CHAIN + 1 else ""

            def values(limit: int) -> str:
                return ", then ".join(user_name(v, limit) for v in seen[: MAX_CHAIN + 1]) + more

            head = f"{name} has {len(fns)} signatures: {what} was "
            return fitting(head + values(40) + tail, head + values(40) + ".", head + values(20) + ".")
    shown = listed([user_name(f["signature"], 24) for f in fns], 3)
    return fitting(f"{name} has {len(fns)} signatures ({shown}){tail}", f"{name} has {len(fns)} signatures ({shown}).")


def _structure(fns: list[dict]) -> str:
    """'f has a scan of 4 iterations and a cond with 2 branches' ('' when it has no control flow)."""
    fn = max(fns, key=lambda f: f["n_eqns"])
    groups = {g["id"]: g for g in fn.get("groups") or []}
    parts: list[str] = []
    scans = [n for n in fn.get("nodes") or [] if n["prim"] == "scan"]
    if scans:
        lengths = [n["params"].get("length", "?") for n in scans]
        parts.append(
            f"a scan of {lengths[0]} iterations"
            if len(scans) == 1
            else f"{len(scans)} scans (of {listed(lengths)} iterations)"
        )
    conds = [n for n in fn.get("nodes") or [] if n["prim"] == "cond"]
    if conds:
        branches = [
            sum(groups.get(g, {}).get("label", "").startswith("branches") for g in n["subgroups"]) for n in conds
        ]
        parts.append(
            f"a cond with {branches[0]} branches"
            if len(conds) == 1
            else f"{len(conds)} conds (with {listed([str(b) for b in branches])} branches)"
        )
    loops = sum(n["prim"] == "while" for n in fn.get("nodes") or [])
    if loops:
        parts.append("a while loop" if loops == 1 else f"{loops} while loops")
    if not parts:
        return ""
    return f"{user_name(fn['name'], 24)} has {listed(parts)}"


def _value_sentences(functions: list[dict]) -> list[str]:
    """With --values: where a NaN and an Inf first appear (op and line), one sentence each."""
    out = []
    for word in ("nan", "inf"):
        for fn in functions:
            node = first_bad_node(fn, word)
            if node is not None:
                count = sum((fn["values"].get(v) or {}).get(word, 0) for v in node["outs"])
                label = "NaN" if word == "nan" else "Inf"
                out.append(
                    f"{label} first appears in {user_name(fn['name'])} at {node['prim']}{at_line(node.get('src'))}: "
                    f"{count:,} {label} in its output, none in its inputs."
                )
                break
    return out


def first_bad_node(fn: dict, word: str) -> dict | None:
    """The first node (graph order) with NaN (`word` "nan") or Inf in an output and none in its inputs."""
    values = fn.get("values") or {}
    if not values:
        return None
    for node in fn.get("nodes") or []:
        if any((values.get(v) or {}).get(word, 0) for v in node["outs"]) and not any(
            (values.get(op["var"]) or {}).get(word, 0) for op in node["ins"] if "var" in op
        ):
            return node
    return None
