"""Every test sees 8 simulated CPU devices, set before JAX initialises."""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Strict mode (jaxmagic/strict.py): silent fallbacks raise, every document is checked against its declaration.
os.environ.setdefault("JAXMAGIC_STRICT", "1")


import pytest


@pytest.fixture(scope="module")
def magic_shell():
    """A real IPython shell with jaxmagic loaded (the test shell is one per process), unloaded after."""
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # noqa: F821 - start_ipython returns None once it is running
    shell.run_line_magic("load_ext", "jaxmagic")
    yield shell
    shell.run_line_magic("unload_ext", "jaxmagic")
