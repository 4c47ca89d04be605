"""Jaxprs and what they hold: types, avals and literals as the printer writes them, the printer,
jaxprs rebuilt with other parts, and the one walker over the sub-jaxprs of an eqn.

Each private name is reached behind a feature check; where it is missing the function says what
the caller gets instead (tests/test_jax_probes.py checks each on the installed JAX).

`sub_jaxprs` reads an eqn's params by type: a `cond` keeps its branches in a tuple param, a
`while` its `cond_jaxpr` and `body_jaxpr`, a `pjit` its `jaxpr`, a `custom_vjp_call` its
`call_jaxpr` (or `fun_jaxpr`), a `shard_map` an open `Jaxpr` where the others keep a
`ClosedJaxpr`; which params hold jaxprs, and whether closed or open, changes between JAX
releases (JAX's own `jaxprs_in_params` reads them the same way).
"""

from __future__ import annotations

import collections
import itertools
import re
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.core
import numpy as np

from ... import strict

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def short_aval(aval: Any) -> str:
    """`f32[3,4]`, as JAX's jaxpr printer writes types."""
    try:
        return aval.str_short(short_dtypes=True)
    except TypeError:
        return aval.str_short()
    except Exception:  # boundary: an aval-like stand-in (a user's pytree leaf, a custom type)
        return str(aval)


_SHORT_DTYPES: dict[Any, str] = {}


def short_dtype(dtype: Any) -> str:
    """`f32`, `bf16`, `key<fry>`: a dtype as the jaxpr printer writes it in types.

    Kept per dtype: making the aval goes through `jax.core`'s deprecated-name lookup, ~0.1 ms a
    call, and `%%sharding` asks once per array (0.12 s for a 560-array train step's outputs)."""
    try:
        return _SHORT_DTYPES[dtype]
    except (KeyError, TypeError):  # not seen yet, or an unhashable stand-in
        pass
    try:
        text = short_aval(jax.core.ShapedArray((), dtype))
    except Exception:  # boundary: a dtype JAX cannot make an aval of (a user's extension type)
        return str(dtype)
    text = text[:-2] if text.endswith("[]") else text
    try:
        _SHORT_DTYPES[dtype] = text
    except TypeError:
        pass
    return text


def with_vars(closed: Any, invars: list | None = None, outvars: list | None = None) -> Any:
    """`closed` with its jaxpr's inputs or outputs replaced (the same eqns).

    JAX checks a jaxpr's debug info (argument names, result paths) against its inputs and
    outputs; where they no longer match, the debug info is left out.
    """
    jaxpr = closed.jaxpr
    changes = {k: v for k, v in (("invars", invars), ("outvars", outvars)) if v is not None}
    try:
        return closed.replace(jaxpr=jaxpr.replace(**changes))
    except AssertionError:
        return closed.replace(jaxpr=jaxpr.replace(**changes, debug_info=None))


def _alphabetic(index: int) -> str:
    text = ""
    while not text or index:
        index, digit = divmod(index, 26)
        text = chr(97 + digit) + text
    return text


def _fresh_name_function() -> Callable[[int], str]:
    try:
        from jax._src.core import _encode_digits_alphabetic

        return _encode_digits_alphabetic
    except (ImportError, AttributeError):
        return _alphabetic


_fresh_name: Callable[[int], str] | None = None


def var_name(index: int) -> str:
    """The printer's `index`-th fresh variable name: a, b, ..., z, ba, bb, ... (JAX's
    `_encode_digits_alphabetic`; the same digits where this JAX lacks it)."""
    global _fresh_name
    if _fresh_name is None:
        _fresh_name = _fresh_name_function()
    return _fresh_name(index)


def printer_names_jit_bodies_like_calls() -> bool:
    """Whether JAX's printer names a `jit` eqn's inner inputs and outputs like the call's own
    (`suggest_same_var_names`, JAX 0.5 on); older printers give them fresh names."""
    try:
        from jax._src import core

        return hasattr(core.JaxprPpContext, "suggest_same_var_names")
    except (ImportError, AttributeError):
        return False


