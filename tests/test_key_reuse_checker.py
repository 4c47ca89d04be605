"""%%prng's key-reuse verdict against JAX's own checker, on the programs of JAX's own key-reuse tests.

The programs below are copied from JAX's `tests/key_reuse_test.py` (the unit, integration, eager
and global-flag cases; `consume(key)`, a checker-internal primitive, is written as the sampler
`jax.random.bits(key)`, which the checker counts the same way; the `assert_consumed` probes are
dropped: they are checks, not program). Each program runs twice: under `jaxmagic.capture()`
(our verdict: a `key_reuse`/`loop_reuse` finding) and plainly under `jax.debug_key_reuse(True)`
(JAX's verdict: does it raise `KeyReuseError`?). Most run as written (eagerly, as JAX's eager
tests do) and jitted (as `check_key_reuse` traces them).

`python tests/test_key_reuse_checker.py` prints the whole comparison table (all 119 runs, about
45 s); the tests run a representative subset.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import jaxmagic

jr = jax.random


# --- JAX's programs -------------------------------------------------------------------------------
# (name, function, arguments maker); the arguments are made afresh for each run, since JAX's eager
# checker marks key objects as consumed.


def _key(seed: int = 0) -> Callable[[], tuple]:
    return lambda: (jr.key(seed),)


def u_consume(key):
    return jr.bits(key)


def u_random_clone(key):
    jr.bits(key)
    return jr.clone(key)


def u_seed():
    return jr.key(0)


def u_split(key):
    return jr.split(key)


def u_fold_in(key):
    return jr.fold_in(key, 2)


def u_wrap(key_data):
    return jr.wrap_key_data(key_data)


def u_unwrap(key):
    return jr.key_data(key)


def u_gamma(key):
    return jr.gamma(key, 1.0)


def u_broadcast_in_dim(key):
    key2 = key[None]
    jr.bits(key)
    return key2


def u_copy(key):
    key2 = jnp.array(key, copy=True)
    jr.bits(key)
    return key2


def u_device_put(key):
    key_d = jax.device_put(key)
    jr.bits(key)
    return key_d


def u_device_put_multiple(key1, key2):
    key1_d, key2_d = jax.device_put((key1, key2))
    jr.bits(key1)
    jr.bits(key2)
    return key1_d, key2_d


def u_squeeze(key):
    key2 = jax.lax.squeeze(key, (0,))
    jax.vmap(jr.bits)(key)  # consume(key) of a key array
    return key2


def u_reshape(key):
    key2 = key.reshape(1, *key.shape)
    jr.bits(key)
    return key2


def u_concatenate(key1, key2):
    return jax.lax.concatenate([key1, key2], dimension=0)


def u_slice(keys):
    return keys[0], keys[1]


def u_jit_can_consume_input(key):
    return jax.jit(jr.bits)(key)


def u_jit_can_return_consumed_output():
    def g():
        key = jr.key(0)
        bits = jr.bits(key)
        return bits, key

    _, key = jax.jit(g)()
    return key


def u_jit_duplicate_inputs(key):
    def g(key1, key2):
        return jr.bits(key1)

    return jax.jit(g)(key, key)


def u_jit_propagates_consumption_bit(key):
    g = jax.jit(lambda: key)
    key2 = g()
    jr.bits(key)
    return key2


def u_jit_duplicate_outputs(key):
    key1, key2 = jax.jit(lambda k: (k, k))(key)
    other = jr.bits(key1)
    return key1, key2, other


def u_cond_both_consumed(flag, key):
    return jax.lax.cond(flag, jr.uniform, jr.normal, key)


def u_cond_one_consumed(flag, key):
    return jax.lax.cond(flag, jr.uniform, lambda k: 1.0, key)


def u_cond_neither_consumed(flag, key):
    return jax.lax.cond(flag, lambda k: 0.0, lambda k: 1.0, key)


def _seeded_uniform(seed):
    return jr.uniform(jr.key(seed))


def u_simple_vmap(seeds):
    return jax.vmap(jax.jit(_seeded_uniform))(seeds)


def i_reuse():
    key = jr.key(0)
    return jr.uniform(key) + jr.uniform(key)


def i_reuse_after_split_good():
    key = jr.key(0)
    key1, key2 = jr.split(key)
    return jr.uniform(key1) + jr.uniform(key2)


def i_reuse_after_split_bad():
    key = jr.key(0)
    other = jr.split(key)
    return jr.uniform(key), other


def i_reuse_after_split_bad_2():
    key = jr.key(0)
    other1 = jr.split(key)
    key1, other2 = jr.split(key)
    return jr.uniform(key1), other1, other2


def i_repeated_fold_ins():
    key = jr.key(0)
    keys = [jr.fold_in(key, i) for i in range(10)]
    return [jr.uniform(k) for k in keys]


def i_reuse_after_fold_in():
    key = jr.key(0)
    _ = jr.fold_in(key, 1)
    return jr.uniform(key)


def i_reuse_after_broadcast():
    key = jr.key(0)
    key2 = key[None]
    return jr.bits(key) + jax.vmap(jr.bits)(key2)


def i_reuse_after_reshape():
    key = jr.key(0)
    key2 = key.reshape((1,))
    return jr.bits(key) + jr.bits(key2.squeeze())


def i_reuse_after_squeeze():
    key = jr.split(jr.key(0), 1)
    key2 = jax.lax.squeeze(key, (0,))
    return jr.bits(key.squeeze()) + jr.bits(key2)


def i_cond_good(key, condition):
    return jax.lax.cond(condition, jr.uniform, jr.normal, key)


def i_cond_bad(key, condition):
    r1 = jax.lax.cond(condition, jr.uniform, jr.normal, key)
    return r1 + jr.uniform(key)


def i_cond_bad_2(key, condition):
    r1 = jax.lax.cond(condition, jr.uniform, lambda key: 1.0, key)
    return r1 + jr.uniform(key)


def i_simple_scan(key):
    def body_fun(key, _):
        key, subkey = jr.split(key)
        return key, jr.bits(subkey)

    return jax.lax.scan(body_fun, key, xs=jnp.arange(10))


def i_scan_sink_on_consts(key):
    def body_fun(carry, _):
        return carry, jr.uniform(key)

    return jax.lax.scan(body_fun, None, xs=jnp.arange(10))


def i_scan_reuse_in_body(key):
    def body_fun(key, _):
        return key, jr.bits(key)

    return jax.lax.scan(body_fun, key, xs=jnp.arange(10))


def i_scan_good_over_keys(key):
    keys = jr.split(key, 5)
    return jax.lax.map(jr.bits, keys)


def i_scan_consume_one(*keys):
    def body_func(keys, x):
        return tuple(jr.split(keys[0])), x

    return jax.lax.scan(body_func, keys, xs=jnp.arange(10))


def i_vmap_good(seeds):
    return jax.vmap(lambda seed: jr.bits(jr.key(seed)))(seeds)


def i_vmap_bad(seeds):
    def f(seed):
        key = jr.key(0)
        return jr.bits(key) + jr.bits(key)

    return jax.vmap(f)(seeds)


def i_while_simple(seed):
    key = jr.key(seed)

    def cond_fun(carry):
        return carry[1] < 10

    def body_fun(carry):
        key, subkey = jr.split(carry[0])
        return key, carry[1] + jr.uniform(subkey)

    return jax.lax.while_loop(cond_fun, body_fun, (key, 0.0))


def i_while_bad_cond(seed):
    key = jr.key(seed)

    def cond_fun(carry):
        i, key = carry
        return i < jr.uniform(key)

    def body_fun(carry):
        i, key = carry
        return i + 1.0, key

    return jax.lax.while_loop(cond_fun, body_fun, (0.0, key))


def i_while_bad_body(seed):
    key = jr.key(seed)

    def cond_fun(carry):
        key, i = carry
        return i < 5

    def body_fun(carry):
        key, i = carry
        return key, i + jr.randint(key, (), 1, 3)

    return jax.lax.while_loop(cond_fun, body_fun, (key, 0))


def i_while_sink_on_body_consts(seed):
    key = jr.key(seed)
    return jax.lax.while_loop(lambda i: i < 5, lambda i: i + jr.randint(key, (), 1, 3), 0)


def i_while_sink_on_cond_consts(seed):
    key = jr.key(seed)
    return jax.lax.while_loop(lambda i: i < jr.uniform(key), lambda i: i + 1.0, 0.0)


def i_pjit_consumed_input(seed):
    g = jax.jit(lambda key, x: x)
    key = jr.key(seed)
    x = jr.bits(key)
    return g(key, x)


@jax.checkpoint
def _remat_bad(x, key):
    return x * jr.bits(key) + jr.bits(key)


@jax.checkpoint
def _remat_good(x, key):
    return x * jr.bits(key)


def _remat_args() -> tuple:
    return jnp.float32(1.0), jr.key(0)


def i_remat_bad(x, key):
    with jax.numpy_dtype_promotion("standard"):
        return _remat_bad(x, key)


def i_remat_bad_value_and_grad(x, key):
    with jax.numpy_dtype_promotion("standard"):
        return jax.value_and_grad(_remat_bad)(x, key)


def i_remat_good(x, key):
    with jax.numpy_dtype_promotion("standard"):
        return _remat_good(x, key)


def i_remat_good_grad(x, key):
    with jax.numpy_dtype_promotion("standard"):
        return jax.grad(_remat_good)(x, key)


def e_clone_eager():
    key = jr.key(0)
    key2 = jr.clone(key)
    _ = jr.uniform(key)
    return key, key2


def e_simple_reuse_nojit():
    key = jr.key(0)
    with jax.disable_jit():
        _ = jr.bits(key)
        _ = jr.bits(key)


def e_simple_key_reuse_jit():
    key = jr.key(0)
    _ = jax.jit(jr.bits)(key)
    _ = jax.jit(jr.bits)(key)


def e_closed_over_key_reuse_jit():
    key = jr.key(0)

    @jax.jit
    def f():
        return jr.uniform(key)

    _ = f()
    _ = f()


def e_key_reuse_within_jit():
    @jax.jit
    def f():
        key = jr.key(0)
        return jr.bits(key) + jr.bits(key)

    return f()


def e_vmap_zero_sized_axis():
    def f(key):
        a, b = jr.split(key)
        return jr.bits(a) + jr.bits(b)

    keys = jr.split(jr.key(0), 0)
    return jax.vmap(f)(keys)


def g_flag_good(key):
    return jax.jit(lambda k: jr.bits(k))(key)


def g_flag_bad(key):
    return jax.jit(lambda k: jr.bits(k) + jr.bits(k))(key)


_two_splits = lambda: (jr.split(jr.key(0)), jr.split(jr.key(1)))

# name -> (function, arguments maker, modes): "eager" runs it as written, "jit" under jax.jit.
BOTH = ("eager", "jit")
CASES: dict[str, tuple[Callable, Callable[[], tuple], tuple[str, ...]]] = {
    "consume": (u_consume, _key(), BOTH),
    "random_clone": (u_random_clone, _key(), BOTH),
    "seed": (u_seed, tuple, BOTH),
    "split": (u_split, _key(), BOTH),
    "fold_in": (u_fold_in, _key(), BOTH),
    "wrap": (u_wrap, lambda: (jr.PRNGKey(0),), BOTH),
    "unwrap": (u_unwrap, _key(), BOTH),
    "gamma": (u_gamma, _key(), BOTH),
    "broadcast_in_dim": (u_broadcast_in_dim, _key(), BOTH),
    "copy": (u_copy, _key(), BOTH),
    "device_put": (u_device_put, _key(), BOTH),
    "device_put_multiple": (u_device_put_multiple, lambda: (jr.key(0), jr.key(1)), BOTH),
    "squeeze": (u_squeeze, lambda: (jr.key(0)[None],), BOTH),
    "reshape": (u_reshape, _key(), BOTH),
    "concatenate": (u_concatenate, _two_splits, BOTH),
    "slice": (u_slice, lambda: (jr.split(jr.key(0)),), BOTH),
    "equality_eq": (operator.eq, lambda: (jr.key(0), jr.key(1)), BOTH),
    "equality_ne": (operator.ne, lambda: (jr.key(0), jr.key(1)), BOTH),
    "jit_can_consume_input": (u_jit_can_consume_input, _key(), BOTH),
    "jit_can_return_consumed_output": (u_jit_can_return_consumed_output, tuple, BOTH),
    "jit_duplicate_inputs": (u_jit_duplicate_inputs, _key(), BOTH),
    "jit_propagates_consumption_bit": (u_jit_propagates_consumption_bit, _key(), ("eager",)),
    "jit_duplicate_outputs": (u_jit_duplicate_outputs, _key(), BOTH),
    "cond_both_consumed": (u_cond_both_consumed, lambda: (True, jr.key(0)), ("jit",)),
    "cond_one_consumed": (u_cond_one_consumed, lambda: (True, jr.key(0)), ("jit",)),
    "cond_neither_consumed": (u_cond_neither_consumed, lambda: (True, jr.key(0)), ("jit",)),
    "simple_vmap": (u_simple_vmap, lambda: (jnp.arange(4),), BOTH),
    "reuse": (i_reuse, tuple, BOTH),
    "reuse_after_split_good": (i_reuse_after_split_good, tuple, BOTH),
    "reuse_after_split_bad": (i_reuse_after_split_bad, tuple, BOTH),
    "reuse_after_split_bad_2": (i_reuse_after_split_bad_2, tuple, BOTH),
    "repeated_fold_ins": (i_repeated_fold_ins, tuple, BOTH),
    "reuse_after_fold_in": (i_reuse_after_fold_in, tuple, BOTH),
    "reuse_after_broadcast": (i_reuse_after_broadcast, tuple, BOTH),
    "reuse_after_reshape": (i_reuse_after_reshape, tuple, BOTH),
    "reuse_after_squeeze": (i_reuse_after_squeeze, tuple, BOTH),
    "reuse_after_cond_good_true": (i_cond_good, lambda: (jr.key(0), True), BOTH),
    "reuse_after_cond_good_false": (i_cond_good, lambda: (jr.key(0), False), BOTH),
    "reuse_after_cond_bad": (i_cond_bad, lambda: (jr.key(0), True), BOTH),
    "reuse_after_cond_bad_2": (i_cond_bad_2, lambda: (jr.key(0), True), BOTH),
    "simple_scan": (i_simple_scan, _key(), BOTH),
    "scan_sink_on_consts": (i_scan_sink_on_consts, _key(), BOTH),
    "scan_reuse_in_body": (i_scan_reuse_in_body, _key(), BOTH),
    "scan_good_over_keys": (i_scan_good_over_keys, _key(), BOTH),
    "scan_consume_one": (i_scan_consume_one, lambda: (jr.key(0), jr.key(1)), BOTH),
    "vmap_good": (i_vmap_good, lambda: (jnp.arange(4),), BOTH),
    "vmap_bad": (i_vmap_bad, lambda: (jnp.arange(4),), BOTH),
    "while_simple": (i_while_simple, lambda: (0,), BOTH),
    "while_bad_cond": (i_while_bad_cond, lambda: (0,), BOTH),
    "while_bad_body": (i_while_bad_body, lambda: (0,), BOTH),
    "while_sink_on_body_consts": (i_while_sink_on_body_consts, lambda: (0,), BOTH),
    "while_sink_on_cond_consts": (i_while_sink_on_cond_consts, lambda: (0,), BOTH),
    "pjit_consumed_input": (i_pjit_consumed_input, lambda: (0,), BOTH),
    "remat_bad": (i_remat_bad, _remat_args, BOTH),
    "remat_bad_value_and_grad": (i_remat_bad_value_and_grad, _remat_args, BOTH),
    "remat_good": (i_remat_good, _remat_args, BOTH),
    "remat_good_grad": (i_remat_good_grad, _remat_args, BOTH),
    "clone_eager": (e_clone_eager, tuple, ("eager",)),
    "simple_reuse_nojit": (e_simple_reuse_nojit, tuple, ("eager",)),
    "simple_key_reuse_jit": (e_simple_key_reuse_jit, tuple, ("eager",)),
    "closed_over_key_reuse_jit": (e_closed_over_key_reuse_jit, tuple, ("eager",)),
    "key_reuse_within_jit": (e_key_reuse_within_jit, tuple, ("eager",)),
    "vmap_zero_sized_axis": (e_vmap_zero_sized_axis, tuple, BOTH),
    "global_flag_good": (g_flag_good, _key(), ("eager",)),
    "global_flag_bad": (g_flag_bad, _key(), ("eager",)),
}


def _program(name: str, mode: str) -> Callable[[], Any]:
    fn, make_args, _ = CASES[name]
    run = jax.jit(fn) if mode == "jit" else fn

    def program() -> Any:
        return jax.block_until_ready(run(*make_args()))

    return program


@functools.cache
def _checker_in_cache_key() -> bool:
    """Whether turning the checker on retraces a function jitted with it off (JAX 0.9 and later);
    where not, caches are cleared before each checked run, else an unchecked trace would answer."""
    jitted = jax.jit(_reuse_once)
    jitted()
    with jax.debug_key_reuse(True):
        try:
            jitted()
        except jax.errors.KeyReuseError:
            return True
    return False


def _reuse_once():
    k = jr.key(1)
    return jr.normal(k) + jr.normal(k)


def jax_says_reuse(program: Callable[[], Any]) -> bool:
    """JAX's verdict: whether the program raises KeyReuseError under `jax_debug_key_reuse`."""
    if not _checker_in_cache_key():
        jax.clear_caches()
    with jax.debug_key_reuse(True):
        try:
            program()
        except jax.errors.KeyReuseError:
            return True
    return False


