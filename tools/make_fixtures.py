"""Writes tests/fixtures/graph_<program>.json: real graph documents the front-end tests (vitest) render."""

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxmagic  # noqa: E402
from tests.programs import PROGRAMS  # noqa: E402

out = ROOT / "tests" / "fixtures"
out.mkdir(exist_ok=True)
for name in ("sin_cos", "control_flow", "custom_rules", "shard_map_psum", "nested_jit_and_scopes", "small_transformer"):
    with jaxmagic.capture() as cap:
        fn, args, kwargs = PROGRAMS[name]()
        fn(*args, **kwargs)
    doc = jaxmagic.document(cap)
    for f in doc["functions"]:  # keep fixtures independent of the machine they were made on
        for item in [f, *f["nodes"]]:
            src = item.get("source") if item is f else item.get("src")
            if src:
                src["file"] = "programs.py"
    (out / f"graph_{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print("wrote", out / f"graph_{name}.json")
