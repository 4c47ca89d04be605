"""Side by side: jaxmagic's page against jaxviz, Google's Model Explorer and Graphviz `dot`.

    .venv/bin/python bench/anchors.py                 # 1k, 10k and 50k eqns, every tool
    .venv/bin/python bench/anchors.py --sizes 1k 10k --tools jaxmagic jaxviz

One command. Our side runs in this interpreter (jaxmagic's venv); the anchors run under
their own venv, .venv-anchors (they pin their own dependencies; bench/anchors_tools.py is
their side), made once with

    python3.11 -m venv .venv-anchors
    .venv-anchors/bin/pip install jax==0.10.2 jaxviz==0.1.4 ai-edge-model-explorer playwright

A tool whose venv or binary is missing is reported as "not installed" and the rest still run.

The programs are bench/programs.py's: mlp_grad(70) (~1k eqns), transformer_step(46) (~10k),
transformer_step(232) (~50k). Nothing is compiled (the 50k step does not compile in 24 GiB):

* jaxmagic: trace (`fn.trace(...).jaxpr`) + graph document + `jaxmagic.to_html` page, timed in
  Python; the page opened from file:// in headless Chromium; first picture as bench/browser.py
  measures it (status "N of M eqns shown" and the frame after it), in the page's own clock.
* jaxviz 0.1.4: `trace_model(fn.__wrapped__, *args, export_format="html", return_html=True)` (its
  trace included). jaxviz draws a jaxpr's top level only, where the jitted function would be one
  `jit` box: it gets the Python function under `jax.jit`, whose top level is the program's eqns.
  The page opened from file://; drawn = its SVG has a node (`[class^=node_]`) + a frame.
  "jaxviz-jit": the same on the jitted function itself, as a user would call it: one `jit` box
  with its inputs and outputs, none of the program's eqns.
* Model Explorer: `fn.lower(*args).as_text(debug_info=True)` written to a .mlir file, its own
  server (`model_explorer.visualize_from_config`, 127.0.0.1, no browser) with that file as the
  model; the page opened at the server's URL, whose app asks the server to convert the file
  (the time that request waited for its answer is "server convert"); drawn = its
  `webgl-renderer` canvas exists (inserted once its worker has laid the graph out) and the
  "Processing graph..." panel is gone or fading, + a frame. Bytes: every response body it loaded.
* dot: `jaxmagic.to_dot` of the same document, `dot -Tsvg`; first picture = dot's wall time;
  bytes = the SVG. Once dot times out, larger programs are not tried (said in the table).

Chromium is /usr/bin/chromium, offline: every request that leaves 127.0.0.1/file is aborted.
Times to first picture are from navigation start (performance.now() in the page). Each tool
step has a time-out (--timeout, 300 s; --dot-timeout, 120 s). Nothing here is a test; the machine's load average is
printed with the table (these are wall-clock times on a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.browser import CHROMIUM, CHROMIUM_ARGS, INIT_JS

ANCHORS_PY = REPO / ".venv-anchors" / "bin" / "python"
TOOLS_PY = REPO / "bench" / "anchors_tools.py"
PROGRAMS = {"1k": "mlp_grad(70)", "10k": "transformer_step(46)", "50k": "transformer_step(232)"}
TOOLS = ["jaxmagic", "jaxviz", "jaxviz-jit", "model-explorer", "dot"]

# Marks when a tool's picture is first drawn: `window.__anchorFirst` = performance.now() at the
# frame after `DRAWN` first holds (checked on every DOM change and every 50 ms).
ANCHOR_INIT_JS = r"""
(() => {
  const drawn = () => { try { return !!(DRAWN); } catch (e) { return false; } };
  window.__anchorFirst = null;
  let obs = null, timer = null;
  const hit = () => {
    if (window.__anchorFirst != null || !drawn()) return;
    window.__anchorFirst = -1;
    if (obs) obs.disconnect();
    clearInterval(timer);
    requestAnimationFrame(() => setTimeout(() => { window.__anchorFirst = performance.now(); }, 0));
  };
  timer = setInterval(hit, 50);
  obs = new MutationObserver(hit);
  obs.observe(document, { subtree: true, childList: true });
})();
"""
JAXVIZ_DRAWN = 'document.querySelector(\'[id^="graph_"] svg [class^="node_"]\')'
ME_DRAWN = (
    "document.querySelector('webgl-renderer canvas') && "
    "!document.querySelector('.loading:not(.ng-animating) .processing-msg-container')"
)


def load_average() -> str:
    """The 1/5/15-minute load averages, as /proc/loadavg says them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def build(program: str) -> tuple[Callable, tuple]:
    """(jitted fn, args) of a bench/programs.py call such as "transformer_step(46)"."""
    from bench import programs

    name, _, rest = program.partition("(")
    return getattr(programs, name)(*[int(a) for a in rest.rstrip(")").split(",") if a.strip()])


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:140] if str(exc) else ''}"