def jaxmagic_says_reuse(program: Callable[[], Any]) -> tuple[bool, list[str]]:
    """Our verdict: a key_reuse or loop_reuse finding when the program runs under a capture."""
    with jaxmagic.capture({}) as cap:
        program()
    found = [f for f in cap.findings if f.kind in ("key_reuse", "loop_reuse")]
    return bool(found), [f.message for f in found]


ALL = [(name, mode) for name, (_, _, modes) in CASES.items() for mode in modes]

# JAX's eager checker marks key *objects* as consumed: `key[None]`, `key.reshape(...)` and
# `lax.squeeze(key, ...)` make new objects over the same key, so run eagerly it misses the reuse
# that its jitted checker raises on the same program (the "jit" runs of these cases). jaxmagic
# identifies keys by their data and reports the reuse either way: there JAX's jitted verdict is the
# one compared.
JAX_EAGER_MISSES = {
    ("reuse_after_broadcast", "eager"),
    ("reuse_after_reshape", "eager"),
    ("reuse_after_squeeze", "eager"),
}
# And the other way: run eagerly, `grad` of a checkpointed sampler recomputes the draw in the backward
# pass, which JAX's eager checker counts as a second use; its jitted checker (and `check_key_reuse`,
# JAX's own test of this program) skip the recomputation, and so do we.
JAX_EAGER_FALSE_POSITIVES = {("remat_good_grad", "eager")}
JAX_EAGER_WRONG = JAX_EAGER_MISSES | JAX_EAGER_FALSE_POSITIVES

