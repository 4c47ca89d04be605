"""Every test sees 8 simulated CPU devices, set before JAX initialises."""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Strict mode (jaxmagic/strict.py): silent fallbacks raise, every document is checked against its declaration.
os.environ.setdefault("JAXMAGIC_STRICT", "1")


import pytest

# The files that take longest, longest first (seconds of one worker in a whole two-worker run, 2-core
# machine). pytest-xdist's `--dist loadfile` hands out files in collection order when run with
# `--no-loadscope-reorder` (./dev test): starting these first lets both workers finish together,
# where its default order (most tests first) left the 450 s host test near the end of the queue
# (about a minute of one worker running alone, in a simulation of the measured times).
LONGEST_FIRST = (
    "tests/browser/test_hosts.py",  # 451 s
    "tests/test_same_result.py",  # 333
    "tests/browser/test_hostile_content.py",  # 331
    "tests/browser/test_jupyterlab.py",  # 164
    "tests/test_property.py",  # 124
    "tests/browser/test_graph_framing.py",  # 114
    "tests/browser/test_exported_html.py",  # 105
    "tests/test_capture_memory.py",  # 90
    "tests/test_fixtures.py",  # 67
    "tests/test_huge.py",  # 62
    "tests/test_grad_model.py",  # 48
    "tests/browser/test_sharding_stage.py",  # 44
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, move the longest files to the front (the order of the rest is kept)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {str(config.rootpath / path): i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(str(item.path), len(rank)))


@pytest.fixture(scope="module")
def magic_shell():
    """A real IPython shell with jaxmagic loaded (the test shell is one per process), unloaded after."""
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # noqa: F821 - start_ipython returns None once it is running
    shell.run_line_magic("load_ext", "jaxmagic")
    yield shell
    shell.run_line_magic("unload_ext", "jaxmagic")