def open_page(browser: Any, url: str, drawn_js: str | None, timeout_s: float, stop_on_page_error: bool) -> dict:
    """Open `url` in a fresh offline context; first picture (s, page clock), bytes loaded, errors.

    `drawn_js` None: jaxmagic's page, timed by bench/browser.py's INIT_JS; otherwise a JS
    expression that holds once the tool's graph is drawn. With `stop_on_page_error`, an uncaught
    page error ends the wait (jaxviz stops drawing after one)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, service_workers="block")
    context.route(
        "**/*",
        lambda r: (
            r.continue_()
            if r.request.url.startswith(("file:", "data:", "blob:", "http://127.0.0.1"))
            else r.abort("blockedbyclient")
        ),
    )
    page = context.new_page()
    out: dict = {"errors": [], "bytes": 0, "convert_s": None}

    def finished(request: Any) -> None:
        try:
            out["bytes"] += request.sizes()["responseBodySize"]
            if "send_command" in request.url:  # Model Explorer's "convert this model" request
                t = request.timing
                out["convert_s"] = (t["responseStart"] - t["requestStart"]) / 1e3
                out["convert_bytes"] = request.sizes()["responseBodySize"]
        except Exception as exc:
            out["unsized"] = f"{out.get('unsized', '')} {error_text(exc)}".strip()

    page.on("requestfinished", finished)
    page.on("pageerror", lambda e: out["errors"].append(str(e).splitlines()[0][:140]))
    flag = "__jmFirst" if drawn_js is None else "__anchorFirst"
    page.add_init_script(INIT_JS if drawn_js is None else ANCHOR_INIT_JS.replace("DRAWN", drawn_js))
    deadline = time.monotonic() + timeout_s
    try:
        page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        while "first_s" not in out:
            left = deadline - time.monotonic()
            if left <= 0:
                why = f" ({out['errors'][0]})" if out["errors"] else ""
                out["failed"] = f"not drawn after {timeout_s:.0f} s{why}"
                break
            if stop_on_page_error and out["errors"]:
                out["failed"] = f"never drew: {out['errors'][0]}"
                break
            try:  # the time-out holds even while the page's main thread is busy
                handle = page.wait_for_function(
                    f"window.{flag} > 0 && window.{flag}", polling=100, timeout=min(1000.0, left * 1000)
                )
                out["first_s"] = handle.json_value() / 1e3
            except PlaywrightTimeout:
                continue
        if "first_s" in out:
            out["shown"] = page.evaluate("document.body ? document.body.innerText.slice(0, 4000) : ''")
    except Exception as exc:
        out["failed"] = error_text(exc)
    context.close()
    return out


def anchor_step(kind: str, program: str, out: Path, timeout_s: float) -> dict:
    """Run one step of bench/anchors_tools.py under .venv-anchors: its JSON answer, or how it failed."""
    try:
        done = subprocess.run(
            [str(ANCHORS_PY), str(TOOLS_PY), kind, program, str(out)],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=REPO,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"{kind} gave nothing in {timeout_s:.0f} s"}
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"{kind} exited {done.returncode}: {tail[:140]}"}


def graph_document(program: str) -> tuple[dict, float, float]:
    """Our graph document of the program (trace only): (document, trace s, document s)."""
    from jaxmagic.model.graph import function_graph

    fn, args = build(program)
    t0 = time.perf_counter()
    jaxpr = fn.trace(*args).jaxpr
    t1 = time.perf_counter()
    graph = function_graph("f0", program, jaxpr)
    doc = {
        "schema": "jaxmagic",
        "version": 1,
        "kind": "graph",
        "title": f"{program}: {graph['n_eqns']} eqns",
        "notes": [],
        "error": None,
        "functions": [graph],
    }
    return doc, t1 - t0, time.perf_counter() - t1


def jaxmagic_row(program: str, browser: Any, tmp: Path, timeout_s: float) -> tuple[dict, dict | None, float]:
    """Our static page: Python time (trace + document + page), its size, first render in Chromium."""
    import jaxmagic
    from jaxmagic.views.static_html import bundle_source

    try:
        doc, trace_s, doc_s = graph_document(program)
        t = time.perf_counter()
        html = jaxmagic.to_html(doc).encode("utf-8")
        page_s = time.perf_counter() - t
    except Exception as exc:
        return {"tool": "jaxmagic", "failed": error_text(exc)}, None, 0.0
    path = tmp / "jaxmagic.html"
    path.write_bytes(html)
    seen = open_page(browser, path.as_uri(), None, timeout_s, stop_on_page_error=False)
    row = {
        "tool": "jaxmagic",
        "eqns": doc["functions"][0]["n_eqns"],
        "python_s": trace_s + doc_s + page_s,
        "first_s": seen.get("first_s"),
        "bytes": len(html),
        "failed": seen.get("failed"),
        "data_bytes": len(html) - len(bundle_source().encode("utf-8")),
        "note": f"trace {trace_s:.2f} + document {doc_s:.2f} + page {page_s:.2f} s; page errors: {len(seen['errors'])}",
    }
    return row, doc, trace_s + doc_s


def jaxviz_row(program: str, browser: Any, tmp: Path, timeout_s: float, tool: str = "jaxviz") -> dict:
    """jaxviz's exported page: trace_model seconds, its size, until its SVG shows a node.

    "jaxviz" is given the Python function under jax.jit (its eqns drawn), "jaxviz-jit" the jitted
    function itself (one `jit` box with its inputs and outputs: nothing of the program inside)."""
    path = tmp / f"{tool}.html"
    made = anchor_step(tool, program, path, timeout_s)
    if "error" in made:
        return {"tool": tool, "failed": made["error"]}
    seen = open_page(browser, path.as_uri(), JAXVIZ_DRAWN, timeout_s, stop_on_page_error=True)
    what = "fn.__wrapped__" if tool == "jaxviz" else "fn (jitted: one jit box, no eqn inside drawn)"
    return {
        "tool": tool,
        "python_s": made["seconds"],
        "first_s": seen.get("first_s"),
        "bytes": made["bytes"],
        "data_bytes": made.get("data_bytes"),
        "failed": seen.get("failed"),
        "note": f"trace_model({what}, *args, export_format='html', return_html=True)",
    }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_model_explorer(mlir: Path, timeout_s: float) -> tuple[subprocess.Popen, str]:
    """Model Explorer's server on a free local port with the file as its model: (process, URL)."""
    import queue
    import threading

    proc = subprocess.Popen(
        [str(ANCHORS_PY), str(TOOLS_PY), "serve", str(mlir), str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
    )
    lines: queue.Queue = queue.Queue()

    def read() -> None:  # drains the pipe for as long as the server lives (it must never fill up)
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            continue
        if line.startswith("URL "):
            return proc, line[4:].strip()
    stop(proc)
    raise RuntimeError(f"Model Explorer's server did not answer in {timeout_s:.0f} s")


def stop(proc: subprocess.Popen) -> None:
    """End a server this script started (its own process only)."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def model_explorer_row(program: str, browser: Any, tmp: Path, timeout_s: float) -> dict:
    """Model Explorer on the lowered StableHLO: lowering s, server conversion, until its graph is drawn."""
    import re

    path = tmp / f"{program.split('(')[0]}.mlir"
    made = anchor_step("mlir", program, path, timeout_s)
    if "error" in made:
        return {"tool": "model-explorer", "failed": made["error"]}
    try:
        proc, url = start_model_explorer(path, 60.0)
    except RuntimeError as exc:
        return {"tool": "model-explorer", "python_s": made["seconds"], "failed": str(exc)}
    try:
        seen = open_page(browser, url, ME_DRAWN, timeout_s, stop_on_page_error=False)
    finally:
        stop(proc)
    nodes = re.search(r"([\d,]+) nodes", seen.get("shown", ""))
    convert = seen.get("convert_s")
    note = (
        f"StableHLO {made['bytes'] / 1e6:.1f} MB; server convert "
        f"{'—' if convert is None else f'{convert:.1f} s'}, graph JSON "
        f"{seen.get('convert_bytes', 0) / 1e6:.1f} MB; {nodes.group(1) + ' nodes' if nodes else 'nodes ?'}"
    )
    return {
        "tool": "model-explorer",
        "python_s": made["seconds"],
        "first_s": seen.get("first_s"),
        "bytes": seen["bytes"],
        "data_bytes": seen.get("convert_bytes"),
        "failed": seen.get("failed"),
        "note": note,
    }


def dot_row(doc: dict | None, prep_s: float, timeout_s: float) -> dict:
    """Graphviz `dot -Tsvg` on `jaxmagic.to_dot` of our document: its wall time, the SVG's size."""
    import jaxmagic

    if doc is None:
        return {"tool": "dot", "failed": "no document (jaxmagic's side failed)"}
    if not shutil.which("dot"):
        return {"tool": "dot", "failed": "dot not installed"}
    t = time.perf_counter()
    source = jaxmagic.to_dot(doc).source
    dot_py = prep_s + time.perf_counter() - t  # the same trace + document as jaxmagic's row, then to_dot
    with tempfile.NamedTemporaryFile(suffix=".svg") as svg:
        t = time.perf_counter()
        try:
            subprocess.run(
                ["dot", "-Tsvg", "-o", svg.name],
                input=source,
                text=True,
                timeout=timeout_s,
                capture_output=True,
                check=True,
            )
        except subprocess.TimeoutExpired:
            return {
                "tool": "dot",
                "python_s": dot_py,
                "failed": f"no layout in {timeout_s:.0f} s (timed out)",
                "note": f"DOT source {len(source) / 1e6:.1f} MB",
            }
        except subprocess.CalledProcessError as exc:
            return {"tool": "dot", "python_s": dot_py, "failed": f"dot failed: {exc.stderr.strip()[-120:]}"}
        wall = time.perf_counter() - t
        size = Path(svg.name).stat().st_size
    return {
        "tool": "dot",
        "python_s": dot_py,
        "first_s": wall,
        "bytes": size,
        "data_bytes": size,
        "note": f"trace + document + to_dot; DOT source {len(source) / 1e6:.1f} MB; bytes = SVG",
    }


def run_size(
    size: str, tools: list[str], browser: Any, timeout_s: float, dot_timeout_s: float, skip_dot: str | None
) -> list[dict]:
    """Every asked tool on one program; each row says the program, its size and the load average."""
    program = PROGRAMS[size]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="jm-anchors-") as tmp_name:
        tmp = Path(tmp_name)
        doc, prep_s = None, 0.0
        if "jaxmagic" in tools or "dot" in tools:
            row, doc, prep_s = jaxmagic_row(program, browser, tmp, timeout_s)
            if "jaxmagic" in tools:
                rows.append(dict(row, load=load_average().split()[0]))
        if "dot" in tools:
            row = {"tool": "dot", "failed": skip_dot} if skip_dot else dot_row(doc, prep_s, dot_timeout_s)
            rows.append(dict(row, load=load_average().split()[0]))
        eqns = doc["functions"][0]["n_eqns"] if doc else None
        del doc
        anchors = {
            "jaxviz": jaxviz_row,
            "model-explorer": model_explorer_row,
            "jaxviz-jit": lambda *a: jaxviz_row(*a, tool="jaxviz-jit"),
        }
        for tool in (t for t in tools if t in anchors):
            if not ANCHORS_PY.exists():
                rows.append({"tool": tool, "failed": f"not installed ({ANCHORS_PY.parent.parent.name} missing)"})
                continue
            rows.append(dict(anchors[tool](program, browser, tmp, timeout_s), load=load_average().split()[0]))
    for row in rows:
        row.update(size=size, program=program, eqns=row.get("eqns", eqns))
        print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def cell(value: Any, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def print_table(rows: list[dict]) -> None:
    """A markdown table, then each row's notes and failures."""
    print(
        "| program | eqns | tool | Python/convert s | first picture s | total s | bytes shipped | B/eqn | "
        "data bytes | data B/eqn | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        py, first, size, data, eqns = (r.get(k) for k in ("python_s", "first_s", "bytes", "data_bytes", "eqns"))
        total = py + first if py is not None and first is not None else None
        first_text = cell(first, ".2f") if not r.get("failed") else f"FAILED: {r['failed']}"
        print(
            f"| {r['program']} | {cell(eqns, ',')} | {r['tool']} | {cell(py, '.2f')} | {first_text} | "
            f"{cell(total, '.2f')} | {cell(size, ',')} | {cell(size / eqns if size and eqns else None, ',.0f')} | "
            f"{cell(data, ',')} | {cell(data / eqns if data and eqns else None, ',.0f')} | {r['load']} |"
        )
    print(
        "\nbytes shipped: jaxmagic/jaxviz the self-contained page, Model Explorer every response its page "
        "loaded (app + graph JSON), dot the SVG. data bytes: less the code every page carries (jaxmagic's "
        "bundle, jaxviz's template and inlined libraries); Model Explorer the graph JSON its server sent."
    )
    for r in rows:
        if r.get("note"):
            print(f"{r['program']} {r['tool']}: {r['note']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="*", default=list(PROGRAMS), choices=list(PROGRAMS))
    ap.add_argument("--tools", nargs="*", default=TOOLS, choices=TOOLS)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per tool step before giving up")
    ap.add_argument(
        "--dot-timeout",
        type=float,
        default=120.0,
        help="seconds for dot's layout (it did not lay out the 1k-eqn graph in 15 minutes)",
    )
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = ap.parse_args()
    import jax
    from playwright.sync_api import sync_playwright

    started, load0 = time.perf_counter(), load_average()
    print(
        f"JAX {jax.__version__}, {os.cpu_count()} cores, Chromium {CHROMIUM}, load average at start {load0}", flush=True
    )
    rows: list[dict] = []
    skip_dot = None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for size in args.sizes:
                rows += run_size(size, args.tools, browser, args.timeout, args.dot_timeout, skip_dot)
                dot = next((r for r in rows[::-1] if r["tool"] == "dot"), None)
                if dot and not skip_dot and "timed out" in str(dot.get("failed")):
                    skip_dot = f"not tried: dot timed out ({args.dot_timeout:.0f} s) at {size} eqns already"
        finally:
            browser.close()
    print(
        f"\nwhole run {time.perf_counter() - started:.0f} s; load average at start {load0}, at end {load_average()}\n"
    )
    print_table(rows)
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
