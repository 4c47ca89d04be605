"""A capture holds no device buffer: the constants its kept jaxprs closed over become stubs.

A jitted function that closes over a 1 GB array bakes that array into its jaxpr's consts; a
capture that kept the jaxpr as JAX made it would keep the array alive after the user dropped it
(`-n` keeps captures). When the capture stops, after everything that reads values has run
(findings about baked constants, `--values`, the key lineage), each array constant becomes a
`record.ConstantStub` (shape, dtype, size). New jaxpr objects are made around the same Vars, to
which values and batch dimensions are keyed; JAX's own objects, which its caches may share, are
never changed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import jax_compat
from .jaxpr_memo import JaxprMemo
from .prefetch import PREFETCH
from .record import Capture, ConstantStub

# The stubbed copy of each live jaxpr JAX handed back (None: it had no array constant to stub). A
# cell run again gets the same jaxpr object from JAX, and the same copy: the copy holds stubs, never
# the arrays, and the memo keeps the original only weakly.
_STUBBED: JaxprMemo[Any] = JaxprMemo()


def _stub(value: Any) -> Any:
    """A `ConstantStub` for an array constant; anything without a shape (a Python scalar) stays."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None or isinstance(value, ConstantStub):
        return value
    try:
        nbytes = int(getattr(value, "nbytes", 0))
    except Exception:  # a key array's nbytes on some versions: the size is a detail
        nbytes = 0
    return ConstantStub(tuple(int(n) for n in shape), dtype, nbytes, bool(getattr(value, "weak_type", False)))


def _stubbed_jaxpr(closed: Any, memo: dict[int, Any]) -> Any:
    """`closed` (a ClosedJaxpr, or an open Jaxpr) with every array const replaced by a stub, its
    sub-jaxprs' too (a jitted function called inside a traced one keeps its consts in the `jit`
    eqn's body). A changed jaxpr is a new object around the same Vars (to which values and batch
    dims are keyed); the original, which JAX's caches may share, is never changed."""
    if closed is None:
        return None
    if id(closed) in memo:
        return memo[id(closed)][1]
    result = closed
    if hasattr(closed, "consts") and getattr(closed, "jaxpr", closed) is not closed:  # a ClosedJaxpr
        stubs = [_stub(c) for c in closed.consts]
        body = _stubbed_jaxpr(closed.jaxpr, memo)
        if body is not closed.jaxpr or any(a is not b for a, b in zip(stubs, closed.consts)):
            result = jax_compat.closed_jaxpr_with(closed, body, stubs)
    elif hasattr(closed, "eqns"):  # a Jaxpr; from JAX 0.11 it holds its consts itself
        eqns = [_stubbed_eqn(eqn, memo) for eqn in closed.eqns]
        consts = list(getattr(closed, "consts", None) or ())
        stubs = [_stub(c) for c in consts]
        if any(a is not b for a, b in zip(eqns, closed.eqns)) or any(a is not b for a, b in zip(stubs, consts)):
            result = jax_compat.jaxpr_with_eqns(closed, eqns, stubs if consts else None)
    memo[id(closed)] = (closed, result)  # the original stays alive until the end: ids stay unique
    return result


def _stubbed_eqn(eqn: Any, memo: dict[int, Any]) -> Any:
    """`eqn` with the jaxprs in its params stubbed (the same eqn when none had array consts)."""
    if not jax_compat.has_sub_jaxprs(eqn):  # most eqns: nothing to look into
        return eqn
    params = None
    for name, value in eqn.params.items():
        if isinstance(value, (tuple, list)):
            new = (
                type(value)(_stubbed_jaxpr(v, memo) if _is_jaxpr(v) else v for v in value)
                if any(_is_jaxpr(v) for v in value)
                else value
            )
            if all(a is b for a, b in zip(new, value)):
                new = value
        else:
            new = _stubbed_jaxpr(value, memo) if _is_jaxpr(value) else value
        if new is not value:
            params = params if params is not None else dict(eqn.params)
            params[name] = new
    return eqn if params is None else jax_compat.eqn_with_params(eqn, params)


def _is_jaxpr(value: Any) -> bool:
    """A ClosedJaxpr or a Jaxpr, by shape."""
    return hasattr(value, "eqns") or (hasattr(value, "consts") and hasattr(value, "jaxpr"))


