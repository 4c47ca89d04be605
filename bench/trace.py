"""`%%trace` benchmarks, as ratios against plain JAX measured in the same run.

    .venv/bin/python bench/trace.py

1. 10,000 calls of a tiny jitted function, plain vs inside a capture (goal at most 1.2x; the routed
   call alone, before anything is recorded, is about 1.14x).
2. A 200-step training loop (a 4-layer transformer train step, loss read every 20 steps),
   plain vs inside a capture (goal at most 1.02x).
3. A capture of 100,000 calls: memory it holds (tracemalloc), timeline document build
   time and size (logical JSON and as a widget sends it).
4. 10,000 tiny calls through references the namespace does not hold: a jitted attribute
   made in an object's `__init__`, and Flax's `nnx.jit` (each call of JAX's jitted type is
   routed through the capture, capture/jit/call_hook.py).
5. JAX's jit tutorial's `jax.jit(f)(i)` made anew every iteration (a cache hit in JAX's eyes):
   time per call (goal at most 1.2x), and the memory a capture of 16,000 such calls holds (tracemalloc).
6. Freshly jitted distinct lambdas (each compiled): seconds per lambda.
7. A first-call cell of a ~4k-eqn jitted grad (`mlp_grad(280)`): build, compile and run, plain vs
   captured as `%%trace` captures (the view built after the cell is not included).
8. A 200-step loop of an Optax Adam step that donates its parameters and optimizer state (301 and
   901 arrays a step): each call's donated arrays are noted for the donated-then-read finding.
9. 200-step train loops written with Equinox (`eqx.filter_jit`) and Flax NNX (`nnx.jit`): the jitted
   call reached through each library's wrapper.
Best of several interleaved repeats and the median of paired ratios; nothing here is a pass/fail test.
Run some items only: `bench/trace.py jit_per_iteration first_call_cell` (the names in `ITEMS`).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jaxmagic
from bench import programs
from bench.run import capture_overhead
from jaxmagic.views import wire


def training_loop(steps: int = 200, repeats: int = 41) -> tuple[float, float, float, float, float]:
    """Seconds per loop plain and captured (best of `repeats`, interleaved), the median paired
    ratio, the median paired difference in seconds (the capture's cost per cell), and the median
    paired difference in the cell thread's CPU seconds.

    The last is the capture's own work on the cell's thread: the loop waits on the device most of
    the time, and on a shared 2-core machine its wall time drifts by several percent between runs,
    more than the capture costs; CPU time on the thread moves far less."""
    step, (params, tokens) = programs.transformer_step(4, scan=True)
    jax.block_until_ready(step(params, tokens))

    def loop() -> float:
        p = params
        start = time.perf_counter()
        for i in range(steps):
            loss, p = step(p, tokens)
            if i % 20 == 0:
                float(loss)  # a training loop logs its loss now and then
        jax.block_until_ready(p)
        return time.perf_counter() - start

    namespace = {"step": step}
    plain, captured, cpu_extra = [], [], []
    for _ in range(repeats):
        cpu = time.thread_time()
        plain.append(loop())
        cpu_plain = time.thread_time() - cpu
        cpu = time.thread_time()
        start = time.perf_counter()  # the whole block: starting and stopping the capture count
        with jaxmagic.capture(namespace, keys=False):  # %%trace's options
            step = namespace["step"]  # the wrapped function, as a notebook cell would see it
            loop()
        captured.append(time.perf_counter() - start)
        cpu_extra.append(time.thread_time() - cpu - cpu_plain)
        step = namespace["step"]
    return (
        min(plain),
        min(captured),
        _median(_ratios(plain, captured)),
        _median(_differences(plain, captured)),
        _median(cpu_extra),
    )


def _ratios(plain: list[float], captured: list[float]) -> list[float]:
    return [c / p for p, c in zip(plain, captured)]


def _differences(plain: list[float], captured: list[float]) -> list[float]:
    return [c - p for p, c in zip(plain, captured)]


def big_capture(n: int = 100_000) -> dict:
    tiny = jax.jit(lambda x: x * 2)
    x = jnp.ones(3)
    tiny(x).block_until_ready()
    namespace = {"tiny": tiny}
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    with jaxmagic.capture(namespace) as cap:
        f = namespace["tiny"]
        for _ in range(n):
            f(x)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    start = time.perf_counter()
    doc = jaxmagic.document(cap, "timeline")
    build = time.perf_counter() - start
    logical = len(json.dumps(doc))
    sent = len(json.dumps(wire.encode_document(doc)))
    return {
        "calls": len(cap.calls),
        "held MB": held / 1e6,
        "bytes per call": held / n,
        "document build s": build,
        "document MB": logical / 1e6,
        "sent MB": sent / 1e6,
    }


def _paired(run, n: int, repeats: int = 15) -> tuple[float, float, float]:
    """µs per call plain and captured (best of `repeats`) and the median paired ratio."""
    run(100)
    plain, captured = [], []
    for _ in range(repeats):
        plain.append(run(n))
        with jaxmagic.capture({}):
            captured.append(run(n))
    ratios = sorted(c / p for p, c in zip(plain, captured))
    return min(plain) / n * 1e6, min(captured) / n * 1e6, ratios[len(ratios) // 2]


def reference_overhead(n: int = 10_000) -> dict[str, tuple[float, float, float]]:
    """Tiny calls through a jitted attribute and through `nnx.jit`, plain vs captured."""
    x = jnp.ones(3)

    class Holder:
        def __init__(self):
            self.step = jax.jit(lambda v: v + 1)

    holder = Holder()

    def through_attribute(count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            holder.step(x)
        return time.perf_counter() - start

    results = {"jitted attribute": _paired(through_attribute, n)}
    try:
        from flax import nnx
    except ImportError:
        return results
    step = nnx.jit(lambda v: v + 1)

    def through_nnx(count: int) -> float:
        start = time.perf_counter()
        for _ in range(count):
            step(x)
        return time.perf_counter() - start

    results["nnx.jit"] = _paired(through_nnx, n)
    return results


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _paired_runs(run, repeats: int, warm: bool = False, **options) -> dict[str, float]:
    """`run()` (seconds) plain and inside a capture, alternating: best and median of each, median
    of the paired ratios. `warm`: `run()` once in the capture before the timed one, so the capture's
    one-time work (its start, the first calls' signatures and artifacts) is left out: the steady
    state of a `%timeit` inside a magic cell."""
    plain, captured = [], []
    for _ in range(repeats):
        plain.append(run())
        with jaxmagic.capture({}, **options):
            if warm:
                run()
            captured.append(run())
    return {
        "plain best": min(plain),
        "plain median": _median(plain),
        "captured best": min(captured),
        "captured median": _median(captured),
        "ratio": _median([c / p for p, c in zip(plain, captured)]),
    }


def _loop_body(prev_i):
    return prev_i + 1


def _jit_per_iteration(x, n):
    """JAX's jit tutorial ("Caching"): `jax.jit` called on the same function in a loop."""
    i = 0
    while i < n:
        i = jax.jit(_loop_body)(i)
    return x + i


def jit_per_iteration(iterations: int = 20, loops: int = 10, repeats: int = 11) -> dict[str, float]:
    """Seconds per iteration of `i = jax.jit(f)(i)` (a fresh wrapper of the same `f`), plain vs captured
    (steady state: `%timeit` runs its loops inside one cell)."""

    def run() -> float:
        start = time.perf_counter()
        for _ in range(loops):
            _jit_per_iteration(10, iterations).block_until_ready()
        return (time.perf_counter() - start) / (loops * iterations)

    run()
    return _paired_runs(run, repeats, warm=True, keys=False)


def wrapper_memory(n: int = 16_000) -> dict[str, float]:
    """A capture of `n` calls of `jax.jit(f)` made anew each time: what it holds after it stops."""
    x = jnp.ones(3)
    jax.jit(_loop_body)(x).block_until_ready()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    with jaxmagic.capture({}, keys=False) as cap:
        for _ in range(n):
            jax.jit(_loop_body)(x)
    seconds = time.perf_counter() - start
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return {
        "calls": len(cap.calls),
        "functions": len({c.function_id for c in cap.calls}),
        "held MB": held / 1e6,
        "bytes per call": held / n,
        "seconds (under tracemalloc)": seconds,
    }


def fresh_lambdas(n: int = 100, repeats: int = 3) -> dict[str, float]:
    """Seconds per freshly jitted distinct lambda (each one compiled), plain vs captured."""
    x = jnp.ones(3)

    def run() -> float:
        start = time.perf_counter()
        for k in range(n):
            jax.jit(lambda v: v * k + 1)(x).block_until_ready()
        return (time.perf_counter() - start) / n

    run()
    return _paired_runs(run, repeats, keys=False)


def first_call_cell(layers: int = 280, repeats: int = 3) -> dict[str, float]:
    """A cell that builds, compiles and first-calls a jitted grad (about 14 eqns a layer), plain vs
    inside a capture with `%%trace`'s options: what the capture costs while the cell runs."""

    def run() -> float:
        start = time.perf_counter()
        fn, args = programs.mlp_grad(layers)
        jax.block_until_ready(fn(*args))
        return time.perf_counter() - start

    return _paired_runs(run, repeats, keys=False)


def donating_loop(layers: int, steps: int = 200, repeats: int = 11) -> tuple[int, dict[str, float]]:
    """(donated leaves, plain vs captured) for a 200-step loop of an Optax Adam step over `layers` dense
    layers that donates its parameters and optimizer state (each call's donated arrays are noted for
    the donated-then-read finding), the loss read every 20 steps."""
    step, (params, state, x) = programs.adam_step(layers, donate=True)
    donated = len(jax.tree_util.tree_leaves((params, state)))

    def run() -> float:
        ps, st = jax.tree.map(jnp.copy, (params, state))  # fresh arrays: the loop donates them
        start = time.perf_counter()
        for i in range(steps):
            ps, st, loss = step(ps, st, x)
            if i % 20 == 0:
                float(loss)
        jax.block_until_ready(ps)
        return time.perf_counter() - start

    run()
    return donated, _paired_runs(run, repeats, keys=False)


def _equinox_loop(steps: int) -> Callable[[], float]:
    """A 200-step Equinox loop as its users write it: `eqx.filter_jit`, Optax's Adam, a 6-layer MLP."""
    import equinox as eqx
    import optax

    model = eqx.nn.MLP(64, 1, 64, 6, key=jax.random.key(0))
    opt = optax.adam(1e-3)
    x, y = jnp.ones((32, 64)), jnp.ones((32, 1))

    @eqx.filter_jit
    def step(model, state, x, y):
        loss, grads = eqx.filter_value_and_grad(lambda m: ((jax.vmap(m)(x) - y) ** 2).mean())(model)
        updates, state = opt.update(grads, state, eqx.filter(model, eqx.is_array))
        return loss, eqx.apply_updates(model, updates), state

    def run() -> float:
        m, s = model, opt.init(eqx.filter(model, eqx.is_array))
        start = time.perf_counter()
        for i in range(steps):
            loss, m, s = step(m, s, x, y)
            if i % 20 == 0:
                float(loss)
        jax.block_until_ready(m)
        return time.perf_counter() - start

    return run


def _nnx_loop(steps: int) -> Callable[[], float]:
    """The same loop in Flax NNX: `nnx.jit`, `nnx.Optimizer` over Optax's Adam."""
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.layers = nnx.List([nnx.Linear(64, 64, rngs=rngs) for _ in range(6)])
            self.out = nnx.Linear(64, 1, rngs=rngs)

        def __call__(self, x):
            for layer in self.layers:
                x = jax.nn.relu(layer(x))
            return self.out(x)

    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    x, y = jnp.ones((32, 64)), jnp.ones((32, 1))

    @nnx.jit
    def step(model, optimizer, x, y):
        loss, grads = nnx.value_and_grad(lambda m: ((m(x) - y) ** 2).mean())(model)
        optimizer.update(model, grads)
        return loss

    def run() -> float:
        start = time.perf_counter()
        for i in range(steps):
            loss = step(model, optimizer, x, y)
            if i % 20 == 0:
                float(loss)
        return time.perf_counter() - start

    return run


def framework_loops(steps: int = 200, repeats: int = 15) -> dict[str, dict[str, float]]:
    """200-step train loops through Equinox's and Flax NNX's own jit wrappers, plain vs captured."""
    results = {}
    for name, make in (("Equinox", _equinox_loop), ("Flax NNX", _nnx_loop)):
        run = make(steps)
        run()
        results[name] = _paired_runs(run, repeats, keys=False)
    return results


def _print_paired(what: str, result: dict[str, float], unit: str, scale: float) -> None:
    print(
        f"{what}: plain {result['plain best'] * scale:.3f} {unit} best, {result['plain median'] * scale:.3f} "
        f"median; captured {result['captured best'] * scale:.3f} {unit} best, "
        f"{result['captured median'] * scale:.3f} median; median paired ratio {result['ratio']:.3f}x "
        f"(best-of ratio {result['captured best'] / result['plain best']:.3f}x)"
    )


def _tiny() -> None:
    plain_us, captured_us, ratio, block = capture_overhead()
    print(
        f"tiny jitted call x10,000: plain {plain_us:.2f} us/call, captured {captured_us:.2f} us/call "
        f"(best of each), median paired ratio {ratio:.2f}x (goal <= 1.2x); the whole capture block "
        f"(start, calls, stop) {block:.2f}x"
    )


def _training() -> None:
    plain_s, captured_s, loop_ratio, extra_s, cpu_s = training_loop()
    print(
        f"200-step training loop: plain {plain_s:.3f} s, captured {captured_s:.3f} s (best of each, the captured "
        f"block including start and stop), median paired ratio {loop_ratio:.3f}x (goal <= 1.02x), "
        f"median extra {extra_s * 1e3:.1f} ms per cell, of which the cell thread's CPU {cpu_s * 1e3:.1f} ms"
    )


def _references() -> None:
    for name, (plain_ref, captured_ref, ratio_ref) in reference_overhead().items():
        print(
            f"tiny call x10,000 through {name}: plain {plain_ref:.2f} us/call, captured {captured_ref:.2f} us/call "
            f"(best of each), median paired ratio {ratio_ref:.2f}x"
        )


def _big() -> None:
    big = big_capture()
    print(
        "capture of 100,000 calls: "
        + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in big.items())
    )


def _wrappers() -> None:
    _print_paired(
        "jax.jit(f)(i) made anew each iteration (steady state, goal <= 1.2x)", jit_per_iteration(), "ms/call", 1e3
    )
    memory = wrapper_memory()
    print(
        "capture of 16,000 calls of jax.jit(f) made anew: "
        + ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in memory.items())
    )


