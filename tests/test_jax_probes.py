"""One probe per JAX internal or JAX text that jaxmagic reads (capture/jax_compat/), run on the installed JAX.

Each test runs JAX for real (a trace, a compile, a cache miss, an error JAX raises) and checks that the
compat function still finds what it looks for; its name and its failure message name the probe. Where
an internal legitimately does not exist on an older JAX, the test says which fallback that JAX gets and
checks the fallback instead. Runs on the newest JAX and on the lowest supported one (./dev FLOOR_TESTS).
Cheap by design: tiny arrays, one compile or none per test.
"""

from __future__ import annotations

import inspect
import logging
import sys
import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmagic.capture import jax_compat
from jaxmagic.capture.jax_compat import logs, monitoring
from jaxmagic.capture.jax_compat import random as jax_random
from jaxmagic.capture.jax_compat.explain import parse_explanation

P = jax.sharding.PartitionSpec


def probe(ok: bool, name: str, found: object) -> None:
    """Fail naming the probe and what it found instead."""
    assert ok, f"JAX {jax.__version__}: compat probe `{name}` no longer finds what it looks for (found {found!r})"


def eqns_of(fn, *args):
    return jax.make_jaxpr(fn)(*args).jaxpr.eqns


# -- tracing -------------------------------------------------------------------------------------


def test_jitted_function_type():
    jitted = jax.jit(lambda x: x)
    probe(jax_compat.PJIT_FUNCTION_TYPE is not None, "PJIT_FUNCTION_TYPE", jax_compat.PJIT_FUNCTION_TYPE)
    probe(jax_compat.is_jitted_function(jitted), "is_jitted_function", type(jitted))
    probe(not jax_compat.is_jitted_function(lambda x: x), "is_jitted_function (a plain function)", True)


def test_jit_info_reads_static_and_donated_arguments():
    info = jax_compat.jit_info(jax.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=0))
    found = (getattr(info, "static_argnums", None), getattr(info, "donate_argnums", None))
    probe(found == ((1,), (0,)), "jit_info (`_jit_info`, or `_cache_miss`'s closure on 0.4)", found)


def test_cached_programs_counts_the_programs_a_jitted_function_holds():
    """The count a hit's program is known from (capture/jit/functions.py `note_program`): one per
    distinct signature compiled, shared by `jax.jit(f)` made again for the same `f`, none before a call."""

    def double(x):
        return x * 2

    f = jax.jit(double)
    counts = [jax_compat.cached_programs(f)]
    f(jnp.ones(3))
    counts.append(jax_compat.cached_programs(f))
    f(jnp.ones(3) + 1)
    counts.append(jax_compat.cached_programs(f))
    f(jnp.ones(5))
    counts.append(jax_compat.cached_programs(f))
    probe(counts == [0, 1, 1, 2], "cached_programs (`_cache_size()`)", counts)
    again = jax_compat.cached_programs(jax.jit(double))
    probe(again in (0, 2), "cached_programs of jax.jit(f) made again (shared, or its own)", again)
    probe(jax_compat.cached_programs(lambda x: x) is None, "cached_programs of a plain function", None)


def test_jit_options_equal_for_equal_jits():
    options = jax_compat.jit_options(jax.jit(abs))
    probe(options is not None, "jit_options (PjitInfo's fields after fun_sourceinfo, fun_signature)", options)
    probe(options == jax_compat.jit_options(jax.jit(abs)), "jit_options equal for jax.jit(f) made twice", options)
    probe(options != jax_compat.jit_options(jax.jit(abs, donate_argnums=0)), "jit_options differ on donation", options)


def test_trace_state_clean_and_current_trace_probe():
    holder, top = jax_compat.current_trace_probe()
    inside: list = []

    def traced(x):
        inside.append((jax_compat.trace_state_clean(), holder.value is top))
        return x

    jax.make_jaxpr(traced)(1.0)
    outside = (jax_compat.trace_state_clean(), holder.value is top)
    probe(outside == (True, True) and inside == [(False, False)], "trace_state_clean / current_trace_probe", inside)
    fast = type(holder).__name__ != "_CleanProbe"  # JAX 0.4: no current-trace variable, trace_state_clean used
    probe(fast or not hasattr(jax, "typeof"), "current_trace_probe reads JAX's current-trace variable", holder)


def test_aval_of_and_is_tracer():
    probe(jax_compat.short_aval(jax_compat.aval_of(np.ones((2, 3), np.float32))) == "f32[2,3]", "aval_of", None)
    seen: list = []
    jax.make_jaxpr(lambda x: seen.append(jax_compat.is_tracer(x)) or x)(1.0)
    probe(seen == [True] and not jax_compat.is_tracer(jnp.ones(2)), "is_tracer (jax.core.Tracer)", seen)