# JAX's checker before the fix of jax-ml/jax#37859 (JAX 0.9.2 and 0.4.38 here) raises a spurious
# KeyReuseError on a vmap over a zero-sized key axis (its regression test is this case). No key is
# consumed at all there, so where JAX raises, the truth ("no reuse") is what our verdict must say.
JAX_FALSE_POSITIVES = {"vmap_zero_sized_axis"}

# A representative subset, run by the test (each case costs 0.1-0.4 s): every case that once
# disagreed, and the classic good and bad programs of each construct.
SUBSET = [
    ("reuse", "eager"),
    ("reuse_after_split_bad_2", "jit"),
    ("reuse_after_split_good", "jit"),
    ("fold_in", "jit"),
    ("repeated_fold_ins", "eager"),
    ("clone_eager", "eager"),
    ("simple_key_reuse_jit", "eager"),
    ("closed_over_key_reuse_jit", "eager"),
    ("cond_one_consumed", "jit"),
    ("reuse_after_cond_bad_2", "jit"),
    ("simple_scan", "jit"),
    ("scan_sink_on_consts", "jit"),
    ("scan_reuse_in_body", "eager"),
    ("while_simple", "jit"),
    ("while_bad_body", "jit"),
    ("while_bad_cond", "eager"),
    ("while_bad_cond", "jit"),
    ("while_sink_on_cond_consts", "eager"),
    ("while_sink_on_cond_consts", "jit"),
    ("remat_bad", "jit"),
    ("remat_good", "jit"),
    ("remat_good_grad", "jit"),
    ("remat_good_grad", "eager"),
    ("remat_bad_value_and_grad", "jit"),
    ("remat_bad_value_and_grad", "eager"),
    ("vmap_zero_sized_axis", "eager"),
    ("vmap_zero_sized_axis", "jit"),
    ("vmap_bad", "eager"),
    ("reuse_after_reshape", "eager"),
    ("reuse_after_reshape", "jit"),
]


