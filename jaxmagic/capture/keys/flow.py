"""The PRNG key flow inside one jaxpr: which keys a program makes, splits and consumes.

A jitted program never shows its keys to Python, but its jaxpr names every key operation
(`random_seed`, `random_split`, `random_fold_in`, `random_bits`, `random_wrap` and
`random_unwrap`, `random_clone`) and every way a key is picked out of a key array
(`slice`, `squeeze`, `dynamic_slice`, `gather`). `program_keys` interprets the jaxpr
abstractly: each variable that holds keys is mapped to a local key node, so the result is
the program's own key tree, rooted in its key inputs, with the uses on each node.

Legacy `PRNGKey` keys are plain `uint32` arrays: a program sees them as `u32[2]` inputs that
it `random_wrap`s. Every `uint32` input whose last dimension could be key data gets a
provisional node, kept only if it reaches `random_wrap`. Typed keys are known by dtype.

Loops are not unrolled: a scan or while body is read once, keys made in it stand for one
key per iteration (`LocalKey.level` names the loops around them) and uses in it repeat per
iteration (`LocalUse.level`). A use on a key from outside the loop is then a use on every
iteration: `repeats` turns that into counts. Cond branches are alternatives
(`LocalUse.branch`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import jax_compat, source
from ..jax_compat import random as jax_random
from ..record import SourceLocation

# Public jax.random functions that draw numbers (first argument a key); derivations are not samplers.
_NOT_SAMPLERS = frozenset(
    {
        "PRNGKey",
        "key",
        "split",
        "fold_in",
        "clone",
        "key_data",
        "wrap_key_data",
        "key_impl",
        "key_dtype",
        "random_gamma_p",
        "default_prng_impl",
    }
)
# Primitives that pass keys through unchanged, input i to output i.
_SAME = frozenset(
    {
        "squeeze",
        "reshape",
        "expand_dims",
        "copy",
        "copy_p",
        "convert_element_type",
        "device_put",
        "sharding_constraint",
        "reshard",
        "mesh_cast",
        "optimization_barrier",
        "broadcast_in_dim",
        "stop_gradient",
        "pvary",
        "transpose",
    }
)
# `checkpoint`/`remat` bodies are walked like any call (JAX 0.10 names the primitive `remat2`).
_CALLS = frozenset(
    {
        "pjit",
        "jit",
        "closed_call",
        "core_call",
        "remat",
        "remat2",
        "checkpoint",
        "custom_jvp_call",
        "custom_vjp_call",
        "custom_vjp_call_jaxpr",
        "shard_map",
        "custom_lin",
    }
)
_PICK = frozenset({"dynamic_slice", "gather", "dynamic_index_in_dim"})


_KEY_MAKERS = frozenset(
    {"random_seed", "random_wrap", "random_unwrap", "random_split", "random_fold_in", "random_clone"}
)  # eqns that make keys


@dataclass
class LocalKey:
    """One key (or key array) a program holds: an input, or one it makes."""

    id: int
    how: str  # as docs/schema.md KeyNode.how
    parent: int | None
    shape: tuple[int, ...] = ()  # key-array shape; () for one key
    level: tuple[int, ...] = ()  # loops around the place it is made (ids into ProgramKeys.loops)
    branch: tuple[tuple[int, int, int], ...] = ()  # (cond id, branch, branches) around it
    index: int | None = None  # row of `parent`, for how == "row" (None: picked at run time)
    typed: bool | None = None
    impl: str | None = None
    data: Any = None  # fold_in data or seed, when the program has it as a literal
    source: SourceLocation | None = None
    via: str | None = None
    input: int | None = None  # flat input index, for how == "input"
    constant: Any = None  # the key value, for how == "constant"
    keyed: bool = True  # False: a uint32 input that never became a key (dropped)
    carried: int | None = None  # the loop node this key becomes on the next iteration (a loop body's carry out)


@dataclass
class LocalUse:
    """One operation that reads a key: a sampler, a split, a fold_in..."""

    key: int
    kind: str  # sampler | split | fold_in | clone | data
    name: str
    consuming: bool
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    level: tuple[int, ...] = ()
    branch: tuple[tuple[int, int, int], ...] = ()
    source: SourceLocation | None = None
    via: str | None = None
    part: str | None = None  # "condition": in the innermost while loop's condition, run before every iteration


@dataclass(frozen=True)
class Loop:
    kind: str  # "scan" | "while"
    length: int | None  # trip count; None for while loops
    source: SourceLocation | None

    @property
    def label(self) -> str:
        return f"scan ×{self.length}" if self.kind == "scan" else "while"


@dataclass
class ProgramKeys:
    keys: list[LocalKey] = field(default_factory=list)
    uses: list[LocalUse] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    inputs: dict[int, int] = field(default_factory=dict)  # flat input index -> key id
    outputs: dict[int, int] = field(default_factory=dict)  # flat output index -> key id
    conds: int = 0

    @property
    def empty(self) -> bool:
        return not self.uses and not any(k.how != "input" for k in self.keys)


def _sub(eqn: Any, name: str) -> Any:
    value = eqn.params.get(name)
    return getattr(value, "jaxpr", value)


def _sub_consts(eqn: Any, name: str) -> tuple:
    return tuple(getattr(eqn.params.get(name), "consts", ()) or ())


@functools.lru_cache(maxsize=64)
def _is_key_dtype(dtype: Any) -> bool:
    """Cached per dtype: `issubdtype` costs several µs, and every key of a long loop asks."""
    try:
        import jax

        return bool(jax.numpy.issubdtype(dtype, jax.dtypes.prng_key))
    except (TypeError, ValueError):  # a dtype JAX does not know
        return False


def _key_rank(aval: Any, typed: bool) -> int | None:
    """How many leading dims index keys: all of a typed array's, all but the last of raw data."""
    shape = getattr(aval, "shape", None)
    if shape is None:
        return None
    return len(shape) if typed else len(shape) - 1