def jaxpr_pretty_printer() -> Callable[..., tuple[str, dict]] | None:
    """A printer `(jaxpr, names=None, first_fresh=0) -> (text, {Var: printed name})`, or None
    if the private API moved.

    `names` ({Var: name}, made in advance by jaxmagic, model/jaxpr_text.py) are used as given;
    a variable without one gets the printer's next fresh name from index `first_fresh` on, so
    it never takes a name already given. So the graph can label its variables before (or
    without) printing, and the text, printed later, uses the same names.
    """
    try:
        from jax._src import core

        core.JaxprPpContext, core.JaxprPpSettings, core.pp_jaxpr  # noqa: B018 - feature check
    except (ImportError, AttributeError) as exc:
        strict.fallback("the jaxpr text with the graph's names", exc)
        return None

    def print_jaxpr(jaxpr: Any, names: dict | None = None, first_fresh: int = 0) -> tuple[str, dict]:
        context = core.JaxprPpContext()
        if names:
            fresh = map(var_name, itertools.count(first_fresh))
            context.var_names = collections.defaultdict(fresh.__next__, names)
        doc = core.pp_jaxpr(jaxpr, context, core.JaxprPpSettings())
        try:  # inside a kernel JAX would colour the text with ANSI codes
            text = doc.format(use_color=False)
        except TypeError:
            text = _ANSI.sub("", doc.format())
        return text, dict(context.var_names)

    return print_jaxpr


_WRAPPED_CONSTANTS = ("TypedNdArray", "LiteralArray")  # JAX 0.8's wrapper; JAX 0.7's (jax._src.literals)


def constant_value(value: Any) -> Any:
    """A jaxpr constant as the array it holds.

    JAX 0.8 wraps numpy constants in a `TypedNdArray` (JAX 0.7 in a `LiteralArray`) that is
    not an ndarray and keeps the array in `.val`; later versions made it an ndarray subclass (a view of the
    user's array). Either way the user's array is what comes back.
    """
    if type(value).__name__ in _WRAPPED_CONSTANTS and not isinstance(value, np.ndarray):
        inner = getattr(value, "val", None)
        if isinstance(inner, np.ndarray):
            return inner
    return value


def literal_value(atom: Any) -> Any:
    """The Python value of a jaxpr Literal, or None for a Var."""
    return constant_value(getattr(atom, "val", None)) if type(atom).__name__ == "Literal" else None


def is_literal(atom: Any) -> bool:
    return type(atom).__name__ == "Literal"


def is_dropvar(var: Any) -> bool:
    return type(var).__name__ == "DropVar"


_jaxpr_types: tuple[type, type] | None = None


def argument_paths(jaxpr: Any) -> tuple[str, ...] | None:
    """The pytree path of each input of a traced function's jaxpr (`params['layers'][0]['w']`), as
    JAX's own debug info names them; None when this JAX keeps none, or they do not line up (a jaxpr
    built by hand, or one whose inputs were pruned after tracing)."""
    names = getattr(getattr(jaxpr, "debug_info", None), "arg_names", None)
    if not names or len(names) != len(jaxpr.invars) or not all(isinstance(n, str) for n in names):
        return None
    return tuple(names)


def jaxpr_types() -> tuple[type, type]:
    """(ClosedJaxpr, Jaxpr) classes, wherever this JAX keeps them; from JAX 0.12, where one
    `Jaxpr` type holds its consts, (Jaxpr, Jaxpr).

    From `jax._src.core`, loaded with jax. `jax.extend` (the public home) is the last resort: it
    costs ~16 ms to import, and on JAX 0.12 importing it adds config values to the tracing context,
    so every function compiled before would compile again on its next call.
    """
    global _jaxpr_types
    if _jaxpr_types is None:
        try:
            from jax._src import core

            _jaxpr_types = (getattr(core, "ClosedJaxpr", core.Jaxpr), core.Jaxpr)
        except (ImportError, AttributeError):
            from jax import extend

            _jaxpr_types = (extend.core.ClosedJaxpr, extend.core.Jaxpr)
    return _jaxpr_types


def closed_jaxpr_with(closed: Any, jaxpr: Any, consts: list) -> Any:
    """A new ClosedJaxpr of `closed`'s type around `jaxpr` and `consts`; from JAX 0.11, where one
    `Jaxpr` type holds its consts (its `.jaxpr` is itself), `jaxpr` with `consts`."""
    if getattr(closed, "jaxpr", None) is closed:
        return jaxpr.replace(consts=consts)
    return type(closed)(jaxpr, consts)


