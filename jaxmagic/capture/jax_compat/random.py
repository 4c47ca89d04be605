"""JAX internals the key capture reads: where `jax.random` lives, a key array's words, eager evaluation's bind.

`capture/keys/flow.py` names the `jax.random` function an eqn came from by the outermost frame in
JAX's random module; `capture/keys/patch.py` wraps the eager trace's `process_primitive` to see
the key operations an eager transform binds.
"""

from __future__ import annotations

from types import FrameType
from typing import Any

import jax
import numpy as np

# JAX's random module: one file on 0.4-0.9, a package on 0.10.
_RANDOM_FILES = ("jax/_src/random.py", "jax/_src/random/")


def is_random_file(file: str) -> bool:
    """True for a file of JAX's `jax.random` implementation (where its public functions run)."""
    file = file.replace("\\", "/")
    return file.endswith(_RANDOM_FILES[0]) or _RANDOM_FILES[1] in file


def eval_trace_class() -> type | None:
    """JAX's eager trace class (`EvalTrace`), whose `process_primitive` binds every op that runs
    outside a trace; None where this JAX keeps none, and eager transforms then go unseen."""
    try:
        from jax._src import core

        eval_trace = core.EvalTrace
        eval_trace.__dict__["process_primitive"]
    except (ImportError, AttributeError, KeyError):
        return None
    return eval_trace


def from_jit_dispatch(frame: FrameType | None) -> bool:
    """True when a bind comes straight from a jitted function's own dispatch (JAX's `cache_miss`,
    no transformation's `process_primitive` in between), looking up from `frame`; False when a
    transformation (a vmap, jvp or partial-eval trace) bound it on its way down to evaluation."""
    for _ in range(12):
        if frame is None:
            return False
        name = frame.f_code.co_name
        if name == "process_primitive":
            return False
        if name == "cache_miss":
            return True
        frame = frame.f_back
    return False


def key_data(keys: Any) -> np.ndarray:
    """The uint32 words of a typed key array (keys on the leading axes), as numpy.

    A key array keeps them as its private `_base_array`, read without a dispatch (~0.1 µs against
    ~25 µs for `jax.random.key_data`, which every key of a long loop would pay); where that
    attribute is gone, the public call gives the same words.
    """
    base = getattr(keys, "_base_array", None)
    return np.asarray(base if base is not None else jax.random.key_data(keys))
