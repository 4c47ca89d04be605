"""Machinery for the real-browser tests: a throwaway JupyterLab, a guarded Chromium page,
an independent JAX oracle for expected eqn counts, and a driver for one jaxmagic view.

Nothing here talks to the network: the JupyterLab server runs on 127.0.0.1 with update
checks and news switched off, and every page request whose host is not loopback is
aborted and counted, so a test can assert that a view rendered fully offline.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO_NOTEBOOK = Path(os.environ.get("JAXMAGIC_DEMO_NOTEBOOK", REPO / "demo.ipynb"))
ARTIFACTS = Path(os.environ.get("JAXMAGIC_TEST_ARTIFACTS", REPO / "test-artifacts"))
CHROMIUM = os.environ.get("JAXMAGIC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
_VENV_PYTHON = REPO / ".venv" / "bin" / "python"
PYTHON = str(_VENV_PYTHON) if _VENV_PYTHON.exists() else sys.executable
XLA_FLAGS = "--xla_force_host_platform_device_count=8"
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LOCAL_SCHEMES = {"file", "data", "blob", "about", "chrome", "chrome-extension", "devtools"}


def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def is_offsite(url: str) -> bool:
    """True for a request that would leave this machine (any host but loopback)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme in LOCAL_SCHEMES:
        return False
    return (parsed.hostname or "") not in LOOPBACK_HOSTS


# --------------------------------------------------------------------------------------
# processes
# --------------------------------------------------------------------------------------

MARKER_VAR = "JAXMAGIC_BROWSER_TEST_RUN"


def _pids_with_marker(marker: str) -> list[int]:
    """Processes whose environment carries our run marker: the server, its kernels, their children."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_marked(marker: str, grace: float = 5.0) -> list[int]:
    """SIGTERM, then SIGKILL, every process started with `marker`; returns those that needed it."""
    pids = _pids_with_marker(marker)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _pids_with_marker(marker):
        time.sleep(0.1)
    for pid in _pids_with_marker(marker):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _pids_with_marker(marker):
        time.sleep(0.1)
    return pids


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def isolated_env(base: Path, marker: str) -> dict[str, str]:
    """Environment for a Jupyter server or kernel that touches nothing outside `base`."""
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("JUPYTER", "JPY_")) or key in {"IPYTHONDIR", "PYTHONSTARTUP"}:
            del env[key]
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_DATA_DIR": base / "data",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "IPYTHONDIR": base / "ipython",
        "JUPYTERLAB_SETTINGS_DIR": base / "config" / "lab" / "user-settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "config" / "lab" / "workspaces",
    }
    for key, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env["JUPYTER_PATH"] = str(dirs["JUPYTER_DATA_DIR"])  # our kernelspec before the venv's
    env["JUPYTER_PREFER_ENV_PATH"] = "0"
    env["XLA_FLAGS"] = XLA_FLAGS
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env[MARKER_VAR] = marker
    venv_bin = str(Path(PYTHON).parent)
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    return env


def install_kernelspec(env: dict[str, str]) -> None:
    """The venv's python as kernel `python3`, in the isolated data dir (found before any other)."""
    subprocess.run(
        [
            PYTHON,
            "-m",
            "ipykernel",
            "install",
            "--user",
            "--name",
            "python3",
            "--display-name",
            "Python 3 (jaxmagic tests)",
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    spec = Path(env["JUPYTER_DATA_DIR"]) / "kernels" / "python3" / "kernel.json"
    argv = json.loads(spec.read_text())["argv"]
    assert Path(argv[0]).resolve() == Path(PYTHON).resolve() or argv[0] == PYTHON, argv


def write_lab_settings(env: dict[str, str], windowing: str | None = "none") -> None:
    """User settings: no news, no update checks, every cell rendered (no windowing); with
    `windowing=None` the notebook keeps the host's default windowing, as a user has it."""
    root = Path(env["JUPYTERLAB_SETTINGS_DIR"])
    settings = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
            "doNotDisturbMode": True,
        },
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": windowing} if windowing else {},
        "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
        "@jupyterlab/extensionmanager-extension/plugin.jupyterlab-settings": {"enabled": False},
    }
    for rel, value in settings.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


