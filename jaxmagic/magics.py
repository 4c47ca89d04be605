"""The only IPython glue: options, help text, and a capture around each magic cell.

The cell runs natively. An input transformer turns the `%%jaxpr ...` line into a
comment (line numbers stay), `pre_execute` starts a capture and `post_run_cell` stops
it and displays the view (`post_execute` for a silent run: `%run` of a script or notebook).
So tracebacks, top-level `await`, "Run All stops on error", stdout and the displayed value
are IPython's own. Cells run inside a magic cell (`get_ipython().run_cell`, `%run`,
`%%capture`) each get their own entry on a stack, so the outer cell keeps its view;
`%%time` above a magic records the body it runs once, `%%timeit` gets a one-line note
instead of a view. The registered cell magics are the fallback for bad options (IPython
shows our usage error and does not run the cell) and for code that calls `run_cell_magic`
directly.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from . import api, kinds
from .capture.session import CaptureSession
from .capture.source import remember_cell
from .magic_options import check_name, parse_options

MAGIC_VIEWS = kinds.MAGIC_VIEWS  # magic name -> the kind it shows (jaxmagic/kinds.py)
GRAD_MAGICS = frozenset({"grad_graph"})  # magics whose capture takes the exact vjp split of eager grads
_MAGIC_LINE = re.compile(r"^%%(\w+)(?:[ \t]+(.*?))?[ \t]*$")


def _shared_options(fn: Callable) -> Callable:
    """Options every magic takes."""
    fn = argument(
        "--present",
        action="store_true",
        help="open the widget in presentation mode (large text, thick lines, high contrast, no "
        "clutter: for a projector); the widget's Present button toggles it",
    )(fn)
    fn = argument(
        "--static",
        action="store_true",
        help="show the static HTML view (summary and picture) instead of the interactive widget",
    )(fn)
    fn = argument(
        "--force", action="store_true", help="with -n: store the capture even where VAR already names something else"
    )(fn)
    fn = argument(
        "-n",
        "--name",
        metavar="VAR",
        help="store the Capture (see jaxmagic.capture) in the user namespace as VAR (a variable name "
        "that is free, or holds an older capture; --force to replace anything else)",
    )(fn)
    return magic_arguments()(fn)


def _graph_options(fn: Callable) -> Callable:
    fn = argument(
        "--vmap",
        action="store_true",
        help="also record vmap batch dimensions (the vmap mode of the graph): programs that use "
        "jax.vmap are traced once more, so Python side effects inside them run again",
    )(fn)
    fn = argument(
        "--values",
        action="store_true",
        help="also record forward values: a summary (shape, dtype, min/max/mean, NaN/Inf counts, "
        "tiny arrays printed) of every variable of each function's first call; the program "
        "is evaluated a second time, eqn by eqn (up to about 2 s)",
    )(fn)
    return _shared_options(fn)


def _grad_options(fn: Callable) -> Callable:
    fn = argument(
        "--values",
        action="store_true",
        help="also record gradient values: the forward and backward passes of each eager grad / "
        "value_and_grad (and the first call of each jitted function) are evaluated again on "
        "the call's arguments, eqn by eqn (up to about 2 s each), and every cotangent and "
        "gradient is summarised (shape, min/max/mean/norm, NaN/Inf counts)",
    )(fn)
    return _shared_options(fn)


def _trace_options(fn: Callable) -> Callable:
    fn = argument(
        "--storm",
        type=int,
        default=None,
        metavar="N",
        help="call it a recompile storm when one function recompiles N times or more (default 5)",
    )(fn)
    fn = argument(
        "--sync",
        action="store_true",
        help="wait for each call's outputs (block_until_ready) to measure exact device time; "
        "this changes the program's timing, so it is off by default and device time is "
        "then an upper bound seen without blocking",
    )(fn)
    return _shared_options(fn)


def _check(args: Any, body: str, namespace: dict) -> Any:
    """Values argparse accepts but that mean nothing or would break the user's namespace: a usage
    error, the cell is not run."""
    storm = getattr(args, "storm", None)
    if storm is not None and storm < 1:
        raise UsageError(f"--storm must be a positive number of recompiles, got {storm}")
    check_name(args.name, body, namespace, args.force)
    return args


def _session(magic: str, args: Any, namespace: dict) -> CaptureSession:
    storm = getattr(args, "storm", None)
    return CaptureSession(
        namespace,
        values=getattr(args, "values", False),
        vmap=getattr(args, "vmap", False),
        sync=getattr(args, "sync", False),
        grads=magic in GRAD_MAGICS,
        shardings=magic == "sharding",
        keys=magic == "prng",
        finish=functools.partial(api.complete_findings, storm=storm),
        prebuild=api.prebuild_for(magic),
    )


@dataclass
class _Pending:
    magic: str
    args: Any
    session: CaptureSession | None  # None: recording could not start (`failure` says why), or `note`
    failure: BaseException | None = None
    depth: int = 0  # how many cells were running, this one included, when it started
    info: Any = None  # the cell's ExecutionInfo once `pre_run_cell` saw it; None: a silent run
    note: str | None = None  # no recording: the one line shown instead of the view
    wrapper: str | None = None  # the cell magic above ours (`%%time`), if any
    nested: int = 0  # magic cells run inside this one (their calls are in their own views)


# Cell magics that may stand above ours. `%%time` runs the body once, natively (IPython's
# `transform_cell`, then `exec`): it is recorded as the cell would be. `%%timeit` runs it many
# times to time it; recording every run would change what it measures and show one view per loop.
TIMEIT_NOTE = (
    "%%{magic} under %%timeit: not recorded, because the body runs many times and recording "
    "would change the timing it measures. Run the cell under %%{magic} alone (or under %%time) "
    "for the view."
)
OTHER_NOTE = (
    "%%{magic} under %%{wrapper}: no view, because %%{wrapper} ran the body in a way jaxmagic "
    "cannot record. Run the cell under %%{magic} alone for the view."
)


def parse_magic_line(cell: str, magics: JaxMagics) -> tuple[str, Any] | None:
    """(magic, parsed options) if the cell starts with one of our cell magics and valid options.

    None otherwise, and also for a cell whose body starts with another cell magic: IPython then
    calls our registered magic, which says why (`_check_body`) without running the cell.
    """
    lines = iter(cell.splitlines())
    for line in lines:
        if not line.strip():
            continue
        match = _MAGIC_LINE.match(line)
        if not match or match.group(1) not in MAGIC_VIEWS:
            return None
        magic = match.group(1)
        body = "\n".join(lines)
        try:
            args = _check(
                parse_options(getattr(magics, magic), magic, match.group(2) or ""), body, magics.shell.user_ns
            )
        except UsageError:
            return None  # IPython runs the registered magic, which shows the usage error
        return None if _second_magic(body) else (magic, args)
    return None


def _wrapped_magic(cell: str, magics: JaxMagics) -> tuple[str, str, Any] | None:
    """(wrapper, magic, options) for a cell whose first line is another cell magic (`%%time`)
    and whose body starts with one of ours with valid options."""
    lines = cell.splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        match = _MAGIC_LINE.match(line)
        if not match or match.group(1) in MAGIC_VIEWS:
            return None
        parsed = parse_magic_line("\n".join(lines[i + 1 :]), magics)
        return None if parsed is None else (match.group(1), parsed[0], parsed[1])
    return None


def _second_magic(body: str) -> str | None:
    """The cell magic a body starts with (`%%trace` under `%%jaxpr`), if any."""
    for line in body.splitlines():
        if line.strip():
            return line.strip().split()[0] if line.lstrip().startswith("%%") else None
    return None


def _check_body(magic: str, cell: str) -> None:
    """Two cell magics on one cell cannot both see it run: say so, and do not run it."""
    second = _second_magic(cell)
    if second is not None:
        raise UsageError(
            f"%%{magic} and {second} cannot be combined in one cell: each cell magic runs the "
            f"whole cell. Run them in separate cells, or use `with jaxmagic.capture() as cap:` "
            f"and jaxmagic.show(cap, view) for several views of one run."
        )


@magics_class
class JaxMagics(Magics):
    """`%%jaxpr`, `%%trace`, `%%grad_graph`, `%%sharding`, `%%prng` and `%jaxmagic`."""

    shell: Any  # always a shell once loaded (IPython's trait allows None only before)

    def __init__(self, shell: Any):
        super().__init__(shell)
        # One entry per running cell that asked for a view, outermost first: a cell can run
        # others (`get_ipython().run_cell`, `%run`, `%%capture`), each with its own entry.
        self._running: list[_Pending] = []
        self._depth = 0  # cells running now (pre_execute .. post_execute), nested ones included
        # What `transform` found in the cell it transformed last: ("magic", magic, args) or
        # ("wrapped", wrapper, magic, args). IPython transforms a cell right before `pre_execute`,
        # which takes it; a transform not followed by one (check_complete, %%time's own) is stale
        # and replaced by the next.
        self._stash: tuple | None = None
        # IPython before 8 keeps no {cell file: execution count} map: the extension keeps one
        self._names_cells = not isinstance(getattr(getattr(shell, "compile", None), "_filename_map", None), dict)

    # -- cell magics: reached only for bad options or a direct run_cell_magic ----------
    @_graph_options
    @cell_magic
    def jaxpr(self, line: str, cell: str) -> None:
        """Run the cell and show the computation graph of every jitted call in it.

        Each distinct jitted function and argument signature gets a tab: primitives as
        nodes, variables as edges labelled with their avals, sub-jaxprs (jit, cond,
        while, scan, custom_jvp/vjp, remat, shard_map) and name scopes as collapsible
        groups, and the jaxpr text beside it.
        """
        self._run_fallback("jaxpr", line, cell)

    @_trace_options
    @cell_magic
    def trace(self, line: str, cell: str) -> None:
        """Run the cell and show a timeline of every jitted call in it, and why each recompile happened.

        One lane per function: trace, lower, compile and execute spans (dispatch time,
        and device time where the outputs were seen ready), cache hits and misses. Each
        miss names the argument that changed, from what to what (from JAX's own
        explanation and jaxmagic's comparison of signatures) and the usual fix. Findings:
        recompile storms, print() that only runs while tracing, globals frozen in as
        constants, Python loops unrolled into huge programs, compile time dominating.
        """
        self._run_fallback("trace", line, cell)

    @_grad_options
    @cell_magic
    def grad_graph(self, line: str, cell: str) -> None:
        """Run the cell and show the forward and backward graph of every differentiation in it.

        Eager jax.grad, value_and_grad and vjp calls get JAX's exact split: the forward
        pass, the backward pass (mirrored, gradients flowing right to left) and the
        residuals saved between them, each backward op linked to the forward op it
        differentiates, recomputed (checkpointed) eqns marked. Differentiation inside a
        jitted train step is shown in the step's own graph, forward and backward told
        apart by JAX's name stacks. --values adds the cotangent of every edge and the
        gradient of every input leaf, with NaN/Inf, vanishing and exploding findings.
        """
        self._run_fallback("grad_graph", line, cell)

    @_shared_options
    @cell_magic
    def sharding(self, line: str, cell: str) -> None:
        """Run the cell and show where every array lives and what each jitted call communicates.

        The meshes (axis names, sizes, devices); every jax.Array bound in the notebook at the
        end of the cell or returned by a jitted call, as a grid of its blocks coloured by the
        device holding each (replicated blocks show every holder); for each jitted function its
        input and output shardings (compiled.input_shardings / output_shardings) and the
        collectives XLA inserted (all-gather, all-reduce, reduce-scatter, all-to-all,
        collective-permute) with sizes and replica groups; shard_map bodies with their specs.
        """
        self._run_fallback("sharding", line, cell)

    @_shared_options
    @cell_magic
    def prng(self, line: str, cell: str) -> None:
        """Run the cell and show the tree of every PRNG key it touched, with key reuse as a bug.

        Roots (jax.random.key, PRNGKey, wrap_key_data, keys from earlier cells), splits,
        fold_ins and clones, and every consumption by a sampler (normal, uniform, bernoulli,
        categorical, ...) with its source line: eager calls and calls inside jitted functions,
        scans and while loops (one node per loop, not per iteration). Keys are told apart by
        their data, so typed and legacy keys of one stream, or PRNGKey(0) made twice, are one
        key. A key consumed twice, split after use, or consumed on every iteration of a loop
        is red. JAX's own jax_debug_key_reuse setting is left as it is.
        """
        self._run_fallback("prng", line, cell)

    def _run_fallback(self, magic: str, line: str, cell: str) -> None:
        # raises UsageError: shown as usage
        args = _check(parse_options(getattr(self, magic), magic, line), cell, self.shell.user_ns)
        _check_body(magic, cell)
        for outer in self._running:  # a direct run_cell_magic inside a magic cell: its calls are its own
            outer.nested += 1
        try:
            session = _session(magic, args, self.shell.user_ns)
            session.start()
        except Exception as exc:  # run the cell unrecorded, and say why below it
            session, failure = None, exc
        error: BaseException | None = None
        try:
            exec(compile(cell, "<jaxmagic cell>", "exec"), self.shell.user_ns)
        except BaseException as exc:
            error = exc
            raise
        finally:
            if session is None:
                _report_own_failure(magic, "start recording", failure)
            else:
                try:
                    capture = session.stop(error)
                except Exception as exc:  # boundary: our failure is said below the cell, never raised
                    _close_quietly(session)
                    _report_own_failure(magic, "finish recording", exc)
                else:
                    self._show(magic, args, capture)

    # -- line magic --------------------------------------------------------------------
    @line_magic
    def jaxmagic(self, line: str = "") -> None:
        """Show the JAX version, backend, devices, relevant config flags and the magics."""
        from .environment import environment_report

        print(environment_report(sorted(MAGIC_VIEWS)))

    # -- hooks -------------------------------------------------------------------------
    @property
    def _pending(self) -> _Pending | None:
        """The innermost running cell's entry (None when no magic cell runs)."""
        return self._running[-1] if self._running else None

    def transform(self, lines: list[str]) -> list[str]:
        """Input transformer: comment out a valid magic line so the cell runs natively, and leave
        what it found for `pre_execute`, which starts the recording."""
        cell = "".join(lines)
        parsed = parse_magic_line(cell, self)
        if parsed is None:
            wrapped = _wrapped_magic(cell, self)
            self._stash = None if wrapped is None else ("wrapped", *wrapped)
            return lines
        self._stash = ("magic", *parsed)
        lines = list(lines)
        for i, line in enumerate(lines):
            if line.strip():
                lines[i] = "# " + line
                break
        return lines

    def pre_execute(self) -> None:
        """Every run of a cell, silent ones (`%run` of a script or notebook) included: start the
        recording the cell's magic line asks for."""
        stash, self._stash = self._stash, None
        self._depth += 1
        self._drop_stale(self._depth)
        if stash is None:
            return
        if stash[0] == "wrapped":
            wrapper, magic, args = stash[1:]
            if wrapper != "time":
                note = TIMEIT_NOTE if wrapper == "timeit" else OTHER_NOTE
                self._running.append(
                    _Pending(
                        magic,
                        args,
                        None,
                        depth=self._depth,
                        wrapper=wrapper,
                        note=note.format(magic=magic, wrapper=wrapper),
                    )
                )
                return
        else:
            wrapper, magic, args = None, *stash[1:]
        for outer in self._running:  # their views say where the nested cell's calls went
            outer.nested += 1
        entry = _Pending(magic, args, None, depth=self._depth, wrapper=wrapper)
        try:
            entry.session = _session(magic, args, self.shell.user_ns)
            entry.session.start()
        except Exception as exc:  # the cell runs unrecorded; the box below it says why
            entry.session, entry.failure = None, exc
        self._running.append(entry)

    def _drop_stale(self, depth: int) -> None:
        """Undo recordings of cells at `depth` or deeper that never reached their end (nothing of
        them is shown any more); outer cells still running keep theirs."""
        while self._running and self._running[-1].depth >= depth:
            stale = self._running.pop()
            if stale.session is not None:
                try:
                    stale.session.stop()
                except BaseException:
                    _close_quietly(stale.session)

    def pre_run_cell(self, info: Any = None) -> None:
        raw = getattr(info, "raw_cell", None)
        if raw and self._names_cells:
            _remember_cell(self.shell, raw, self.shell.execution_count)
        top = self._pending
        if top is not None and top.depth == self._depth and top.info is None:
            top.info = info if info is not None else True  # it ends in post_run_cell, with its result

    def post_execute(self) -> None:
        """A silent run (no `post_run_cell` follows) ends here: its view is shown now."""
        self._stash = None  # a transform no run took (%%time's own): not the next cell's
        depth, self._depth = self._depth, max(self._depth - 1, 0)
        top = self._pending
        if top is None or top.depth != depth or top.info is not None:
            return
        self._running.pop()
        self._finish(top, getattr(self.shell, "last_execution_result", None))

    def post_run_cell(self, result: Any = None) -> None:
        self._drop_stale(self._depth + 2)  # cells run inside this one that never reached their end
        top = self._pending
        if top is None or top.depth <= self._depth or top.info is None:
            return  # not a cell that asked for a view, or one that ended in post_execute
        self._running.pop()
        self._finish(top, result)

    def _finish(self, pending: _Pending, result: Any) -> None:
        """Stop the cell's recording and show its view (or the line that says why not)."""
        if pending.note is not None:
            if pending.nested == 0:  # a cell the wrapper ran through run_cell had its own view
                _show_note(pending.note)
            return
        if pending.session is None:
            _report_own_failure(pending.magic, "start recording", pending.failure)
            return
        if pending.nested:
            pending.session.capture.notes.append(
                f"{pending.nested} magic cell(s) run inside this one (run_cell, %run, run_cell_magic) recorded "
                "their own calls: those calls are in their own views, not in this one"
            )
        try:
            capture = pending.session.stop(getattr(result, "error_in_exec", None))
        except KeyboardInterrupt:  # the cell had finished: only our work stops
            _close_quietly(pending.session)
            _report_interrupted(pending.magic)
            return
        except Exception as exc:  # boundary: our failure is said below the cell, never raised
            _close_quietly(pending.session)
            _report_own_failure(pending.magic, "finish recording", exc)
            return
        if getattr(result, "error_before_exec", None) is not None:
            return  # the cell never ran (syntax error): nothing to show
        self._show(pending.magic, pending.args, capture)

    def _show(self, magic: str, args: Any, capture: Any) -> None:
        try:
            if args.name:
                self.shell.user_ns[args.name] = capture
            view = MAGIC_VIEWS[magic]
            options = {"storm": args.storm} if getattr(args, "storm", None) is not None else {}
            if args.static:
                from IPython.display import HTML, display

                display(HTML(api.static_html(capture, view, **options)))
            else:
                api.show(capture, view, present=args.present, **options)
        except KeyboardInterrupt:
            _report_interrupted(magic)
        except Exception as exc:  # boundary: our failure is said below the cell, never raised
            _report_own_failure(magic, "build the view", exc)


def _show_note(text: str) -> None:
    """One line below the cell where a view would be: why there is none."""
    try:
        from IPython.display import display

        from .views.html_parts import esc

        display(
            {"text/plain": text, "text/html": f'<div style="font-size:13px;color:#555">{esc(text)}</div>'}, raw=True
        )
    except Exception:  # boundary: a front end that cannot display: one line on stderr
        import sys

        print(text, file=sys.stderr)


def _close_quietly(session: CaptureSession) -> None:
    """Undo a session's hooks after its `stop` failed; an undo that fails too is the last word."""
    try:
        session.close()
    except Exception:  # boundary: the failure that brought us here is reported already
        pass


def _report_interrupted(magic: str) -> None:
    from .views.failure import show_interrupted

    show_interrupted(magic)


def _report_own_failure(magic: str, what: str, exc: BaseException | None) -> None:
    """Our failure is never the user's: a box below the cell (views/failure.py), the cell's
    output, result and exception untouched."""
    from . import __version__
    from .views.failure import show_failure

    show_failure(magic, what, exc if exc is not None else RuntimeError("unknown failure"), __version__)


def _remember_cell(shell: Any, raw: str, number: Any) -> None:
    """Which file the cell `raw`, run as `In [number]`, is compiled as, for "cell [3], line 5"
    (capture/source.py) where IPython keeps no map (before 8): the shell's own compiler names it."""
    try:
        file = shell.compile.get_code_name(raw, raw, number)
    except Exception:  # boundary: an IPython whose compiler names cells otherwise: lines go without cells
        return
    if isinstance(file, str) and isinstance(number, int):
        remember_cell(file, number)


def _remember_history(shell: Any) -> None:
    """The cells run before the extension was loaded (this one included), from IPython's history."""
    raw_cells = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []
    for number, raw in enumerate(raw_cells):
        if number and isinstance(raw, str) and raw:
            _remember_cell(shell, raw, number)


_installed: dict[int, JaxMagics] = {}


_EVENTS = ("pre_execute", "pre_run_cell", "post_execute", "post_run_cell")


def load_ipython_extension(shell: Any) -> None:
    """Register the magics and hooks once per shell: loading again (`%load_ext` and a direct call
    of `jaxmagic.load_ipython_extension`) changes nothing, so every cell gets one view."""
    if id(shell) in _installed:
        return
    magics = JaxMagics(shell)
    shell.register_magics(magics)
    shell.input_transformers_cleanup.insert(0, magics.transform)
    for event in _EVENTS:
        shell.events.register(event, getattr(magics, event))
    _installed[id(shell)] = magics
    if magics._names_cells:
        _remember_history(shell)


def unload_ipython_extension(shell: Any) -> None:
    magics = _installed.pop(id(shell), None)
    if magics is None:
        return
    if magics.transform in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(magics.transform)
    for event in _EVENTS:
        try:
            shell.events.unregister(event, getattr(magics, event))
        except ValueError:
            pass
    magics._drop_stale(0)  # unloaded from inside a magic cell: its recording is undone now
    for name in MAGIC_VIEWS:
        shell.magics_manager.magics["cell"].pop(name, None)
    shell.magics_manager.magics["line"].pop("jaxmagic", None)
