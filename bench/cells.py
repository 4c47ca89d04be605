"""First-call cells under every magic, as ratios against the same cell without one, in one run.

    .venv/bin/python bench/cells.py                          # mlp_grad(280): ~3.9k eqns
    .venv/bin/python bench/cells.py "mlp_grad(700)" --repeats 2   # ~9.8k eqns
    .venv/bin/python bench/cells.py "mlp_grad(280)" --magics jaxpr --profile jaxpr
    .venv/bin/python bench/cells.py "mlp_grad(700)" --magics grad_graph --profile grad_graph --sort tottime

A real IPython shell (IPython's own test shell, jaxmagic loaded as `%load_ext` does) runs
`out = fn(*args); jax.block_until_ready(out)` on a freshly jitted program from bench/programs.py
(so every run traces, lowers and compiles: the first call of a training step), plain and under
each magic in turn; each run's wall time covers the whole cell, the view built and displayed
after it included (post_run_cell), as a user waits for it. No widget front end: the browser's
part is bench/lab.py. The first magic cell of a process also pays for importing the view code
once; best-of hides that, the per-run list shows it. Each cell starts from a collected heap
with earlier views closed (`_clean_heap`). `--profile MAGIC` prints a cProfile of
jaxmagic's own functions for that magic's runs. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import sys
import time
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MAGICS = ("jaxpr", "trace", "grad_graph", "sharding", "prng")
BODY = "out = fn(*args)\n_ = jax.block_until_ready(out)\n"


def run_cell(shell, program: str, magic: str, profile: bool, sort: str = "cumulative") -> float:
    """Seconds for one first-call cell (a new jit of `program`), plain when `magic` is ""."""
    shell.run_cell(f"fn, args = programs.{program}")
    cell = (f"%%{magic}\n" + BODY) if magic else BODY
    _clean_heap()
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    result = shell.run_cell(cell)
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - start
    if profiler:
        pstats.Stats(profiler).sort_stats(sort).print_stats("jaxmagic", 40)
    if not result.success:
        raise RuntimeError(f"%%{magic or 'plain'} cell failed: {result.error_in_exec!r}")
    return seconds


def _clean_heap() -> None:
    """Every cell starts from the same heap: the views earlier cells showed are closed (a widget
    lives in ipywidgets' registry until closed, so each magic cell would grow the heap every
    later cell's garbage collections walk) and a full collection runs first. Without this the
    order of the interleaved cells decides which one pays for the garbage of the one before:
    plain cells after magic cells measured up to 1.4x slower than alone."""
    try:
        import ipywidgets

        ipywidgets.Widget.close_all()
    except Exception:  # no widgets made, or an ipywidgets without close_all
        pass
    gc.collect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program", nargs="?", default="mlp_grad(280)", help="a bench/programs.py call")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of plain and every magic, interleaved")
    parser.add_argument("--magics", default=",".join(MAGICS), help="comma-separated magics")
    parser.add_argument("--profile", default="", help='profile this magic\'s runs ("plain" for the cells without one)')
    parser.add_argument("--sort", default="cumulative", help='the profile\'s order ("tottime": own time first)')
    args = parser.parse_args()
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    shell.run_line_magic("load_ext", "jaxmagic")
    shell.run_cell("from bench import programs\nimport jax")
    magics = [""] + [m for m in args.magics.split(",") if m]
    times: dict[str, list[float]] = {m: [] for m in magics}
    for _ in range(args.repeats):
        for magic in magics:
            times[magic].append(run_cell(shell, args.program, magic, (magic or "plain") == args.profile, args.sort))
    plain = sorted(times[""])
    print(f"first-call cell of {args.program}: best and median of {args.repeats} interleaved runs")
    for magic, runs in times.items():
        ordered = sorted(runs)
        best, median = ordered[0], ordered[len(ordered) // 2]
        print(
            f"  {('%%' + magic) if magic else 'plain':<13} best {best:6.3f} s ({best / plain[0]:.2f}x)  "
            f"median {median:6.3f} s ({median / plain[len(plain) // 2]:.2f}x)  runs {[round(t, 3) for t in runs]}"
        )


if __name__ == "__main__":
    main()