def test_tracer_var_is_the_var_the_jaxpr_binds_or_none():
    """JAX 0.10: a jaxpr tracer's `.val` is the Var the finished jaxpr binds. JAX 0.4 renames Vars when
    it finishes a jaxpr: `tracer_vars()` is False and the grad view goes without (its fallback)."""
    seen: list = []

    def double(x):
        y = x * 2
        seen.append(jax_compat.tracer_var(y))
        return y

    closed = jax.make_jaxpr(double)(np.float32(1.0))
    bound = seen[0] is not None and any(v is seen[0] for v in closed.jaxpr.outvars)
    probe(jax_compat.tracer_vars() is bound, "tracer_vars agrees with a real trace", seen)
    if jax.__version_info__ >= (0, 7):  # `.val` is the Var from JAX 0.7 (0.6 has `jax.typeof`, not this yet)
        probe(bound, "tracer_var (DynamicJaxprTracer.val)", seen)


def test_primitive_names():
    names = jax_compat.primitive_names()
    probe({"add", "sin", "dot_general"} <= names, "primitive_names (jax.extend.core.primitives)", sorted(names)[:5])


def test_bind_eqn_evaluates_plain_and_sub_jaxpr_eqns():
    x = np.arange(4.0, dtype=np.float32)
    for fn in (jnp.sin, jax.jit(lambda v: v * 3), lambda v: jax.lax.cond(v[0] > 0, jnp.cos, jnp.sin, v)):
        closed = jax.make_jaxpr(fn)(x)
        env = dict(zip(closed.jaxpr.invars, [x]))
        for eqn in closed.jaxpr.eqns:
            ins = [jax_compat.literal_value(a) if jax_compat.is_literal(a) else env[a] for a in eqn.invars]
            env.update(zip(eqn.outvars, jax_compat.bind_eqn(eqn, ins)))
        out = env[closed.jaxpr.outvars[0]]
        probe(np.allclose(out, fn(x)), f"bind_eqn ({eqn.primitive.name}: get_bind_params, ctx.manager)", out)


def test_traced_consts_line_up_with_the_jaxpr_inputs():
    table = np.arange(6.0, dtype=np.float32)
    traced = jax.jit(lambda x: x + jnp.asarray(table)).trace(np.ones(6, np.float32))
    consts = jax_compat.traced_consts(traced)
    inputs = traced.jaxpr.jaxpr.invars
    probe(len(consts) + 1 == len(inputs), "traced_consts (Traced._consts lead the jaxpr's inputs)", len(consts))


def test_python_function():
    def f(x):
        return x

    probe(jax_compat.python_function(jax.jit(f)) is f, "python_function (jit's __wrapped__)", None)


def test_vmap_spec_and_vmap_sizes():
    def f(x, y):
        return x + y

    spec = jax_compat.vmap_spec(jax.vmap(f, in_axes=(0, None), axis_name="b"))
    found = spec and (spec["fun"], spec["in_axes"], spec["axis_name"])
    probe(found == (f, (0, None), "b"), "vmap_spec (vmap_f's closure)", found)
    probe(jax_compat.vmap_spec(jax.vmap(f))["axis_name"] is None, "vmap_spec: core.no_axis_name read as None", spec)
    sizes: list = []
    jax.vmap(jax.vmap(lambda v: sizes.append(jax_compat.vmap_sizes(v)) or v))(jnp.ones((3, 5)))
    probe(sizes == [[5, 3]], "vmap_sizes (BatchTracer._trace.axis_data.size, batch_dim, val)", sizes)


# -- jaxprs --------------------------------------------------------------------------------------


def test_short_aval_and_short_dtype():
    probe(jax_compat.short_aval(jax_compat.aval_of(jnp.ones(3, jnp.bfloat16))) == "bf16[3]", "short_aval", None)
    dtype = jax.random.key(0).dtype
    probe(jax_compat.short_dtype(dtype) == "key<fry>", "short_dtype (a key dtype)", jax_compat.short_dtype(dtype))
    probe(jax_compat.short_dtype(np.dtype("int32")) == "i32", "short_dtype", jax_compat.short_dtype(np.int32))


def test_jaxpr_types():
    closed = jax.make_jaxpr(jnp.sin)(1.0)
    probe(jax_compat.jaxpr_types() == (type(closed), type(closed.jaxpr)), "jaxpr_types", jax_compat.jaxpr_types())


