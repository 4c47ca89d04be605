"""One capture session: installs every hook on one ExitStack, owns the Capture, and delegates the recording.

Each patch registers its undo right after it is made, so any exit (an exception, a
KeyboardInterrupt, a failure of our own) restores jax.jit, the user's namespace and the
monitoring listeners. What each hook reports goes to a recorder of its concern: jitted calls
and JAX's compile events to capture/jit/recorder.py, differentiations to grads/recorder.py,
PRNG keys to keys/recorder.py, NaN/Inf to values/recorder.py, array placement to
sharding/recorder.py, program findings to findings/recorder.py. `stop` closes the hooks, then
has each recorder finish into the Capture (capture/record.py).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import jax

from . import jax_compat, prefetch, source
from .buffers import drop_device_buffers, remembered_stub, stub_of
from .findings import index as index_findings
from .findings import program as program_findings
from .findings import trace_prints, warning_site
from .findings.donation import DonationLog
from .findings.dtype import TruncationLog
from .grads import patch as grad_patch
from .grads.recorder import GradRecorder
from .jit import monitoring
from .jit import patch as jit_patch
from .jit.recorder import JitRecorder, call_plain, recording_call
from .keys import patch as key_patch
from .keys.recorder import KeyRecorder
from .prefetch import PREFETCH
from .quiet_gc import paused_gc
from .record import Capture
from .sharding.recorder import PlacementRecorder
from .values.recorder import NanRecorder

jax_compat.hide_from_jax(source.PACKAGE_DIR)
_trace_state_clean = jax_compat.trace_state_clean


class CaptureSession:
    """Records the jitted calls and JAX compile events of one block of user code."""

    def __init__(
        self,
        namespace: dict | None,
        values: bool = False,
        vmap: bool = False,
        sync: bool = False,
        grads: bool = False,
        shardings: bool = False,
        keys: bool = True,
        finish: Callable[[Capture], None] | None = None,
        prebuild: Callable[[Any], None] | None = None,
    ):
        """`finish`: run once on the capture when it stops, after everything was recorded: the
        model's findings over the whole capture (model/findings.py `complete`), handed in
        because the capture layer never imports the model.

        `values`: evaluate each new signature's jaxpr again for forward values; `vmap`: trace
        vmapped programs again with one more element for batch dimensions; `sync`: wait for each
        call's outputs (exact device time; changes the program's timing); `grads`: trace each
        differentiated function again for JAX's forward/backward split; `shardings`: record where
        arrays live (namespace arrays at stop, jitted outputs); `keys`: PRNG key lineage (%%prng).
        `prebuild(closed_jaxpr)`: start what the view will need of a program while XLA compiles it
        (capture/prefetch.py; the model's, handed in like `finish`).
        """
        self.namespace = namespace if namespace is not None else {}
        self.values, self.vmap, self.sync, self.grads, self.shardings = values, vmap, sync, grads, shardings
        self._on_stop = finish
        self._prebuild = prebuild
        self.capture = Capture(jax_version=jax.__version__)
        self._stack = ExitStack()
        self._running = False
        self._keys = KeyRecorder(self.capture, self.namespace) if keys else None
        self._placement = PlacementRecorder(self.capture, self.namespace) if shardings else None
        self._nans = NanRecorder(self.capture, self.namespace)
        self._donations = DonationLog()  # arrays handed to donating calls, for a read after (findings/donation.py)
        self._truncations: TruncationLog | None = None  # JAX's dtype truncation warnings (`start`)
        self.jit = JitRecorder(
            self.capture,
            self.namespace,
            values=values,
            vmap=vmap,
            sync=sync,
            grads=grads,
            keys=self._keys,
            placement=self._placement,
            nans=self._nans,
            donations=self._donations,
        )
        self._grads = GradRecorder(self.jit, recording_call, self._nans, grads)

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> Capture:
        self.jit.start()
        PREFETCH.clear()  # what an earlier capture started and no view took
        self.jit.on_lowered = self._on_lowered
        # Undone with the hooks: the recorder keeps no bound method of this session, so the two (and
        # the capture's calls) are freed when the user drops them, not by a later cyclic collection.
        self._stack.callback(setattr, self.jit, "on_lowered", None)
        # The backend is read at the end, and only if the cell's code made one: starting JAX's
        # backend here would refuse the cell's own `jax.config.update('jax_num_cpu_devices', 8)`.
        self._stack.callback(self._note_backend)
        self.capture.settings = {
            "sync": self.sync,
            "persistent_cache_dir": getattr(jax.config, "jax_compilation_cache_dir", None),
        }
        try:
            self._install(self._stack)
        except BaseException:
            self._stack.close()
            raise
        if self._placement is not None:  # which names the cell binds anew: their arrays are listed first
            self._placement.start()
        # Names bound before the cell (by identity): arrays the cell binds are checked for NaN/Inf at `stop`.
        self._nans.snapshot_names()
        self._running = self.jit.running = True
        self.capture.start = time.perf_counter()
        return self.capture

    def _on_lowered(self, closed_jaxpr: Any) -> None:
        """A program of the cell's is about to compile: the walks of its findings (unrolled loops,
        baked constants, out-of-bounds indices: `stop` needs them) and what the view needs of it
        start on the prefetch thread meanwhile."""
        if not prefetch.worth_starting(closed_jaxpr):
            return
        PREFETCH.started += 1
        # `stop` reads these of the original: its findings' walks (loops, baked constants, indices)
        PREFETCH.submit("loops", closed_jaxpr, program_findings.unrolled_loops)
        PREFETCH.submit("constants", closed_jaxpr, program_findings.weak_constant_sites)
        PREFETCH.submit("index", closed_jaxpr, index_findings.index_problems)
        if self._prebuild is not None:  # the view reads the program as kept: its arrays stubbed
            self._prebuild(remembered_stub(closed_jaxpr))
        else:  # the program as the capture keeps it, made while it compiles
            PREFETCH.submit("stub", closed_jaxpr, stub_of)

    def _install(self, stack: ExitStack) -> None:
        """Every hook, each undone by `stack`: jitted calls, grads, random, warnings, monitoring, logs, print."""
        previous = jit_patch.set_recorder(self.jit)
        stack.callback(jit_patch.set_recorder, previous)
        if previous is not None:  # an outer capture routed or wrapped everything already
            self.jit.run_jitted = getattr(previous, "run_jitted", call_plain)
        elif jit_patch.route_jitted_calls(stack):
            self.jit.run_jitted = jit_patch.call_jitted  # JAX's own C++ call: the type's call now comes to us
        else:
            self.capture.notes.append(
                "this Python cannot route jitted calls: calls are seen only for jitted functions bound "
                "in the namespace or made in the cell; others only through their compile events"
            )
            jit_patch.patch_jit(stack, self.namespace)
            jit_patch.wrap_namespace(stack, self.namespace)
        stack.callback(grad_patch.set_recorder, grad_patch.set_recorder(self._grads))
        grad_patch.patch_grads(stack, self.namespace)  # patches nothing when an outer capture did
        if self._keys is not None:
            self._keys.note_names_before()
            stack.callback(key_patch.set_recorder, key_patch.set_recorder(self._keys.log))
            key_patch.patch_random(stack, self.namespace)  # patches nothing when an outer capture did
            key_patch.patch_eager_transforms(stack)
        self._truncations = TruncationLog(self.jit.own_work, recording_call)
        warning_site.install(stack, self._truncations, self.jit.thread)  # warnings keep the user's line
        self.capture.notes.extend(
            monitoring.listen(stack, self.jit.on_duration, self.jit.on_event, self.capture.notes.append)
        )
        self.capture.notes.extend(self.jit.cache_log.install(stack))
        trace_prints.patch_print(
            stack,
            _trace_state_clean,
            recording_call,
            self.jit.findings.on_trace_print,
            source.caller_location,
            self.namespace,
        )

    def stop(self, error: BaseException | None = None) -> Capture:
        """Undo every hook (always), then note the error. Safe to call twice. No cyclic garbage
        collection meanwhile (`quiet_gc`): stopping builds every call's record at once."""
        prefetch.COLLECTOR.compile_ended()  # the collector as the user left it, whatever a compile did
        with paused_gc():
            return self._stop(error)

    def _stop(self, error: BaseException | None) -> Capture:
        if self._running:
            self._running = self.jit.running = False
            self.capture.end = time.perf_counter()
        self._stack.close()
        for what, step in (
            ("device times", self.jit.poll),
            ("the calls", self.jit.materialize_calls),
            ("JAX's cache log", self.jit.copy_logs),
            ("the cell's error", lambda: self._note_error(error)),
            ("NaN and Inf in the outputs", self._nans.check),
        ):
            try:
                step()
            except Exception as exc:  # boundary: our failure never becomes the user's; the rest is still recorded
                self.capture.notes.append(
                    f"jaxmagic could not record {what}: {type(exc).__name__}: {exc} "
                    "(please open an issue with this message)"
                )
        self.jit.note_strays()
        if self._placement is not None:
            self._placement.record()
        keys, self._keys = self._keys, None
        if keys is not None:
            self.jit.keys = None
            keys.finish()
        self._record_truncations()
        try:
            self.jit.findings.finish()  # last: everything above is complete even if this is interrupted
            self._run_finish()
        finally:  # the values were read: the capture keeps no array a program closed over
            self.jit.release()
            self._grads.release()  # so does its cache of splits
            try:
                drop_device_buffers(self.capture)
            except Exception as exc:  # boundary: our failure never becomes the user's
                self.capture.notes.append(f"closed-over arrays kept by the capture: {type(exc).__name__}: {exc}")
        return self.capture

    def _run_finish(self) -> None:
        finish, self._on_stop = self._on_stop, None  # once, though `stop` may run twice
        if finish is None:
            return
        try:
            finish(self.capture)
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(
                f"jaxmagic could not look for findings over the whole cell: "
                f"{type(exc).__name__}: {exc} (please open an issue with this message)"
            )

    def _note_backend(self) -> None:
        """The default backend's name, where one exists by now; never starts one."""
        if not jax_compat.backends_are_initialized():
            return
        try:
            self.capture.backend = jax.default_backend()
        except Exception as exc:  # boundary: no backend is a note, never the user's error
            self.capture.notes.append(f"no JAX backend: {exc}")

    def close(self) -> None:
        """Undo every hook, and nothing else: the last resort when `stop` itself failed."""
        self._running = self.jit.running = False
        self._stack.close()

    def _note_error(self, error: BaseException | None) -> None:
        if error is not None and self.capture.error is None:
            self.capture.error = source.cell_error(error)
            from .findings import concretization

            found = concretization.explain(error, self.capture)  # JAX's concretization errors, explained
            if found is None:
                found = self._donations.explain(error, self.capture)  # a donated array read after its call
            if found is not None:
                self.capture.findings.append(found)

    def _record_truncations(self) -> None:
        """64-bit dtypes JAX truncated, from its own warnings (capture/findings/dtype.py)."""
        log, self._truncations = self._truncations, None
        try:
            if log is not None:
                self.capture.findings.extend(log.findings(self.capture.calls))
        except Exception as exc:  # boundary: our failure never becomes the user's
            self.capture.notes.append(f"dtype truncations not recorded: {type(exc).__name__}: {exc}")


