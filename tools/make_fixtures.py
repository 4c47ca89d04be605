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

# Wire-form twins (jaxmagic/views/wire.py) for the decoder's round-trip tests: one plain, one packed.
from jaxmagic.views import wire  # noqa: E402

for name in ("control_flow", "small_transformer"):
    doc = json.loads((out / f"graph_{name}.json").read_text())
    encoded = wire.encode_document(doc, compress=False)
    (out / f"wire_{name}.json").write_text(json.dumps(encoded) + "\n")
    print("wrote", out / f"wire_{name}.json")
packed = wire.encode_document(json.loads((out / "graph_sin_cos.json").read_text()), compress=False)
packed["functions"] = [
    {
        "packed": "gzip+base64",
        "data": __import__("base64").b64encode(__import__("gzip").compress(json.dumps(f).encode(), mtime=0)).decode(),
    }
    for f in packed["functions"]
]
(out / "wire_sin_cos_packed.json").write_text(json.dumps(packed) + "\n")
print("wrote", out / "wire_sin_cos_packed.json")
