"""What the key tree tells the user: reuse and constant keys, with the lines involved."""

from __future__ import annotations

from ...units import times_word
from ..record import Finding, KeyRecord, KeyUse
from ..source import where_text


def _where(use: KeyUse) -> str:
    text = where_text(use.source.file, use.source.line) if use.source else "an unknown line"
    return text + (f" in {use.function}" if use.function else "")


def key_findings(records: list[KeyRecord]) -> list[Finding]:
    """Reuse bugs (a key consumed more than once, a key consumed on every iteration of a loop it
    was made outside of) and constant keys, bugs first; each names the KeyRecord it concerns."""
    found: list[Finding] = []
    for r in records:
        if r.how == "constant":
            found.append(
                Finding(
                    kind="constant_key",
                    severity="warning",
                    source=r.made[0] if r.made else None,
                    key=r.id,
                    message=f"{r.detail}: every call draws the same numbers. Pass the key as an "
                    f"argument and split it for each call.",
                )
            )
        if r.state != "reused":
            continue
        reuse = _reuse_finding(r)
        if reuse is not None:
            found.append(reuse)
    found.sort(key=lambda f: {"bug": 0, "warning": 1}.get(f.severity, 2))
    return found


def _reuse_finding(r: KeyRecord) -> Finding | None:
    """The reuse bug of a key the tree marks reused: in a loop condition, every loop iteration, twice, or as part
    of the key array it was taken from; None when the finding belongs to the loop key it is carried into."""
    consuming = [u for u in r.uses if u.consuming]
    repeated = next((u for u in consuming if u.times is None or (u.times or 1) > 1), None)
    if repeated is not None and (repeated.loop or "").endswith(" condition"):
        return _loop_reuse(
            r,
            repeated,
            f"key {r.label} is consumed by {repeated.name} in a while_loop condition "
            f"({_where(repeated)}): the condition is checked before every iteration and once at the "
            f"end, so from the second check on it draws the same numbers again. Split the key in the "
            f"body and carry the new key, or draw outside the loop.",
        )
    if repeated is not None:
        every = "every iteration" if repeated.times is None else f"each of {repeated.times} iterations"
        return _loop_reuse(
            r,
            repeated,
            f"key {r.label} is made outside {repeated.loop or 'the loop'} and consumed by "
            f"{repeated.name} on {every} ({_where(repeated)}): every iteration draws the same numbers. "
            f"Split the key inside the loop (carry it, or scan over split(key, n)).",
        )
    if len(consuming) >= 2:
        first, second = consuming[0], consuming[1]
        again = f" (the same key data was made {times_word(len(r.made))})" if len(r.made) > 1 else ""
        return Finding(
            kind="key_reuse",
            severity="bug",
            source=second.source,
            call=second.call,
            function=second.function,
            key=r.id,
            message=f"key {r.label} is consumed {times_word(len(consuming) if r.consumed is None else r.consumed)}"
            f"{again}: {first.name} at {_where(first)} and {second.name} at {_where(second)} draw "
            f"from the same random stream. Split it first: k1, k2 = jax.random.split(key).",
        )
    elif not consuming:
        return None  # consumed only through the loop key it is carried into: the finding is on that key
    else:
        return Finding(
            kind="key_reuse",
            severity="bug",
            source=consuming[0].source,
            key=r.id,
            message=f"key {r.label} is consumed more than once: as part of the key array it was taken from, "
            f"and on its own ({_where(consuming[0])}).",
        )


def _loop_reuse(r: KeyRecord, use: KeyUse, message: str) -> Finding:
    """A key consumed on every pass of a loop it was made outside of: the finding on the consuming use."""
    return Finding(
        kind="loop_reuse",
        severity="bug",
        source=use.source,
        call=use.call,
        key=r.id,
        function=use.function,
        message=message,
    )
