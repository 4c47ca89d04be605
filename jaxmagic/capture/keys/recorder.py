"""PRNG keys during a capture: the session's side of the key log (capture/keys/log.py).

The log itself collects events (eager `jax.random` calls through the patched module, eager
transforms through the primitive hook); this records each jitted call whose program handles keys,
right after the call, and at `stop` reads every key once into the capture's key tree and key
findings. A failure here is a capture note, never the user's.
"""

from __future__ import annotations

from typing import Any

from ..record import Artifacts, Capture
from .log import KeyLog


class KeyRecorder:
    """The key lineage of one capture (`%%prng`, on by default)."""

    def __init__(self, capture: Capture, namespace: dict):
        self.capture = capture
        self.namespace = namespace
        self.log = KeyLog()

    def note_names_before(self) -> None:
        self.log.note_names(self.namespace, before=True)

    def program(self, artifacts: Artifacts) -> Any:
        """The key flow of a recorded program (keys.flow.ProgramKeys), or None when it handles no keys."""
        return self.log.program(artifacts)

    def on_call(self, key_call: tuple, out: Any) -> None:
        """A call of a program that handles keys: `key_call` is (index, name, program, call, call site)."""
        index, name, program, call, call_site = key_call
        try:
            self.log.on_call(index, name, program, call, call_site, out)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"keys of call {index} not recorded: {type(exc).__name__}: {exc}")

    def finish(self) -> None:
        """The PRNG key lineage: key data is read now, once, not while the cell ran."""
        try:
            self.log.note_names(self.namespace, before=False)
            records, found, notes = self.log.finish()
            self.capture.keys[:] = records
            self.capture.findings.extend(found)
            self.capture.notes.extend(notes)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"PRNG key lineage not recorded: {type(exc).__name__}: {exc}")