def test_pretty_printer_names_vars_as_jax_prints_them():
    printer = jax_compat.jaxpr_pretty_printer()
    probe(printer is not None, "jaxpr_pretty_printer (core.pp_jaxpr, JaxprPpContext)", printer)
    closed = jax.make_jaxpr(jax.grad(lambda x: jnp.sum(jnp.sin(x) * x)))(jnp.ones(3))
    text, names = printer(closed.jaxpr)
    probe(text.startswith("{ lambda ") and "\x1b[" not in text, "jaxpr_pretty_printer (uncoloured text)", text[:80])
    for eqn in closed.jaxpr.eqns:
        for var in eqn.outvars:  # `_` is how JAX prints a dropped output (a DropVar on JAX 0.4)
            shown = "_" if jax_compat.is_dropvar(var) else names.get(var)
            probe(shown is not None and f"{shown}:" in text, "is_dropvar / printed var names", shown)


def test_printer_names_a_jit_body_like_its_call_where_jaxmagic_says_so():
    """`printer_names_jit_bodies_like_calls` is checked against the printer's own naming."""
    closed = jax.make_jaxpr(lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x) + 1)(jnp.ones(3))
    text, names = jax_compat.jaxpr_pretty_printer()(closed.jaxpr)
    (call,) = [e for e in closed.jaxpr.eqns if jax_compat.has_sub_jaxprs(e)]
    (_, inner), *_ = jax_compat.sub_jaxprs(call, opened=True)
    alike = names[inner.invars[0]] == names[call.invars[0]]
    probe(
        jax_compat.printer_names_jit_bodies_like_calls() == alike,
        "printer_names_jit_bodies_like_calls (JaxprPpContext.suggest_same_var_names)",
        text,
    )


def test_module_device_count_reads_the_lowered_modules_partitions():
    """A one-device program's lowered module says 1; one sharded over 8 devices says 8."""
    from jaxmagic.capture.jax_compat import stablehlo

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:8]), ("x",))
    sharded = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    one = jax.jit(jnp.sin).lower(jnp.ones(8)).as_text()
    eight = jax.jit(jnp.sin, in_shardings=sharded, out_shardings=sharded).lower(jnp.ones(8)).as_text()
    probe(stablehlo.module_device_count(one) == 1, "module_device_count (mhlo.num_partitions)", one[:300])
    probe(stablehlo.module_device_count(eight) == 8, "module_device_count (mhlo.num_partitions)", eight[:300])
    assert stablehlo.module_device_count(None) is None and stablehlo.module_device_count("module @m {") is None


def test_literals_and_constants():
    (eqn,) = eqns_of(lambda x: x * 2.5, np.float32(1.0))
    literal = [a for a in eqn.invars if jax_compat.is_literal(a)]
    probe(len(literal) == 1, "is_literal (a Literal operand)", eqn.invars)
    probe(float(jax_compat.literal_value(literal[0])) == 2.5, "literal_value", literal[0])
    table = np.arange(3.0)
    closed = jax.make_jaxpr(lambda x: x + table)(np.ones(3))
    held = [jax_compat.constant_value(c) for c in closed.consts]
    probe(any(isinstance(c, np.ndarray) and np.array_equal(c, table) for c in held), "constant_value", held)


def test_argument_paths():
    closed = jax.make_jaxpr(lambda p, n: p["w"] * n)({"w": 1.0}, 2.0)
    found = jax_compat.argument_paths(closed.jaxpr)
    probe(found == ("p['w']", "n"), "argument_paths (jaxpr.debug_info.arg_names)", found)


def test_rebuilding_jaxprs_and_eqns():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) + 1)(1.0)
    jaxpr = closed.jaxpr
    fewer = jax_compat.jaxpr_with_eqns(jaxpr, jaxpr.eqns[:1])
    probe(len(fewer.eqns) == 1 and fewer.invars == jaxpr.invars, "jaxpr_with_eqns (Jaxpr.replace)", fewer)
    again = jax_compat.closed_jaxpr_with(closed, jaxpr, list(closed.consts))
    same_body = again.jaxpr is jaxpr or (again.jaxpr is again and again.eqns == jaxpr.eqns)  # JAX 0.11: one type
    probe(
        type(again) is type(closed) and same_body and list(again.consts) == list(closed.consts),
        "closed_jaxpr_with",
        again,
    )
    eqn = jax_compat.eqn_with_params(jaxpr.eqns[0], {"accuracy": None})
    probe(eqn.params == {"accuracy": None} and eqn.primitive is jaxpr.eqns[0].primitive, "eqn_with_params", eqn)
    renamed = jax_compat.with_vars(closed, outvars=[jaxpr.eqns[0].outvars[0]])
    probe(renamed.jaxpr.outvars == [jaxpr.eqns[0].outvars[0]], "with_vars (debug info checked)", renamed)


