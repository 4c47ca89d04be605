"""Link every eqn to the StableHLO ops and compiled HLO instructions made from it.

We match through what JAX and XLA write themselves, never by guessing from op kinds:

* JAX gives each op it lowers an MLIR location: a name (the name stack plus the primitive,
  `jit(f)/layer_0/transpose(jvp(mlp))/dot_general`) around the user's call site
  (`"cell.py":12:8 to :30`, innermost user frame first). `lowered.as_text(debug_info=True)`
  prints them as `loc(#locN)` references resolved at the end of the module
  (read by capture/jax_compat/stablehlo.py).
* Ops lowered into a separate function (nested `jit`, a `scan` body, JAX's cached helpers) carry
  names relative to that function; ops inside `sdy.manual_computation` (shard_map) relative to it.
  XLA composes the caller's name in front when it inlines them and writes the result into HLO
  `metadata={op_name="..." stack_frame_id=N}` (older XLA: `source_file=`/`source_line=`), so an
  op's full name (caller names + its own) is the op_name of the HLO instructions made from it
  (read by capture/jax_compat/hlo.py).

StableHLO. Eqns are visited in graph order (graph.py's depth-first order). The eqns of one jaxpr
are aligned, in text order, with the ops of the function or region span their jaxpr was lowered
into: JAX lowers eqns one after another, so an eqn's ops lie between its first op and the next
eqn's. An op is an eqn's when its name is exactly `<context>/<name stack>/<primitive>` (a
nested jit's call reads `jit(inner)`, or `jvp(jit(inner))` under a trailing transform) and its
user frame is the eqn's (an eqn without a user frame inherits its owner's, as JAX does). Where a
sub-jaxpr went (inline under some context such as `cond/branch_1_fun`, or into a called
function) is decided by which candidate holds most of its eqns; ties leave it unlinked. Guards
against taking a later eqn's op: eqns `jit` removes as dead code are skipped; an eqn is not
placed after an op of one of the next eqns; ops inside the regions of placed ops belong to their
bodies; an owner without ops of its own is placed by its body's first op. Primitives JAX lowers
through other primitives (`integer_pow` with y > 3 as `.../mul` ops) get those ops when they sit
at the eqn's position under its name and no eqn there has that primitive.

Ambiguity: eqns with the same primitive, name stack and source position ("twins": a Python loop
without name scopes) are resolved in order of appearance. Adjacent twins share the run of such
ops: in equal parts when they share JAX's cached lowering (same params and input avals), else by
the one cut that looks like separate lowerings (data flow, see `segment.py`), else not at all.
HLO instructions carrying several twins' metadata are shared out by result shape (the two dots
of a matmul's gradient), or one each in text order when there is one per twin; otherwise the
twins get no HLO lines and a note counts them (XLA duplicates instructions into fusions, so
order alone would mislead).

Eqns that lower to nothing (dead code, empty jits, stop_gradient, no-op converts) get no lines.
Owner eqns (with sub-jaxprs) get their own ops only (the `call` of a nested jit, the `case` of a
cond, the `while` and helper ops of a scan), not their sub-eqns'; the front end can aggregate.
HLO lines include the fusion instructions calling the computations that hold an eqn's
instructions; `hlo_comp` names the fused computation (else the first one) holding them.

Modules: `links` (the entry point and the result), `eqns` (the program's eqns as op names read),
`ops` (the StableHLO ops as the aligner searches them), `search` / `neighbours` / `align` /
`twins` / `segment` / `bodies` (the StableHLO alignment), `hlo_links` (HLO through metadata).
"""

from .links import LevelLinks, link_levels

__all__ = ["LevelLinks", "link_levels"]
