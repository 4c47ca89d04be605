"""Captions of timeline documents (%%trace): see captions/__init__.py."""

from __future__ import annotations

from collections import Counter

from .words import MAX_CHAIN, counted, duration_text, finding_sentence, listed, times_word, top_findings, user_name


def timeline_caption(doc: dict) -> list[str]:
    lanes = doc.get("lanes") or []
    called = [lane for lane in lanes if lane.get("origin") == "call"]
    if not called and not lanes:
        return []
    lane_of = (doc.get("calls") or {}).get("lane") or []
    misses_of: dict[int, list[dict]] = {}
    for miss in doc.get("misses") or []:
        if 0 <= miss["call"] < len(lane_of):
            misses_of.setdefault(lane_of[miss["call"]], []).append(miss)
    # A bug other than a recompile storm (a NaN, a reused key) comes first; storms are the recompile sentences.
    head = top_findings(doc, ("bug",), limit=1, skip=("recompile_storm",))
    out: list[str] = [finding_sentence(f) for f in head]
    ranked = sorted(
        ((i, lane) for i, lane in enumerate(lanes) if lane.get("origin") == "call"), key=lambda t: -t[1]["misses"]
    )
    for i, lane in ranked[:2]:
        again = [m for m in misses_of.get(i, []) if m["kind"] != "first"]
        if again:
            out.append(_recompile_sentence(lane, again))
    calls = sum(lane["calls"] for lane in called)
    hits = sum(lane["hits"] for lane in called)
    if calls:
        out.append(_hits_sentence(called, calls, hits, any(m["kind"] != "first" for m in doc.get("misses") or [])))
    finding = next((f for f in doc.get("findings") or [] if f["kind"] != "recompile_storm" and f not in head), None)
    if finding is not None:  # a storm is the recompile sentence already, with its reasons
        out.append(finding_sentence(finding))
    compile_us = sum(lane["trace_us"] + lane["lower_us"] + lane["compile_us"] for lane in called)
    run_us = sum(lane["dispatch_us"] for lane in called)
    if called and compile_us and not (finding and finding["kind"] == "compile_dominates"):
        out.append(
            f"Tracing and compiling took {duration_text(compile_us)}, running the calls {duration_text(run_us)}."
        )
    cache = doc.get("cache") or {}
    if cache.get("enabled") and (cache.get("hits") or cache.get("misses")):
        saved = f", saving {duration_text(cache['saved_us'])}" if cache.get("saved_us") else ""
        out.append(
            f"The persistent compilation cache answered {counted(cache['hits'], 'compile')} and missed "
            f"{cache['misses']:,}{saved}."
        )
    eager = [lane["name"] for lane in lanes if lane.get("origin") == "events"]
    if eager:
        out.append(
            f"JAX also compiled {counted(len(eager), 'function')} outside your calls: "
            f"{listed([user_name(n, 24) for n in eager], 3)}."
        )
    return out


def _hits_sentence(called: list[dict], calls: int, hits: int, recompiled: bool) -> str:
    """'2 of 4 calls hit the cache.'; for one function compiled once, that it was its first call."""
    if len(called) == 1 and not recompiled:
        lane = called[0]
        name = user_name(lane["name"])
        if not lane["misses"]:
            return f"All {counted(calls, 'call')} of {name} hit the cache: it was compiled before the cell."
        if calls == 1:
            return f"{name} was compiled once, on its only call."
        if lane["misses"] == 1 and hits == calls - 1:
            other = "the other call" if hits == 1 else f"the other {hits:,} calls"
            return f"{name} was compiled once, on its first call; {other} hit the cache."
    return f"{hits:,} of {counted(calls, 'call')} hit the cache."


def _recompile_sentence(lane: dict, again: list[dict]) -> str:
    """'f was compiled 3 times: x changed shape from f32[3] to f32[4], then to f32[5].'"""
    total = lane["misses"]
    what = (
        f"was compiled {times_word(total)}"
        if lane.get("compiles") == total
        else f"missed JAX's cache {times_word(total)}"
    )
    return f"{user_name(lane['name'])} {what}: {_reason_chain(again)}."


def _reason_chain(misses: list[dict]) -> str:
    """The reasons of a lane's recompiles in call order; a value that keeps changing reads as a chain
    ('x changed shape from f32[3] to f32[4], then to f32[5]'); a reason said before is counted."""
    parts: list[str] = []
    repeats: Counter = Counter()
    i = 0
    while i < len(misses):
        miss = misses[i]
        words = miss["words"]
        changes = miss.get("changes") or []
        j = i + 1
        if len(changes) == 1 and words.endswith(str(changes[0]["after"])):
            c = changes[0]
            chain = [c["after"]]
            while j < len(misses):
                nxt = misses[j].get("changes") or []
                if (
                    len(nxt) != 1
                    or (nxt[0]["path"], nxt[0]["kind"]) != (c["path"], c["kind"])
                    or nxt[0]["before"] != chain[-1]
                ):
                    break
                chain.append(nxt[0]["after"])
                j += 1
            words += "".join(f", then to {after}" for after in chain[1:MAX_CHAIN])
            if len(chain) > MAX_CHAIN:
                words += f", and {len(chain) - MAX_CHAIN:,} more changes like these"
        if words in repeats:
            repeats[words] += 1
        else:
            repeats[words] = 1
            parts.append(words)
        i = j
    text = parts[0] + (f" ({times_word(repeats[parts[0]])})" if repeats[parts[0]] > 1 else "")
    for part in parts[1:]:
        nxt = f"{text}; then {part}"
        if len(nxt) > 110:
            return f"{text}; and {counted(len(parts) - parts.index(part), 'other reason')}"
        text = nxt
    return text