def verdicts(name: str, mode: str) -> tuple[bool, bool, list[str]]:
    """(JAX's verdict, ours, our messages); where JAX's eager checker is wrong, its verdict on the jitted program;
    for JAX's known false positives, "no reuse" where this JAX raises."""
    jax_mode = "jit" if (name, mode) in JAX_EAGER_WRONG else mode
    ours, messages = jaxmagic_says_reuse(_program(name, mode))
    jax_verdict = jax_says_reuse(_program(name, jax_mode))
    return jax_verdict and name not in JAX_FALSE_POSITIVES, ours, messages


@pytest.mark.parametrize("name,mode", SUBSET, ids=[f"{n}-{m}" for n, m in SUBSET])
def test_agrees_with_jax_checker(name: str, mode: str) -> None:
    jax_verdict, ours, messages = verdicts(name, mode)
    assert ours is jax_verdict, (jax_verdict, messages)


def test_jax_eager_checker_differs_from_its_jit_checker() -> None:
    """The cases compared with JAX's jitted verdict are where JAX's eager checker is wrong, not we (checked,
    so that a JAX that fixes them makes these lists shrink)."""
    assert not jax_says_reuse(_program("reuse_after_reshape", "eager"))
    assert jax_says_reuse(_program("reuse_after_reshape", "jit"))
    assert jax_says_reuse(_program("remat_good_grad", "eager"))
    assert not jax_says_reuse(_program("remat_good_grad", "jit"))


