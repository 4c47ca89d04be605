"""Why a call missed the cache, as the timeline's `Miss` object (docs/schema.md).

Two sources tell the story. JAX's own explanation (`jax_explain_cache_misses`, parsed by
capture/jax_compat/explain.py) knows its tracing cache, but compares the call with the entry it finds
*closest* (by severity, then by the number of differences), which need not be the
previous call, and it says nothing about changes that only recompile (sharding on an Auto
mesh, donation, a committed device). Our diff (capture/jit/signature.py) compares the call
with the *previous call of the same function*, which is usually the better story on a
timeline ("x went from f32[4] to f32[5]"), but cannot see what a signature does not hold
(positional vs keyword passing, config flags).

So: the main kind comes from JAX when JAX names the change, from our diff otherwise. JAX's
hedged sentences ("maybe the function is being re-defined repeatedly") are guesses: they go
in `hint` as "JAX suggests: …", never into the kind or the words. A compile JAX does not
explain (a new jax.jit wrapper of a function compiled before, another device, Auto-mesh
sharding) says what the capture knows and that JAX did not report the cause. When
both name the same argument and kind, our change (with the previous call's value) stands
for both and `from` is "both". Changes only one side names are kept, merged, JAX's first.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..capture.jax_compat.explain import Explanation, main_kind
from ..capture.record import Change
from ..units import plural

MAX_CHANGES = 16  # per miss in the document: a 1000-leaf structure change must not make a 1000-entry list
_SENTENCES = 3  # changes put in words; the rest are counted
_CONTAINERS = ("", "args", "kwargs")  # JAX's whole-list paths: agree with any argument of the same kind

FIXES = {
    "shape": "Keep shapes fixed between calls: pad inputs to a few bucket sizes (for example powers of two) "
    "and mask the padding, so only a handful of shapes ever reach jit.",
    "dtype": "Cast inputs to one dtype before the call (x.astype(jnp.float32)) so every call passes the same dtype.",
    "weak_type": "Pass a JAX array (jnp.asarray(v, jnp.float32)) instead of a Python number, or make the argument "
    "static if it is a true constant.",
    "static": "Each distinct value of a static argument compiles anew: pass fewer distinct values, or make it a "
    "traced (non-static) argument if only its value changes.",
    "pytree": "Pass arguments with the same structure on every call: the same dict keys, list lengths and None "
    "entries, and each argument always by position or always by keyword.",
    "sharding": "Put inputs on one sharding on every call (jax.device_put(x, NamedSharding(mesh, P(...))) once), "
    "or fix it with in_shardings on jax.jit.",
    "donation": "Call one jitted function with the same donate_argnums everywhere instead of several variants.",
    "new_wrapper": "Make one jax.jit wrapper per set of jit options and reuse it: each wrapper whose options "
    "(compiler_options, shardings, donation, …) differ compiles its own program.",
    "new_function": "Define the function and call jax.jit on it once, outside the loop, and reuse the jitted "
    "function; pass changing values as arguments instead of closing over them.",
    "context": "Keep config flags and context managers (jax_enable_x64, default_matmul_precision, …) the same "
    "around every call, or set them once at the start.",
    "unknown": "Check whether an argument moved to another device or changed sharding between calls "
    "(x.sharding): JAX does not explain those. Place inputs once with jax.device_put.",
}


def _who(path: str) -> str:
    return {"": "the arguments", "args": "the positional arguments", "kwargs": "the keyword arguments"}.get(path, path)


def change_words(change: Change) -> str:
    """One change in plain English: "x changed shape from f32[3] to f32[4]"."""
    who, b, a, kind = _who(change.path), change.before, change.after, change.kind
    if kind == "static":
        if change.path == "static_argnums":
            return f"which arguments are static changed: {b} before, {a} now"
        name = f"static argument {change.path}" if change.path else "a static argument"
        return f"{name} changed from {b} to {a}"
    if kind == "pytree":
        if change.path in _CONTAINERS or (b is not None and a is not None):
            return f"{who} changed structure from {b or 'something else'} to {a or 'something else'}"
        return f"{who} is new ({a})" if b is None else f"{who} is gone (was {b})"
    if kind == "context":
        if change.path == "trace context":
            return "a config flag or context manager changed (JAX does not say which)"
        if change.path.startswith("trace context ["):  # JAX 0.4-0.8 give positions, not flag names
            text = f"a config flag or context manager changed ({change.path})"
            return text + (f" from {b} to {a}" if b is not None and a is not None else "")
        if change.path.startswith("number of "):
            return f"the {change.path} changed from {b} to {a}"
        return f"config {change.path} changed from {b} to {a}"
    if kind == "weak_type":
        text = f"{who} changed weak type from {b} to {a}"
        if a and "weak_type=True" in a:
            return text + " (a Python number now, a JAX array before)"
        if b and "weak_type=True" in b:
            return text + " (a JAX array now, a Python number before)"
        return text
    if kind == "new_wrapper":
        if not change.path:
            return "a new jax.jit wrapper with the same jit options as an earlier one"
        return f"jit option {change.path} is {a} in this wrapper and {b} in an earlier one"
    if kind in ("shape", "dtype", "sharding", "donation"):
        what = {"shape": "shape", "dtype": "dtype", "sharding": "sharding", "donation": "donation"}[kind]
        return f"{who} changed {what} from {b} to {a}"
    return f"{who} changed from {b} to {a}"


def _under(path: str, base: str) -> bool:
    return path.startswith(base) and path[len(base) :][:1] in ("[", ".")


def _agree(jax_change: Change, ours: Change) -> bool:
    """Both name the same change: same kind, and the same argument (or one inside the other)."""
    if jax_change.kind != ours.kind:
        return False
    j, o = jax_change.path, ours.path
    return j == o or j in _CONTAINERS or _under(o, j) or _under(j, o)


def _merge(jax_changes: Sequence[Change], ours: Sequence[Change]) -> list[Change]:
    """JAX's changes in order, each replaced by our twin (same path and kind) if we have one; then ours left."""
    out: list[Change] = []
    used: set[int] = set()
    for j in jax_changes:
        if j.path == "" and any(o.kind == j.kind for o in ours):
            continue  # JAX's vague whole-argument-list change (A's keyword report, B's unnamed statics): ours names it
        twin = next((i for i, o in enumerate(ours) if i not in used and o.path == j.path and o.kind == j.kind), None)
        if twin is None:
            out.append(j)
        else:
            used.add(twin)
            out.append(ours[twin])
    out.extend(o for i, o in enumerate(ours) if i not in used)
    return list(dict.fromkeys(out))