class CaptureContext:
    """`with jaxmagic.capture() as cap:` — records the block into `cap` (a Capture)."""

    def __init__(
        self,
        namespace: dict | None,
        values: bool = False,
        vmap: bool = False,
        sync: bool = False,
        grads: bool = False,
        shardings: bool = False,
        keys: bool = True,
        finish: Callable[[Capture], None] | None = None,
    ):
        self._session = CaptureSession(
            namespace, values=values, vmap=vmap, sync=sync, grads=grads, shardings=shardings, keys=keys, finish=finish
        )

    def __enter__(self) -> Capture:
        return self._session.start()

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        self._session.stop(exc)
        return False


def capture(
    namespace: dict | None = None,
    values: bool = False,
    vmap: bool = False,
    sync: bool = False,
    grads: bool = False,
    shardings: bool = False,
    keys: bool = True,
    finish: Callable[[Capture], None] | None = None,
) -> CaptureContext:
    """Record what JAX does inside a `with` block.

    `namespace` is where jitted functions are looked up and wrapped for per-call
    recording; by default the caller's module globals, as a notebook uses its user
    namespace. Functions jitted inside the block are always recorded.

    Every differentiation in the block is recorded in `cap.grads` (one `GradCall` each):
    calls of the functions `jax.grad`, `value_and_grad`, `jacrev` and `jacfwd` return, and
    calls of `jax.vjp`, `jvp` and `linearize`, eager or inside a jitted function or a vmap.
    With `grads=True` (what %%grad_graph uses) eager reverse-mode ones also get JAX's
    forward/backward split, traced once per function and avals right after the call: the
    user's Python in the function runs once more (its printing discarded), which is why it
    is opt-in like `values` and `vmap`. Grad functions made before the block by the unpatched
    `jax.grad` are not seen (capture/grads/patch.py).

    `values=True` also records forward values: a summary (shape, dtype, min, max, mean,
    NaN/Inf counts, tiny values printed) of every variable of the first call of each
    function and signature, in `Artifacts.values` (costs a second evaluation; see
    capture/values/forward.py for its guards).

    `vmap=True` also records, for programs that use `jax.vmap`, the position of the batch
    dimension in every variable (`Artifacts.batch_dims`): the program is traced once more
    with one more element per vmap, so Python side effects inside it run again
    (capture/values/batching.py).

    `shardings=True` (what %%sharding uses) also records where arrays live: every `jax.Array`
    bound in the namespace when the block ends (inside dicts, lists and tuples too) and the
    outputs of the first call of each jitted function and signature, as `ArrayRecord`s in
    `cap.arrays` (mesh, PartitionSpec, shards: metadata only), and the meshes in `cap.meshes`.

    `keys=True` (the default) records the lineage of every PRNG key the block touches in
    `cap.keys` (one `KeyRecord` per key or key array, parents first) and key reuse in
    `cap.findings`: eager `jax.random` calls (the module's functions are replaced for the
    block, capture/keys/patch.py) and the key flow inside recorded jitted programs, read from
    their jaxprs (capture/keys/flow.py). Key data is read once when the block ends; calls of a
    jitted function that handles keys each get a signature (about 5 us). `keys=False` turns
    it off.

    `sync=True` waits for each call's outputs right after the call (`block_until_ready`),
    so `JitCall.ready` is the exact time the device finished; this changes the program's
    timing. By default outputs are polled without blocking and `ready` is an upper bound.
    """
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    return CaptureContext(
        namespace, values=values, vmap=vmap, sync=sync, grads=grads, shardings=shardings, keys=keys, finish=finish
    )