def test_while_condition_finding_names_the_condition() -> None:
    _, messages = jaxmagic_says_reuse(_program("while_sink_on_cond_consts", "jit"))
    assert len(messages) == 1 and "while_loop condition" in messages[0] and "uniform" in messages[0], messages


def test_zero_length_key_arrays_are_not_one_key() -> None:
    """Two empty key arrays (split(k, 0) of two keys) have the same (no) data: neither consumes anything."""

    def program() -> None:
        jax.vmap(jr.normal)(jr.split(jr.key(0), 0))
        jax.vmap(jr.normal)(jr.split(jr.key(1), 0))

    ours, messages = jaxmagic_says_reuse(program)
    assert not ours and not jax_says_reuse(program), messages


def _while_cond_and_body_share_key(key):
    """The condition draws from the carried key and the body splits it: two consumptions per iteration."""

    def cond(carry):
        k, _ = carry
        return jr.uniform(k) < 0.9

    def body(carry):
        k, total = carry
        k, sub = jr.split(k)
        return k, total + jr.normal(sub)

    return jax.lax.while_loop(cond, body, (key, 0.0))


def test_while_condition_and_body_on_one_carried_key() -> None:
    """One finding, on the carried key, naming both lines (not also on the key passed in)."""
    program = lambda: jax.jit(_while_cond_and_body_share_key)(jr.key(0))
    ours, messages = jaxmagic_says_reuse(program)
    assert ours and jax_says_reuse(program)
    assert len(messages) == 1 and "uniform" in messages[0] and "split" in messages[0], messages