def test_sub_jaxprs_of_control_flow():
    (eqn,) = [e for e in eqns_of(lambda v: jax.lax.cond(v > 0, jnp.sin, jnp.cos, v), 1.0) if e.primitive.name == "cond"]
    labels = [label for label, _ in jax_compat.sub_jaxprs(eqn)]
    probe(labels == ["branches[0]", "branches[1]"], "sub_jaxprs (a cond's branches)", labels)


# -- source info ---------------------------------------------------------------------------------


def helper(x):
    return jnp.sin(x)  # the probes' user line


HELPER_LINE = helper.__code__.co_firstlineno + 1


def test_user_frame_and_user_stack():
    (eqn,) = eqns_of(lambda x: helper(x), 1.0)
    frame = jax_compat.user_frame(eqn.source_info)
    found = frame and (frame.file_name, frame.start_line, frame.function_name)
    probe(found == (__file__, HELPER_LINE, "helper"), "user_frame (source_info_util.user_frame)", found)
    stack = jax_compat.user_stack(eqn.source_info)
    probe(
        [f[2].rsplit(".", 1)[-1] for f in stack] == ["<lambda>", "helper"] and stack[-1][:2] == (__file__, HELPER_LINE),
        "user_stack (traceback.raw_frames, is_user_filename, raw_frame_to_frame)",
        stack,
    )
    code = helper.__code__
    probe(jax_compat.frame_line(code, 0)[0] == __file__, "frame_line", jax_compat.frame_line(code, 0))


def test_name_stack_text_and_path():
    def f(x):
        with jax.named_scope("block"):
            return jnp.sin(x)

    eqns = eqns_of(jax.grad(f), 1.0)
    texts = {jax_compat.name_stack_text(e.source_info) for e in eqns}
    probe("jvp(block)" in texts, "name_stack_text (name_stack.stack, Transform entries)", texts)
    paths = {tuple(jax_compat.name_stack_path(e.source_info)) for e in eqns}
    probe(("jvp(\u2026)", "block") in paths, "name_stack_path", paths)
    lowered = {jax_compat.lowered_name_stack_text(e.source_info) for e in eqns}
    probe("jvp(block)" in lowered, "lowered_name_stack_text (str(name_stack))", lowered)
    entries = {jax_compat.name_stack_entries(e.source_info) for e in eqns}
    probe(((True, "jvp"), (False, "block")) in entries, "name_stack_entries", entries)


def test_transforms_in_the_name_stack():
    (eqn,) = eqns_of(jax.vmap(jax.vmap(jnp.sin)), jnp.ones((2, 3)))
    probe(jax_compat.has_transform(eqn.source_info, "vmap"), "has_transform", eqn.source_info.name_stack)
    depth = jax_compat.transform_depth(eqn.source_info, "vmap")
    probe(depth == 2, "transform_depth (nested vmaps)", depth)


def test_scoped_user_context_and_drop_scopes():
    (eqn,) = eqns_of(lambda x: helper(x), 1.0)

    def replayed(x):
        with jax_compat.scoped_user_context(eqn.source_info, "extra"):
            return jax_compat.bind_eqn(eqn, [x])[0]

    (again,) = eqns_of(replayed, 1.0)
    frame = jax_compat.user_frame(again.source_info)
    probe(frame is not None and frame.start_line == HELPER_LINE, "scoped_user_context (user_context)", frame)
    probe(jax_compat.name_stack_text(again.source_info).endswith("extra"), "scoped_user_context's scope", again)
    dropped = jax_compat.drop_scopes(again.source_info, lambda name: name == "extra")
    probe("extra" not in jax_compat.name_stack_text(dropped), "drop_scopes (SourceInfo.replace)", dropped)


def test_source_info_now_and_hide_from_jax(tmp_path):
    probe(getattr(jax_compat.source_info_now(), "traceback", None) is not None, "source_info_now", None)
    hidden = tmp_path / "hidden_library.py"
    hidden.write_text("import jax.numpy as jnp\ndef g(x):\n    return jnp.cos(x)\n")
    namespace: dict = {}
    exec(compile(hidden.read_text(), str(hidden), "exec"), namespace)
    jax_compat.hide_from_jax(str(tmp_path))  # raises under strict mode where JAX's exclusion list moved
    (eqn,) = eqns_of(lambda x: namespace["g"](x), 1.0)
    frame = jax_compat.user_frame(eqn.source_info)
    probe(frame is not None and frame.file_name == __file__, "hide_from_jax (register_exclusion)", frame)


def test_remat_scope_names_the_recomputation():
    def f(x):
        return jnp.sum(jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))(x))

    closed = jax.make_jaxpr(jax.grad(f))(jnp.ones(3))
    scopes: set = set()

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            scopes.update(name for _, name in jax_compat.name_stack_entries(eqn.source_info))
            for _, sub in jax_compat.sub_jaxprs(eqn, opened=True):
                walk(sub)

    walk(closed.jaxpr)
    probe(jax_compat.REMAT_SCOPE in scopes, "REMAT_SCOPE (checkpoint's recomputation scope)", scopes)