def _lambdas() -> None:
    _print_paired("100 freshly jitted distinct lambdas", fresh_lambdas(), "ms/lambda", 1e3)


def _donating() -> None:
    for layers in (50, 150):
        donated, result = donating_loop(layers)
        _print_paired(f"200-step Adam loop donating {donated} arrays a step", result, "ms", 1e3)


def _frameworks() -> None:
    for name, result in framework_loops().items():
        _print_paired(f"200-step {name} train loop (6-layer MLP, Adam)", result, "ms", 1e3)


def _first_call() -> None:
    _print_paired("first-call cell of jit(grad(mlp, 280 layers)) under %%trace's capture", first_call_cell(), "s", 1.0)


ITEMS = {
    "capture_overhead": _tiny,
    "training_loop": _training,
    "reference_overhead": _references,
    "big_capture": _big,
    "jit_per_iteration": _wrappers,
    "fresh_lambdas": _lambdas,
    "first_call_cell": _first_call,
    "donating_loop": _donating,
    "framework_loops": _frameworks,
}


def main() -> None:
    unknown = [name for name in sys.argv[1:] if name not in ITEMS]
    if unknown:
        sys.exit(f"bench/trace.py: no item {', '.join(unknown)}; the items are {', '.join(ITEMS)}")
    for name in sys.argv[1:] or ITEMS:
        ITEMS[name]()


if __name__ == "__main__":
    main()