def prepare_notebook(source: Path, dest_dir: Path, name: str | None = None) -> Path:
    """Copy a notebook, pointing its kernelspec at the test kernel so no picker appears."""
    nb = json.loads(Path(source).read_text(encoding="utf-8"))
    nb.setdefault("metadata", {})["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (jaxmagic tests)",
        "language": "python",
    }
    dest = dest_dir / (name or Path(source).name)
    dest.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return dest


@dataclass
class LabServer:
    url: str
    token: str
    root_dir: Path
    log_path: Path
    process: subprocess.Popen
    app: str = "lab"

    def lab_url(self, path: str) -> str:
        return f"{self.url}/lab/tree/{urllib.parse.quote(path)}?token={self.token}"

    def page_url(self, path: str) -> str:
        """The page of a notebook in this front end: /lab/tree/<path> or Notebook 7's /notebooks/<path>."""
        if self.app == "notebook":
            return f"{self.url}/notebooks/{urllib.parse.quote(path)}?token={self.token}"
        return self.lab_url(path)

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""


def _wait_for_status(url: str, token: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited early with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as resp:
                if resp.status == 200:
                    json.loads(resp.read())
                    return
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last = exc
        time.sleep(0.25)
    raise TimeoutError(f"JupyterLab did not answer /api/status within {timeout:.0f}s (last error: {last})")


def _server_command(app: str, port: int, token: str, root: Path) -> list[str]:
    """The command line of a Jupyter front end on 127.0.0.1 (`app`: "lab" or "notebook"), with
    the app exposed as `window.jupyterapp` so tests can read kernel state and run commands."""
    common = [
        PYTHON,
        "-m",
        "jupyter",
        app,
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--ServerApp.token={token}",
        "--ServerApp.password=",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.open_browser=False",
        "--MappingKernelManager.cull_idle_timeout=0",
        "--ServerApp.shutdown_no_activity_timeout=900",
    ]
    if app == "lab":
        return common + [
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--LabApp.expose_app_in_browser=True",
        ]
    if app == "notebook":  # Notebook 7: no news or update check of its own; the settings file mutes the rest
        return common + ["--JupyterNotebookApp.expose_app_in_browser=True"]
    raise ValueError(f"unknown Jupyter front end {app!r}")


@contextlib.contextmanager
def jupyter_lab(
    notebooks: list[Path] = (), startup_timeout: float = 90.0, windowing: str | None = "none"
) -> Iterator[LabServer]:
    """A JupyterLab on 127.0.0.1 in throwaway dirs, serving copies of `notebooks` (see `jupyter_server`)."""
    with jupyter_server("lab", notebooks, startup_timeout, windowing) as server:
        yield server


@contextlib.contextmanager
def jupyter_notebook7(
    notebooks: list[Path] = (), startup_timeout: float = 90.0, windowing: str | None = "none"
) -> Iterator[LabServer]:
    """A Notebook 7 on 127.0.0.1 in throwaway dirs, serving copies of `notebooks`; its pages are
    /notebooks/<path> (`LabServer.page_url`)."""
    with jupyter_server("notebook", notebooks, startup_timeout, windowing) as server:
        yield server


@contextlib.contextmanager
def jupyter_server(
    app: str, notebooks: list[Path] = (), startup_timeout: float = 90.0, windowing: str | None = "none"
) -> Iterator[LabServer]:
    """A Jupyter front end (`app`: "lab" or "notebook") on 127.0.0.1 in throwaway dirs.

    Its own config, data, runtime and settings dirs, the venv's kernel as `python3`, a random
    port and token; `windowing` as in `write_lab_settings`. On exit: /api/shutdown, then
    terminate, then kill; then every process that carries this run's marker (kernels live in
    sessions of their own) is ended too.
    """
    marker = secrets.token_hex(8)
    base = Path(tempfile.mkdtemp(prefix=f"jaxmagic-{app}-"))
    server: LabServer | None = None
    log = None
    log_name = "jupyterlab.log" if app == "lab" else f"jupyter-{app}.log"
    try:
        root = base / "root"
        root.mkdir()
        env = isolated_env(base, marker)
        install_kernelspec(env)
        write_lab_settings(env, windowing)
        for nb in notebooks:
            prepare_notebook(Path(nb), root)
        port, token = free_port(), secrets.token_hex(16)
        log_path = base / log_name
        log = open(log_path, "wb")  # noqa: SIM115
        process = subprocess.Popen(
            _server_command(app, port, token, root),
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        server = LabServer(
            url=f"http://127.0.0.1:{port}", token=token, root_dir=root, log_path=log_path, process=process, app=app
        )
        try:
            _wait_for_status(server.url, token, process, startup_timeout)
        except Exception as exc:
            raise RuntimeError(f"{exc}\n--- server log ---\n{server.log_tail()}") from exc
        yield server
    finally:
        if server is not None:
            _shutdown(server)
        kill_marked(marker)  # kernels run in sessions of their own; anything left carries our marker
        if log is not None:
            log.close()
            with contextlib.suppress(OSError):
                server_log = "jupyterlab-server.log" if app == "lab" else f"jupyter-{app}-server.log"
                shutil.copy(base / log_name, artifacts_dir() / server_log)
        shutil.rmtree(base, ignore_errors=True)


def _shutdown(server: LabServer) -> None:
    process = server.process
    if process.poll() is None:
        # Ask politely first: the server shuts its kernels down itself.
        with contextlib.suppress(Exception):
            req = urllib.request.Request(f"{server.url}/api/shutdown?token={server.token}", method="POST", data=b"")
            urllib.request.urlopen(req, timeout=5).close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
    if process.poll() is None:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)


def run_isolated(cmd: list[str], timeout: float, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run a command (e.g. the export CLI, which starts a kernel) in throwaway Jupyter dirs."""
    marker = secrets.token_hex(8)
    base = Path(tempfile.mkdtemp(prefix="jaxmagic-run-"))
    try:
        env = isolated_env(base, marker)
        install_kernelspec(env)
        return subprocess.run(
            cmd,
            env=env,
            cwd=cwd or REPO,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        kill_marked(marker)
        shutil.rmtree(base, ignore_errors=True)


# --------------------------------------------------------------------------------------
# the oracle: expected eqn counts, computed with JAX alone (no jaxmagic)
# --------------------------------------------------------------------------------------


def _sub_jaxprs(params: dict) -> Iterator[Any]:
    from jax.extend import core

    kinds = (core.ClosedJaxpr, core.Jaxpr)
    for value in params.values():
        if isinstance(value, kinds):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from (item for item in value if isinstance(item, kinds))


def count_eqns(jaxpr: Any) -> int:
    """Eqns of a (Closed)Jaxpr, recursive over every sub-jaxpr in eqn params."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return sum(1 + sum(count_eqns(sub) for sub in _sub_jaxprs(eqn.params)) for eqn in jaxpr.eqns)


_ORACLE_SCRIPT = textwrap.dedent(r"""
    import json, linecache, re, sys, traceback
    import jax
    from jax.extend import core as jcore
    from jax._src import source_info_util
    from IPython.core.interactiveshell import InteractiveShell

    KINDS = (jcore.ClosedJaxpr, jcore.Jaxpr)
    MAGIC = re.compile(r"^%%jaxpr(?:[ \t]+(.*?))?[ \t]*$")

    def subs(params):
        for value in params.values():
            if isinstance(value, KINDS):
                yield value
            elif isinstance(value, (tuple, list)):
                yield from (v for v in value if isinstance(v, KINDS))

    def walk(jaxpr, out):
        jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
        for eqn in jaxpr.eqns:
            frame = source_info_util.user_frame(eqn.source_info.traceback)
            src = None
            if frame is not None:
                code = linecache.getline(frame.file_name, frame.start_line).strip()
                src = {"line": frame.start_line, "code": code}
            out.append({"prim": eqn.primitive.name, "src": src})
            for sub in subs(eqn.params):
                walk(sub, out)
        return out

    def is_jitted(obj):
        return (callable(obj) and not isinstance(obj, type) and hasattr(obj, "lower")
                and hasattr(obj, "trace") and hasattr(obj, "_cache_size"))

    class Recorder:
        def __init__(self):
            self.functions, self.keys, self.depth = [], set(), 0

        def call(self, jitted, args, kwargs):
            leaves = jax.tree_util.tree_leaves((args, kwargs))
            if self.depth or any(isinstance(x, jax.core.Tracer) for x in leaves):
                return jitted(*args, **kwargs)
            self.depth += 1
            try:
                out = jitted(*args, **kwargs)
            finally:
                self.depth -= 1
            try:
                closed = jitted.trace(*args, **kwargs).jaxpr
            except Exception as exc:
                return out
            key = (id(jitted), str(closed.in_avals), str(closed))
            if key not in self.keys:
                self.keys.add(key)
                target = getattr(jitted, "__wrapped__", jitted)
                name = getattr(target, "__qualname__", None) or getattr(jitted, "__name__", "?")
                eqns = walk(closed, [])
                self.functions.append({"name": name, "n_eqns": len(eqns), "top_eqns": len(closed.jaxpr.eqns),
                                       "eqns": eqns, "text": str(closed)})
            return out

    class Wrapped:
        def __init__(self, rec, fn):
            object.__setattr__(self, "_rec", rec)
            object.__setattr__(self, "_fn", fn)
            for attr in ("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"):
                try:
                    self.__dict__[attr] = getattr(fn, attr)
                except AttributeError:
                    pass
        def __call__(self, *a, **k):
            return self._rec.call(self._fn, a, k)
        def __getattr__(self, name):
            return getattr(self._fn, name)
        def __get__(self, obj, objtype=None):
            import types
            return self if obj is None else types.MethodType(self, obj)

    def wrap_result(rec, result):
        if is_jitted(result):
            return Wrapped(rec, result)
        if callable(result):
            def decorator(*a, **k):
                return wrap_result(rec, result(*a, **k))
            return decorator
        return result

    nb = json.load(open(sys.argv[1], encoding="utf-8"))
    shell = InteractiveShell.instance()
    original_jit = jax.jit
    views = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        lines = src.splitlines(True)
        first = next((i for i, l in enumerate(lines) if l.strip()), None)
        match = MAGIC.match(lines[first].rstrip("\n")) if first is not None else None
        if match is None:
            shell.run_cell(src, store_history=True)
            continue
        options = (match.group(1) or "").split()
        lines[first] = "# " + lines[first]
        rec = Recorder()
        ns = shell.user_ns
        wrapped_names = [k for k, v in list(ns.items()) if is_jitted(v)]
        for k in wrapped_names:
            ns[k] = Wrapped(rec, ns[k])
        jit_aliases = [k for k, v in list(ns.items()) if v is original_jit]
        patched = lambda *a, **k: wrap_result(rec, original_jit(*a, **k))
        jax.jit = patched
        for k in jit_aliases:
            ns[k] = patched
        try:
            result = shell.run_cell("".join(lines), store_history=True)
        finally:
            jax.jit = original_jit
            for k, v in list(ns.items()):
                if isinstance(v, Wrapped):
                    ns[k] = v._fn
                elif v is patched:
                    ns[k] = original_jit
        error = result.error_in_exec or result.error_before_exec
        views.append({
            "cell_index": index,
            "options": options,
            "static": "--static" in options,
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "functions": rec.functions,
        })
    sys.stdout.write("\n@@ORACLE@@" + json.dumps(views) + "\n")
""")


@dataclass
class ExpectedFunction:
    name: str
    n_eqns: int
    top_eqns: int
    eqns: list[dict]
    text: str


@dataclass
class ExpectedView:
    cell_index: int
    static: bool
    error: str | None
    functions: list[ExpectedFunction] = field(default_factory=list)

    @property
    def total_eqns(self) -> int:
        return sum(f.n_eqns for f in self.functions)


def oracle_payload(notebook: Path, timeout: float = 240.0) -> list[dict]:
    """Run the notebook's code with plain IPython + JAX; per `%%jaxpr` cell, the distinct
    top-level jitted (function, signature) pairs it called, in first-call order, with
    their recursive eqn counts. jaxmagic is not involved in the counting."""
    base = Path(tempfile.mkdtemp(prefix="jaxmagic-oracle-"))
    marker = secrets.token_hex(8)
    try:
        env = isolated_env(base, marker)
        script = base / "oracle.py"
        script.write_text(_ORACLE_SCRIPT)
        proc = subprocess.run(
            [PYTHON, str(script), str(Path(notebook).resolve())],
            env=env,
            cwd=base,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    finally:
        kill_marked(marker)
        shutil.rmtree(base, ignore_errors=True)
    head, sep, payload = proc.stdout.rpartition("\n@@ORACLE@@")
    if proc.returncode != 0 or not sep:
        raise RuntimeError(f"oracle failed (rc={proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(payload.strip())


def views_of(payload: list[dict]) -> list[ExpectedView]:
    """The oracle's JSON payload as `ExpectedView`s."""
    views = []
    for raw in payload:
        raw = dict(raw)
        fns = [ExpectedFunction(**f) for f in raw.pop("functions")]
        raw.pop("options", None)
        views.append(ExpectedView(functions=fns, **raw))
    return views


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, make: Any) -> tuple[Path, Any]:
    """`make(folder)`'s JSON result, computed once per test run and shared by pytest-xdist's workers.

    The first worker to ask runs `make` under a file lock in a folder of the run's common temporary
    folder (where `make` may write files); the others wait for it and read its result. A `make` that
    raises leaves no result, so each worker that asks raises the same way.
    """
    import fcntl

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # each worker's base folder is one level below the run's
    folder = shared / name
    folder.mkdir(exist_ok=True)
    result = folder / "result.json"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not result.exists():
            value = make(folder)
            result.write_text(json.dumps(value), encoding="utf-8")
    return folder, json.loads(result.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------
# the browser
# --------------------------------------------------------------------------------------


@dataclass
class GuardedPage:
    """A page whose off-machine requests are aborted and recorded, with console errors."""

    page: Any
    context: Any
    blocked: list[str] = field(default_factory=list)
    offsite_seen: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: int = 0

    def screenshot(self, name: str, target: Any = None, **kwargs: Any) -> Path:
        path = artifacts_dir() / f"{name}.png"
        (target or self.page).screenshot(path=str(path), **kwargs)
        return path

    def report(self) -> str:
        return (
            f"requests={self.requests} blocked={self.blocked} offsite={self.offsite_seen} "
            f"console_errors={self.console_errors} page_errors={self.page_errors}"
        )


def launch_chromium(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def open_guarded_page(browser: Any, viewport: tuple[int, int] = (1400, 1000)) -> GuardedPage:
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, service_workers="block")
    page = context.new_page()
    guarded = GuardedPage(page=page, context=context)

    def route(route: Any) -> None:
        url = route.request.url
        if is_offsite(url):
            guarded.blocked.append(url)
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def on_request(request: Any) -> None:
        guarded.requests += 1
        if is_offsite(request.url):
            guarded.offsite_seen.append(request.url)

    def on_websocket(ws: Any) -> None:
        if is_offsite(ws.url):
            guarded.offsite_seen.append(ws.url)

    def on_console(msg: Any) -> None:
        if msg.type == "error":
            loc = msg.location or {}
            guarded.console_errors.append(f"{msg.text} @ {loc.get('url', '')}:{loc.get('lineNumber', '')}")

    def route_ws(ws: Any) -> None:  # never connected to the server: the page sees it close
        guarded.blocked.append(ws.url)
        ws.close()

    context.route("**/*", route)
    if hasattr(context, "route_web_socket"):  # Playwright >= 1.48
        context.route_web_socket(lambda url: is_offsite(url), route_ws)
    context.on("request", on_request)
    page.on("websocket", on_websocket)
    page.on("console", on_console)
    page.on("pageerror", lambda exc: guarded.page_errors.append(str(exc)))
    page.set_default_timeout(30_000)
    return guarded


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def guarded_page(chromium_browser: Any) -> Iterator[GuardedPage]:
    guarded = open_guarded_page(chromium_browser)
    try:
        yield guarded
    finally:
        print(f"[browser] {guarded.report()}")
        guarded.context.close()


# --------------------------------------------------------------------------------------
# one jaxmagic view
# --------------------------------------------------------------------------------------

EQN_NODES = "g.jm-node.jm-eqn[data-node-id]"

_VISIBLE_EQNS_JS = """
(root) => {
  const seen = new Map();
  for (const el of root.querySelectorAll('g.jm-node.jm-eqn[data-node-id]')) {
    const visible = el.checkVisibility ? el.checkVisibility({visibilityProperty: true, opacityProperty: false})
                                       : el.getClientRects().length > 0;
    if (!visible) continue;
    const id = el.getAttribute('data-node-id');
    seen.set(id, (seen.get(id) || 0) + 1);
  }
  const dups = [...seen.entries()].filter(([, n]) => n > 1).map(([id]) => id);
  return {count: seen.size, duplicates: dups};
}
"""


def poll(fn: Any, timeout: float, interval: float = 0.2) -> Any:
    """Call fn until it returns a truthy value or the time is up; returns the last value."""
    deadline = time.monotonic() + timeout
    value = fn()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = fn()
    return value


class ViewDriver:
    """Drives one `.jm-root` by the front-end contract (classes and button texts)."""

    def __init__(self, root: Any):
        self.root = root

    def button(self, label: str) -> Any:
        exact = re.compile(rf"^\s*{re.escape(label)}\s*$", re.I)
        buttons = self.root.locator("button, [role=button]").filter(has_text=exact)
        return buttons.first if buttons.count() else self.root.get_by_text(label, exact=True).first

    def click_button(self, label: str) -> None:
        self.button(label).click(timeout=10_000)

    @property
    def tabs(self) -> Any:
        return self.root.locator(".jm-tab")

    def select_tab(self, i: int) -> None:
        if self.tabs.count() > 1 or i > 0:
            tab = self.tabs.nth(i)
            switching = tab.get_attribute("aria-selected") != "true"
            before = self.drawn_nodes() if switching else None
            tab.click(timeout=10_000)
            if switching:
                # The drawing follows a frame or more later (longer on a loaded machine); until then the
                # previous tab's nodes are on the page under the same ids (n0, n1, ...). Two tabs that
                # draw exactly alike never differ, hence no assert: the wait just ends.
                poll(lambda: (now := self.drawn_nodes()) and now != before, 5)

    def drawn_nodes(self) -> list[list[str]]:
        """[node id, text] of every visible eqn node, read in one go (a consistent snapshot)."""
        return self.visible_nodes().evaluate_all(
            "els => els.map((e) => [e.getAttribute('data-node-id'), e.textContent])"
        )

    def eqn_stats(self) -> dict:
        return self.root.evaluate(_VISIBLE_EQNS_JS)

    def visible_eqn_count(self) -> int:
        return self.eqn_stats()["count"]

    def settle_count(self, expected: int | None = None, timeout: float = 15.0) -> int:
        """Visible eqn count once it equals `expected` or has stopped changing."""
        last = {"n": -1, "stable": 0}

        def ready() -> bool:
            n = self.visible_eqn_count()
            if expected is not None and n == expected:
                return True
            last["stable"] = last["stable"] + 1 if n == last["n"] else 0
            last["n"] = n
            return expected is None and n > 0 and last["stable"] >= 5

        poll(ready, timeout)
        return self.visible_eqn_count()

    def expand_all_count(self, expected: int, timeout: float = 20.0) -> int:
        self.click_button("Expand all")
        return self.settle_count(expected, timeout)

    def visible_nodes(self) -> Any:
        return self.root.locator(EQN_NODES).filter(visible=True)

    def details_text(self) -> str:
        return self.root.locator(".jm-details").first.inner_text()

    def match_count(self) -> int | None:
        """The number of matches the search reports ("3 matches", "1 of 3 matches")."""
        text = self.root.locator(".jm-match-count").first.inner_text()
        m = re.search(r"(\d+)\s*match", text) or re.search(r"(\d+)(?!.*\d)", text)
        return int(m.group(1)) if m else None

    def selected_lines(self) -> list[str]:
        return self.root.locator(".jm-text .jm-line-selected").all_inner_texts()

    def text_line(self, pattern: str) -> Any:
        return self.root.locator(".jm-text .jm-line[data-line]").filter(has_text=re.compile(pattern)).first


def prim_pattern(prim: str) -> str:
    return rf"(?<![\w.]){re.escape(prim)}(?![\w])"


def pick_node_to_click(driver: ViewDriver, fn: ExpectedFunction) -> tuple[Any, dict] | None:
    """A visible node whose primitive maps to exactly one source line in the oracle's view.

    Returns (node locator, {"prim", "line", "code"}); prefers longer primitive names so
    `sin` is never mistaken for part of another word.
    """
    by_prim: dict[str, set] = {}
    for eqn in fn.eqns:
        src = eqn["src"]
        by_prim.setdefault(eqn["prim"], set()).add((src["line"], src["code"]) if src and src["code"] else None)
    candidates = sorted(
        (p for p, srcs in by_prim.items() if len(srcs) == 1 and None not in srcs), key=len, reverse=True
    )
    # one snapshot of ids and texts, and the node found again by its id, not by a position in a
    # live list that a re-drawing view can reorder
    drawn = driver.drawn_nodes()
    for prim in candidates:
        for node_id, text in drawn:
            if re.search(prim_pattern(prim), text):
                ((line, code),) = by_prim[prim]
                node = driver.root.locator(f'{EQN_NODES}[data-node-id="{node_id}"]').filter(visible=True).first
                return node, {"prim": prim, "line": line, "code": code}
    return None


def click_node_and_check(driver: ViewDriver, fn: ExpectedFunction, label: str) -> dict:
    """Click a node whose source line the oracle knows; the details must show primitive,
    where the line is (`file.py:12`, `cell [3], line 12`) and the code text, and the jaxpr text must
    mark that eqn's line."""
    picked = pick_node_to_click(driver, fn)
    assert picked is not None, f"{label}: no visible node shows a primitive of {fn.name} with one source line"
    node, expect = picked
    # a wide graph opens on a legible part of it: pan the node into view, as a reader drags it there
    node.evaluate(
        "n => { const c = n.closest('.jm-canvas'); c && c.jmProbe && c.jmProbe.centre('N:' + n.getAttribute('data-node-id')); }"
    )
    node.click(timeout=10_000)
    ok = poll(lambda: expect["code"] in driver.details_text(), 10)
    details = driver.details_text()
    assert ok, f"{label}: clicked a {expect['prim']} node; details lack {expect['code']!r}: {details!r}"
    assert re.search(prim_pattern(expect["prim"]), details), f"{label}: details lack the primitive: {details!r}"
    # `train.py:12` for a file, `cell [3], line 12` (or `line 12`) for a notebook cell (widgets/ui/source-text.js)
    assert re.search(rf"(?::|\bline ){expect['line']}(?!\d)", details), (
        f"{label}: details lack the line {expect['line']}: {details!r}"
    )
    assert poll(lambda: driver.selected_lines(), 10), f"{label}: no .jm-line-selected in .jm-text after a click"
    assert any(re.search(prim_pattern(expect["prim"]), t) for t in driver.selected_lines()), (
        f"{label}: the selected text line is not the {expect['prim']} eqn: {driver.selected_lines()}"
    )
    return expect


def expected_function(jitted: Any, *args: Any, **kwargs: Any) -> ExpectedFunction:
    """The oracle's view of one jitted function, in this process (for pages built here)."""
    import linecache

    from jax._src import source_info_util

    closed = jitted.trace(*args, **kwargs).jaxpr
    eqns: list[dict] = []

    def walk(jaxpr: Any) -> None:
        for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns:
            frame = source_info_util.user_frame(eqn.source_info.traceback)
            src = None
            if frame is not None:
                src = {"line": frame.start_line, "code": linecache.getline(frame.file_name, frame.start_line).strip()}
            eqns.append({"prim": eqn.primitive.name, "src": src})
            for sub in _sub_jaxprs(eqn.params):
                walk(sub)

    walk(closed)
    assert len(eqns) == count_eqns(closed)
    target = getattr(jitted, "__wrapped__", jitted)
    return ExpectedFunction(
        name=getattr(target, "__qualname__", "?"),
        n_eqns=len(eqns),
        top_eqns=len(closed.jaxpr.eqns),
        eqns=eqns,
        text=str(closed),
    )


def check_view_counts(
    driver: ViewDriver, view: ExpectedView, label: str, on_expanded: Any = None, timings: dict | None = None
) -> None:
    """The view drew a graph; its title, tabs and per-tab eqn counts (after Expand all)
    agree with the oracle."""
    root = driver.root
    root.wait_for(state="visible", timeout=30_000)
    assert poll(lambda: driver.visible_eqn_count() > 0, 20), (
        f"{label}: the graph rendered no eqn nodes; the view reads {root.inner_text()[:600]!r}"
    )
    header = root.inner_text()
    assert re.search(rf"(?<!\d){view.total_eqns} eqns", header), (
        f"{label}: expected the title to say {view.total_eqns} eqns; view text starts {header[:300]!r}"
    )
    n_tabs = driver.tabs.count()
    assert n_tabs == len(view.functions), (
        f"{label}: {n_tabs} tabs, expected {len(view.functions)} ({[f.name for f in view.functions]})"
    )
    for i, fn in enumerate(view.functions):
        t0 = time.monotonic()
        driver.select_tab(i)
        tab_text = driver.tabs.nth(i).inner_text()
        assert fn.name.split(".")[-1] in tab_text, f"{label}: tab {i} reads {tab_text!r}, expected {fn.name}"
        count = driver.expand_all_count(fn.n_eqns)
        stats = driver.eqn_stats()
        assert not stats["duplicates"], f"{label} {fn.name}: node ids drawn twice: {stats['duplicates']}"
        assert count == fn.n_eqns, f"{label} {fn.name}: {count} eqn nodes after Expand all, expected {fn.n_eqns}"
        driver.click_button("Fit")
        if timings is not None:
            timings[f"{label}/{fn.name} expand"] = round(time.monotonic() - t0, 2)
        if on_expanded is not None:
            on_expanded(i)