# -- sharding ------------------------------------------------------------------------------------


def mesh():
    return jax.sharding.Mesh(np.array(jax.devices()[:8]), ("d",))


def test_spec_text_and_axis_types():
    probe(jax_compat.spec_text(P(None, "d")) == "P(None, 'd')", "spec_text", jax_compat.spec_text(P(None, "d")))
    types = jax_compat.axis_types(mesh())
    probe(len(types) == 1, "axis_types (Mesh.axis_types, one per axis)", types)


def test_spec_partitions():
    """A spec's entries on every JAX: `partitions` where JAX has it (iterating a spec with unreduced axes
    raises there), the spec's own items before (JAX 0.6 takes `unreduced=` but has no `partitions`)."""
    plain = jax_compat.spec_partitions(P(None, ("a", "b"), "c"))
    probe(plain == (None, ("a", "b"), "c"), "spec_partitions", plain)
    try:
        spec = P("y", None, unreduced={"x"})
    except TypeError:  # a JAX without unreduced axes
        return
    found = jax_compat.spec_partitions(spec)
    probe(found == ("y", None), "spec_partitions (PartitionSpec with unreduced axes)", found)


def test_context_meshes():
    """`jax.set_mesh` (or `jax.sharding.use_mesh`) where JAX has it; older JAX: `with mesh:` only, and
    context_meshes is empty (its fallback: the mesh is read from the arrays' shardings)."""
    setter = getattr(jax, "set_mesh", None) or getattr(jax.sharding, "use_mesh", None)
    if setter is None:
        with mesh():
            probe(jax_compat.context_meshes() == [], "context_meshes (no mesh context on this JAX)", None)
        return
    with setter(mesh()):
        found = jax_compat.context_meshes()
    probe(found and tuple(found[0].axis_names) == ("d",), "context_meshes (get_mesh, get_abstract_mesh)", found)


def test_traced_spec():
    """Explicit-sharding mode puts the spec in the aval (JAX 0.6 and later); elsewhere None."""
    explicit = getattr(getattr(jax.sharding, "AxisType", None), "Explicit", None)
    if explicit is None:
        seen: list = []
        jax.make_jaxpr(lambda x: seen.append(jax_compat.traced_spec(jax_compat.aval_of(x))) or x)(jnp.ones(8))
        probe(seen == [None], "traced_spec (no explicit sharding on this JAX: None)", seen)
        return
    m = jax.make_mesh((8,), ("d",), axis_types=(explicit,))
    x = jax.device_put(jnp.ones(8), jax.sharding.NamedSharding(m, P("d")))
    seen = []
    jax.jit(lambda v: seen.append(jax_compat.traced_spec(jax_compat.aval_of(v))) or v)(x)
    probe(seen and jax_compat.spec_text(seen[0]) == "P('d',)", "traced_spec (aval.sharding.spec)", seen)


def test_shard_map_specs():
    try:
        from jax import shard_map
    except ImportError:  # JAX 0.4: experimental
        from jax.experimental.shard_map import shard_map
    fn = shard_map(lambda x: x * 2, mesh=mesh(), in_specs=(P("d"),), out_specs=P("d"))
    (eqn,) = [e for e in eqns_of(fn, jnp.ones(8)) if e.primitive.name == "shard_map"]
    found = jax_compat.shard_map_specs(eqn)
    probe(found == ((P("d"),), (P("d"),)), "shard_map_specs (in_specs, or in_names on 0.4)", found)


# -- lowering ------------------------------------------------------------------------------------


def test_dce_jaxpr():
    closed = jax.make_jaxpr(lambda x: (jnp.cos(x), jnp.sin(x))[1])(1.0)
    pruned = jax_compat.dce_jaxpr(closed.jaxpr)
    found = pruned and [e.primitive.name for e in pruned.eqns]
    probe(found == ["sin"], "dce_jaxpr (partial_eval.dce_jaxpr)", found)


def test_stablehlo_with_locations():
    text = jax_compat.stablehlo_with_locations(jax.jit(helper).lower(1.0))
    probe("loc(" in text and "stablehlo.sine" in text, "stablehlo_with_locations", text[:120])


# -- config --------------------------------------------------------------------------------------


def test_backends_are_initialized():
    jnp.ones(1).block_until_ready()
    probe(jax_compat.backends_are_initialized(), "backends_are_initialized (xla_bridge)", None)