def _stubbed_fields(obj: Any, names: tuple[str, ...], memo: dict[int, Any]) -> Any:
    """A frozen record (`GradSplit`, `TangentProgram`) with its jaxpr fields stubbed; shared ones stay shared."""
    if obj is None or not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return obj
    if id(obj) not in memo:
        changes = {n: _stubbed_jaxpr(getattr(obj, n, None), memo) for n in names if hasattr(obj, n)}
        changed = {n: v for n, v in changes.items() if v is not getattr(obj, n)}
        memo[id(obj)] = (obj, dataclasses.replace(obj, **changed) if changed else obj)
    return memo[id(obj)][1]


def _remembered_stub(closed: Any, memo: dict[int, Any]) -> Any:
    """`_stubbed_jaxpr(closed)`, made once per live jaxpr object across captures."""
    if closed is None:
        return None

    def stubbed(original: Any) -> Any:
        ready, result = PREFETCH.take("stub", original)  # made while XLA compiled it
        if ready:
            return result
        result = _stubbed_jaxpr(original, memo)
        return None if result is original else result  # never the original itself: it would stay alive

    result = _STUBBED.get(closed, stubbed)
    if result is None:
        return closed
    _STUBBED.get(result, _holds_no_array)  # the copy is stubbed already: asked again, nothing is walked
    return result


def _holds_no_array(closed: Any) -> None:
    """The `_STUBBED` answer for a stubbed copy: it is what the capture keeps as it is."""
    return None


# The stubbed copy of each live differentiation record (`GradSplit`, `TangentProgram`), as `_STUBBED`.
_STUBBED_RECORDS: JaxprMemo[Any] = JaxprMemo()
_GRAD_FIELDS = {"split": ("user", "forward", "backward"), "tangent": ("program",)}


def remembered_record_stub(record: Any, field: str) -> Any:
    """`record` (a `GradCall`'s split or tangent program, named by `field`) as the capture keeps it:
    itself when it holds no array, else its stubbed copy, made once per live record (a loop's grads
    of one function share one split)."""
    if record is None:
        return None
    names = _GRAD_FIELDS[field]

    def stubbed(original: Any) -> Any:
        result = _stubbed_fields(original, names, {})
        return None if result is original else result

    result = _STUBBED_RECORDS.get(record, stubbed)
    if result is None:
        return record
    _STUBBED_RECORDS.get(result, _holds_no_array)
    return result


def stub_of(closed: Any) -> Any:
    """The stubbed copy of `closed`, or None when it holds no array: what the prefetch thread makes
    while XLA compiles a program no view prebuilds (`%%trace`, `%%prng`), which `stop` then takes
    (9 ms of a 4k-eqn first call's stop before). None, never the original: a job's answer waits
    until taken, and must not keep the program's arrays alive meanwhile."""
    result = _stubbed_jaxpr(closed, {})
    return None if result is closed else result


def remembered_stub(closed: Any) -> Any:
    """The program as the capture will keep it once it stops: `closed` itself when it holds no
    array, else its stubbed copy, the same object `drop_device_buffers` will put in the artefacts
    (remembered per live jaxpr). Work started early on it (capture/prefetch.py) is found again
    after the cell and references no device buffer."""
    return _remembered_stub(closed, {})


def drop_device_buffers(capture: Capture) -> None:
    """Make `capture` hold no array a program closed over: the consts of every kept jaxpr (each
    call's program, each differentiation's split and tangent program) become `ConstantStub`s.

    Called when the capture stops, after everything that reads the values has run; the
    documents built later read shapes, dtypes and text only, so they come out the same.
    """
    memo: dict[int, Any] = {}  # id -> (original, stubbed): the originals stay alive until the end
    previous = None  # a loop's calls share one `Artifacts`: skipped without a lookup (0.1 us a call)
    for call in capture.calls:
        artifacts = call.artifacts
        if artifacts is previous:
            continue
        previous = artifacts
        if artifacts is not None and id(artifacts) not in memo:
            memo[id(artifacts)] = (artifacts, artifacts)
            artifacts.jaxpr = _remembered_stub(artifacts.jaxpr, memo)
    for grad in capture.grads:
        grad.split = remembered_record_stub(grad.split, "split")
        grad.tangent = remembered_record_stub(grad.tangent, "tangent")