def jaxpr_with_eqns(jaxpr: Any, eqns: list, consts: list | None = None) -> Any:
    """`jaxpr` with other eqns (same invars, outvars, effects and debug info), and other consts
    where given (JAX 0.11 and later: a `Jaxpr` holds its consts, there is no separate ClosedJaxpr)."""
    return jaxpr.replace(eqns=eqns) if consts is None else jaxpr.replace(eqns=eqns, consts=consts)


def scan_counts(params: dict) -> tuple[int, int]:
    """(consts, carry): how many of a `scan` eqn's inputs are constants and how many the carry;
    the rest are the scanned-over `xs`.

    JAX up to 0.11 keeps the counts as `num_consts` and `num_carry`; JAX 0.12 keeps the three
    groups as one flat tree, `ft_in` (its `unpack()` gives consts, carry, xs).
    """
    if "num_consts" in params:
        return int(params["num_consts"]), int(params["num_carry"])
    consts, carry, _ = params["ft_in"].unpack()
    return len(consts), len(carry)


def eqn_with_params(eqn: Any, params: dict) -> Any:
    """`eqn` with other params (same vars, primitive and source info)."""
    return eqn.replace(params=params)


# -- the sub-jaxprs of an eqn -----------------------------------------------------------------


def sub_jaxprs(eqn: Any, *, ordered: bool = True, opened: bool = False) -> Iterator[tuple[str, Any]]:
    """(label, jaxpr) for each jaxpr held in `eqn.params`; not recursive.

    The label is the param's name, with the index for one item of a tuple or list param
    (`branches[1]`). `ordered`: params by sorted name, the order JAX prints them in (a graph's
    groups and the eqn paths of a split follow it); otherwise the params' own order, which is
    cheaper and is the order of JAX's `jaxprs_in_params`. `opened`: a `ClosedJaxpr` is given as
    its open `Jaxpr` (its consts left out); by default each is given as the param holds it.
    """
    closed_type, open_type = _jaxpr_types or jaxpr_types()
    params = eqn.params
    for key in sorted(params) if ordered else params:
        value = params[key]
        if isinstance(value, (closed_type, open_type)):
            yield key, (value.jaxpr if opened and isinstance(value, closed_type) else value)
        elif isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                if isinstance(item, (closed_type, open_type)):
                    yield f"{key}[{i}]", (item.jaxpr if opened and isinstance(item, closed_type) else item)


def has_sub_jaxprs(eqn: Any) -> bool:
    """True when some param of `eqn` holds a jaxpr (a control-flow or call eqn)."""
    for _ in sub_jaxprs(eqn, ordered=False):
        return True
    return False


# Primitives whose evaluation runs the user's Python (`jax.pure_callback`, `io_callback`,
# `jax.debug.callback`/`print`). A pure callback carries no effect, so `effects` does not show it.
_CALLBACK_PRIMITIVES = frozenset({"pure_callback", "io_callback", "debug_callback"})


def distinct_jaxprs(root: Any) -> Iterator[Any]:
    """`root` (a ClosedJaxpr or Jaxpr) and every jaxpr nested in its eqns' params, each distinct open
    jaxpr once, as its param holds it (closed or open). A nested jit called 100 times shares one
    jaxpr object: walking it once keeps the cost linear in the printed program, not its unrolled size."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        item = todo.pop()
        jaxpr = getattr(item, "jaxpr", item)
        if id(jaxpr) in seen:
            continue
        seen.add(id(jaxpr))
        yield item
        for eqn in jaxpr.eqns:
            todo.extend(sub for _, sub in sub_jaxprs(eqn, ordered=False))


def python_callback_in(jaxpr: Any) -> str | None:
    """The name of the first primitive in `jaxpr` (nested jaxprs included) that calls back into
    Python, or None. JAX may drop a pure callback whose result is unused or call it any number of
    times; a replay of the program must not add calls the user sees (a log, a print, a cost)."""
    for item in distinct_jaxprs(jaxpr):
        for eqn in getattr(item, "jaxpr", item).eqns:
            if eqn.primitive.name in _CALLBACK_PRIMITIVES:
                return eqn.primitive.name
    return None