def test_debug_checks_off():
    before = jax.config.jax_debug_nans
    jax.config.update("jax_debug_nans", True)
    try:
        with jax_compat.debug_checks_off():
            inside = jax.config.jax_debug_nans
            jnp.log(-jnp.ones(1)).block_until_ready()  # no FloatingPointError: the check is off
        probe(not inside and jax.config.jax_debug_nans, "debug_checks_off", inside)
    finally:
        jax.config.update("jax_debug_nans", before)


def test_explain_flag_is_set_for_this_thread_only():
    state = jax_compat.explain_misses_state()
    probe(state is not None, "explain_misses_state (config.explain_cache_misses)", state)
    explaining = jax_compat.LocalExplaining(state)
    explaining.on()
    elsewhere: list = []
    try:
        thread = threading.Thread(target=lambda: elsewhere.append(jax.config.jax_explain_cache_misses))
        thread.start()
        thread.join()
        here = jax.config.jax_explain_cache_misses
    finally:
        probe(explaining.off(), "LocalExplaining.off", None)
    probe(here and elsewhere == [False] and not state.get_global(), "LocalExplaining (thread-local)", elsewhere)


# -- logs, explanations, monitoring -----------------------------------------------------------------


class _Records(logging.Filter):
    def __init__(self):
        super().__init__()
        self.texts: list[str] = []

    def filter(self, record):
        self.texts.append(record.getMessage())
        return False


def test_cache_miss_is_logged_and_explained():
    """A shape change with `jax_explain_cache_misses` on: JAX logs a record from one of EMITTERS, that
    `kind_of` calls a miss and the parser reads as a shape change of `x`. Where explaining breaks
    programs (JAX 0.9), jaxmagic leaves the flag off: its own signature comparison is the fallback."""
    safe = jax_compat.explaining_is_safe()
    probe(safe is not None, "explaining_is_safe (asked of JAX)", safe)
    if not safe:
        return
    records = _Records()
    loggers = [logging.getLogger(name) for name in logs.EMITTERS]
    explaining = jax_compat.LocalExplaining(jax_compat.explain_misses_state())
    for logger in loggers:
        logger.addFilter(records)
    three, four = jnp.ones(3), jnp.ones(4)  # made first: their own ops miss too

    @jax.jit
    def scaled(x):
        return x * 2

    explaining.on()
    try:
        scaled(three)
        scaled(four)
    finally:
        explaining.off()
        for logger in loggers:
            logger.removeFilter(records)
    misses = [t for t in records.texts if logs.kind_of(t) == "miss" and "scaled" in t]
    probe(len(misses) == 2, "logs.EMITTERS / kind_of (TRACING CACHE MISS records)", records.texts)
    parsed = parse_explanation(misses[1], ["x"])
    found = parsed and (parsed.kind, [c.path for c in parsed.changes])
    probe(found == ("shape", ["x"]), "explain.parse_explanation (a shape change)", misses[1])


def test_monitoring_events_and_unregister():
    durations: list[str] = []

    def listener(event, duration, **kwargs):
        durations.append(event)

    for kind in ("event", "event_duration"):
        probe(monitoring.unregister(kind) is not None, f"monitoring.unregister({kind!r})", None)
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        jax.jit(lambda x: x - 7)(jnp.ones(2))
    finally:
        monitoring.unregister("event_duration")(listener)
    phases = {monitoring.phase_of(name) for name in durations}
    probe({"trace", "lower", "compile"} <= phases, "monitoring.phase_of (JAX's event names)", durations)
    count = len(durations)
    jax.jit(lambda x: x - 8)(jnp.ones(2))
    probe(len(durations) == count, "monitoring.unregister removed the listener", durations[count:])


# -- errors and warnings -------------------------------------------------------------------------


def test_concretization_error_is_read():
    def to_int(n):
        return int(n)

    with pytest.raises(Exception) as raised:
        jax.jit(to_int)(1.0)
    kind = jax_compat.concretization_kind(raised.value)
    probe(kind in ("TracerIntegerConversionError", "ConcretizationTypeError"), "concretization_kind", kind)
    origin = jax_compat.concretization_origin(str(raised.value))
    found = origin and (origin["function"], origin["file"], origin["traced_for"], origin["args"])
    probe(found == ("to_int", __file__, "jit", ["n"]), "concretization_origin (JAX's message)", str(raised.value))


def test_tracer_transform_is_read():
    with pytest.raises(Exception) as raised:
        jax.vmap(lambda x: bool(x))(jnp.ones(2))
    found = jax_compat.tracer_transform(str(raised.value))
    probe(
        found == "vmap",
        "tracer_transform ('This BatchTracer (0.12: VmapTracer) with object id')",
        str(raised.value)[:200],
    )


