"""A magic never starts JAX's backend before the cell's code does.

JAX's sharded-computation tutorial begins with `jax.config.update('jax_num_cpu_devices', 8)`, which
JAX refuses once a backend exists; the same holds for `jax_platforms`. So neither `%load_ext` nor
the start or end of a capture may start one. Backends are process-wide, so this runs a fresh
IPython in a subprocess (about 3 s).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import json
from IPython.testing.globalipapp import start_ipython
from jax._src import xla_bridge
ip = start_ipython()
ip.run_line_magic("load_ext", "jaxmagic")
seen = {"after load_ext": xla_bridge.backends_are_initialized()}
import jax
setting = "jax_num_cpu_devices" if hasattr(jax.config, "jax_num_cpu_devices") else "jax_platforms"
value = 4 if setting == "jax_num_cpu_devices" else "cpu"
for magic in ("jaxpr", "trace", "grad_graph", "sharding", "prng"):
    result = ip.run_cell(f"%%{magic}\nimport jax\njax.config.update({setting!r}, {value!r})\n")
    seen[magic] = [result.success, xla_bridge.backends_are_initialized()]
result = ip.run_cell("%%sharding --name placed\nimport jax.numpy as jnp\nx = jnp.ones(8)\n")
seen["first JAX op"] = [result.success, xla_bridge.backends_are_initialized(), ip.user_ns["placed"].backend]
if setting == "jax_num_cpu_devices":
    seen["devices"] = len(jax.devices())
print("RESULT " + json.dumps(seen))
"""


def test_no_magic_starts_a_backend_before_the_cells_code():
    env = {**os.environ, "XLA_FLAGS": ""}  # the tutorial's way: devices come from the setting, not the flag
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert line is not None, proc.stdout[-2000:] + proc.stderr[-2000:]
    seen = json.loads(line[len("RESULT ") :])
    assert seen["after load_ext"] is False
    for magic in ("jaxpr", "trace", "grad_graph", "sharding", "prng"):
        assert seen[magic] == [True, False], (magic, seen)
    assert seen["first JAX op"] == [True, True, "cpu"]
    assert seen.get("devices", 4) == 4
