"""JAX's own words on its caches: `jax_explain_cache_misses` and persistent-cache log records.

JAX explains a tracing-cache miss only in a log record (`TRACING CACHE MISS at …`),
and reports persistent compilation cache hits and misses the same way. During a
capture the explain flag is turned on for the cell's thread (if the user had it off) and a `logging.Filter`
on each emitting logger keeps the records. A logger-level filter runs before any
handler, so when the user did not ask for these messages, returning False keeps them
off their stderr (JAX's own handler on `jax` on some versions, Python's last-resort
printer on others) and the cell's output is what it would be without the magic.

Logger names and wording differ between JAX versions, so records are recognised by content
(the emitters and first words: `jax_compat.logs`). A handler on the `jax` logger also sees records from emitters not listed here (a
future JAX), which are then recorded too. Being a handler, it would stop Python's last-resort
printer (unconfigured logging prints WARNING and up to stderr only where no handler is found),
so where it is the only handler on a record's way it prints the record as that printer would.

The explain flag costs nothing on cache hits but about 37 µs per cached entry of the
same function on each miss (a storm of 1,000 shapes would add ~18 s), so it is turned
off again for the rest of the capture once one function passes `EXPLAIN_LIMIT` misses.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass

import jax

from .. import jax_compat
from ..jax_compat.logs import EMITTERS, kind_of
from ..patches import replace_attribute

EXPLAIN_LIMIT = 100  # misses of one function before the explain flag goes off again


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One record we kept: what kind, its full text, and when (perf_counter seconds)."""

    kind: str  # "miss" (tracing cache) | "persistent_miss" | "persistent_hit"
    text: str
    time: float


class CacheLog:
    """Keeps JAX's cache records for one capture and hands each to `on_record`."""

    def __init__(self, on_record: Callable[[LogRecord], None]):
        self._on_record = on_record
        self._state = jax_compat.explain_misses_state()
        self._explaining: jax_compat.LocalExplaining | None = None
        # asked before the capture's patches and listeners are in place: the probe is jaxmagic's own JAX work
        self._explain_safe = jax_compat.explaining_is_safe()

    @property
    def user_wants_explanations(self) -> bool:
        """The user's own setting, read on every record: turned on during the cell (globally or with
        JAX's context for this thread), it shows from then on."""
        try:
            return self._state is not None and jax_compat.asked_by_user(self._state, self._explaining)
        except Exception:  # an odd setting object: show what JAX says rather than hide it
            return True

    def install(self, stack: ExitStack) -> list[str]:
        """Turn explanations on for this thread, add the filters and the handler; every undo goes on `stack`.

        The flag is set thread-locally (`jax_compat.LocalExplaining`), never globally, so a
        `jax.config.update('jax_explain_cache_misses', ...)` in the cell is the user's and stays.
        """
        notes: list[str] = []
        if self._state is None:
            notes.append(
                "this JAX has no jax_explain_cache_misses: recompile reasons come from jaxmagic's own "
                "comparison of signatures"
            )
            return notes
        if not self.user_wants_explanations and not self._explain_safe:
            notes.append(
                "this JAX's jax_explain_cache_misses makes a correct program fail (a cond branch or loop "
                "body traced again raises ValueError): it stays off, and recompile reasons come from "
                "jaxmagic's own comparison of signatures"
            )
        elif not self.user_wants_explanations:
            guard = jax_compat.guarded_key_diff(lambda: self.user_wants_explanations)
            if guard is not None:  # JAX's own failures while explaining stay JAX's, not the program's
                replace_attribute(stack, *guard)
            self._explaining = jax_compat.LocalExplaining(self._state)
            stack.callback(self._explaining.off)
            self._explaining.on()
            reading = self._explaining.public_reading()
            if reading is not None:  # the cell reads its own setting, never jaxmagic's
                replace_attribute(stack, *reading)
        keep = _Keep(self)
        for name in EMITTERS:
            logger = logging.getLogger(name)
            logger.addFilter(keep)
            stack.callback(logger.removeFilter, keep)
        handler = _Handler(self)
        jax_logger = logging.getLogger("jax")
        jax_logger.addHandler(handler)
        stack.callback(jax_logger.removeHandler, handler)
        return notes

    def explain_off(self) -> bool:
        """Stop JAX's explanations for the rest of the capture (a recompile storm); True if done."""
        return self._explaining is not None and self._explaining.off()

    def keep(self, record: logging.LogRecord) -> bool:
        """Record it if it is one of ours; True if the record should go on to handlers."""
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is not ours to judge
            return True
        kind = kind_of(message)
        if kind is None:
            return True
        if not getattr(record, "_jaxmagic_kept", False):  # the filter, then the `jax` handler
            record._jaxmagic_kept = True
            self._on_record(LogRecord(kind, message, time.perf_counter()))
        if self.user_wants_explanations:
            return True
        # Persistent-cache records are warnings under jax_log_compiles too: then the user sees them anyway.
        return kind != "miss" and bool(getattr(jax.config, "jax_log_compiles", False))


class _Keep(logging.Filter):
    def __init__(self, log: CacheLog):
        super().__init__()
        self._log = log

    def filter(self, record: logging.LogRecord) -> bool:
        return self._log.keep(record)


class _Handler(logging.Handler):
    """Sees records from emitters not in EMITTERS (they propagate to `jax`)."""

    def __init__(self, log: CacheLog):
        super().__init__(level=logging.DEBUG)
        self._log = log

    def emit(self, record: logging.LogRecord) -> None:
        if self._log.keep(record):  # not an explanation the user did not ask for
            self._last_resort(record)

    def _last_resort(self, record: logging.LogRecord) -> None:
        """Do what Python does for a record no handler took: with logging unconfigured, a jax
        WARNING or ERROR goes to stderr through `logging.lastResort`. This handler being there
        would stop that, so where it is the only one on the record's way up, it hands the
        record on exactly as `Logger.callHandlers` would have."""
        resort = logging.lastResort
        if resort is None or record.levelno < resort.level or self._others_on_the_way(record.name):
            return
        resort.handle(record)

    def _others_on_the_way(self, name: str) -> bool:
        logger: logging.Logger | None = logging.getLogger(name)
        while logger is not None:
            if any(handler is not self for handler in logger.handlers):
                return True
            logger = logger.parent if logger.propagate else None
        return False
