"""JAX's log records reach the user exactly as without a capture.

With logging unconfigured (no handler anywhere on a record's way up), Python prints WARNING and
above to stderr through `logging.lastResort`. The capture's handler on the `jax` logger must not
stop that; where the user configured a handler, the records go there once, as without it.
"""

from __future__ import annotations

import contextlib
import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmagic


@contextlib.contextmanager
def unconfigured_logging():
    """No handler on the root logger (pytest puts its own there around each test phase)."""
    root = logging.getLogger()
    saved = root.handlers[:]
    root.handlers = []
    try:
        yield
    finally:
        root.handlers = saved


def _log_some(tag: str) -> None:
    logging.getLogger("jax").warning("jax says %s", tag)
    logging.getLogger("jax._src.dispatch").error("dispatch error %s", tag)
    logging.getLogger("jax._src.dispatch").info("info %s: below the last resort's level", tag)
    jax.jit(lambda v: v * 5)(jnp.ones(2)).block_until_ready()


def test_records_reach_stderr_through_the_last_resort_as_without_a_capture(capsys):
    with unconfigured_logging():
        _log_some("plain")
        plain = capsys.readouterr().err
        with jaxmagic.capture({}):
            _log_some("captured")
        captured = capsys.readouterr().err
    if not logging.getLogger("jax").handlers:  # JAX 0.4 has a handler of its own there: no last resort
        assert plain == "jax says plain\ndispatch error plain\n"
    assert captured == plain.replace("plain", "captured")


def test_a_users_handler_gets_each_record_once(capsys):
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    with unconfigured_logging():
        logging.getLogger().addHandler(Collect())
        with jaxmagic.capture({}):
            _log_some("x")
    assert seen == ["jax says x", "dispatch error x"]  # root's level is WARNING
    assert capsys.readouterr().err == ""  # a handler exists: no last resort, as without the capture


def _explained_globally(tag: float) -> int:
    """`jax.config.update('jax_explain_cache_misses', True)` in the cell; returns its jitted calls."""
    jax.config.update("jax_explain_cache_misses", True)
    try:
        f = jax.jit(lambda v: v * tag)
        f(jnp.ones(2))
        f(jnp.ones(3))  # a miss JAX explains
    finally:
        jax.config.update("jax_explain_cache_misses", False)
    return 2


def _explained_in_context(tag: float) -> int:
    """The thread-local form: `with jax.explain_cache_misses(True):` around one miss of three."""
    f = jax.jit(lambda v: v * tag)
    f(jnp.ones(2))
    with jax.explain_cache_misses(True):
        f(jnp.ones(3))  # a miss JAX explains, to this thread only
    f(jnp.ones(4))  # a miss nobody asked JAX to explain
    return 3


@pytest.mark.parametrize("cell", [_explained_globally, _explained_in_context], ids=["global", "thread"])
def test_explanations_the_user_turns_on_in_the_cell_show_as_without_a_capture(capsys, cell):
    with unconfigured_logging():
        cell(2.0)
        plain = capsys.readouterr().err
        with jaxmagic.capture({}) as cap:
            n_calls = cell(3.0)
        captured = capsys.readouterr().err
    if not logging.getLogger("jax").handlers:  # JAX 0.4 prints through a handler of its own, past capsys
        assert plain.count("TRACING CACHE MISS") >= 1, plain
    assert captured.count("TRACING CACHE MISS") == plain.count("TRACING CACHE MISS"), captured
    assert [c.cache_hit for c in cap.calls] == [False] * n_calls
    assert jax.config.jax_explain_cache_misses is False
    assert not jax.explain_cache_misses.value


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.mark.parametrize("options, size", [({"values": True}, 3), ({}, 5)], ids=["values", "nan-search"])
def test_the_users_compile_log_lists_the_cells_compiles_only(options, size):
    """Under the user's `jax_log_compiles`, jaxmagic's own replay (`--values`, the NaN origin search)
    compiles each op of the program once: those compiles are not logged as the cell's. The user's
    flag stays on, and a function compiled before is not compiled again after the capture."""
    before = jax.jit(lambda v: v - 4.0)
    x = jnp.ones(size)
    before(x).block_until_ready()
    records = _Records()
    jax_logger = logging.getLogger("jax")
    jax_logger.addHandler(records)
    jax.config.update("jax_log_compiles", True)
    try:
        with jaxmagic.capture({}, **options):
            out = jax.jit(lambda v: jnp.log(jnp.cos(v) - 2.0) * 3.0)(x)  # NaN: the origin is searched
        during = [m for m in records.messages if m.startswith("Compiling ")]
        records.messages.clear()
        before(x).block_until_ready()  # compiled before: no compile now
        jax.jit(lambda v: v * 9.0)(x).block_until_ready()  # new: logged as ever
        after = [m for m in records.messages if m.startswith("Compiling ")]
        assert jax.config.jax_log_compiles is True
    finally:
        jax.config.update("jax_log_compiles", False)
        jax_logger.removeHandler(records)
    assert np.isnan(np.asarray(out)).all()
    assert len(during) == 1 and "<lambda>" in during[0], during  # "Compiling jit(<lambda>)" (JAX 0.4: no "jit")
    assert len(after) == 1 and "<lambda>" in after[0], after