def _is_raw_key_data(aval: Any) -> bool:
    """A uint32 array whose last dim can hold key data (2 words threefry, 4 rbg)."""
    shape = getattr(aval, "shape", ())
    return str(getattr(aval, "dtype", "")) == "uint32" and len(shape) >= 1 and shape[-1] in (2, 4)


def _sampler_name(function: str) -> str | None:
    name = function.lstrip("_")
    return None if function in _NOT_SAMPLERS or name in _NOT_SAMPLERS else name


def origin(source_info: Any) -> tuple[SourceLocation | None, str | None, str | None]:
    """(user line, library line in between, jax.random function) of an eqn's traceback.

    The user line is the innermost frame in the user's own files; `via` the innermost
    library frame below it that is not JAX (Flax's Dropout, say); the function is the
    outermost frame in JAX's random module (the public call the user or library made).
    """
    try:
        traceback = source_info.traceback
        codes, lastis = traceback.raw_frames()
    except AttributeError:  # no traceback kept (an eqn built by hand): the innermost user frame
        frame = jax_compat.user_frame(source_info)
        if frame is None:
            return None, None, None
        return source.location(frame.file_name, frame.start_line, None, frame.function_name), None, None
    user = via = api = None
    for code, lasti in zip(reversed(codes), reversed(lastis)):  # outermost first
        file = code.co_filename
        if file.startswith(source.PACKAGE_DIR):
            continue  # our own stand-ins (key_patch.py)
        if jax_random.is_random_file(file):
            if api is None:
                api = code.co_name
            continue
        if source.is_user_file(file):
            user, via = (code, lasti), None
        elif "/jax/" not in file and "\\jax\\" not in file and user is not None and api is None:
            via = (code, lasti)  # the innermost library frame before JAX's random module
    loc = None
    if user is not None:
        file, line, function = jax_compat.frame_line(*user)
        loc = source.location(file, line, None, function)
    via_text = None
    if via is not None:
        file, line, function = jax_compat.frame_line(*via)
        via_text = f"{_short_path(file)}:{line} ({function})"
    return loc, via_text, api


def _short_path(file: str) -> str:
    """`flax/linen/stochastic.py`: the path from the package directory on."""
    parts = file.replace("\\", "/").split("/")
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1 :])
    return "/".join(parts[-3:])


