"""Where arrays live, for `%%sharding`: the arrays the cell's calls read, the outputs of each
signature's first call, and at `stop` the arrays and meshes the namespace holds.

Metadata only (mesh, PartitionSpec, shards: capture/sharding/arrays.py); a failure here is a
capture note, never the user's.
"""

from __future__ import annotations

from typing import Any

import jax

from ... import strict
from .. import jax_compat
from ..quiet_gc import paused_gc
from ..record import Capture


class PlacementRecorder:
    """The placement bookkeeping of one `shardings=True` capture."""

    def __init__(self, capture: Capture, namespace: dict):
        self.capture = capture
        self.namespace = namespace
        self._bound_before: dict[str, int] = {}  # which names the cell binds anew: their arrays are listed first
        self._inputs_seen: set[int] = set()  # ids of the arrays the cell's jitted calls read
        self._context_meshes: list = []  # meshes set with jax.set_mesh / use_mesh at the cell's calls
        self._outputs_seen: set[int] = set()  # artifacts whose call's outputs were recorded
        self._placed = False

    def start(self) -> None:
        self._bound_before = {name: id(value) for name, value in self.namespace.items()}

    def note_inputs(self, args: tuple, kwargs: dict) -> None:
        """Which arrays the cell's jitted calls read (by identity): an array an earlier cell placed is
        part of this cell's story when the cell passes it to a call. The ids of every leaf, taken in C
        (only arrays' ids are ever looked up): 133 us a call of a 901-leaf Adam step, against 235 us
        when each leaf was checked in Python (JAX's flatten alone: 89 us)."""
        try:
            self._inputs_seen.update(map(id, jax.tree_util.tree_leaves((args, kwargs))))
        except Exception as exc:  # an odd pytree: the arrays stay "earlier", nothing else changes
            strict.fallback("the arrays a jitted call read, for %%sharding", exc)

    def record_outputs(self, index: int, rows: list, out: Any) -> None:
        """Where the outputs of the first call of each signature live (`rows[index]`: the call's
        `JitCall`, absent when recording it failed)."""
        try:
            name, artifacts = rows[index].name, rows[index].artifacts
            if artifacts is None or id(artifacts) in self._outputs_seen:
                return
            self._outputs_seen.add(id(artifacts))
            from . import arrays as sharding

            with paused_gc():  # a record per output: a train step's grads are a thousand
                self.capture.arrays.extend(sharding.output_arrays(out, index, name))
                self._context_meshes.extend(sharding.context_mesh_records())  # `with jax.set_mesh(m): f(x)`
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"outputs of call {index} not placed: {type(exc).__name__}: {exc}")

    def record(self) -> None:
        """Arrays bound in the namespace and the meshes in use, as the cell left them (once)."""
        if self._placed:
            return
        self._placed = True
        try:
            self._record_namespace()
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"array placement not recorded: {type(exc).__name__}: {exc}")

    def _record_namespace(self) -> None:
        from . import arrays as sharding

        capture = self.capture
        named: dict = {}  # meshes, named by the same walk as the arrays
        arrays, extra = sharding.namespace_arrays(
            self.namespace, self._bound_before, self._inputs_seen, meshes=named, notes=capture.notes
        )
        capture.arrays[:] = sharding.merge_outputs(capture.arrays, arrays, self.namespace)
        if extra:
            capture.notes.append(
                f"{extra} more arrays in the namespace were not recorded (the first {sharding.MAX_ARRAYS} were)"
            )
        capture.meshes.extend(sharding.namespace_meshes(self.namespace, named, self._context_meshes))
        if jax_compat.backends_are_initialized():  # asking for devices would start a backend
            capture.devices.extend(
                (int(d.id), str(d.platform), str(getattr(d, "device_kind", ""))) for d in jax.devices()
            )