def test_deleted_array_error_is_read():
    y = jnp.ones(3)
    for _ in range(3):  # the eager op's program cached and on JAX 0.4's C++ path, which words it otherwise
        (y - 2.5).block_until_ready()
    jax.jit(lambda a: a + 1, donate_argnums=0)(y)
    with pytest.raises((RuntimeError, ValueError)) as raised:
        y - 2.5
    probe(
        jax_compat.is_deleted_array_error(raised.value), "is_deleted_array_error (a cached eager op)", str(raised.value)
    )
    x = jnp.ones(3)
    jax.jit(lambda a: a + 1, donate_argnums=0)(x)
    probe(jax_compat.is_deleted(x), "is_deleted (Array.is_deleted)", x)
    for read in (lambda: x + 1, lambda: x * 3.5, lambda: np.asarray(x)):
        with pytest.raises((RuntimeError, ValueError)) as raised:
            read()
        probe(jax_compat.is_deleted_array_error(raised.value), "is_deleted_array_error", str(raised.value))


def test_dtype_truncation_warning_is_read():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jnp.zeros(3, dtype=jnp.float64)
        jnp.ones(3, "float64")
        jax.random.normal(jax.random.key(0), (2,), dtype="float64")  # no function named: JAX 0.7 leaves two spaces
    found = [jax_compat.dtype_truncation(str(w.message)) for w in caught]
    want = {"requested": "float64", "given": "float32"}
    probe(
        [f and {k: f[k] for k in want} for f in found] == [want, want, want] and found[0]["where"] == "zeros",
        "dtype_truncation (JAX's x64 warning)",
        [str(w.message)[:90] for w in caught],
    )


def test_debug_check_stop_is_read():
    before = jax.config.jax_debug_nans
    jax.config.update("jax_debug_nans", True)
    try:
        for fn, names in ((jnp.log, ("log", "jit(log)")), (jax.jit(lambda v: jnp.log(v)), ("log", "jit(<lambda>)"))):
            with pytest.raises(FloatingPointError) as raised:
                fn(-jnp.ones(2)).block_until_ready()
            found = jax_compat.debug_check_stop(str(raised.value))
            probe(found is not None and found[0] == "nan" and found[1] in names, "debug_check_stop", str(raised.value))
    finally:
        jax.config.update("jax_debug_nans", before)


# -- random ------------------------------------------------------------------------------------------


def test_random_module_files_are_recognised():
    from jaxmagic.capture.keys.flow import origin

    (eqn,) = [e for e in eqns_of(lambda k: jax.random.normal(k, (2,)), jax.random.key(0)) if e.source_info]
    where, _, api = origin(eqn.source_info)
    probe(api == "normal", "random.is_random_file (JAX's random module's files)", api)
    probe(where is not None and where.file == __file__, "keys origin's user line", where)


def test_eager_trace_bind_is_reachable():
    """JAX's eager trace class binds every op an eager transform runs; `from_jit_dispatch` tells a
    jitted function's own dispatch (`cache_miss`) from a transformation's bind."""
    eval_trace = jax_random.eval_trace_class()
    probe(eval_trace is not None, "random.eval_trace_class (EvalTrace.process_primitive)", eval_trace)
    original = eval_trace.__dict__["process_primitive"]
    seen: list = []

    def watching(self, primitive, args, params, /):
        seen.append((primitive.name, jax_random.from_jit_dispatch(sys._getframe(1))))
        return original(self, primitive, args, params)

    ones = jnp.ones(2)
    eval_trace.process_primitive = watching
    try:
        jax.vmap(jnp.sin)(ones)
        seen_vmap, seen[:] = list(seen), []
        jax.jit(lambda v: v * 5)(ones)  # JAX 0.10 binds the program here, from its dispatch; 0.4 does not
    finally:
        eval_trace.process_primitive = original
    probe(seen_vmap and not any(f for _, f in seen_vmap), "process_primitive sees an eager vmap's binds", seen_vmap)
    probe(all(from_jit for _, from_jit in seen), "from_jit_dispatch (a jitted call's own bind)", seen)
    dispatch = getattr(inspect.unwrap(getattr(jax.jit(abs), "_cache_miss", abs)), "__code__", None)
    probe(dispatch is not None and dispatch.co_name == "cache_miss", "from_jit_dispatch: jit's dispatch name", dispatch)


def test_key_data_reads_the_words_without_a_dispatch():
    keys = jax.random.split(jax.random.key(3), 4)
    found = jax_random.key_data(keys)
    probe(np.array_equal(found, np.asarray(jax.random.key_data(keys))), "random.key_data", found)
    probe(getattr(keys, "_base_array", None) is not None, "random.key_data (a key array's _base_array)", type(keys))


def _lowered_and_compiled():
    def step(x):
        return jnp.sin(x) * 2.0

    lowered = jax.jit(step).lower(jnp.ones((8, 4)))
    return lowered, lowered.compile()


