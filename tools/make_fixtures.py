"""Every committed fixture, from one command: `./dev fixtures` (this script).

    python tools/make_fixtures.py           # write them all
    python tools/make_fixtures.py --check   # make them in a temporary folder; list (and exit 1 on) stale ones

Real documents are recorded by small programs under real JAX (js/dev/*_fixtures.py, one process
each: the sharding ones fix the number of simulated devices when JAX starts), with the
repository's path taken out so they are the same on every machine; graph documents also get
their wire forms (jaxmagic/views/wire.py). Hand-made documents, for cases no real program
makes (hostile strings, every miss kind), are written by js/dev/make-fixtures.mjs and
js/dev/make-timeline-fixtures.mjs. js/test/fixtures/keys-handmade.json is written by hand.
tests/test_fixtures.py runs the check and validates every fixture against jaxmagic/schema/.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
DEV = ROOT / "js" / "dev"
GRAPHS = "tests/fixtures"
FRONT = "js/test/fixtures"
HAND_MADE = tuple(f"{FRONT}/{name}.json" for name in ("trig", "control", "scoped", "timeline-small"))
HAND_WRITTEN = (f"{FRONT}/keys-handmade.json",)  # fixtures no generator makes
# A real timeline's times are JAX's measurements of this run: --check compares everything else.
TIMELINE_TIMES = {"calls": ("start", "end", "ready"), "spans": ("start", "end")}
LANE_TIMES = ("trace_us", "lower_us", "compile_us", "dispatch_us", "device_us", "device_calls")


def _record(script: str, *args: str, devices: int = 8) -> dict:
    """{name: document} (or one document) a generator prints, with what differs per machine and run
    taken out: the repository's path, the ids and addresses of Python objects JAX's messages and
    params' reprs quote."""
    env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}", "JAX_PLATFORMS": "cpu"}
    env.pop("JAXMAGIC_STRICT", None)  # the documents are checked by tests/test_fixtures.py, not while made
    run = subprocess.run([PY, str(DEV / script), *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"{script} {' '.join(args)} failed:\n{run.stderr[-4000:]}")
    text = run.stdout.replace(json.dumps(str(ROOT) + "/")[1:-1], "")
    text = re.sub(r"\bid=\d{6,}", "id=0", text)  # Python object ids in JAX's messages
    return json.loads(re.sub(r" at 0x[0-9a-f]+>", " at 0x0>", text))  # addresses in params' reprs


def _compact(doc: dict) -> str:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"


def _readable(doc: dict) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def graph_fixtures(docs: dict) -> dict[str, str]:
    """tests/fixtures/graph_*.json and the wire forms the decoder's round-trip tests read."""
    from jaxmagic.views import wire

    out = {f"{GRAPHS}/graph_{name}.json": _readable(doc) for name, doc in docs.items()}
    for name in ("control_flow", "small_transformer"):
        out[f"{GRAPHS}/wire_{name}.json"] = _compact(wire.encode_document(docs[name], compress=False))
    packed = wire.encode_document(docs["sin_cos"], compress=False)  # one packed, whatever its size
    packed["functions"] = [
        {
            "packed": "gzip+base64",
            "data": base64.b64encode(gzip.compress(json.dumps(f).encode(), mtime=0)).decode(),
        }
        for f in packed["functions"]
    ]
    out[f"{GRAPHS}/wire_sin_cos_packed.json"] = _compact(packed)
    return out


def grad_wire_fixture(doc: dict) -> str:
    """The wire form of a grad document (its step program columnar), wrapped so it is not read as
    a logical document: js/test/decode.test.js decodes it back to the logical one."""
    from jaxmagic.views import wire

    return _compact({"wire": wire.encode_document(doc, compress=False)})


def real_fixtures() -> dict[str, str]:
    """Every real document: the graphs of tests/fixtures/ and the grad, keys, sharding and timeline
    documents of js/test/fixtures/, their generators run two at a time (each is mostly JAX starting)."""
    runs = {
        "graph": ("graph_fixtures.py",),
        "grad": ("grad_fixtures.py",),
        "keys": ("keys_fixtures.py",),
        "sharding-small": ("sharding_fixtures.py", "small"),
        "sharding-256": ("sharding_fixtures.py", "256"),
        "timeline": ("timeline_fixtures.py",),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(_record, *run, devices=256 if name == "sharding-256" else 8) for name, run in runs.items()
        }
        docs = {name: future.result() for name, future in futures.items()}
    out = graph_fixtures(docs["graph"])
    out.update({f"{FRONT}/grad-{name}.json": _compact(doc) for name, doc in docs["grad"].items()})
    out[f"{FRONT}/grad-multi-wire.json"] = grad_wire_fixture(docs["grad"]["multi"])
    out[f"{FRONT}/keys-small.json"] = _compact(docs["keys"])
    out[f"{FRONT}/sharding-small.json"] = _compact(docs["sharding-small"])
    out[f"{FRONT}/sharding-256.json"] = _compact(docs["sharding-256"])
    out[f"{FRONT}/timeline-real.json"] = _readable(docs["timeline"])
    return out


def hand_made(into: Path) -> None:
    """The hand-made documents, written by their node scripts into `into` (the repository's layout)."""
    (into / FRONT).mkdir(parents=True, exist_ok=True)
    where = [] if into == ROOT else [str(into / FRONT)]  # in place, make-fixtures.mjs also writes dev/preview.html
    for script in ("make-fixtures.mjs", "make-timeline-fixtures.mjs"):
        subprocess.run(["node", str(DEV / script), *where], cwd=ROOT, check=True, capture_output=True)


def _without_times(text: str) -> dict:
    doc = json.loads(text)
    doc["duration_us"] = 0
    doc["caption"] = [re.sub(r"\d[\d.,]*\s?(µs|ms|s)\b", "#", sentence) for sentence in doc["caption"]]
    for block, columns in TIMELINE_TIMES.items():
        for column in columns:
            doc[block][column] = [0] * len(doc[block][column])
    for lane in doc["lanes"]:
        lane.update(dict.fromkeys(LANE_TIMES, 0))
    doc["cache"]["saved_us"] = 0
    for event in doc["cache"]["events"]:
        event["t"] = 0
    return doc


def same(path: str, made: str, committed: str) -> bool:
    """Whether a fixture made now matches the committed one (a real timeline: but for its times).

    Numbers may differ in their last bits: XLA's CPU reductions add in an order that follows the
    machine's vector width, so a mean of zero is 1e-11 on one CPU and 2e-9 on another (and so is
    a finding's "RMS 1.05e-09", a value's text, whose columns numpy then pads differently).
    Everything else must be equal."""
    if made == committed:
        return True
    if path.endswith("timeline-real.json"):
        return _same_value(_without_times(made), _without_times(committed))
    if not path.endswith(".json"):
        return False
    return _same_value(json.loads(made), json.loads(committed))


_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-6 + 1e-4 * max(abs(a), abs(b))


def _words(text: str) -> list[str]:
    """What a string says besides its numbers, spacing aside (numpy pads columns to its widest number)."""
    return [re.sub(r"\s+", "", part) for part in _NUMBER.split(text)]


def _same_value(a: object, b: object) -> bool:
    """Equal JSON values, floats (and the numbers in strings) within float noise (`same`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str):
        return a == b or (
            _words(a) == _words(b)
            and all(_close(float(x), float(y)) for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)))
        )
    if type(a) in (int, float) and type(b) in (int, float):  # never a bool: True is not 1 here
        return _close(float(a), float(b))
    return type(a) is type(b) and a == b


# The JAX the fixtures were made with: they hold JAX's own texts and numbers, which another JAX
# writes otherwise (tests/test_fixtures.py compares them only on this one).
MADE_WITH = "tests/fixtures/made-with-jax.txt"


def made_with() -> str:
    """The JAX version the committed fixtures were made with ("" before it was recorded)."""
    path = ROOT / MADE_WITH
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


def make(into: Path) -> list[str]:
    """Write every made fixture under `into`; their paths, relative to it."""
    import jax

    made = real_fixtures()
    made[MADE_WITH] = jax.__version__ + "\n"
    for path, text in made.items():
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_text(text, encoding="utf-8")
    hand_made(into)
    return sorted([*made, *HAND_MADE])


def stale() -> list[str]:
    """The committed fixtures that differ from what the generators make now (or are missing)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = set(make(Path(tmp)))
        return [
            p
            for p in sorted(paths)
            if not (ROOT / p).is_file()
            or not same(p, (Path(tmp) / p).read_text(encoding="utf-8"), (ROOT / p).read_text(encoding="utf-8"))
        ]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        old = stale()
        for path in old:
            print(f"stale: {path} (run ./dev fixtures)")
        return 1 if old else 0
    for path in make(ROOT):
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
