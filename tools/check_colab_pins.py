"""Would installing jaxmagic change any package Google Colab's runtime pins? Asks pip's resolver.

Colab's kernel runs on its own IPython, ipywidgets and traitlets; `pip install` of a package that
needs newer ones upgrades them under the running kernel, which breaks or restarts it. This asks
pip (`install --dry-run --report`, metadata only: no wheel is downloaded) two questions:

- default: jaxmagic's declared dependencies (pyproject.toml), resolved for Colab's Python with
  Colab's pins as constraints. A dependency floor above a pin makes the resolution impossible;
  otherwise every pinned package must resolve to its pin.
- `--env PYTHON`: in the environment of that interpreter (a venv with Colab's pins installed),
  `pip install <project or wheel>`: nothing already installed may be upgraded or replaced.

Exit status 0: nothing pinned changes; 1: something would (printed); 2: pip could not reach a
package index (nothing was decided). `python tools/check_colab_pins.py [--env .venv-colab/bin/python]`
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Colab's runtime (its public backend-info pip freeze, August 2026)
COLAB_PYTHON = "3.13"
COLAB_PINS = {
    "ipython": "7.34.0",
    "ipywidgets": "7.7.1",
    "traitlets": "5.7.1",
    "anywidget": "0.9.21",
    "jax": "0.7.2",
    "jaxlib": "0.7.2",
}
# Linux x86-64 wheels of every age: given --platform, pip accepts only the tags named.
PLATFORMS = [
    f"{tag}_x86_64"
    for tag in (
        "manylinux_2_35",
        "manylinux_2_28",
        "manylinux_2_27",
        "manylinux_2_17",
        "manylinux2014",
        "manylinux_2_12",
        "manylinux2010",
        "manylinux_2_5",
        "manylinux1",
    )
]
NO_INDEX = re.compile(
    r"NewConnectionError|Temporary failure in name resolution|Network is unreachable|"
    r"ProxyError|Could not fetch URL|ConnectTimeout|ReadTimeoutError",
    re.IGNORECASE,
)


def _name(name: str) -> str:
    """PEP 503 normalised name: `jupyter_client` and `Jupyter-Client` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared_dependencies(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """[project].dependencies: what `pip install jaxmagic` asks for, read where it is declared."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return list(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"])


def _dry_run(python: str, args: list[str]) -> tuple[dict | None, str]:
    """pip's install report (None when pip failed) and its output, for `args` after `install`."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        done = subprocess.run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--quiet",
                "--disable-pip-version-check",
                "--report",
                str(report),
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        data = json.loads(report.read_text()) if done.returncode == 0 and report.exists() else None
    return data, done.stdout + done.stderr


def _resolved(report: dict) -> dict[str, str]:
    return {_name(item["metadata"]["name"]): item["metadata"]["version"] for item in report["install"]}


def check_fresh(
    pins: dict[str, str] = COLAB_PINS, requirements: list[str] | None = None, python_version: str = COLAB_PYTHON
) -> tuple[int, list[str]]:
    """Resolve `requirements` (the declared ones by default) for `python_version` under `pins`."""
    requirements = declared_dependencies() if requirements is None else requirements
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as constraints:
        constraints.write("".join(f"{name}=={version}\n" for name, version in pins.items()))
    try:
        platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
        # older pip (23.2, which Python 3.11 venvs ship) takes --platform only with --target;
        # a dry run writes nothing there
        with tempfile.TemporaryDirectory() as target:
            report, output = _dry_run(
                sys.executable,
                [
                    "--ignore-installed",
                    "--target",
                    target,
                    "--only-binary=:all:",
                    "--python-version",
                    python_version,
                    *platforms,
                    "-c",
                    constraints.name,
                    *requirements,
                ],
            )
    finally:
        Path(constraints.name).unlink()
    if report is None:
        return _failed(output, f"pip cannot install {requirements} with Colab's pins {pins}")
    got = _resolved(report)
    changed = [
        f"{name}: pinned {pin}, resolved {got.get(_name(name))}"
        for name, pin in pins.items()
        if _name(name) in got and got[_name(name)] != pin
    ]
    return (1 if changed else 0), changed or [f"{name}=={got[_name(name)]}" for name in pins if _name(name) in got]


def check_env(python: str, target: str = str(ROOT)) -> tuple[int, list[str]]:
    """`pip install target` in `python`'s environment: every package it would install that is
    already there (an upgrade, a downgrade or a reinstall of the runtime's own) is a change."""
    listing = (
        "import importlib.metadata as m, json; "
        "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    )
    installed = subprocess.run([python, "-c", listing], capture_output=True, text=True, check=True).stdout
    before = {_name(name): version for name, version in json.loads(installed).items()}
    report, output = _dry_run(python, [target])
    if report is None:
        return _failed(output, f"pip cannot install {target} into {python}'s environment")
    changed = [
        f"{name}: installed {before[name]}, would become {version}"
        for name, version in _resolved(report).items()
        if name in before and name != "jaxmagic"
    ]
    return (1 if changed else 0), changed or ["only " + ", ".join(sorted(_resolved(report)))]


def _failed(output: str, what: str) -> tuple[int, list[str]]:
    if NO_INDEX.search(output):
        return 2, [f"no package index reachable: {output.strip().splitlines()[-1]}"]
    return 1, [what, *output.strip().splitlines()[-12:]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", metavar="PYTHON", help="check `pip install` in this interpreter's environment")
    parser.add_argument(
        "--target", default=str(ROOT), help="with --env: the project folder (default), a built wheel or any requirement"
    )
    args = parser.parse_args(argv)
    code, lines = check_env(args.env, args.target) if args.env else check_fresh()
    print(("ok: " if code == 0 else "CHANGED: " if code == 1 else "UNDECIDED: ") + "\n  ".join(lines))
    return code


if __name__ == "__main__":
    sys.exit(main())
