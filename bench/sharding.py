"""`%%sharding` benchmark: capture and render 100 sharded arrays on 256 simulated devices.

    .venv/bin/python bench/sharding.py

Runs in its own process with 256 CPU devices (the device count is fixed when JAX starts). It
measures, in one run, best of a few repeats:

1. the capture: a `with jaxmagic.capture(ns, shardings=True)` block around nothing, over a
   namespace of 100 arrays on a 16x16 mesh (five specs, from fully sharded to replicated), plus
   a jitted call; its time against the empty block without `shardings`, and the memory the
   capture holds (tracemalloc: metadata only, no buffers);
2. the document: build time, JSON size, and the size sent to the widget;
3. the widget: first render to paint and a device selection in headless Chromium, in the page's
   own clock, from a `jaxmagic.to_html` page opened offline.

Nothing here is a pass/fail test.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=256"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxmagic
from bench.timing import best
from jaxmagic.views.wire import encode_document

SPECS = [P("data", "model"), P("data"), P(None, "model"), P(), P(("data", "model"))]


def namespace() -> dict:
    mesh = jax.make_mesh((16, 16), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    ns = {"mesh": mesh}
    for i in range(100):
        ns[f"w{i}"] = jax.device_put(jnp.full((256, 512), float(i)), NamedSharding(mesh, SPECS[i % len(SPECS)]))
    return ns


def capture(ns: dict, shardings: bool):
    with jaxmagic.capture(ns, shardings=shardings) as cap:
        pass
    return cap


def browser(doc: dict) -> tuple[float, float] | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        page_path = Path(tmp) / "sharding.html"
        jaxmagic.to_html(doc, page_path)
        with sync_playwright() as p:
            chromium = p.chromium.launch(
                executable_path=os.environ.get("JAXMAGIC_CHROMIUM", "/usr/bin/chromium"),
                args=["--no-sandbox", "--disable-gpu"],
            )
            page = chromium.new_page(viewport={"width": 1400, "height": 1000})
            page.route(
                "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
            )
            page.goto(page_path.as_uri())
            page.wait_for_selector(".jm-sharding .jm-sh-sec")
            first = page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r(performance.now())))")
            select = page.evaluate("""() => new Promise((r) => {
              const cell = document.querySelector('.jm-sh-mesh .jm-sh-cell');
              const t0 = performance.now();
              cell.dispatchEvent(new MouseEvent('click', {bubbles: true}));
              requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now() - t0)));
            })""")
            chromium.close()
    return first, select


def main() -> None:
    ns = namespace()
    ns["out"] = jax.jit(lambda a, b: a @ b.T)(ns["w0"], ns["w1"])  # a call, compiled before timing
    plain_s, _ = best(lambda: capture(ns, False))
    placed_s, cap = best(lambda: capture(ns, True))
    tracemalloc.start()
    held = capture(ns, True)
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    doc_s, doc = best(lambda: jaxmagic.document(cap, "sharding"))
    logical = len(json.dumps(doc))
    sent = len(json.dumps(encode_document(doc)))
    blocks = sum(len(a["blocks"]) for a in doc["arrays"])
    print(
        f"{len(doc['arrays'])} arrays on {len(doc['devices'])} devices ({blocks} blocks): capture {placed_s * 1e3:.0f} ms "
        f"(empty capture without shardings {plain_s * 1e3:.1f} ms); capture holds {size / 1e6:.2f} MB "
        f"({len(held.arrays)} records); document {doc_s * 1e3:.0f} ms, {logical / 1e6:.2f} MB logical, "
        f"{sent / 1e6:.2f} MB sent"
    )
    timings = browser(doc)
    if timings is None:
        print("widget: playwright not installed")
    else:
        print(
            f"widget (headless Chromium): first render {timings[0]:.0f} ms after navigation; "
            f"a device selection {timings[1]:.0f} ms to paint"
        )


if __name__ == "__main__":
    main()