_CELL = """import jax, jax.random as jr
key = jr.key(3)
def draw_until(key):
    return jax.lax.while_loop(lambda i: i < jr.uniform(key), lambda i: i + 0.25, 0.0)
out = jax.jit(draw_until)(key)
out
"""


def test_while_condition_reuse_in_a_real_shell(magic_shell) -> None:
    """%%prng in IPython's real shell: the cell's result as without the magic, one loop_reuse finding on
    the condition's line (line 5, counting the magic line), naming the jitted function."""
    plain = magic_shell.run_cell(_CELL, store_history=True)
    magic_shell.user_ns.pop("prng_cap", None)
    under = magic_shell.run_cell("%%prng -n prng_cap\n" + _CELL, store_history=True)
    assert plain.success and under.success and float(under.result) == float(plain.result)
    found = [f for f in magic_shell.user_ns["prng_cap"].findings if f.kind in ("key_reuse", "loop_reuse")]
    assert [f.kind for f in found] == ["loop_reuse"], [f.message for f in found]
    assert found[0].source is not None and found[0].source.line == 5, found[0].source
    assert found[0].function == "draw_until" and "while_loop condition" in found[0].message


if __name__ == "__main__":
    agree = 0
    for name, mode in ALL:
        j, ours, messages = verdicts(name, mode)
        agree += ours is j
        mark = "  " if ours is j else "XX"
        print(f"{mark} {name:34s} {mode:5s} jax={j!s:5s} jaxmagic={ours!s:5s} {messages[:1]}")
    print(
        f"{agree} of {len(ALL)} agree ({len(JAX_EAGER_WRONG)} compared with JAX's jitted verdict, where its eager "
        f"checker is wrong)"
    )
