"""Real graph documents for the tests (tests/fixtures/graph_<program>.json): small programs of
tests/programs.py, recorded by `jaxmagic.capture()`. Run by tools/make_fixtures.py (which also
writes their wire forms); prints {program: document} as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from steady import steady  # noqa: E402

import jaxmagic  # noqa: E402
from tests.programs import PROGRAMS  # noqa: E402

NAMES = ("sin_cos", "control_flow", "custom_rules", "shard_map_psum", "nested_jit_and_scopes", "small_transformer")


def main() -> None:
    steady()
    out = {}
    for name in NAMES:
        with jaxmagic.capture() as cap:
            fn, args, kwargs = PROGRAMS[name]()
            fn(*args, **kwargs)
        doc = jaxmagic.document(cap)
        for f in doc["functions"]:  # the functions' and nodes' lines name the file as the tests do
            for item in [f, *f["nodes"]]:
                src = item.get("source") if item is f else item.get("src")
                if src:
                    src["file"] = "programs.py"
            cost = f.get("cost") or {}
            for part in ("program", "memory"):  # XLA lists its figures in no fixed order
                if cost.get(part):
                    cost[part] = dict(sorted(cost[part].items()))
        out[name] = doc
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