def _change_json(change: Change) -> dict:
    return {"path": change.path, "kind": change.kind, "before": change.before, "after": change.after}


def _listed(changes: Sequence[Change]) -> str:
    words = "; ".join(change_words(c) for c in changes[:_SENTENCES])
    more = len(changes) - _SENTENCES
    if more > 0:
        words += f"; and {plural(more, 'more change')}"
    return words


def _new_function_words(name: str | None, line: int | None) -> str:
    where = f" defined at line {line}" if line else ""
    return (
        f"a new function object: `{name or 'the function'}`{where} was made anew, and JAX caches per function "
        "object (an earlier one made from the same definition was compiled before)"
    )


def _new_wrapper_words(name: str | None, changes: Sequence[Change]) -> str:
    """A new jax.jit wrapper of a function compiled before: what differs, and that JAX named no cause."""
    options = [c.path for c in changes if c.kind == "new_wrapper" and c.path]
    who = f"`{name or 'the function'}`"
    what = (
        f"with other jit options ({', '.join(options)}) than an earlier wrapper"
        if options
        else "with the same jit options as an earlier wrapper"
    )
    return f"a new jax.jit wrapper of {who} {what} was compiled; JAX did not report the cause of this compile"


def _hint(explanation: Explanation | None, first_call: bool, redefined: bool) -> str | None:
    """JAX's hedged sentences, as JAX's suggestion (never the reason), with what the capture knows against them."""
    if explanation is None or not explanation.hints:
        return None
    text = "JAX suggests: " + " ".join(explanation.hints)
    if explanation.redefined_hint and first_call and not redefined:
        text += (
            " (JAX says this of any function first traced from a line that traced another one; this cell made "
            "no other function object from this definition)"
        )
    return text


