"""Run JAX's own test files inside a capture under each magic's options, and compare with a plain run.

JAX's tests are not in its wheel: check out the `tests/` folder of JAX's repository at the installed
version (`git clone --depth 1 -b jax-v0.10.2 https://github.com/jax-ml/jax`), then

    .venv/bin/python tools/jax_suite.py run --tests ../jax/tests plain api_test.py pjit_test.py
    .venv/bin/python tools/jax_suite.py run --tests ../jax/tests sharding api_test.py pjit_test.py
    .venv/bin/python tools/jax_suite.py compare

`run MODE FILE...` runs each file with pytest (one generated case per parametrized test, 8 CPU
devices, the plugin tools/jax_suite_plugin.py for a MODE other than `plain`) and writes a JUnit
report per file and mode under --out (default test-artifacts/jax-suite/). `compare` lists, per
file and mode, the tests whose outcome differs from the plain run's, and what jaxmagic itself
raised (errors.jsonl). docs/reliability.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("plain", "jaxpr", "values", "grad_graph", "trace", "sharding", "prng")


def run(tests: Path, out: Path, mode: str, files: list[str]) -> int:
    """Run each test file in `mode`; print one line of pytest's summary per file."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        JAX_NUM_GENERATED_CASES="1",
        JAX_PLATFORMS="cpu",
        XLA_FLAGS="--xla_force_host_platform_device_count=8",
        JAX_SUITE_ERRORS=str(out / "errors.jsonl"),
        PYTHONPATH=os.pathsep.join([str(ROOT / "tools"), str(tests.parent)]),
    )
    env.pop("JAX_SUITE_MODE", None)
    if mode != "plain":
        env["JAX_SUITE_MODE"] = mode
    worst = 0
    for name in files:
        stem = Path(name).stem
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "jax_suite_plugin"]
        command += ["-o", "addopts=", "--timeout=300", f"--junitxml={out / f'{stem}-{mode}.xml'}", str(tests / name)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        (out / f"{stem}-{mode}.log").write_text(done.stdout + done.stderr, encoding="utf-8")
        last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"{mode} {stem} rc={done.returncode} {last}")
        worst = max(worst, done.returncode)
    return worst


def outcomes(report: Path) -> dict[str, str]:
    """test id -> passed | skipped | failure: message | error: message, from a JUnit report."""
    found = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                kind = f"{child.tag}: {(child.get('message') or '')[:300]}"
            elif child.tag == "skipped":
                kind = "skipped"
        found[f"{case.get('classname')}::{case.get('name')}"] = kind
    return found


def compare(out: Path) -> int:
    """Print the tests whose outcome differs from the plain run's, and jaxmagic's own errors."""
    differing = 0
    for plain in sorted(out.glob("*-plain.xml")):
        stem = plain.name.removesuffix("-plain.xml")
        base = outcomes(plain)
        for other in sorted(out.glob(f"{stem}-*.xml")):
            mode = other.name.removesuffix(".xml").removeprefix(f"{stem}-")
            if mode not in MODES or mode == "plain":
                continue
            got = outcomes(other)
            diffs = [(k, v) for k, v in got.items() if base.get(k, "missing").split(":")[0] != v.split(":")[0]]
            differing += len(diffs)
            print(f"{stem} {mode}: {len(got)} tests, {len(diffs)} differ from the plain run")
            for test, outcome in diffs:
                print(f"    {test}\n        plain: {base.get(test)}\n        {mode}: {outcome}")
    errors = out / "errors.jsonl"
    if errors.is_file():
        counts = Counter()
        for line in errors.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            last = (entry.get("error") or "").strip().splitlines()[-1:] or [f"{entry.get('seconds', 0):.1f} s"]
            counts[(entry["mode"], entry["where"], last[0][:160])] += 1
        for (mode, where, what), count in counts.most_common():
            print(f"jaxmagic {mode} {where} x{count}: {what}")
        differing += sum(counts.values())
    return 1 if differing else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "test-artifacts" / "jax-suite")
    commands = parser.add_subparsers(dest="command", required=True)
    running = commands.add_parser("run", help="run test files in a mode")
    running.add_argument("--tests", type=Path, required=True, help="JAX's tests/ folder, at the installed version")
    running.add_argument("mode", choices=MODES)
    running.add_argument("files", nargs="+")
    commands.add_parser("compare", help="outcomes that differ from the plain run")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args.tests.resolve(), args.out, args.mode, args.files)
    return compare(args.out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
