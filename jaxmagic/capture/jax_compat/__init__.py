"""Every private JAX name and every JAX text format jaxmagic reads, each behind a feature check.

A JAX release that moves one of them breaks one function here, whose fallback degrades a feature
instead of failing; tests/test_jax_probes.py runs each probe on the installed JAX and fails, naming
it, when it no longer finds what it looks for. One module per concern:

* `tracing`: jitted functions and their options, the trace state, tracers, one eqn evaluated;
* `jaxprs`: jaxpr classes, avals and literals in print, the jaxpr printer, rebuilding, the one
  walker over the sub-jaxprs an eqn keeps in its params;
* `source_info`: an eqn's user frames and name stack, JAX's traceback filter;
* `sharding`: meshes, axis types, PartitionSpecs as each JAX keeps and prints them;
* `lowering`: jit's dead-code elimination, StableHLO text with source locations;
* `config`: backends, the debug-NaN checks, the cache-miss explain flag;
* `logs`: JAX's cache log records (emitting loggers, first words), whether explaining is safe, its key differ guarded;
* `explain`: the parser of JAX's cache-miss explanations;
* `monitoring`: `jax.monitoring` event names, removing a listener;
* `errors`: JAX's exceptions and warnings read (concretization, deleted buffers, dtype truncation);
* `random`: where `jax.random` lives, the eager trace's bind.
* `stablehlo`, `hlo`: the StableHLO and compiled HLO texts, read into plain structures.

Callers import the package (`from ..jax_compat import x`, `jax_compat.x`): the names below are its surface.
"""

from __future__ import annotations

import jax  # noqa: F401 - `jax_compat.jax.__version__` in tests' messages

from .config import (
    LocalExplaining,
    asked_by_user,
    backends_are_initialized,
    compile_logs_off,
    debug_checks_off,
    explain_misses_state,
    jit_disabled_probe,
)
from .errors import (
    concretization_kind,
    concretization_origin,
    debug_check_stop,
    dtype_truncation,
    is_deleted,
    is_deleted_array_error,
    tracer_transform,
)
from .jaxprs import (
    argument_paths,
    closed_jaxpr_with,
    constant_value,
    distinct_jaxprs,
    eqn_with_params,
    has_sub_jaxprs,
    is_dropvar,
    is_literal,
    jaxpr_pretty_printer,
    jaxpr_types,
    jaxpr_with_eqns,
    literal_value,
    printer_names_jit_bodies_like_calls,
    python_callback_in,
    scan_counts,
    short_aval,
    short_dtype,
    sub_jaxprs,
    var_name,
    with_vars,
)
from .logs import explaining_is_safe, guarded_key_diff
from .lowering import dce_jaxpr, jaxpr_being_lowered, stablehlo_with_locations
from .sharding import axis_types, context_meshes, shard_map_specs, spec_partitions, spec_text, traced_spec
from .source_info import (
    REMAT_SCOPE,
    drop_scopes,
    frame_line,
    has_transform,
    hide_from_jax,
    lowered_name_stack_text,
    name_stack_entries,
    name_stack_path,
    name_stack_text,
    scoped_user_context,
    source_info_now,
    transform_depth,
    user_frame,
    user_stack,
)
from .tracing import (
    PJIT_FUNCTION_TYPE,
    aval_of,
    bind_eqn,
    cached_programs,
    current_trace_probe,
    is_jitted_function,
    is_tracer,
    jit_info,
    jit_options,
    primitive_names,
    python_function,
    trace_state_clean,
    traced_consts,
    tracer_var,
    tracer_vars,
    vmap_sizes,
    vmap_spec,
)

__all__ = [
    "PJIT_FUNCTION_TYPE",
    "REMAT_SCOPE",
    "LocalExplaining",
    "asked_by_user",
    "argument_paths",
    "aval_of",
    "axis_types",
    "backends_are_initialized",
    "bind_eqn",
    "cached_programs",
    "closed_jaxpr_with",
    "concretization_kind",
    "concretization_origin",
    "constant_value",
    "distinct_jaxprs",
    "context_meshes",
    "current_trace_probe",
    "dce_jaxpr",
    "debug_check_stop",
    "compile_logs_off",
    "debug_checks_off",
    "drop_scopes",
    "dtype_truncation",
    "eqn_with_params",
    "explain_misses_state",
    "jit_disabled_probe",
    "explaining_is_safe",
    "guarded_key_diff",
    "frame_line",
    "has_sub_jaxprs",
    "has_transform",
    "jaxpr_being_lowered",
    "hide_from_jax",
    "is_deleted",
    "is_deleted_array_error",
    "is_dropvar",
    "is_jitted_function",
    "is_literal",
    "is_tracer",
    "jaxpr_pretty_printer",
    "printer_names_jit_bodies_like_calls",
    "python_callback_in",
    "scan_counts",
    "jaxpr_types",
    "jaxpr_with_eqns",
    "jit_info",
    "jit_options",
    "literal_value",
    "lowered_name_stack_text",
    "name_stack_entries",
    "name_stack_path",
    "name_stack_text",
    "primitive_names",
    "python_function",
    "scoped_user_context",
    "shard_map_specs",
    "short_aval",
    "short_dtype",
    "source_info_now",
    "spec_partitions",
    "spec_text",
    "stablehlo_with_locations",
    "sub_jaxprs",
    "trace_state_clean",
    "traced_consts",
    "traced_spec",
    "tracer_transform",
    "tracer_var",
    "tracer_vars",
    "transform_depth",
    "user_frame",
    "user_stack",
    "var_name",
    "vmap_sizes",
    "vmap_spec",
    "with_vars",
]