def _result(
    call: int,
    kind: str,
    changes: Sequence[Change],
    words: str,
    explanation: Explanation | None,
    source: str,
    hint: str | None = None,
) -> dict:
    return {
        "call": call,
        "kind": kind,
        "changes": [_change_json(c) for c in changes[:MAX_CHANGES]],
        "words": words,
        "fix": FIXES.get(kind),
        "jax": explanation.text if explanation else None,
        "from": source,
        "hint": hint,
    }


def miss_json(
    call_index: int,
    explanation: Explanation | None,
    diff: Sequence[Change] | None,
    first_call: bool,
    redefined: bool,
    *,
    name: str | None = None,
    defined_line: int | None = None,
) -> dict:
    """The schema's Miss for one call that missed the cache.

    `explanation`: JAX's record for this call, parsed (None when JAX logged none: its flag
    was off, the change only recompiles, or the function is not user code). `diff`: our
    changes against the previous call of the same function (empty or None without one); a
    new jax.jit wrapper of a function compiled before brings `new_wrapper` changes
    (capture/jit/miss.py).
    `first_call`: no earlier call of the function in the capture. `redefined`: the
    recorder saw another function object made from this definition (a fact of the capture;
    JAX's own "maybe re-defined" is only the `hint`). `name` and
    `defined_line` word first calls and new functions when JAX gave no text.
    """
    ours = tuple(diff or ())
    name = name or (explanation.function if explanation else None)
    line = defined_line or (explanation.defined_line if explanation else None)
    hint = _hint(explanation, first_call, redefined)
    jax_never_seen = explanation is not None and explanation.kind in ("first", "new_function")
    rewrapped = [c for c in ours if c.kind == "new_wrapper"]

    # JAX's "never seen function" is a fact; its "maybe … re-defined repeatedly" is a guess (the hint)
    jax_new = jax_never_seen and not first_call and not rewrapped
    if redefined or jax_new:
        source = "both" if redefined and jax_new else ("diff" if redefined else "jax")
        return _result(call_index, "new_function", (), _new_function_words(name, line), explanation, source, hint)
    if rewrapped and not (explanation is not None and any(c.kind != "unknown" for c in explanation.changes)):
        return _result(call_index, "new_wrapper", ours, _new_wrapper_words(name, ours), explanation, "diff", hint)
    if first_call and (explanation is None or jax_never_seen):
        words = f"the first call of {name or 'this function'}: nothing was compiled for it yet"
        return _result(call_index, "first", (), words, explanation, "both" if explanation else "diff", hint)

    jax_changes = explanation.changes if explanation else ()
    merged = _merge(jax_changes, ours)
    jax_kinds = [c.kind for c in jax_changes if c.kind != "unknown"]
    our_kinds = [c.kind for c in ours if c.kind != "unknown"]
    if jax_kinds:
        kind = main_kind(jax_kinds)
        agree = any(_agree(j, o) for j in jax_changes if j.kind == kind for o in ours)
        source = "both" if agree else "jax"
    elif our_kinds:
        kind, source = main_kind(our_kinds), "diff"
    else:
        kind, source = "unknown", ("jax" if explanation else "diff")
    merged.sort(key=lambda c: c.kind != kind)  # the words lead with the change that names the miss

    if merged:
        words = _listed(merged)
        if rewrapped and jax_kinds:
            words += " (JAX compared with a call of an earlier jax.jit wrapper of the same function)"
        elif first_call and jax_kinds:
            words += " (compared with a call JAX saw before this capture)"
    elif explanation is not None and explanation.detail:
        words = explanation.detail + ("" if first_call else ", and the arguments' signature did not change")
    else:
        words = (
            "compiled again with no change that JAX explains or the arguments' signature shows: JAX did not "
            "report the cause (it explains only tracing-cache misses; an argument committed to another "
            "device, a sharding change on an Auto mesh or donation recompile without one)"
        )
    return _result(call_index, kind, merged, words, explanation, source, hint)