def test_stablehlo_text_parses_into_functions_with_located_ops():
    """`lowered_text` gets the StableHLO with locations; `parse_module` finds `main` and a `sin` op with its
    user frame (the level links of %%jaxpr stand on this)."""
    from jaxmagic.capture.jax_compat import stablehlo

    lowered, _ = _lowered_and_compiled()
    text, error = stablehlo.lowered_text(lowered)
    probe(text is not None and "loc(" in text, "stablehlo.lowered_text (with locations)", error)
    module = stablehlo.parse_module(text)
    probe(module.main is not None, "stablehlo.parse_module finds @main", module.func_names)
    ops = module.funcs[module.main]
    sines = [i for i, name in enumerate(ops.name) if name and name.endswith("sin")]
    probe(sines != [], "stablehlo: an op named after the eqn (…/sin)", ops.name)
    probe(ops.frame[sines[0]] is not None, "stablehlo: the sin op's user frame", ops.frame[sines[0]])


def test_hlo_text_groups_instructions_by_their_metadata():
    """`compiled_text` gets the optimized HLO; `HloModule` groups its instructions by op_name with a frame."""
    from jaxmagic.capture.jax_compat import hlo

    _, compiled = _lowered_and_compiled()
    text, error = hlo.compiled_text(compiled)
    probe(text is not None and "op_name=" in text, "hlo.compiled_text (with metadata)", error)
    module = hlo.HloModule(text)
    sines = [name for name in module.by_name if name.endswith("sin")]
    probe(sines != [], "hlo.HloModule.by_name: an instruction named …/sin", list(module.by_name)[:10])
    probe(module.comp_names != [], "hlo.HloModule: its computations", module.comp_names)


def test_main_shardings_reads_a_sharded_signature():
    """`main_shardings` reads each @main parameter's sharding attribute (Shardy or GSPMD wording)."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from jaxmagic.capture.jax_compat import stablehlo

    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
    x = jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, PartitionSpec("x")))
    lowered = jax.jit(lambda v: v + 1).lower(x)
    text, _ = stablehlo.lowered_text(lowered)
    found = stablehlo.main_shardings(text)
    probe(len(found["args"]) == 1 and found["args"][0] is not None, "stablehlo.main_shardings", found)


def test_compile_events_name_the_jitted_function():
    """JAX names a jitted function's lowering and compile events `jit(f)` (`pjit(f)` before): the
    timeline puts them on `f`'s lane (monitoring.event_function) and tells eager ops' compiles apart
    (monitoring.jit_event_name)."""
    from jaxmagic.capture.jax_compat.monitoring import event_function, jit_event_name

    names: list[str] = []

    def listen(event, duration, **kwargs):
        names.append(str(kwargs.get("fun_name", "")))

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:

        def probe_function_name(x):
            return x * 3.0

        jax.jit(probe_function_name)(jnp.arange(7.0))
    finally:
        unregister = monitoring.unregister("event_duration")
        if unregister is not None:
            unregister(listen)
    if not any(names):
        # JAX 0.4's duration events carry no fun_name: the recorder attributes a compile to the call that was
        # running when it fired, and compiles outside any call stay unnamed ("(unnamed compile)")
        assert event_function(None) == "(unnamed compile)"
        return
    probe(
        any(event_function(n) == "probe_function_name" and n != "probe_function_name" for n in names),
        "monitoring.event_function (a compile event's fun_name is jit(f))",
        names,
    )
    probe(
        jit_event_name("probe_function_name") in names or "pjit(probe_function_name)" in names,
        "monitoring.jit_event_name",
        names,
    )


def test_jaxpr_being_lowered_is_the_jaxpr_the_call_traced():
    """Read from a monitoring listener at the end of a lowering: the object `trace().jaxpr` returns."""
    seen: list = []
    x = jnp.ones(3)

    def listener(event: str, duration: float, **kwargs) -> None:
        if monitoring.phase_of(event) == "lower":
            seen.append(jax_compat.jaxpr_being_lowered())

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        f = jax.jit(lambda x: jnp.sin(x) * 3)
        f(x)
    finally:
        monitoring.unregister("event_duration")(listener)
    assert len(seen) == 1 and seen[0] is f.trace(x).jaxpr


def test_scan_counts_are_read():
    k = jnp.float32(3.0)
    closed = jax.make_jaxpr(lambda c, xs: jax.lax.scan(lambda c, x: (c + x * k, c), c, xs))(1.0, jnp.ones(4))
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
    counts = jax_compat.scan_counts(eqn.params)
    probe(counts == (1, 1), "scan_counts (num_consts and num_carry; JAX 0.12: ft_in)", counts)
