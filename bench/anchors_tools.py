"""The anchors' side of bench/anchors.py, run under the anchors' own venv (.venv-anchors).

    .venv-anchors/bin/python bench/anchors_tools.py jaxviz "mlp_grad(70)" out.html
    .venv-anchors/bin/python bench/anchors_tools.py jaxviz-jit "mlp_grad(70)" out.html
    .venv-anchors/bin/python bench/anchors_tools.py mlir "mlp_grad(70)" out.mlir
    .venv-anchors/bin/python bench/anchors_tools.py serve out.mlir 8123

jaxviz and Model Explorer pin their own dependencies, so they live in a venv of their
own and never in jaxmagic's. `jaxviz`, `jaxviz-jit` and `mlir` print one JSON line ({"seconds",
"bytes"} or {"error"}) as their last line; `serve` runs Model Explorer's local server on
127.0.0.1 (no browser opened) with the StableHLO file as its model and prints
"URL <address>" once it answers. This file never imports jaxmagic: the programs come
from bench/programs.py, which needs JAX only.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.setrecursionlimit(100_000)  # jaxviz walks nested jaxprs recursively


def build(program: str) -> tuple[Callable, tuple]:
    """(jitted fn, args) of a bench/programs.py call such as "transformer_step(46)"."""
    from bench import programs

    name, _, rest = program.partition("(")
    if not name.isidentifier() or not hasattr(programs, name):
        raise ValueError(f"no program {name!r} in bench/programs.py")
    args = [int(a) for a in rest.rstrip(")").split(",") if a.strip()]
    return getattr(programs, name)(*args)


def timed(make: Callable[[], str], out: Path) -> dict:
    """Run `make` (which returns text), write the text to `out`: seconds and bytes, or the error."""
    try:
        t = time.perf_counter()
        text = make()
        seconds = time.perf_counter() - t
    except BaseException as exc:
        traceback.print_exc(limit=3)
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"}
    data = text.encode("utf-8")
    out.write_bytes(data)
    return {"seconds": round(seconds, 3), "bytes": len(data)}


def jaxviz_page(program: str, out: Path, unwrap: bool = True) -> dict:
    """jaxviz 0.1.4's self-contained HTML page of the program (its trace included in the time).

    jaxviz draws a jaxpr's top level only, where the jitted function is one opaque `jit` box
    (its inputs and outputs, nothing inside): `unwrap` gives it the Python function under
    jax.jit, whose top level is the program's eqns; without, it gets the jitted function."""
    from importlib import resources

    import jaxviz

    fn, args = build(program)
    inner = getattr(fn, "__wrapped__", None) if unwrap else fn
    if inner is None:
        raise ValueError(f"{program} is not a jax.jit function")
    row = timed(lambda: jaxviz.trace_model(inner, *args, export_format="html", return_html=True), out)
    # What every page carries whatever the program (its template and the libraries it inlines):
    # the rest of the page is the program's data.
    fixed = [resources.files("jaxviz.templates").joinpath("graph.html")] + [
        resources.files("jaxviz.assets").joinpath(name)
        for name in ("d3.min.js", "viz-standalone.js", "jsoneditor-10.2.0.min.css", "jsoneditor-10.2.0.min.js")
    ]
    if "bytes" in row:
        row["data_bytes"] = row["bytes"] - sum(len(f.read_bytes()) for f in fixed)
    return row


def stablehlo(program: str, out: Path) -> dict:
    """The lowered StableHLO text with debug info (locations): what Model Explorer reads. No compile."""
    fn, args = build(program)
    return timed(lambda: fn.lower(*args).as_text(debug_info=True), out)


def serve(mlir: Path, port: int) -> None:
    """Model Explorer's own local server with the .mlir file as its model; blocks until killed."""
    import model_explorer
    from model_explorer import server

    config = model_explorer.config().add_model_from_path(str(mlir))
    # Its version check asks PyPI and GitHub on every page load: answer as it does when offline.
    server._check_new_version = lambda print_msg=True: {
        "version": "",
        "runningVersion": model_explorer.__version__,
        "releaseUrl": "",
        "desktopAppUrl": "",
    }
    url = f"http://127.0.0.1:{port}/?data={config.to_url_param_value()}"

    real_print = print

    def announce(*args: Any, **kwargs: Any) -> None:
        real_print(*args, **kwargs)
        if args and "Starting Model Explorer server" in str(args[0]):
            real_print(f"URL {url}", flush=True)

    server.print = announce  # the server says when it answers; the URL is ours, same data param
    model_explorer.visualize_from_config(config, host="127.0.0.1", port=port, no_open_in_browser=True)


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[0] not in ("jaxviz", "jaxviz-jit", "mlir", "serve"):
        raise SystemExit(__doc__)
    if argv[0] == "serve":
        serve(Path(argv[1]).resolve(), int(argv[2]))
        return
    makers = {"jaxviz": jaxviz_page, "jaxviz-jit": lambda p, o: jaxviz_page(p, o, unwrap=False), "mlir": stablehlo}
    print(json.dumps(makers[argv[0]](argv[1], Path(argv[2]))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
