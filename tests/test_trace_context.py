"""A capture leaves JAX's tracing context as it found it: no function recompiles because a magic ran.

JAX keys its jit caches on the tracing context, the values of the config states that affect
tracing. Importing some JAX modules registers more such states: on JAX 0.12 `import jax.extend`
adds two, so a function compiled before the import misses its cache on the next call and
compiles again. Under a magic that happened inside the cell (a function called twice compiled
twice) and in every later cell. The script runs in a fresh process: the test process has
imported `jax.extend` long before (other tests use it), which would hide the effect.
"""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import sys
import jax
import jax.numpy as jnp
from jax._src import config
import jaxmagic

traces = []

@jax.jit
def step(x):
    traces.append(1)  # runs once per trace: a recompile shows here
    return jnp.sin(x) * 2

x = jnp.ones(3)
step(x)  # compiled before any magic
context = config.trace_context()
for options in ({}, {"grads": True}, {"keys": True}, {"values": True}, {"shardings": True}, {"keys": False}):
    with jaxmagic.capture(globals(), **options) as cap:
        step(x)
        step(x)
        jax.jit(lambda y: y + 1)(x)  # a new function within the cell
    for kind in ("jaxpr", "grad", "trace", "sharding", "keys"):
        jaxmagic.document(cap, kind)  # what the views read after the cell
    step(x)  # the next cell
    assert config.trace_context() == context, (options, len(context), len(config.trace_context()))
assert len(traces) == 1, f"step traced {len(traces)} times"
assert "jax.extend" not in sys.modules, "jaxmagic imported jax.extend"
print("ok")
"""


def test_a_capture_and_its_views_leave_the_tracing_context_and_the_caches_alone():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr
