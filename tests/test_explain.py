"""`parse_explanation` on every wording JAX has used, and on records live JAX logs now.

RECORDED holds verbatim records from real runs (experiment scripts of the issue-4
research) on jax 0.10.2 (C), 0.8.3 and 0.6.2 (B) and 0.4.38 (A), copied here because the run
outputs do not exist in CI. CONSTRUCTED holds texts JAX's source formats can produce
but the runs did not (rare branches), built from the f-strings of each version.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Iterator

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jaxmagic.capture.jax_compat.explain import KIND_ORDER, main_kind, parse_explanation, type_change_kind

RECORDED = [  # (label, text, param_names, static_argnums, function, call_site, kind, changes, hint, cost_ms)
    (
        "C first call ever",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:35:32 (<lambda>):
  never seen function:
    f_shape id=140050658413600 defined at /tmp/i4/exp1_explain.py:33""",
        None,
        (),
        "f_shape",
        ("/tmp/i4/exp1_explain.py", 35),
        "first",
        [],
        False,
        None,
    ),
    (
        "C new shape",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:37:26 (<lambda>):
  for f_shape defined at /tmp/i4/exp1_explain.py:33
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[4] and before f32[3]""",
        ["x"],
        (),
        "f_shape",
        ("/tmp/i4/exp1_explain.py", 37),
        "shape",
        [("x", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        "C new dtype f32->i32",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:43:35 (<lambda>):
  for f_dtype defined at /tmp/i4/exp1_explain.py:40
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now i32[3] and before f32[3]""",
        ["x"],
        (),
        "f_dtype",
        ("/tmp/i4/exp1_explain.py", 43),
        "dtype",
        [("x", "dtype", "f32[3]", "i32[3]")],
        False,
        None,
    ),
    (
        "C weak type: jnp f32 array -> python float",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:48:57 (<lambda>):
  for f_weak defined at /tmp/i4/exp1_explain.py:45
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[]{weak_type=True} and before f32[]{weak_type=False}https://docs.jax.dev/en/latest/type_promotion.html#weak-types""",
        ["x"],
        (),
        "f_weak",
        ("/tmp/i4/exp1_explain.py", 48),
        "weak_type",
        [("x", "weak_type", "f32[]{weak_type=False}", "f32[]{weak_type=True}")],
        False,
        None,
    ),
    (
        "C python float -> python int (weak i32)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:49:54 (<lambda>):
  for f_weak defined at /tmp/i4/exp1_explain.py:45
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now i32[] and before f32[]""",
        ["x"],
        (),
        "f_weak",
        ("/tmp/i4/exp1_explain.py", 49),
        "dtype",
        [("x", "dtype", "f32[]", "i32[]")],
        False,
        None,
    ),
    (
        "C static_argnums value 2->3",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:54:42 (<lambda>):
  for f_static defined at /tmp/i4/exp1_explain.py:51
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=3) and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=2), so the pytree node metadata does not match""",
        ["x", "n"],
        (1,),
        "f_static",
        ("/tmp/i4/exp1_explain.py", 54),
        "static",
        [("n", "static", "2", "3")],
        False,
        None,
    ),
    (
        "C static_argnames value a->b",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:59:43 (<lambda>):
  for f_sname defined at /tmp/i4/exp1_explain.py:56
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [1]['mode'], now <class 'jax._src.tree_util.Static'> with pytree metadata Static(val='b') and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val='a'), so the pytree node metadata does not match""",
        ["x"],
        (),
        "f_sname",
        ("/tmp/i4/exp1_explain.py", 59),
        "static",
        [("mode", "static", "'a'", "'b'")],
        False,
        None,
    ),
    (
        "C new kwarg y= (None default -> array)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:64:53 (<lambda>):
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [1], now <class 'dict'> with 1 child and before <class 'dict'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {'y'}""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 64),
        "pytree",
        [("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'y'})")],
        False,
        None,
    ),
    (
        "C same kwarg passed positionally",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:65:47 (<lambda>):
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0], now tuple of length 2 and before tuple of length 1, so the lengths do not match""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 65),
        "pytree",
        [("args", "pytree", "tuple of length 1", "tuple of length 2")],
        False,
        None,
    ),
    (
        "C kwarg value change scale=2.0 (python float, same type)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:66:71 (<lambda>):
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [1], now <class 'dict'> with 1 child and before <class 'dict'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {'scale'}""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 66),
        "pytree",
        [("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'scale'})")],
        False,
        None,
    ),
    (
        "C kwarg dtype change scale=jnp.float32(3)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:68:56 (<lambda>):
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [1], now <class 'dict'> with 1 child and before <class 'dict'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {'scale'}""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 68),
        "pytree",
        [("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'scale'})")],
        False,
        None,
    ),
    (
        "C dict keys changed {'a','b'} -> {'a','c'}",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:77:57 (<lambda>):
  for f_tree defined at /tmp/i4/exp1_explain.py:71
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][0], now <class 'dict'> with pytree metadata ('a', 'c') and before <class 'dict'> with pytree metadata ('a', 'b'), so the pytree node metadata does not match""",
        ["p"],
        (),
        "f_tree",
        ("/tmp/i4/exp1_explain.py", 77),
        "pytree",
        [("p", "pytree", "dict with keys ('a', 'b')", "dict with keys ('a', 'c')")],
        False,
        None,
    ),
    (
        "C tuple length 2 -> 3",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:80:36 (<lambda>):
  for f_tup defined at /tmp/i4/exp1_explain.py:72
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][0], now tuple of length 3 and before tuple of length 2, so the lengths do not match""",
        ["p"],
        (),
        "f_tup",
        ("/tmp/i4/exp1_explain.py", 80),
        "pytree",
        [("p", "pytree", "tuple of length 2", "tuple of length 3")],
        False,
        None,
    ),
    (
        "C None leaf in nested list",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:83:41 (<lambda>):
  for f_none defined at /tmp/i4/exp1_explain.py:73
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][0]['a'][1], now <class 'NoneType'> and before pytree leaf, so their Python types differ""",
        ["p"],
        (),
        "f_none",
        ("/tmp/i4/exp1_explain.py", 83),
        "pytree",
        [("p['a'][1]", "pytree", "pytree leaf", "None")],
        False,
        None,
    ),
    (
        "C nested leaf shape change p['a'][1]",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:86:51 (<lambda>):
  for f_nested defined at /tmp/i4/exp1_explain.py:74
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at p['a'][1], now f32[4] and before f32[3]""",
        ["p"],
        (),
        "f_nested",
        ("/tmp/i4/exp1_explain.py", 86),
        "shape",
        [("p['a'][1]", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        "C two previous entries; now a,b f32[4], c f32[3] (closest?)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:92:74 (<lambda>):
  for f_multi defined at /tmp/i4/exp1_explain.py:88
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at c, now f32[3] and before f32[4]""",
        ["a", "b", "c"],
        (),
        "f_multi",
        ("/tmp/i4/exp1_explain.py", 92),
        "shape",
        [("c", "shape", "f32[4]", "f32[3]")],
        False,
        None,
    ),
    (
        "C several args differ from all",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:93:45 (<lambda>):
  for f_multi defined at /tmp/i4/exp1_explain.py:88
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at a, now f32[5] and before f32[3]
  * at b, now f32[5] and before f32[3]
  * at c, now i32[5] and before f32[3]""",
        ["a", "b", "c"],
        (),
        "f_multi",
        ("/tmp/i4/exp1_explain.py", 93),
        "shape",
        [("a", "shape", "f32[3]", "f32[5]"), ("b", "shape", "f32[3]", "f32[5]"), ("c", "shape", "f32[3]", "i32[5]")],
        False,
        None,
    ),
    (
        "C sharding: single device -> NamedSharding(8, P('d'))",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:101:68 (<lambda>):
  for f_shard defined at /tmp/i4/exp1_explain.py:98
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[8@d]({Explicit: ('d',)}) and before f32[8]({})""",
        ["x"],
        (),
        "f_shard",
        ("/tmp/i4/exp1_explain.py", 101),
        "sharding",
        [("x", "sharding", "f32[8]({})", "f32[8@d]({Explicit: ('d',)})")],
        False,
        None,
    ),
    (
        "C sharding: -> NamedSharding(8, P()) replicated",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:103:62 (<lambda>):
  for f_shard defined at /tmp/i4/exp1_explain.py:98
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[8]({Explicit: ('d',)}) and before f32[8@d]({Explicit: ('d',)})""",
        ["x"],
        (),
        "f_shard",
        ("/tmp/i4/exp1_explain.py", 103),
        "sharding",
        [("x", "sharding", "f32[8@d]({Explicit: ('d',)})", "f32[8]({Explicit: ('d',)})")],
        False,
        None,
    ),
    (
        "C lambda redefined each call (2 iterations same line)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:109:8 (lam_loop):
  never seen function:
    <lambda> id=140050630203552 defined at /tmp/i4/exp1_explain.py:109""",
        None,
        (),
        "<lambda>",
        ("/tmp/i4/exp1_explain.py", 109),
        "first",
        [],
        False,
        None,
    ),
    (
        "C lambda redefined each call (2 iterations same line) #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:109:8 (lam_loop):
  never seen function:
    <lambda> id=140050658422880 defined at /tmp/i4/exp1_explain.py:109
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?""",
        None,
        (),
        "<lambda>",
        ("/tmp/i4/exp1_explain.py", 109),
        "first",
        [],
        True,
        None,
    ),
    (
        "C new closure constant (closure cell), new jit object",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:128:68 (<lambda>):
  never seen function:
    g id=140050630203552 defined at /tmp/i4/exp1_explain.py:125""",
        None,
        (),
        "g",
        ("/tmp/i4/exp1_explain.py", 128),
        "first",
        [],
        False,
        None,
    ),
    (
        "C jax.jit(functools.partial(f, k=2)) recreated",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:140:62 (<lambda>.<locals>.<listcomp>):
  never seen function:
    f_part id=140050630294672 defined at /tmp/i4/exp1_explain.py:139""",
        None,
        (),
        "f_part",
        ("/tmp/i4/exp1_explain.py", 140),
        "first",
        [],
        False,
        None,
    ),
    (
        "C jax.jit(functools.partial(f, k=2)) recreated #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:140:62 (<lambda>.<locals>.<listcomp>):
  never seen function:
    f_part id=140050763914736 defined at /tmp/i4/exp1_explain.py:139
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?""",
        None,
        (),
        "f_part",
        ("/tmp/i4/exp1_explain.py", 140),
        "first",
        [],
        True,
        None,
    ),
    (
        "C after enabling: new shape, old entry made before flag",
        """\
TRACING CACHE MISS at /tmp/i4/exp4_more.py:20:70 (<lambda>):
  for f defined at /tmp/i4/exp4_more.py:15
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[4] and before f32[3]""",
        ["x"],
        (),
        "f",
        ("/tmp/i4/exp4_more.py", 20),
        "shape",
        [("x", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        "C jax.jit(k) re-created each call, same k (x3)",
        """\
TRACING CACHE MISS at /tmp/i4/exp4_more.py:22:62 (<lambda>.<locals>.<listcomp>):
  never seen function:
    k id=140023917694944 defined at /tmp/i4/exp4_more.py:21""",
        None,
        (),
        "k",
        ("/tmp/i4/exp4_more.py", 22),
        "first",
        [],
        False,
        None,
    ),
    (
        "C Auto mesh: single device -> NamedSharding P('d')",
        """\
TRACING CACHE MISS at /tmp/i4/exp4_more.py:27:65 (<lambda>):
  for fs defined at /tmp/i4/exp4_more.py:25
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at x, now f32[8]({Auto: ('d',)}) and before f32[8]({})""",
        ["x"],
        (),
        "fs",
        ("/tmp/i4/exp4_more.py", 27),
        "sharding",
        [("x", "sharding", "f32[8]({})", "f32[8]({Auto: ('d',)})")],
        False,
        None,
    ),
    (
        "C outer jit with inner lambda jit, first #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp4_more.py:29:21 (outer):
  never seen function:
    <lambda> id=140023853609856 defined at /tmp/i4/exp4_more.py:29""",
        None,
        (),
        "<lambda>",
        ("/tmp/i4/exp4_more.py", 29),
        "first",
        [],
        False,
        None,
    ),
    (
        "C outer jit new shape #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp4_more.py:29:21 (outer):
  never seen function:
    <lambda> id=140023853609696 defined at /tmp/i4/exp4_more.py:29
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?""",
        None,
        (),
        "<lambda>",
        ("/tmp/i4/exp4_more.py", 29),
        "first",
        [],
        True,
        None,
    ),
    (
        "C trace context: default_matmul_precision('highest')",
        """\
TRACING CACHE MISS at /tmp/i4/exp4_more.py:35:131 (<lambda>):
  for fp defined at /tmp/i4/exp4_more.py:33
  all previously seen cache keys differ. For the closest previous key:
  Tracing context doesn't match, e.g. due to config or context manager.
  * jax_default_matmul_precision differs: now highest and before None""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4/exp4_more.py", 35),
        "context",
        [("jax_default_matmul_precision", "context", "None", "highest")],
        False,
        None,
    ),
    (
        "C trace context: enable_x64 toggled",
        """\
TRACING CACHE MISS at /tmp/i4/exp4_more.py:38:50 (<lambda>):
  for fp defined at /tmp/i4/exp4_more.py:33
  all previously seen cache keys differ. For the closest previous key:
  Tracing context doesn't match, e.g. due to config or context manager.
  * jax_enable_x64 differs: now True and before False""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4/exp4_more.py", 38),
        "context",
        [("jax_enable_x64", "context", "False", "True")],
        False,
        None,
    ),
    (
        "C static argnum 0, pytree keys change at arg 1",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:20:61 (<lambda>):
  for f_sa defined at /tmp/i4r/more.py:18
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now <class 'dict'> with pytree metadata ('b',) and before <class 'dict'> with pytree metadata ('a',), so the pytree node metadata does not match""",
        ["n", "p"],
        (0,),
        "f_sa",
        ("/tmp/i4r/more.py", 20),
        "pytree",
        [("p", "pytree", "dict with keys ('a',)", "dict with keys ('b',)")],
        False,
        None,
    ),
    (
        "C static argnum 0, shape change at arg 1",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:21:55 (<lambda>):
  for f_sa defined at /tmp/i4r/more.py:18
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now <class 'dict'> with pytree metadata ('a',) and before <class 'dict'> with pytree metadata ('b',), so the pytree node metadata does not match""",
        ["n", "p"],
        (0,),
        "f_sa",
        ("/tmp/i4r/more.py", 21),
        "pytree",
        [("p", "pytree", "dict with keys ('b',)", "dict with keys ('a',)")],
        False,
        None,
    ),
    (
        "C two static args change",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:24:39 (<lambda>):
  for f_two defined at /tmp/i4r/more.py:22
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=2) and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=1), so the pytree node metadata does not match
  * at input path [0][2], now <class 'jax._src.tree_util.Static'> with pytree metadata Static(val='v, w') and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val='u'), so the pytree node metadata does not match""",
        ["x", "a", "b"],
        (1, 2),
        "f_two",
        ("/tmp/i4r/more.py", 24),
        "static",
        [("a", "static", "1", "2"), ("b", "static", "'u'", "'v, w'")],
        False,
        None,
    ),
    (
        "C kwarg passed positionally (same total)",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:27:55 (<lambda>):
  for f_kw defined at /tmp/i4r/more.py:25
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0], now tuple of length 2 and before tuple of length 1, so the lengths do not match
  * at input path [1], now <class 'dict'> with 0 child and before <class 'dict'> with 1 child, so the numbers of children do not match, with the symmetric difference of key sets: {'y'}""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4r/more.py", 27),
        "pytree",
        [
            ("args", "pytree", "tuple of length 1", "tuple of length 2"),
            ("kwargs", "pytree", "dict with 1 child", "dict with 0 child (keys on one side only: {'y'})"),
        ],
        False,
        None,
    ),
    (
        "C kwarg renamed to none, different count",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:29:55 (<lambda>):
  for f_kw defined at /tmp/i4r/more.py:25
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0], now tuple of length 1 and before tuple of length 2, so the lengths do not match""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4r/more.py", 29),
        "pytree",
        [("args", "pytree", "tuple of length 2", "tuple of length 1")],
        False,
        None,
    ),
    (
        "C matmul precision context",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:34:8 (ctx):
  for fp defined at /tmp/i4r/more.py:30
  all previously seen cache keys differ. For the closest previous key:
  Tracing context doesn't match, e.g. due to config or context manager.
  * jax_default_matmul_precision differs: now highest and before None""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4r/more.py", 34),
        "context",
        [("jax_default_matmul_precision", "context", "None", "highest")],
        False,
        None,
    ),
    (
        "C enable_x64",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:38:9 (x64):
  for fp defined at /tmp/i4r/more.py:30
  all previously seen cache keys differ. For the closest previous key:
  Tracing context doesn't match, e.g. due to config or context manager.
  * jax_enable_x64 differs: now True and before False""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4r/more.py", 38),
        "context",
        [("jax_enable_x64", "context", "False", "True")],
        False,
        None,
    ),
    (
        "C kwargs keys a,b -> a,c",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:43:39 (<lambda>):
  for fkw2 defined at /tmp/i4r/more.py:41
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [1], now <class 'dict'> with pytree metadata ('a', 'c') and before <class 'dict'> with pytree metadata ('a', 'b'), so the pytree node metadata does not match""",
        ["x"],
        (),
        "fkw2",
        ("/tmp/i4r/more.py", 43),
        "pytree",
        [("kwargs", "pytree", "dict with keys ('a', 'b')", "dict with keys ('a', 'c')")],
        False,
        None,
    ),
    (
        "C kwargs keys -> a only",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:44:38 (<lambda>):
  for fkw2 defined at /tmp/i4r/more.py:41
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [1], now <class 'dict'> with 1 child and before <class 'dict'> with 2 children, so the numbers of children do not match, with the symmetric difference of key sets: {'b'}""",
        ["x"],
        (),
        "fkw2",
        ("/tmp/i4r/more.py", 44),
        "pytree",
        [("kwargs", "pytree", "dict with 2 children", "dict with 1 child (keys on one side only: {'b'})")],
        False,
        None,
    ),
    (
        "C varargs shape",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:47:30 (<lambda>):
  for fva defined at /tmp/i4r/more.py:45
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at args[1], now f32[4] and before f32[3]""",
        [],
        (),
        "fva",
        ("/tmp/i4r/more.py", 47),
        "shape",
        [("args[1]", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        "B first call ever",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:35:32 (<lambda>) costing 1.317 ms because:
  never seen function:
    f_shape id=140682876604864 defined at /tmp/i4/exp1_explain.py:33""",
        None,
        (),
        "f_shape",
        ("/tmp/i4/exp1_explain.py", 35),
        "first",
        [],
        False,
        1.317,
    ),
    (
        "B new shape",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:37:26 (<lambda>) costing 0.974 ms because:
  for f_shape defined at /tmp/i4/exp1_explain.py:33
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: x: f32[4]
        * at x, now f32[4] and before f32[3]""",
        ["x"],
        (),
        "f_shape",
        ("/tmp/i4/exp1_explain.py", 37),
        "shape",
        [("x", "shape", "f32[3]", "f32[4]")],
        False,
        0.974,
    ),
    (
        "B new dtype f32->i32",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:43:35 (<lambda>) costing 1.368 ms because:
  for f_dtype defined at /tmp/i4/exp1_explain.py:40
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: x: i32[3]
        * at x, now i32[3] and before f32[3]""",
        ["x"],
        (),
        "f_dtype",
        ("/tmp/i4/exp1_explain.py", 43),
        "dtype",
        [("x", "dtype", "f32[3]", "i32[3]")],
        False,
        1.368,
    ),
    (
        "B weak type: jnp f32 array -> python float",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:48:57 (<lambda>) costing 1.024 ms because:
  for f_weak defined at /tmp/i4/exp1_explain.py:45
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: x: f32[]
        * at x, now f32[]{weak_type=True} and before f32[]{weak_type=False}
    where weak_type=True often means a Python builtin numeric value, and 
    weak_type=False means a jax.Array.
    See https://docs.jax.dev/en/latest/type_promotion.html#weak-types.""",
        ["x"],
        (),
        "f_weak",
        ("/tmp/i4/exp1_explain.py", 48),
        "weak_type",
        [("x", "weak_type", "f32[]{weak_type=False}", "f32[]{weak_type=True}")],
        False,
        1.024,
    ),
    (
        "B python float -> python int (weak i32)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:49:54 (<lambda>) costing 0.549 ms because:
  for f_weak defined at /tmp/i4/exp1_explain.py:45
  all previously seen cache keys are different. Several previous keys are closest:
  * key with different input types:
      types now: x: i32[]
        * at x, now i32[]{weak_type=True} and before f32[]{weak_type=False}
    where weak_type=True often means a Python builtin numeric value, and 
    weak_type=False means a jax.Array.
    See https://docs.jax.dev/en/latest/type_promotion.html#weak-types.
  * key with different input types:
      types now: x: i32[]
        * at x, now i32[] and before f32[]""",
        ["x"],
        (),
        "f_weak",
        ("/tmp/i4/exp1_explain.py", 49),
        "dtype",
        [("x", "dtype", "f32[]{weak_type=False}", "i32[]{weak_type=True}"), ("x", "dtype", "f32[]", "i32[]")],
        False,
        0.549,
    ),
    (
        "B static_argnums value 2->3",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:54:42 (<lambda>) costing 0.255 ms because:
  for f_static defined at /tmp/i4/exp1_explain.py:51
  all previously seen cache keys are different. Closest previous key:
  * key with different value of static args:
      now 3 and before 2""",
        ["x", "n"],
        (1,),
        "f_static",
        ("/tmp/i4/exp1_explain.py", 54),
        "static",
        [("n", "static", "2", "3")],
        False,
        0.255,
    ),
    (
        "B static_argnames value a->b",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:59:43 (<lambda>) costing 0.662 ms because:
  for f_sname defined at /tmp/i4/exp1_explain.py:56
  all previously seen cache keys are different. Closest previous key:
  * key with different value of static kwargs:
      now {mode: 'b'} and before {mode: 'a'}""",
        ["x"],
        (),
        "f_sname",
        ("/tmp/i4/exp1_explain.py", 59),
        "static",
        [("mode", "static", "'a'", "'b'")],
        False,
        0.662,
    ),
    (
        "B new kwarg y= (None default -> array)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:64:53 (<lambda>) costing 0.532 ms because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef(((*,), {'y': *}))
      before: PyTreeDef(((*,), {}))
      * at kwargs, now <class 'dict'> with 1 child and before <class 'dict'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {'y'}""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 64),
        "pytree",
        [("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'y'})")],
        False,
        0.532,
    ),
    (
        "B same kwarg passed positionally",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:65:47 (<lambda>) costing 0.273 ms because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef(((*, *), {}))
      before: PyTreeDef(((*,), {}))
      * at args, now tuple of length 2 and before tuple of length 1, so the lengths do not match""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 65),
        "pytree",
        [("args", "pytree", "tuple of length 1", "tuple of length 2")],
        False,
        0.273,
    ),
    (
        "B kwarg value change scale=2.0 (python float, same type)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:66:71 (<lambda>) costing 0.196 ms because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef(((*,), {'scale': *}))
      before: PyTreeDef(((*,), {}))
      * at kwargs, now <class 'dict'> with 1 child and before <class 'dict'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {'scale'}""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 66),
        "pytree",
        [("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'scale'})")],
        False,
        0.196,
    ),
    (
        "B kwarg dtype change scale=jnp.float32(3)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:68:56 (<lambda>) costing 0.536 ms because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  all previously seen cache keys are different. Several previous keys are closest:
  * key with different input pytree:
      now: PyTreeDef(((*,), {'scale': *}))
      before: PyTreeDef(((*,), {}))
      * at kwargs, now <class 'dict'> with 1 child and before <class 'dict'> with 0 child, so the numbers of children do not match, with the symmetric difference of key sets: {'scale'}
  * key with different input types:
      types now: x: f32[3], scale: f32[]
        * at scale, now f32[]{weak_type=False} and before f32[]{weak_type=True}
    where weak_type=True often means a Python builtin numeric value, and 
    weak_type=False means a jax.Array.
    See https://docs.jax.dev/en/latest/type_promotion.html#weak-types.""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 68),
        "pytree",
        [
            ("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'scale'})"),
            ("scale", "weak_type", "f32[]{weak_type=True}", "f32[]{weak_type=False}"),
        ],
        False,
        0.536,
    ),
    (
        "B dict keys changed {'a','b'} -> {'a','c'}",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:77:57 (<lambda>) costing 0.408 ms because:
  for f_tree defined at /tmp/i4/exp1_explain.py:71
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef((({'a': *, 'c': *},), {}))
      before: PyTreeDef((({'a': *, 'b': *},), {}))
      * at args[0], now <class 'dict'> with pytree metadata ('a', 'c') and before <class 'dict'> with pytree metadata ('a', 'b'), so the pytree node metadata does not match""",
        ["p"],
        (),
        "f_tree",
        ("/tmp/i4/exp1_explain.py", 77),
        "pytree",
        [("p", "pytree", "dict with keys ('a', 'b')", "dict with keys ('a', 'c')")],
        False,
        0.408,
    ),
    (
        "B tuple length 2 -> 3",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:80:36 (<lambda>) costing 0.550 ms because:
  for f_tup defined at /tmp/i4/exp1_explain.py:72
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef((((*, *, *),), {}))
      before: PyTreeDef((((*, *),), {}))
      * at args[0], now tuple of length 3 and before tuple of length 2, so the lengths do not match""",
        ["p"],
        (),
        "f_tup",
        ("/tmp/i4/exp1_explain.py", 80),
        "pytree",
        [("p", "pytree", "tuple of length 2", "tuple of length 3")],
        False,
        0.55,
    ),
    (
        "B None leaf in nested list",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:83:41 (<lambda>) costing 0.339 ms because:
  for f_none defined at /tmp/i4/exp1_explain.py:73
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef((({'a': [*, None]},), {}))
      before: PyTreeDef((({'a': [*, *]},), {}))
      * at args[0]['a'][1], now <class 'NoneType'> and before pytree leaf, so their Python types differ""",
        ["p"],
        (),
        "f_none",
        ("/tmp/i4/exp1_explain.py", 83),
        "pytree",
        [("p['a'][1]", "pytree", "pytree leaf", "None")],
        False,
        0.339,
    ),
    (
        "B nested leaf shape change p['a'][1]",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:86:51 (<lambda>) costing 1.791 ms because:
  for f_nested defined at /tmp/i4/exp1_explain.py:74
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: p['a'][0]: f32[3], p['a'][1]: f32[4]
        * at p['a'][1], now f32[4] and before f32[3]""",
        ["p"],
        (),
        "f_nested",
        ("/tmp/i4/exp1_explain.py", 86),
        "shape",
        [("p['a'][1]", "shape", "f32[3]", "f32[4]")],
        False,
        1.791,
    ),
    (
        "B two previous entries; now a,b f32[4], c f32[3] (closest?)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:92:74 (<lambda>) costing 0.424 ms because:
  for f_multi defined at /tmp/i4/exp1_explain.py:88
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: a: f32[4], b: f32[4], c: f32[3]
        * at c, now f32[3] and before f32[4]""",
        ["a", "b", "c"],
        (),
        "f_multi",
        ("/tmp/i4/exp1_explain.py", 92),
        "shape",
        [("c", "shape", "f32[4]", "f32[3]")],
        False,
        0.424,
    ),
    (
        "B several args differ from all",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:93:45 (<lambda>) costing 2.416 ms because:
  for f_multi defined at /tmp/i4/exp1_explain.py:88
  all previously seen cache keys are different. Several previous keys are closest:
  * key with different input types:
      types now: a: f32[5], b: f32[5], c: i32[5]
        * at a, now f32[5] and before f32[3]
        * at b, now f32[5] and before f32[3]
        * at c, now i32[5] and before f32[3]
  * key with different input types:
      types now: a: f32[5], b: f32[5], c: i32[5]
        * at a, now f32[5] and before f32[4]
        * at b, now f32[5] and before f32[4]
        * at c, now i32[5] and before f32[4]
  * key with different input types:
      types now: a: f32[5], b: f32[5], c: i32[5]
        * at a, now f32[5] and before f32[4]
        * at b, now f32[5] and before f32[4]
        * at c, now i32[5] and before f32[3]""",
        ["a", "b", "c"],
        (),
        "f_multi",
        ("/tmp/i4/exp1_explain.py", 93),
        "shape",
        [
            ("a", "shape", "f32[3]", "f32[5]"),
            ("b", "shape", "f32[3]", "f32[5]"),
            ("c", "shape", "f32[3]", "i32[5]"),
            ("a", "shape", "f32[4]", "f32[5]"),
            ("b", "shape", "f32[4]", "f32[5]"),
            ("c", "shape", "f32[4]", "i32[5]"),
        ],
        False,
        2.416,
    ),
    (
        "B sharding: single device -> NamedSharding(8, P('d'))",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:101:68 (<lambda>) costing 1.042 ms because:
  for f_shard defined at /tmp/i4/exp1_explain.py:98
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: x: f32[8]
        * at x, now f32[8]({Auto: ('d',)}) and before f32[8]({})""",
        ["x"],
        (),
        "f_shard",
        ("/tmp/i4/exp1_explain.py", 101),
        "sharding",
        [("x", "sharding", "f32[8]({})", "f32[8]({Auto: ('d',)})")],
        False,
        1.042,
    ),
    (
        "B lambda redefined each call (2 iterations same line)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:109:8 (lam_loop) costing 0.427 ms because:
  never seen function:
    <lambda> id=140682795669184 defined at /tmp/i4/exp1_explain.py:109""",
        None,
        (),
        "<lambda>",
        ("/tmp/i4/exp1_explain.py", 109),
        "first",
        [],
        False,
        0.427,
    ),
    (
        "B lambda redefined each call (2 iterations same line) #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:109:8 (lam_loop) costing 0.473 ms because:
  never seen function:
    <lambda> id=140682795669184 defined at /tmp/i4/exp1_explain.py:109
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?""",
        None,
        (),
        "<lambda>",
        ("/tmp/i4/exp1_explain.py", 109),
        "first",
        [],
        True,
        0.473,
    ),
    (
        "B new closure constant (closure cell), new jit object",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:128:68 (<lambda>) costing 0.227 ms because:
  never seen function:
    g id=140682795672864 defined at /tmp/i4/exp1_explain.py:125""",
        None,
        (),
        "g",
        ("/tmp/i4/exp1_explain.py", 128),
        "first",
        [],
        False,
        0.227,
    ),
    (
        "B jax.jit(functools.partial(f, k=2)) recreated",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:140:62 (<lambda>.<locals>.<listcomp>) costing 0.229 ms because:
  never seen function:
    f_part id=140682795597584 defined at /tmp/i4/exp1_explain.py:139""",
        None,
        (),
        "f_part",
        ("/tmp/i4/exp1_explain.py", 140),
        "first",
        [],
        False,
        0.229,
    ),
    (
        "B jax.jit(functools.partial(f, k=2)) recreated #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:140:62 (<lambda>.<locals>.<listcomp>) costing 0.240 ms because:
  never seen function:
    f_part id=140682795597584 defined at /tmp/i4/exp1_explain.py:139
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?""",
        None,
        (),
        "f_part",
        ("/tmp/i4/exp1_explain.py", 140),
        "first",
        [],
        True,
        0.24,
    ),
    (
        "B static argnum 0, pytree keys change at arg 1",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:20:61 (<lambda>) costing 0.427 ms because:
  for f_sa defined at /tmp/i4r/more.py:18
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef((({'b': *},), {}))
      before: PyTreeDef((({'a': *},), {}))
      * at args[0], now <class 'dict'> with pytree metadata ('b',) and before <class 'dict'> with pytree metadata ('a',), so the pytree node metadata does not match""",
        ["n", "p"],
        (0,),
        "f_sa",
        ("/tmp/i4r/more.py", 20),
        "pytree",
        [("p", "pytree", "dict with keys ('a',)", "dict with keys ('b',)")],
        False,
        0.427,
    ),
    (
        "B static argnum 0, shape change at arg 1",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:21:55 (<lambda>) costing 1.373 ms because:
  for f_sa defined at /tmp/i4r/more.py:18
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: p['a']: f32[4]
        * at p['a'], now f32[4] and before f32[3]""",
        ["n", "p"],
        (0,),
        "f_sa",
        ("/tmp/i4r/more.py", 21),
        "shape",
        [("p['a']", "shape", "f32[3]", "f32[4]")],
        False,
        1.373,
    ),
    (
        "B two static args change",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:24:39 (<lambda>) costing 0.326 ms because:
  for f_two defined at /tmp/i4r/more.py:22
  all previously seen cache keys are different. Closest previous key:
  * key with different value of static args:
      now 2, 'v, w' and before 1, 'u'""",
        ["x", "a", "b"],
        (1, 2),
        "f_two",
        ("/tmp/i4r/more.py", 24),
        "static",
        [("a", "static", "1", "2"), ("b", "static", "'u'", "'v, w'")],
        False,
        0.326,
    ),
    (
        "B kwarg passed positionally (same total)",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:27:55 (<lambda>) costing 0.227 ms because:
  for f_kw defined at /tmp/i4r/more.py:25
  all previously seen cache keys are different. Closest previous key:
  * key with different input pytree:
      now: PyTreeDef(((*, *), {}))
      before: PyTreeDef(((*,), {'y': *}))
      * at args, now tuple of length 2 and before tuple of length 1, so the lengths do not match
      * at kwargs, now <class 'dict'> with 0 child and before <class 'dict'> with 1 child, so the numbers of children do not match, with the symmetric difference of key sets: {'y'}""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4r/more.py", 27),
        "pytree",
        [
            ("args", "pytree", "tuple of length 1", "tuple of length 2"),
            ("kwargs", "pytree", "dict with 1 child", "dict with 0 child (keys on one side only: {'y'})"),
        ],
        False,
        0.227,
    ),
    (
        "B kwarg renamed to none, different count",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:29:55 (<lambda>) costing 0.092 ms because:
  for f_kw defined at /tmp/i4r/more.py:25
  all previously seen cache keys are different. Several previous keys are closest:
  * key with different input pytree:
      now: PyTreeDef(((*,), {}))
      before: PyTreeDef(((*,), {'y': *}))
      * at kwargs, now <class 'dict'> with 0 child and before <class 'dict'> with 1 child, so the numbers of children do not match, with the symmetric difference of key sets: {'y'}
  * key with different input pytree:
      now: PyTreeDef(((*,), {}))
      before: PyTreeDef(((*, *), {}))
      * at args, now tuple of length 1 and before tuple of length 2, so the lengths do not match""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4r/more.py", 29),
        "pytree",
        [
            ("kwargs", "pytree", "dict with 1 child", "dict with 0 child (keys on one side only: {'y'})"),
            ("args", "pytree", "tuple of length 2", "tuple of length 1"),
        ],
        False,
        0.092,
    ),
    (
        "B matmul precision context",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:34:8 (ctx) costing 1.109 ms because:
  for fp defined at /tmp/i4r/more.py:30
  all previously seen cache keys are different. Closest previous key:
  * key with different tracing context, e.g. due to config or context manager.
    found differences at positions
      [28]: now highest and before None
    compare to tuple returned by config.trace_context() in jax/_src/config.py.""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4r/more.py", 34),
        "context",
        [("trace context [28]", "context", "None", "highest")],
        False,
        1.109,
    ),
    (
        "B enable_x64",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:38:9 (x64) costing 1.157 ms because:
  for fp defined at /tmp/i4r/more.py:30
  all previously seen cache keys are different. Closest previous key:
  * key with different tracing context, e.g. due to config or context manager.
    found differences at positions
      [24]: now True and before False
    compare to tuple returned by config.trace_context() in jax/_src/config.py.""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4r/more.py", 38),
        "context",
        [("trace context [24]", "context", "False", "True")],
        False,
        1.157,
    ),
    (
        "B kwargs keys a,b -> a,c",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:43:39 (<lambda>) costing 0.112 ms because:
  for fkw2 defined at /tmp/i4r/more.py:41
  all previously seen cache keys are different. Closest previous key:
  * key with different number of args and kwargs, but same total number.
      now 1 args and kwargs with keys ['a', 'c']
      before 1 args and kwargs with keys ['a', 'b']""",
        ["x"],
        (),
        "fkw2",
        ("/tmp/i4r/more.py", 43),
        "pytree",
        [("", "pytree", "1 args and kwargs with keys ['a', 'b']", "1 args and kwargs with keys ['a', 'c']")],
        False,
        0.112,
    ),
    (
        "B kwargs keys -> a only",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:44:38 (<lambda>) costing 0.103 ms because:
  for fkw2 defined at /tmp/i4r/more.py:41
  all previously seen cache keys are different. Several previous keys are closest:
  * key with different input pytree:
      now: PyTreeDef(((*,), {'a': *}))
      before: PyTreeDef(((*,), {'a': *, 'b': *}))
      * at kwargs, now <class 'dict'> with 1 child and before <class 'dict'> with 2 children, so the numbers of children do not match, with the symmetric difference of key sets: {'b'}
  * key with different input pytree:
      now: PyTreeDef(((*,), {'a': *}))
      before: PyTreeDef(((*,), {'a': *, 'c': *}))
      * at kwargs, now <class 'dict'> with 1 child and before <class 'dict'> with 2 children, so the numbers of children do not match, with the symmetric difference of key sets: {'c'}""",
        ["x"],
        (),
        "fkw2",
        ("/tmp/i4r/more.py", 44),
        "pytree",
        [
            ("kwargs", "pytree", "dict with 2 children", "dict with 1 child (keys on one side only: {'b'})"),
            ("kwargs", "pytree", "dict with 2 children", "dict with 1 child (keys on one side only: {'c'})"),
        ],
        False,
        0.103,
    ),
    (
        "B varargs shape",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:47:30 (<lambda>) costing 0.093 ms because:
  for fva defined at /tmp/i4r/more.py:45
  all previously seen cache keys are different. Closest previous key:
  * key with different input types:
      types now: args[0]: f32[3], args[1]: f32[4]
        * at args[1], now f32[4] and before f32[3]""",
        [],
        (),
        "fva",
        ("/tmp/i4r/more.py", 47),
        "shape",
        [("args[1]", "shape", "f32[3]", "f32[4]")],
        False,
        0.093,
    ),
    (
        "A first call ever",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:35:32 (<lambda>) because:
  never seen function:
    f_shape id=140185451186272 defined at /tmp/i4/exp1_explain.py:33""",
        None,
        (),
        "f_shape",
        ("/tmp/i4/exp1_explain.py", 35),
        "first",
        [],
        False,
        None,
    ),
    (
        "A new shape",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:37:26 (<lambda>) because:
  for f_shape defined at /tmp/i4/exp1_explain.py:33
  never seen input type signature:
    x: f32[4]
  closest seen input type signature has 1 mismatches, including:
    * at x, seen f32[3], but now given f32[4]""",
        ["x"],
        (),
        "f_shape",
        ("/tmp/i4/exp1_explain.py", 37),
        "shape",
        [("x", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        "A new dtype f32->i32",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:43:43 (<lambda>) because:
  never seen function:
    convert_element_type id=140185503457792 defined at /tmp/i4/venv-0.4.38/lib/python3.11/site-packages/jax/_src/dispatch.py:98""",
        None,
        (),
        "convert_element_type",
        ("/tmp/i4/exp1_explain.py", 43),
        "first",
        [],
        False,
        None,
    ),
    (
        "A new dtype f32->i32 #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:43:43 (<lambda>) because:
  for broadcast_in_dim defined at /tmp/i4/venv-0.4.38/lib/python3.11/site-packages/jax/_src/dispatch.py:98
  never seen input type signature:
    args[0]: i32[]
  closest seen input type signature has 1 mismatches, including:
    * at args[0], seen f32[], but now given i32[]""",
        None,
        (),
        "broadcast_in_dim",
        ("/tmp/i4/exp1_explain.py", 43),
        "dtype",
        [("args[0]", "dtype", "f32[]", "i32[]")],
        False,
        None,
    ),
    (
        "A new dtype f32->i32 #2",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:43:35 (<lambda>) because:
  for f_dtype defined at /tmp/i4/exp1_explain.py:40
  never seen input type signature:
    x: i32[3]
  closest seen input type signature has 1 mismatches, including:
    * at x, seen f32[3], but now given i32[3]""",
        ["x"],
        (),
        "f_dtype",
        ("/tmp/i4/exp1_explain.py", 43),
        "dtype",
        [("x", "dtype", "f32[3]", "i32[3]")],
        False,
        None,
    ),
    (
        "A weak type: jnp f32 array -> python float",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:48:57 (<lambda>) because:
  for f_weak defined at /tmp/i4/exp1_explain.py:45
  never seen input type signature:
    x: f32[]
  closest seen input type signature has 1 mismatches, including:
    * at x, seen f32[]{weak_type=False}, but now given f32[]{weak_type=True}
where weak_type=True often means a Python builtin numeric value, and 
weak_type=False means a jax.Array.
See https://jax.readthedocs.io/en/latest/type_promotion.html#weak-types""",
        ["x"],
        (),
        "f_weak",
        ("/tmp/i4/exp1_explain.py", 48),
        "weak_type",
        [("x", "weak_type", "f32[]{weak_type=False}", "f32[]{weak_type=True}")],
        False,
        None,
    ),
    (
        "A python float -> python int (weak i32)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:49:54 (<lambda>) because:
  for f_weak defined at /tmp/i4/exp1_explain.py:45
  never seen input type signature:
    x: i32[]
  closest seen input type signature has 1 mismatches, including:
    * at x, seen f32[], but now given i32[]""",
        ["x"],
        (),
        "f_weak",
        ("/tmp/i4/exp1_explain.py", 49),
        "dtype",
        [("x", "dtype", "f32[]", "i32[]")],
        False,
        None,
    ),
    (
        "A static_argnums value 2->3",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:54:42 (<lambda>) because:
  for f_static defined at /tmp/i4/exp1_explain.py:51
explanation unavailable! please open an issue at https://github.com/jax-ml/jax""",
        ["x", "n"],
        (1,),
        "f_static",
        ("/tmp/i4/exp1_explain.py", 54),
        "unknown",
        [],
        False,
        None,
    ),
    (
        "A static_argnames value a->b",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:59:43 (<lambda>) because:
  for f_sname defined at /tmp/i4/exp1_explain.py:56
explanation unavailable! please open an issue at https://github.com/jax-ml/jax""",
        ["x"],
        (),
        "f_sname",
        ("/tmp/i4/exp1_explain.py", 59),
        "unknown",
        [],
        False,
        None,
    ),
    (
        "A new kwarg y= (None default -> array)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:64:53 (<lambda>) because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  never seen passing 1 positional args and 1 keyword args with keys:
    'y'
  closest seen is passing no keyword args""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 64),
        "pytree",
        [("", "pytree", "no keyword args", "1 positional args and keyword args 'y'")],
        False,
        None,
    ),
    (
        "A same kwarg passed positionally",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:65:47 (<lambda>) because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  never seen passing 2 positional args and 0 keyword args with keys:
    
  closest seen is passing no keyword args""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 65),
        "pytree",
        [("", "pytree", "no keyword args", "2 positional args and no keyword args")],
        False,
        None,
    ),
    (
        "A kwarg value change scale=2.0 (python float, same type)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:66:71 (<lambda>) because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  never seen passing 1 positional args and 1 keyword args with keys:
    'scale'
  closest seen is passing no keyword args""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 66),
        "pytree",
        [("", "pytree", "no keyword args", "1 positional args and keyword args 'scale'")],
        False,
        None,
    ),
    (
        "A kwarg dtype change scale=jnp.float32(3)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:68:56 (<lambda>) because:
  for f_kw defined at /tmp/i4/exp1_explain.py:61
  never seen input type signature:
    x: f32[3],  scale: f32[]
  closest seen input type signature has 1 mismatches, including:
    * at scale, seen f32[]{weak_type=True}, but now given f32[]{weak_type=False}
where weak_type=True often means a Python builtin numeric value, and 
weak_type=False means a jax.Array.
See https://jax.readthedocs.io/en/latest/type_promotion.html#weak-types""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4/exp1_explain.py", 68),
        "weak_type",
        [("scale", "weak_type", "f32[]{weak_type=True}", "f32[]{weak_type=False}")],
        False,
        None,
    ),
    (
        "A dict keys changed {'a','b'} -> {'a','c'}",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:77:57 (<lambda>) because:
  for f_tree defined at /tmp/i4/exp1_explain.py:71
  never seen passing 1 positional args and 0 keyword args with keys:
    
  closest seen is passing no keyword args""",
        ["p"],
        (),
        "f_tree",
        ("/tmp/i4/exp1_explain.py", 77),
        "pytree",
        [("", "pytree", "no keyword args", "1 positional args and no keyword args")],
        False,
        None,
    ),
    (
        "A tuple length 2 -> 3",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:80:36 (<lambda>) because:
  for f_tup defined at /tmp/i4/exp1_explain.py:72
  never seen passing 1 positional args and 0 keyword args with keys:
    
  closest seen is passing no keyword args""",
        ["p"],
        (),
        "f_tup",
        ("/tmp/i4/exp1_explain.py", 80),
        "pytree",
        [("", "pytree", "no keyword args", "1 positional args and no keyword args")],
        False,
        None,
    ),
    (
        "A None leaf in nested list",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:83:41 (<lambda>) because:
  for f_none defined at /tmp/i4/exp1_explain.py:73
  never seen passing 1 positional args and 0 keyword args with keys:
    
  closest seen is passing no keyword args""",
        ["p"],
        (),
        "f_none",
        ("/tmp/i4/exp1_explain.py", 83),
        "pytree",
        [("", "pytree", "no keyword args", "1 positional args and no keyword args")],
        False,
        None,
    ),
    (
        "A nested leaf shape change p['a'][1]",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:86:51 (<lambda>) because:
  for f_nested defined at /tmp/i4/exp1_explain.py:74
  never seen input type signature:
    p['a'][0]: f32[3],  p['a'][1]: f32[4]
  closest seen input type signature has 1 mismatches, including:
    * at p['a'][1], seen f32[3], but now given f32[4]""",
        ["p"],
        (),
        "f_nested",
        ("/tmp/i4/exp1_explain.py", 86),
        "shape",
        [("p['a'][1]", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        "A two previous entries; now a,b f32[4], c f32[3] (closest?)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:92:74 (<lambda>) because:
  for f_multi defined at /tmp/i4/exp1_explain.py:88
  never seen input type signature:
    a: f32[4],  b: f32[4],  c: f32[3]
  closest seen input type signature has 1 mismatches, including:
    * at c, seen f32[4], but now given f32[3]""",
        ["a", "b", "c"],
        (),
        "f_multi",
        ("/tmp/i4/exp1_explain.py", 92),
        "shape",
        [("c", "shape", "f32[4]", "f32[3]")],
        False,
        None,
    ),
    (
        "A several args differ from all #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:93:79 (<lambda>) because:
  for broadcast_in_dim defined at /tmp/i4/venv-0.4.38/lib/python3.11/site-packages/jax/_src/dispatch.py:98
  never seen input type signature:
    args[0]: i32[]
  closest seen input type signature has 1 mismatches, including:
    * at args[0], seen f32[], but now given i32[]""",
        None,
        (),
        "broadcast_in_dim",
        ("/tmp/i4/exp1_explain.py", 93),
        "dtype",
        [("args[0]", "dtype", "f32[]", "i32[]")],
        False,
        None,
    ),
    (
        "A several args differ from all #2",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:93:45 (<lambda>) because:
  for f_multi defined at /tmp/i4/exp1_explain.py:88
  never seen input type signature:
    a: f32[5],  b: f32[5],  c: i32[5]
  closest seen input type signature has 3 mismatches, including:
    * at a, seen f32[3], but now given f32[5]
    * at b, seen f32[3], but now given f32[5]
    * at c, seen f32[3], but now given i32[5]""",
        ["a", "b", "c"],
        (),
        "f_multi",
        ("/tmp/i4/exp1_explain.py", 93),
        "shape",
        [("a", "shape", "f32[3]", "f32[5]"), ("b", "shape", "f32[3]", "f32[5]"), ("c", "shape", "f32[3]", "i32[5]")],
        False,
        None,
    ),
    (
        "A lambda redefined each call (2 iterations same line)",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:109:8 (lam_loop) because:
  never seen function:
    lam_loop.<locals>.<lambda> id=140185340319424 defined at /tmp/i4/exp1_explain.py:109""",
        None,
        (),
        "lam_loop.<locals>.<lambda>",
        ("/tmp/i4/exp1_explain.py", 109),
        "first",
        [],
        False,
        None,
    ),
    (
        "A lambda redefined each call (2 iterations same line) #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:109:8 (lam_loop) because:
  never seen function:
    lam_loop.<locals>.<lambda> id=140185340319424 defined at /tmp/i4/exp1_explain.py:109
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?""",
        None,
        (),
        "lam_loop.<locals>.<lambda>",
        ("/tmp/i4/exp1_explain.py", 109),
        "first",
        [],
        True,
        None,
    ),
    (
        "A new closure constant (closure cell), new jit object",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:128:68 (<lambda>) because:
  never seen function:
    make.<locals>.g id=140185340325024 defined at /tmp/i4/exp1_explain.py:125""",
        None,
        (),
        "make.<locals>.g",
        ("/tmp/i4/exp1_explain.py", 128),
        "first",
        [],
        False,
        None,
    ),
    (
        "A jax.jit(functools.partial(f, k=2)) recreated",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:140:62 (<lambda>.<locals>.<listcomp>) because:
  never seen function:
    functools.partial(<function f_part at 0x7f7f7169b380>, k=2) id=140185451703376 defined at /tmp/i4/exp1_explain.py:139""",
        None,
        (),
        "functools.partial(<function f_part at 0x7f7f7169b380>, k=2)",
        ("/tmp/i4/exp1_explain.py", 140),
        "first",
        [],
        False,
        None,
    ),
    (
        "A jax.jit(functools.partial(f, k=2)) recreated #1",
        """\
TRACING CACHE MISS at /tmp/i4/exp1_explain.py:140:62 (<lambda>.<locals>.<listcomp>) because:
  never seen function:
    functools.partial(<function f_part at 0x7f7f7169b380>, k=2) id=140185451703376 defined at /tmp/i4/exp1_explain.py:139
  but seen another function defined on the same line; maybe the function is
  being re-defined repeatedly, preventing caching?""",
        None,
        (),
        "functools.partial(<function f_part at 0x7f7f7169b380>, k=2)",
        ("/tmp/i4/exp1_explain.py", 140),
        "first",
        [],
        True,
        None,
    ),
    (
        "A static argnum 0, pytree keys change at arg 1",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:20:61 (<lambda>) because:
  for f_sa defined at /tmp/i4r/more.py:18
  never seen passing 1 positional args and 0 keyword args with keys:
    
  closest seen is passing no keyword args""",
        ["n", "p"],
        (0,),
        "f_sa",
        ("/tmp/i4r/more.py", 20),
        "pytree",
        [("", "pytree", "no keyword args", "1 positional args and no keyword args")],
        False,
        None,
    ),
    (
        "A static argnum 0, shape change at arg 1",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:21:66 (<lambda>) because:
  never seen function:
    broadcast_in_dim id=139656366527072 defined at /tmp/i4/venv-0.4.38/lib/python3.11/site-packages/jax/_src/dispatch.py:98""",
        None,
        (),
        "broadcast_in_dim",
        ("/tmp/i4r/more.py", 21),
        "first",
        [],
        False,
        None,
    ),
    (
        "A static argnum 0, shape change at arg 1 #1",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:21:55 (<lambda>) because:
  for f_sa defined at /tmp/i4r/more.py:18
  never seen input type signature:
    p['a']: f32[4]
  closest seen input type signature has 1 mismatches, including:
    * at p['a'], seen f32[3], but now given f32[4]""",
        ["n", "p"],
        (0,),
        "f_sa",
        ("/tmp/i4r/more.py", 21),
        "shape",
        [("p['a']", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        "A two static args change",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:24:39 (<lambda>) because:
  for f_two defined at /tmp/i4r/more.py:22
explanation unavailable! please open an issue at https://github.com/jax-ml/jax""",
        ["x", "a", "b"],
        (1, 2),
        "f_two",
        ("/tmp/i4r/more.py", 24),
        "unknown",
        [],
        False,
        None,
    ),
    (
        "A kwarg passed positionally (same total)",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:27:55 (<lambda>) because:
  for f_kw defined at /tmp/i4r/more.py:25
  never seen passing 2 positional args and 0 keyword args with keys:
    
  closest seen passes 1 keyword args with keys:
    'y'""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4r/more.py", 27),
        "pytree",
        [("", "pytree", "keyword args 'y'", "2 positional args and no keyword args")],
        False,
        None,
    ),
    (
        "A kwarg renamed to none, different count",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:29:55 (<lambda>) because:
  for f_kw defined at /tmp/i4r/more.py:25
  never seen passing 1 positional args and 0 keyword args with keys:
    
  closest seen is passing no keyword args""",
        ["x", "y", "scale"],
        (),
        "f_kw",
        ("/tmp/i4r/more.py", 29),
        "pytree",
        [("", "pytree", "no keyword args", "1 positional args and no keyword args")],
        False,
        None,
    ),
    (
        "A matmul precision context",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:34:8 (ctx) because:
  for fp defined at /tmp/i4r/more.py:30
  tracing context doesn't match, e.g. due to config or context manager
  closest seen context tuple differs at positions:
    8
  compare to tuple returned by config._trace_context() in jax/_src/config.py.""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4r/more.py", 34),
        "context",
        [("trace context [8]", "context", None, None)],
        False,
        None,
    ),
    (
        "A enable_x64",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:38:9 (x64) because:
  for fp defined at /tmp/i4r/more.py:30
  tracing context doesn't match, e.g. due to config or context manager
  closest seen context tuple differs at positions:
    6
  compare to tuple returned by config._trace_context() in jax/_src/config.py.""",
        ["a", "b"],
        (),
        "fp",
        ("/tmp/i4r/more.py", 38),
        "context",
        [("trace context [6]", "context", None, None)],
        False,
        None,
    ),
    (
        "A kwargs keys a,b -> a,c",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:43:39 (<lambda>) because:
  for fkw2 defined at /tmp/i4r/more.py:41
  never seen passing 1 positional args and 2 keyword args with keys:
    'a', 'c'
  closest seen passes 2 keyword args with keys:
    'b', 'a'""",
        ["x"],
        (),
        "fkw2",
        ("/tmp/i4r/more.py", 43),
        "pytree",
        [("", "pytree", "keyword args 'b', 'a'", "1 positional args and keyword args 'a', 'c'")],
        False,
        None,
    ),
    (
        "A kwargs keys -> a only",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:44:38 (<lambda>) because:
  for fkw2 defined at /tmp/i4r/more.py:41
  never seen passing 1 positional args and 1 keyword args with keys:
    'a'
  closest seen passes 2 keyword args with keys:
    'b', 'a'""",
        ["x"],
        (),
        "fkw2",
        ("/tmp/i4r/more.py", 44),
        "pytree",
        [("", "pytree", "keyword args 'b', 'a'", "1 positional args and keyword args 'a'")],
        False,
        None,
    ),
    (
        "A varargs shape",
        """\
TRACING CACHE MISS at /tmp/i4r/more.py:47:30 (<lambda>) because:
  for fva defined at /tmp/i4r/more.py:45
  never seen input type signature:
    args[0]: f32[3],  args[1]: f32[4]
  closest seen input type signature has 1 mismatches, including:
    * at args[1], seen f32[3], but now given f32[4]""",
        [],
        (),
        "fva",
        ("/tmp/i4r/more.py", 47),
        "shape",
        [("args[1]", "shape", "f32[3]", "f32[4]")],
        False,
        None,
    ),
    (
        # JAX 0.6.2: a call with one more argument leaf also reports "different static_argnums" (the dynamic
        # positions JAX counts from the call); the function has no static_argnums: the pytree change is the reason
        "B a longer tuple, with JAX's derived static_argnums line",
        """\
TRACING CACHE MISS at <string>:7:29 (<module>) costing 1.203 ms because:
  for f_tree defined at <string>:5
  all previously seen cache keys are different. Closest previous key:
  * key with different static_argnums:
      dynamic argnums now (0, 1, 2) and before (0, 1)
  * key with different input pytree:
      now: PyTreeDef((((*, *, *),), {}))
      before: PyTreeDef((((*, *),), {}))
      * at args[0], now tuple of length 3 and before tuple of length 2, so the lengths do not match""",
        ["p"],
        (),
        "f_tree",
        ("<string>", 7),
        "pytree",
        [("p", "pytree", "tuple of length 2", "tuple of length 3")],
        False,
        1.203,
    ),
    (
        "B a new keyword argument, with JAX's derived static_argnums line",
        """\
TRACING CACHE MISS at <string>:9:43 (<module>) costing 0.879 ms because:
  for f_kw defined at <string>:8
  all previously seen cache keys are different. Closest previous key:
  * key with different static_argnums:
      dynamic argnums now (0, 1) and before (0,)
  * key with different input pytree:
      now: PyTreeDef(((*,), {'y': *}))
      before: PyTreeDef(((*,), {}))
      * at kwargs, now <class 'dict'> with 1 child and before <class 'dict'> with 0 child, so the numbers of \
children do not match, with the symmetric difference of key sets: {'y'}""",
        ["x", "y"],
        (),
        "f_kw",
        ("<string>", 9),
        "pytree",
        [("kwargs", "pytree", "dict with 0 child", "dict with 1 child (keys on one side only: {'y'})")],
        False,
        0.879,
    ),
]


def _as_tuples(explanation) -> list[tuple]:
    return [(c.path, c.kind, c.before, c.after) for c in explanation.changes]


@pytest.mark.parametrize(
    "label,text,names,static,function,site,kind,changes,hint,cost", RECORDED, ids=[r[0] for r in RECORDED]
)
def test_recorded_records(label, text, names, static, function, site, kind, changes, hint, cost):
    e = parse_explanation(text, names, static_argnums=static)
    assert e is not None
    assert (e.function, e.call_site, e.kind) == (function, site, kind)
    assert _as_tuples(e) == changes
    assert e.redefined_hint is hint
    assert e.cost_ms == cost
    assert e.text == text


CONSTRUCTED = [  # (label, text, param_names, static_argnums, kind, changes, detail contains)
    (
        "C debug info",
        """\
TRACING CACHE MISS at /work/nb.py:7:4 (<module>):
  for f defined at /work/nb.py:3
  all previously seen cache keys differ. For the closest previous key:
  Debug info doesn't match.""",
        None,
        (),
        "unknown",
        [],
        "debug info",
    ),
    (
        "C unavailable, module-level call without a column",
        """\
TRACING CACHE MISS at /work/nb.py:12 (<module>):
  for f defined at /work/nb.py:3
  all previously seen cache keys differ. For the closest previous key:
  cache miss explanation unavailable""",
        None,
        (),
        "unknown",
        [],
        "explanation unavailable",
    ),
    (
        "C number of context values",
        """\
TRACING CACHE MISS at /work/nb.py:7:4 (<module>):
  for f defined at /work/nb.py:3
  all previously seen cache keys differ. For the closest previous key:
  Tracing context doesn't match, e.g. due to config or context manager.
  * number of tracing context values differs: now 31 and before 30""",
        None,
        (),
        "context",
        [("number of tracing context values", "context", "30", "31")],
        None,
    ),
    (
        "C 0.9 context without names",
        """\
TRACING CACHE MISS at /work/nb.py:7:4 (<module>):
  for f defined at /work/nb.py:3
  all previously seen cache keys differ. For the closest previous key:
  Tracing context doesn't match, e.g. due to config or context manager.""",
        None,
        (),
        "context",
        [("trace context", "context", None, None)],
        None,
    ),
    (
        "C two weak types, URL glued to the last",
        """\
TRACING CACHE MISS at /work/nb.py:7:4 (<module>):
  for f defined at /work/nb.py:3
  all previously seen cache keys differ. For the closest previous key:
  different input types:
  * at a, now f32[]{weak_type=True} and before f32[]{weak_type=False}
  * at b, now f32[3]{weak_type=True} and before f32[3]{weak_type=False}https://docs.jax.dev/en/latest/type_promotion.html#weak-types""",
        None,
        (),
        "weak_type",
        [
            ("a", "weak_type", "f32[]{weak_type=False}", "f32[]{weak_type=True}"),
            ("b", "weak_type", "f32[3]{weak_type=False}", "f32[3]{weak_type=True}"),
        ],
        None,
    ),
    (
        "C raw input paths without parameter names",
        """\
TRACING CACHE MISS at /work/nb.py:7:4 (<module>):
  for f defined at /work/nb.py:3
  all previously seen cache keys differ. For the closest previous key:
  different input pytree:
  * at input path [0][1], now <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=3) and before <class 'jax._src.tree_util.Static'> with pytree metadata Static(val=2), so the pytree node metadata does not match
  * at input path [1]['p']['w'][0], now tuple of length 3 and before tuple of length 2, so the lengths do not match""",
        None,
        (),
        "static",
        [("args[1]", "static", "2", "3"), ("p['w'][0]", "pytree", "tuple of length 2", "tuple of length 3")],
        None,
    ),
    (
        "B different static_argnums",
        """\
TRACING CACHE MISS at /work/nb.py:9:0 (<module>) costing 0.310 ms because:
  for f defined at /work/nb.py:3
  all previously seen cache keys are different. Closest previous key:
  * key with different static_argnums:
      dynamic argnums now (0,) and before (0, 1)""",
        ["x", "n"],
        (1,),
        "static",
        [("static_argnums", "static", "dynamic argnums (0, 1)", "dynamic argnums (0,)")],
        None,
    ),
    (
        "B unexplained field",
        """\
TRACING CACHE MISS at /work/nb.py:9:0 (<module>) costing 0.310 ms because:
  for f defined at /work/nb.py:3
  all previously seen cache keys are different. Closest previous key:
  * key with different fun_params:
        now: (('x', 1),)
     != before: (('x', 2),).
    explanation unavailable! please open an issue at https://github.com/jax-ml/jax.""",
        None,
        (),
        "unknown",
        [],
        "different fun_params",
    ),
    (
        "B static kwargs, two keys, one differs",
        """\
TRACING CACHE MISS at /work/nb.py:9:0 (<module>) costing 0.310 ms because:
  for f defined at /work/nb.py:3
  all previously seen cache keys are different. Closest previous key:
  * key with different value of static kwargs:
      now {mode: 'b', n: (1, 2)} and before {mode: 'a', n: (1, 2)}""",
        ["x"],
        (),
        "static",
        [("mode", "static", "'a'", "'b'")],
        None,
    ),
    (
        "B static args without static_argnums",
        """\
TRACING CACHE MISS at /work/nb.py:9:0 (<module>) costing 0.310 ms because:
  for f defined at /work/nb.py:3
  all previously seen cache keys are different. Closest previous key:
  * key with different value of static args:
      now 3 and before 2""",
        ["x", "n"],
        (),
        "static",
        [("", "static", "2", "3")],
        None,
    ),
    (
        "A 0.4.30 unavailable (google/jax)",
        """\
TRACING CACHE MISS at /work/nb.py:9:4 (<module>) because:
  for f defined at /work/nb.py:3
explanation unavailable! please open an issue at https://github.com/google/jax""",
        None,
        (),
        "unknown",
        [],
        "explanation unavailable",
    ),
    (
        "A input pytree bullets (seen X but now given Y)",
        """\
TRACING CACHE MISS at /work/nb.py:9:4 (<module>) because:
  for f defined at /work/nb.py:3
  never seen input pytree:
    PyTreeDef(((*, {'a': *}), {}))
  closest seen input pytree has 1 mismatches, including:
    * at args[1], seen <class 'dict'> with pytree metadata ('b',) but now given <class 'dict'> with pytree metadata ('a',),      so the pytree node metadata does not match""",
        ["x", "p"],
        (),
        "pytree",
        [("p", "pytree", "dict with keys ('b',)", "dict with keys ('a',)")],
        None,
    ),
    (
        "A context, several positions",
        """\
TRACING CACHE MISS at /work/nb.py:9:4 (<module>) because:
  for f defined at /work/nb.py:3
  tracing context doesn't match, e.g. due to config or context manager
  closest seen context tuple differs at positions:
    3, 5
  compare to tuple returned by config._trace_context() in jax/_src/config.py.""",
        None,
        (),
        "context",
        [("trace context [3]", "context", None, None), ("trace context [5]", "context", None, None)],
        None,
    ),
]


@pytest.mark.parametrize("label,text,names,static,kind,changes,detail", CONSTRUCTED, ids=[c[0] for c in CONSTRUCTED])
def test_constructed_records(label, text, names, static, kind, changes, detail):
    e = parse_explanation(text, names, static_argnums=static)
    assert e is not None and e.function == "f" and e.call_site[0] == "/work/nb.py"
    assert e.kind == kind
    assert _as_tuples(e) == changes
    if detail is None:
        assert e.detail is None
    else:
        assert detail in e.detail


def test_never_seen_function_fields():
    e = parse_explanation(RECORDED[0][1])
    assert (e.function, e.function_id, e.defined_file, e.defined_line) == (
        "f_shape",
        140050658413600,
        "/tmp/i4/exp1_explain.py",
        33,
    )
    partial_text = next(r[1] for r in RECORDED if r[0] == "A jax.jit(functools.partial(f, k=2)) recreated #1")
    e = parse_explanation(partial_text)
    assert e.function == "functools.partial(<function f_part at 0x7f7f7169b380>, k=2)"
    assert (e.function_id, e.defined_line, e.kind, e.redefined_hint) == (140185451703376, 139, "first", True)


STDERR_A = """\
WARNING:2026-11-21 12:08:50,104:jax._src.pjit:1179: TRACING CACHE MISS at /tmp/i4/exp1_explain.py:31:5 (<module>) because:
  never seen function:
    convert_element_type id=140185503458432 defined at /tmp/i4/venv-0.4.38/lib/python3.11/site-packages/jax/_src/dispatch.py:98
WARNING:2026-11-21 12:08:50,176:jax._src.pjit:1179: TRACING CACHE MISS at /tmp/i4/exp1_explain.py:37:26 (<lambda>) because:
  for f_shape defined at /tmp/i4/exp1_explain.py:33
  never seen input type signature:
    x: f32[4]
  closest seen input type signature has 1 mismatches, including:
    * at x, seen f32[3], but now given f32[4]"""


def test_logger_prefix_and_joined_records():
    """JAX 0.4/0.8 print records to stderr with a `WARNING:<time>:<logger>:<line>:` prefix."""
    first = parse_explanation(STDERR_A)
    assert first.function == "convert_element_type" and first.kind == "first"
    assert first.text.endswith("dispatch.py:98") and "f_shape" not in first.text
    second = parse_explanation(STDERR_A[STDERR_A.index("\nWARNING") + 1 :])
    assert second.text.startswith("TRACING CACHE MISS at /tmp/i4/exp1_explain.py:37:26")
    assert _as_tuples(second) == [("x", "shape", "f32[3]", "f32[4]")]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello",
        "Finished tracing f_shape for jit in 0.001135588 sec",
        "PERSISTENT COMPILATION CACHE MISS for 'jit_h' with key 'jit_h-3054'",
        "TRACING CACHE HIT at x.py:1",
    ],
)
def test_not_an_explanation(text):
    assert parse_explanation(text) is None


def test_non_string_is_not_an_explanation():
    assert parse_explanation(None) is None  # type: ignore[arg-type]
    assert parse_explanation(b"TRACING CACHE MISS at a.py:1:") is None  # type: ignore[arg-type]


def test_unknown_first_line_still_parses_the_body():
    e = parse_explanation(
        "TRACING CACHE MISS at somewhere odd\n  for g defined at a.py:3\n"
        "  different input types:\n  * at x, now f32[2] and before f32[1]"
    )
    assert e.call_site is None and e.function == "g" and _as_tuples(e) == [("x", "shape", "f32[1]", "f32[2]")]


@pytest.mark.parametrize(
    "before,after,kind",
    [
        ("f32[3]", "f32[4]", "shape"),
        ("f32[3]", "i32[3]", "dtype"),
        ("f32[3]", "i32[5]", "shape"),
        ("f32[]{weak_type=False}", "f32[]{weak_type=True}", "weak_type"),
        ("f32[]", "i32[]", "dtype"),
        ("f32[8]({})", "f32[8@d]({Explicit: ('d',)})", "sharding"),
        ("f32[8@d]", "f32[8]", "sharding"),
        ("f32[8,4@(x,y)]", "f32[8,4@x]", "sharding"),
        ("f32[8]", "f32<host>[8]", "sharding"),
        ("key<fry>[]", "key<rbg>[]", "dtype"),
        ("bf16[2,3]", "bf16[3,2]", "shape"),
        ("<object>", "f32[3]", "unknown"),
    ],
)
def test_type_change_kind(before, after, kind):
    assert type_change_kind(before, after) == kind


def test_main_kind_order():
    assert main_kind(["shape", "static"]) == "static"
    assert main_kind(["dtype", "context", "pytree"]) == "context"
    assert main_kind([]) == main_kind(["bogus"]) == "unknown"
    assert KIND_ORDER[0] == "first" and KIND_ORDER[-1] == "unknown"


_FRAGMENTS = sorted(
    {line for r in RECORDED for line in r[1].split("\n")} | {line for c in CONSTRUCTED for line in c[1].split("\n")}
)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_any_text(text):
    result = parse_explanation(text)
    assert result is None or result.kind in KIND_ORDER
    result = parse_explanation("TRACING CACHE MISS at " + text, ["x"], static_argnums=(0,))
    assert result is not None and result.kind in KIND_ORDER


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=40)), max_size=12),
    st.lists(st.sampled_from(["x", "n", "p"]), max_size=3),
    st.sets(st.integers(0, 4), max_size=3),
)
def test_never_raises_on_shuffled_record_lines(lines, names, static):
    result = parse_explanation("\n".join(["TRACING CACHE MISS at a.py:1:2 (f):", *lines]), names, static_argnums=static)
    assert result is not None and result.kind in KIND_ORDER
    assert all(c.kind in KIND_ORDER for c in result.changes)


# ---------------------------------------------------------------- live JAX records

_LOGGERS = ("jax._src.interpreters.partial_eval", "jax._src.pjit")  # 0.9+ and 0.4-0.8
OLD = jax.__version_info__ < (0, 6)  # A: no static or positional-pytree detail, no sharding records
B_ERA = (0, 6) <= jax.__version_info__ < (0, 9)  # B: context positions instead of flag names


class _Catch(logging.Filter):
    """Keeps the records and stops them before any handler: nothing reaches stderr."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "TRACING CACHE MISS" in text:
            self.texts.append(text)
            return False
        return True


@contextlib.contextmanager
def explaining() -> Iterator[list[str]]:
    """`jax_explain_cache_misses` on, its records collected; the flag and loggers restored after."""
    catch = _Catch()
    previous = jax.config.jax_explain_cache_misses
    loggers = [logging.getLogger(name) for name in _LOGGERS]
    jax.config.update("jax_explain_cache_misses", True)
    for logger in loggers:
        logger.addFilter(catch)
    try:
        yield catch.texts
    finally:
        for logger in loggers:
            logger.removeFilter(catch)
        jax.config.update("jax_explain_cache_misses", previous)


@pytest.fixture
def texts() -> Iterator[list[str]]:
    with explaining() as collected:
        yield collected


def why(texts: list[str], fn, static: tuple[int, ...] = ()):
    """The record about `fn` (eager internals and inner jits log their own), parsed; texts emptied."""
    names = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    parsed = [parse_explanation(t, names, static_argnums=static) for t in texts]
    mine = [e for e in parsed if e is not None and e.function and e.function.rsplit(".", 1)[-1] == fn.__name__]
    texts.clear()
    assert mine, f"no record about {fn.__name__}"
    assert mine[-1].call_site[0] == __file__
    return mine[-1]


X3, X4 = jnp.ones(3), jnp.ones(4)


def test_live_first_call_then_shape(texts):
    def f_shape(x):
        return x * 2

    jf = jax.jit(f_shape)
    jf(X3)
    first = why(texts, f_shape)
    assert (first.kind, first.defined_line) == ("first", f_shape.__code__.co_firstlineno)
    jf(X3)
    assert texts == []  # a hit logs nothing
    jf(X4)
    assert _as_tuples(why(texts, f_shape)) == [("x", "shape", "f32[3]", "f32[4]")]


def test_live_dtype_and_weak_type(texts):
    def f_types(x):
        return x + 1

    jf = jax.jit(f_types)
    jf(X3)
    jf(jnp.ones(3, jnp.int32))
    assert _as_tuples(why(texts, f_types)) == [("x", "dtype", "f32[3]", "i32[3]")]

    def f_weak(x):  # its own tracing cache (keyed on the Python function): the closest entry is the f32[] one
        return x + 1

    jf = jax.jit(f_weak)
    jf(jnp.float32(2.0))
    texts.clear()
    jf(2.0)
    assert _as_tuples(why(texts, f_weak)) == [("x", "weak_type", "f32[]{weak_type=False}", "f32[]{weak_type=True}")]


def test_live_static_argnum_and_argname(texts):
    def f_static(x, n, *, mode="a"):
        return x * n if mode == "a" else x - n

    jf = jax.jit(f_static, static_argnums=1, static_argnames="mode")
    jf(X3, 2)
    jf(X3, 3)
    unexplained = any("cache miss explanation unavailable" in t for t in texts)  # JAX 0.4 and 0.12 on a static change
    e = why(texts, f_static, static=(1,))
    if OLD or unexplained:
        assert e.kind == "unknown" and "unavailable" in e.detail
        return
    assert _as_tuples(e) == [("n", "static", "2", "3")]

    def f_mode(x, *, mode):  # its own tracing cache: only the mode='b' entry to compare with
        return x if mode == "b" else -x

    jf = jax.jit(f_mode, static_argnames="mode")
    jf(X3, mode="b")
    texts.clear()
    jf(X3, mode="c")
    assert _as_tuples(why(texts, f_mode)) == [("mode", "static", "'b'", "'c'")]


def test_live_new_kwarg_and_positional(texts):
    def f_kw(x, y=None):
        return x if y is None else x + y

    jf = jax.jit(f_kw)
    jf(X3)
    texts.clear()
    jf(X3, y=X3)
    e = why(texts, f_kw)
    assert e.kind == "pytree"
    if not OLD:
        assert [c.path for c in e.changes] == ["kwargs"] and "'y'" in e.changes[0].after
    jf(X3, X3)
    e = why(texts, f_kw)
    assert e.kind == "pytree" and (OLD or "args" in [c.path for c in e.changes])


@pytest.mark.parametrize(
    "before,after,expected",
    [
        (
            {"a": X3, "b": X3},
            {"a": X3, "c": X3},
            ("p", "pytree", "dict with keys ('a', 'b')", "dict with keys ('a', 'c')"),
        ),
        ((X3, X3), (X3, X3, X3), ("p", "pytree", "tuple of length 2", "tuple of length 3")),
        ({"a": [X3, X3]}, {"a": [X3, None]}, ("p['a'][1]", "pytree", "pytree leaf", "None")),
        ({"a": [X3, X3]}, {"a": [X3, X4]}, ("p['a'][1]", "shape", "f32[3]", "f32[4]")),
    ],
)
def test_live_pytrees(texts, before, after, expected):
    def f_tree(p):
        return sum(jnp.sum(leaf) for leaf in jax.tree_util.tree_leaves(p))

    jf = jax.jit(f_tree)
    jf(before)
    texts.clear()
    jf(after)
    e = why(texts, f_tree)
    if OLD and expected[1] == "pytree":
        assert _as_tuples(e) == [("", "pytree", "no keyword args", "1 positional args and no keyword args")]
        return
    assert _as_tuples(e) == [expected]


def test_live_sharding_on_a_mesh(texts):
    if OLD:
        pytest.skip("JAX 0.4/0.5 log no record for a sharding change")
    mesh = jax.make_mesh((8,), ("d",))

    def f_shard(x):
        return x * 2

    jf = jax.jit(f_shard)
    x8 = jnp.arange(8.0)
    jf(x8)
    texts.clear()
    jf(jax.device_put(x8, NamedSharding(mesh, P("d"))))
    (change,) = why(texts, f_shard).changes
    assert (change.path, change.kind, change.before) == ("x", "sharding", "f32[8]({})")
    assert "('d',)" in change.after


def test_live_lambda_made_anew(texts):
    for _ in range(2):
        jax.jit(lambda v: v + 1)(X3)
    parsed = [parse_explanation(t) for t in texts]
    lambdas = [e for e in parsed if e is not None and e.function.endswith("<lambda>")]
    assert [e.kind for e in lambdas] == ["first", "first"]
    assert [e.redefined_hint for e in lambdas] == [False, True]
    assert lambdas[0].defined_line == lambdas[1].defined_line == lambdas[0].call_site[1]


def test_live_context_flags(texts):
    def f_ctx(a, b):
        return a @ b

    jf = jax.jit(f_ctx)
    m = jnp.ones((4, 4))
    jf(m, m)
    texts.clear()
    with jax.default_matmul_precision("highest"):
        jf(m, m)
    said = "".join(texts)  # what JAX wrote (`why` empties the list)
    e = why(texts, f_ctx)
    assert e.kind == "context"
    if "jax_default_matmul_precision" in said:  # JAX names the flag (0.10): so do we
        assert _as_tuples(e) == [("jax_default_matmul_precision", "context", "None", "highest")]
    else:  # JAX says only that the trace context differs (0.9 and before): nothing named, nothing guessed
        assert all(c[0].startswith("trace context") for c in _as_tuples(e)), _as_tuples(e)
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", not previous)
    try:
        jf(m, m)
    finally:
        jax.config.update("jax_enable_x64", previous)
    said = "".join(texts)
    e = why(texts, f_ctx)
    assert e.kind == "context"
    if "jax_enable_x64" in said:
        assert _as_tuples(e) == [("jax_enable_x64", "context", str(previous), str(not previous))]
    else:
        assert all(c[0].startswith("trace context") for c in _as_tuples(e)), _as_tuples(e)


def test_flag_and_loggers_restored():
    before = jax.config.jax_explain_cache_misses
    with explaining():
        assert jax.config.jax_explain_cache_misses is True
    assert jax.config.jax_explain_cache_misses == before
    assert all(
        not logging.getLogger(n).filters or not any(isinstance(f, _Catch) for f in logging.getLogger(n).filters)
        for n in _LOGGERS
    )