class _Reader:
    """Walks one jaxpr (and its sub-jaxprs) once, filling a ProgramKeys."""

    def __init__(self) -> None:
        self.out = ProgramKeys()

    # -- nodes and uses ----------------------------------------------------------------
    def key(self, how: str, parent: int | None, ctx: _Context, **kw: Any) -> int:
        node = LocalKey(id=len(self.out.keys), how=how, parent=parent, level=ctx.level, branch=ctx.branch, **kw)
        self.out.keys.append(node)
        return node.id

    def use(
        self,
        key: int,
        kind: str,
        name: str,
        consuming: bool,
        ctx: _Context,
        eqn: Any,
        shape: tuple | None = None,
        dtype: str | None = None,
        where: tuple | None = None,
    ) -> None:
        loc, via, _ = where or origin(eqn.source_info)
        self.out.uses.append(
            LocalUse(
                key=key,
                kind=kind,
                name=name,
                consuming=consuming,
                shape=shape,
                dtype=dtype,
                level=ctx.level,
                branch=ctx.branch,
                source=loc,
                via=via,
                part=ctx.part,
            )
        )
        self.keyed(key)

    def keyed(self, key: int) -> None:
        """Mark a provisional uint32 node, and what it was picked from, as a real key."""
        node: LocalKey | None = self.out.keys[key]
        while node is not None and not node.keyed:
            node.keyed = True
            node = None if node.parent is None else self.out.keys[node.parent]

    # -- the walk ------------------------------------------------------------------------
    def read(self, jaxpr: Any, env: dict, ctx: _Context) -> None:
        for eqn in jaxpr.eqns:
            try:
                self.eqn(eqn, env, ctx)
            except Exception:  # one odd eqn loses its keys, not the program's
                continue

    def eqn(self, eqn: Any, env: dict, ctx: _Context) -> None:
        """Follow the keys through one eqn: make, consume, pass through, or descend into its sub-programs."""
        name = eqn.primitive.name
        ins = [None if jax_compat.is_literal(v) else env.get(v) for v in eqn.invars]
        outs = eqn.outvars
        if name in _KEY_MAKERS:
            self.key_op(name, eqn, ins, env, ctx)
        elif name == "random_bits" and ins[0] is not None:
            self.bits(eqn, ins[0], ctx)
        elif name in _CALLS or (name.startswith("custom_") and _sub(eqn, "call_jaxpr") is not None):
            self.call(eqn, ins, env, ctx)
        elif name == "scan":
            self.scan(eqn, ins, env, ctx)
        elif name == "while":
            self.while_loop(eqn, ins, env, ctx)
        elif name == "cond":
            self.cond(eqn, ins, env, ctx)
        elif name == "slice" and ins[0] is not None:
            self.slice(eqn, ins[0], env, ctx)
        elif name in _PICK and ins[0] is not None:
            self.pick(eqn, ins[0], env, ctx)
        elif name in _SAME:
            for i, o in enumerate(outs):
                if i < len(ins) and ins[i] is not None:
                    env[o] = ins[i]
        else:
            keys = [k for k in ins if k is not None]
            for o in outs:
                if keys and _is_key_dtype(getattr(o.aval, "dtype", None)):
                    loc, via, _ = origin(eqn.source_info)
                    env[o] = self.key("mixed", keys[0], ctx, shape=tuple(o.aval.shape), typed=True, source=loc, via=via)

    def key_op(self, name: str, eqn: Any, ins: list, env: dict, ctx: _Context) -> None:
        """A key made (seed, wrap, split, fold_in, clone) or unwrapped: the new key node and what it consumed."""
        outs = eqn.outvars
        if name == "random_seed":
            loc, via, _ = origin(eqn.source_info)
            seed = _literal_int(eqn.invars[0])
            impl = _impl_name(eqn.params.get("impl"))
            env[outs[0]] = self.key(
                "seed",
                None,
                ctx,
                shape=tuple(outs[0].aval.shape),
                typed=True,
                impl=impl,
                data=seed,
                source=loc,
                via=via,
            )
        elif name == "random_wrap":
            key = ins[0]
            if key is None:
                loc, via, _ = origin(eqn.source_info)
                key = self.key(
                    "wrap",
                    None,
                    ctx,
                    shape=tuple(outs[0].aval.shape),
                    typed=True,
                    impl=_impl_name(eqn.params.get("impl")),
                    source=loc,
                    via=via,
                )
            self.keyed(key)
            self.out.keys[key].impl = self.out.keys[key].impl or _impl_name(eqn.params.get("impl"))
            env[outs[0]] = key
        elif name == "random_unwrap":
            if ins[0] is not None:
                env[outs[0]] = ins[0]
        elif name == "random_split" and ins[0] is not None:
            self.use(ins[0], "split", "split", True, ctx, eqn, shape=tuple(eqn.params.get("shape", ())))
            loc, via, _ = origin(eqn.source_info)
            env[outs[0]] = self.key(
                "split", ins[0], ctx, shape=tuple(outs[0].aval.shape), typed=True, source=loc, via=via
            )
        elif name == "random_fold_in" and ins[0] is not None:
            self.use(ins[0], "fold_in", "fold_in", False, ctx, eqn)
            loc, via, _ = origin(eqn.source_info)
            env[outs[0]] = self.key(
                "fold_in",
                ins[0],
                ctx,
                shape=tuple(outs[0].aval.shape),
                typed=True,
                data=_literal_int(eqn.invars[1]),
                source=loc,
                via=via,
            )
        elif name == "random_clone" and ins[0] is not None:
            self.use(ins[0], "clone", "clone", False, ctx, eqn)
            loc, via, _ = origin(eqn.source_info)
            env[outs[0]] = self.key(
                "clone", ins[0], ctx, shape=tuple(outs[0].aval.shape), typed=True, source=loc, via=via
            )

    def bits(self, eqn: Any, key: int, ctx: _Context) -> None:
        """A sampler's bits drawn from `key`: named after the public sampler that asked (or "bits")."""
        sampler_name, shape, dtype, where = ctx.sampler or (None, None, None, None)
        if sampler_name is None:
            where = origin(eqn.source_info)
            sampler_name = (_sampler_name(where[2]) if where[2] else None) or "bits"
        bits_shape = tuple(eqn.params.get("shape", ()))
        self.use(
            key,
            "sampler",
            sampler_name,
            True,
            ctx,
            eqn,
            shape=shape if shape is not None else bits_shape,
            dtype=dtype or f"u{eqn.params.get('bit_width', 32)}",
            where=where,
        )

    def slice(self, eqn: Any, key: int, env: dict, ctx: _Context) -> None:
        aval = eqn.invars[0].aval
        typed = _is_key_dtype(aval.dtype)
        rank = _key_rank(aval, typed)
        start = tuple(eqn.params.get("start_indices", ()))
        limit = tuple(eqn.params.get("limit_indices", ()))
        if not rank or not start:
            return
        if not typed and (start[-1] != 0 or limit[-1] != aval.shape[-1]):
            return  # words of the key data, not keys
        changed = [d for d in range(rank) if (start[d], limit[d]) != (0, aval.shape[d])]
        out = eqn.outvars[0]
        out_shape = tuple(out.aval.shape if typed else out.aval.shape[:-1])
        if not changed:
            env[out] = key
        elif changed == [0] and limit[0] - start[0] == 1:
            env[out] = self._row(key, start[0], out_shape[1:], ctx, eqn)
        else:
            env[out] = self._row(key, None, out_shape, ctx, eqn)

    def pick(self, eqn: Any, key: int, env: dict, ctx: _Context) -> None:
        index = None
        if eqn.primitive.name == "dynamic_slice":
            starts = [_literal_int(v) for v in eqn.invars[1:]]
            if starts and all(s is not None for s in starts) and not any(starts[1:]):
                index = starts[0]
        aval = eqn.outvars[0].aval
        typed = _is_key_dtype(aval.dtype)
        if not typed and not _is_raw_key_data(aval):
            return
        shape = tuple(aval.shape if typed else aval.shape[:-1])
        env[eqn.outvars[0]] = self._row(key, index, shape, ctx, eqn)

    def _row(self, key: int, index: int | None, shape: tuple, ctx: _Context, eqn: Any) -> int:
        loc, via, _ = origin(eqn.source_info)
        parent = self.out.keys[key]
        return self.key(
            "row",
            key,
            ctx,
            shape=shape,
            index=index,
            typed=parent.typed,
            impl=parent.impl,
            source=loc,
            via=via,
            keyed=parent.keyed,
        )

    # -- nested programs --------------------------------------------------------------------
    def call(self, eqn: Any, ins: list, env: dict, ctx: _Context) -> None:
        sub = None
        for name in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
            sub = _sub(eqn, name)
            if sub is not None:
                break
        if sub is None or len(sub.invars) != len(ins):
            return
        if eqn.params.get("differentiated") is True:
            return  # a checkpoint's backward recomputation redraws what its forward pass drew, as JAX's checker reads it
        inner = {v: k for v, k in zip(sub.invars, ins) if k is not None}
        self._constants(sub, eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr"), inner, ctx)
        sampler = ctx.sampler
        jit_name = str(eqn.params.get("name", ""))
        if sampler is None and eqn.primitive.name in ("pjit", "jit") and jit_name.startswith("_"):
            where = origin(eqn.source_info)
            name = _sampler_name(where[2]) if where[2] else _sampler_name(jit_name)
            if name:
                aval = eqn.outvars[0].aval if eqn.outvars else None
                sampler = (
                    name,
                    tuple(getattr(aval, "shape", ())) if aval is not None else None,
                    jax_compat.short_dtype(aval.dtype) if aval is not None else None,
                    where,
                )
        self.read(sub, inner, ctx.replace(sampler=sampler))
        _bind(env, eqn.outvars, [None if jax_compat.is_literal(v) else inner.get(v) for v in sub.outvars])

    def _constants(self, jaxpr: Any, closed: Any, env: dict, ctx: _Context) -> None:
        consts = tuple(getattr(closed, "consts", ()) or ())
        for var, value in zip(getattr(jaxpr, "constvars", ()), consts):
            node = constant_key(self, var, value, ctx)
            if node is not None:
                env[var] = node

    def scan(self, eqn: Any, ins: list, env: dict, ctx: _Context) -> None:
        body = _sub(eqn, "jaxpr")
        n_consts, n_carry = jax_compat.scan_counts(eqn.params)
        loc, _, _ = origin(eqn.source_info)
        loop = self._loop("scan", int(eqn.params["length"]), loc)
        outer = ctx.enter(loop)
        consts, carry, xs = ins[:n_consts], ins[n_consts : n_consts + n_carry], ins[n_consts + n_carry :]
        xs_keys = [None if k is None else self._row(k, None, tuple(self.out.keys[k].shape[1:]), outer, eqn) for k in xs]
        _bind(env, eqn.outvars, self._loop_body(eqn, body, consts, carry, xs_keys, n_carry, outer, ctx))

    def while_loop(self, eqn: Any, ins: list, env: dict, ctx: _Context) -> None:
        body = _sub(eqn, "body_jaxpr")
        n_cond, n_body = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
        loc, _, _ = origin(eqn.source_info)
        loop = self._loop("while", None, loc)
        outer = ctx.enter(loop)
        consts, carry = ins[n_cond : n_cond + n_body], ins[n_cond + n_body :]
        cond = (_sub(eqn, "cond_jaxpr"), ins[:n_cond])
        _bind(env, eqn.outvars, self._loop_body(eqn, body, consts, carry, [], len(carry), outer, ctx, cond))

    def _loop(self, kind: str, length: int | None, loc: SourceLocation | None) -> int:
        self.out.loops.append(Loop(kind, length, loc))
        return len(self.out.loops) - 1

    def _loop_body(
        self,
        eqn: Any,
        body: Any,
        consts: list,
        carry: list,
        xs: list,
        n_carry: int,
        inner: _Context,
        ctx: _Context,
        cond: tuple | None = None,
    ) -> list:
        """Read a loop body once. A carried key the body returns unchanged stays the outer key
        (used on every iteration); any other carried key is a `loop` node: one per iteration.
        A while loop's condition (`cond`: its jaxpr and the keys of its constants) runs before
        every iteration, so it is read in the loop too, on the same carried keys as the body."""
        passthrough = self._passthrough(body, consts, carry, xs, n_carry)
        carried = []
        for j, k in enumerate(carry):
            if k is None or j in passthrough:
                carried.append(k)
            else:
                parent = self.out.keys[k]
                carried.append(
                    self.key(
                        "loop",
                        k,
                        inner,
                        shape=parent.shape,
                        typed=parent.typed,
                        impl=parent.impl,
                        source=self.out.loops[inner.level[-1]].source,
                        keyed=parent.keyed,
                    )
                )
        if cond is not None and cond[0] is not None:
            cond_jaxpr, cond_consts = cond
            cond_env = {v: k for v, k in zip(cond_jaxpr.invars, [*cond_consts, *carried]) if k is not None}
            self.read(cond_jaxpr, cond_env, inner.replace(part="condition"))
        env = {v: k for v, k in zip(body.invars, [*consts, *carried, *xs]) if k is not None}
        self.read(body, env, inner)
        outs = [None if jax_compat.is_literal(v) else env.get(v) for v in body.outvars]
        result = []
        for j, k in enumerate(outs[:n_carry]):
            if carried[j] is not None and j not in passthrough and k is not None:
                if k != carried[j]:
                    self.out.keys[k].carried = carried[j]
                loop = self.out.loops[inner.level[-1]]
                k = self.key(
                    "loop_out",
                    carried[j],
                    ctx,
                    shape=self.out.keys[k].shape,
                    typed=self.out.keys[k].typed,
                    impl=self.out.keys[k].impl,
                    source=loop.source,
                    keyed=self.out.keys[k].keyed,
                )
            result.append(k)
        for k in outs[n_carry:]:  # stacked per-iteration outputs: one key array of them
            result.append(None if k is None else self.key("mixed", k, ctx, shape=(), typed=self.out.keys[k].typed))
        return result

    def _passthrough(self, body: Any, consts: list, carry: list, xs: list, n_carry: int) -> set[int]:
        """Carried slots the body returns as they came in."""
        n_consts = len(consts)
        invars = body.invars[n_consts : n_consts + n_carry]
        return {j for j, (i, o) in enumerate(zip(invars, body.outvars[:n_carry])) if i is o}

    def cond(self, eqn: Any, ins: list, env: dict, ctx: _Context) -> None:
        branches = [getattr(b, "jaxpr", b) for b in eqn.params.get("branches", ())]
        ops = ins[1:]
        cond_id = self.out.conds
        self.out.conds += 1
        results: list[list] = []
        for b, branch in enumerate(branches):
            inner = {v: k for v, k in zip(branch.invars, ops) if k is not None}
            self.read(branch, inner, ctx.replace(branch=(*ctx.branch, (cond_id, b, len(branches)))))
            results.append([None if jax_compat.is_literal(v) else inner.get(v) for v in branch.outvars])
        for i, o in enumerate(eqn.outvars):
            got = [r[i] for r in results if i < len(r) and r[i] is not None]
            if not got:
                continue
            if all(g == got[0] for g in got):
                env[o] = got[0]
            else:
                loc, via, _ = origin(eqn.source_info)
                env[o] = self.key(
                    "mixed",
                    got[0],
                    ctx,
                    shape=tuple(getattr(o.aval, "shape", ())),
                    typed=self.out.keys[got[0]].typed,
                    source=loc,
                    via=via,
                )


@dataclass(frozen=True)
class _Context:
    level: tuple[int, ...] = ()
    branch: tuple[tuple[int, int, int], ...] = ()
    # (name, output shape, dtype, origin) of the sampler call the walk is inside
    sampler: tuple[str, tuple | None, str | None, tuple] | None = None
    part: str | None = None  # "condition": inside the innermost while loop's condition

    def enter(self, loop: int) -> _Context:
        return _Context(level=(*self.level, loop), branch=self.branch, sampler=self.sampler)

    def replace(self, **kw: Any) -> _Context:
        return _Context(
            **{"level": self.level, "branch": self.branch, "sampler": self.sampler, "part": self.part, **kw}
        )


def _bind(env: dict, outvars: list, keys: list) -> None:
    """Map an eqn's outputs to the key nodes its body returned (None: not a key)."""
    for o, k in zip(outvars, keys):
        if k is not None:
            env[o] = k


def _literal_int(atom: Any) -> int | None:
    value = jax_compat.literal_value(atom)
    try:
        if value is not None and np.ndim(value) == 0:
            return int(value)
    except (TypeError, ValueError, OverflowError):  # not an integer literal
        pass
    return None


def _impl_name(impl: Any) -> str | None:
    if impl is None:
        return None
    return str(getattr(impl, "name", None) or impl)


_impls: dict[Any, str | None] = {}  # key dtype -> implementation name


def key_words(value: Any) -> tuple[str | None, np.ndarray | None]:
    """(impl name, uint32 words with keys on the leading axes) of a typed key or raw key data; (None, None) if neither."""
    try:
        import jax

        dtype = getattr(value, "dtype", None)
        if _is_key_dtype(dtype):
            impl = _impls.get(dtype)
            if impl is None:
                impl = _impls[dtype] = _impl_name(jax.random.key_impl(value))
            return impl, jax_random.key_data(value)
        if dtype is not None and str(dtype) == "uint32" and np.ndim(value) >= 1 and np.shape(value)[-1] in (2, 4):
            return None, np.asarray(value)
    except Exception:  # boundary: any value of the user's program
        pass
    return None, None


def constant_key(reader: _Reader, var: Any, value: Any, ctx: _Context) -> int | None:
    """A typed key a program captured as a constant: a node with its value."""
    if not _is_key_dtype(getattr(var.aval, "dtype", None)):
        return None
    impl, words = key_words(value)
    return reader.key("constant", None, ctx, shape=tuple(var.aval.shape), typed=True, impl=impl, constant=words)


def _inputs(reader: _Reader, invars: list, ctx: _Context) -> dict:
    """Provisional input nodes: typed keys, and uint32 arrays that may be raw key data."""
    env: dict = {}
    for i, var in enumerate(invars):
        aval = var.aval
        typed = _is_key_dtype(getattr(aval, "dtype", None))
        if typed or _is_raw_key_data(aval):
            shape = tuple(aval.shape if typed else aval.shape[:-1])
            env[var] = reader.key("input", None, ctx, shape=shape, typed=typed, input=i, keyed=typed)
    return env


def _finish(reader: _Reader, outvars: list, env: dict) -> ProgramKeys:
    out = reader.out
    for i, var in enumerate(outvars):
        k = None if jax_compat.is_literal(var) else env.get(var)
        if k is not None and out.keys[k].keyed:
            out.outputs[i] = k
    out.inputs = {k.input: k.id for k in out.keys if k.how == "input" and k.keyed and k.input is not None}
    return out


def program_keys(closed_jaxpr: Any) -> ProgramKeys:
    """The key tree of one program (a ClosedJaxpr); inputs and outputs by flat position."""
    reader = _Reader()
    jaxpr = getattr(closed_jaxpr, "jaxpr", closed_jaxpr)
    ctx = _Context()
    env = _inputs(reader, jaxpr.invars, ctx)
    reader._constants(jaxpr, closed_jaxpr, env, ctx)
    reader.read(jaxpr, env, ctx)
    return _finish(reader, jaxpr.outvars, env)


class _Var:
    """A stand-in jaxpr variable: all the reader needs of one is its aval and its identity."""

    __slots__ = ("aval",)

    def __init__(self, aval: Any) -> None:
        self.aval = aval


@dataclass
class _Eqn:
    primitive: Any
    params: dict
    invars: list
    outvars: list
    source_info: Any


def primitive_keys(primitive: Any, params: dict, in_avals: list, out_avals: list, source_info: Any) -> ProgramKeys:
    """The key tree of one primitive applied outside any jit (an eager vmap, scan or cond):
    read as a program of that one eqn."""
    reader = _Reader()
    ctx = _Context()
    eqn = _Eqn(primitive, params, [_Var(a) for a in in_avals], [_Var(a) for a in out_avals], source_info)
    env = _inputs(reader, eqn.invars, ctx)
    reader.eqn(eqn, env, ctx)
    return _finish(reader, eqn.outvars, env)


def might_hold_keys(value: Any) -> bool:
    """A typed key array, or a uint32 array shaped like raw key data (cheap: dtype and shape only)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return False
    if _is_key_dtype(dtype):
        return True
    shape = getattr(value, "shape", ())
    return str(dtype) == "uint32" and len(shape) >= 1 and shape[-1] in (2, 4)


def repeats(program: ProgramKeys, use: LocalUse, key: LocalKey) -> int | None:
    """How many times one call runs `use` per instance of `key`: the trip counts of the loops
    around the use that are not around the key (1 when none; None when a while loop is among them)."""
    times = 1
    for loop in use.level:
        if loop in key.level:
            continue
        length = program.loops[loop].length
        if length is None:
            return None
        times *= length
    return times


def iter_keys(program: ProgramKeys) -> Iterator[LocalKey]:
    return (k for k in program.keys if k.keyed)
