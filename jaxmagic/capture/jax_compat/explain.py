"""Parse JAX's `jax_explain_cache_misses` records into structured reasons.

JAX has worded these records three ways (A: 0.4.30-0.5.3, B: 0.6-0.8, C: 0.9-0.10),
logged them from different loggers, and put old and new values in either order. The
parser therefore matches on the content of each line, never on a logger name or a
version, and tolerates lines it does not know (it skips them). It never raises: the
text comes from a library we do not control and a failed parse must only cost the
reason, not the user's cell.

What each generation says (verbatim samples are in tests/test_explain.py):

* first line: ``TRACING CACHE MISS at {file}:{line}[:{col}] ({function})`` followed by
  ``:`` (C), `` because:`` (A) or `` costing {ms} ms because:`` (B);
* ``never seen function:`` + ``{name} id={id} defined at {file}:{line}``, sometimes with
  ``but seen another function defined on the same line; maybe …`` (JAX's guess, kept as a hint);
* ``for {name} defined at {file}:{line}``, then the difference to the closest earlier key:
  types (``* at x, now f32[4] and before f32[3]``; A: ``seen f32[3], but now given f32[4]``),
  pytrees (``* at input path [0][1], now … and before …, so …``; A/B: ``* at args[0]…``),
  static values (B: ``different value of static args:`` / ``static kwargs:``; C: a
  ``Static(val=…)`` pytree node), tracing context (config flags), debug info, or
  "explanation unavailable".
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..record import Change

# The kinds of a miss (docs/schema.md, Miss.kind), most telling first: when one call has
# several changes, the first kind in this order names it. A context flag explains the
# dtype changes it causes, and a static value or pytree change makes the types moot.
KIND_ORDER = (
    "first",
    "new_function",
    "new_wrapper",
    "context",
    "static",
    "pytree",
    "shape",
    "dtype",
    "weak_type",
    "sharding",
    "donation",
    "unknown",
)
_RANK = {k: i for i, k in enumerate(KIND_ORDER)}

_MARK = "TRACING CACHE MISS at "
_MAX_LINE = 4000  # longer lines are skipped (their change is left to the signature diff)


@dataclass(frozen=True)
class Explanation:
    """One parsed `TRACING CACHE MISS` record."""

    function: str | None  # as JAX names it: `f`, `<lambda>`, `lam_loop.<locals>.<lambda>` (A), a partial's repr
    call_site: tuple[str, int] | None  # the user's line that made the call (file, line)
    kind: str  # main kind, one of KIND_ORDER (never donation: JAX does not explain donation)
    changes: tuple[Change, ...]  # what differs from the closest earlier cache key (all closest keys, deduplicated)
    redefined_hint: bool  # JAX's hedged guess: another function first traced from the same call line ("maybe ...")
    text: str  # the record, verbatim from "TRACING CACHE MISS" on
    defined_file: str | None = None  # where the function is defined
    defined_line: int | None = None
    function_id: int | None = None  # id() JAX printed for a never-seen function
    cost_ms: float | None = None  # B only: time JAX spent on the miss
    detail: str | None = None  # when JAX names no change: what it said instead ("explanation unavailable", …)
    hints: tuple[str, ...] = ()  # JAX's hedged sentences ("maybe …"), whole: a guess of JAX's, never the reason


def main_kind(kinds: Collection[str]) -> str:
    """The kind that names a miss with these change kinds (`unknown` for none)."""
    ranked = [k for k in kinds if k in _RANK]
    return min(ranked, key=_RANK.__getitem__) if ranked else "unknown"


# ---------------------------------------------------------------- type strings

# `f32[3,4]`, `f32[8@d]({Explicit: ('d',)})`, `f32[]{weak_type=True}`, `key<fry>[]`, `f32<host>[3]`
_TYPE = re.compile(r"^(?P<dtype>[A-Za-z_][\w]*(?:<[^>\[\]]*>)?)\[(?P<dims>[^\]]*)\](?P<rest>.*)$")
_WEAK = re.compile(r"\{weak_type=(True|False)\}")
_DIM_SHARDING = re.compile(r"@(?:\([^)]*\)|[^,\]]+)")
_URL_TAIL = re.compile(r"\.?https?://\S*$")


def _facets(text: str) -> tuple[str, str, str, bool | None] | None:
    """(dtype, plain shape, placement, weak) of a type as JAX prints it; None if not an array type."""
    m = _TYPE.match(text.strip())
    if m is None:
        return None
    rest = m.group("rest")
    weak = _WEAK.search(rest)
    dims = m.group("dims")
    shape = _DIM_SHARDING.sub("", dims).replace(" ", "")
    dtype = m.group("dtype")
    memory = ""
    if "<" in dtype and not dtype.startswith("key<"):
        dtype, memory = dtype.split("<", 1)
    placement = "|".join((memory, ",".join(_DIM_SHARDING.findall(dims)), _WEAK.sub("", rest)))
    return dtype, shape, placement, (weak.group(1) == "True") if weak else None


def type_change_kind(before: str, after: str) -> str:
    """Which part of an array type changed: shape, dtype, weak_type or sharding (else unknown).

    One kind per argument, by what usually matters most: a shape change is reported as a
    shape change even when the dtype changed too (both strings show everything).
    """
    b, a = _facets(before), _facets(after)
    if b is None or a is None:
        return "unknown"
    if b[1] != a[1]:
        return "shape"
    if b[0] != a[0]:
        return "dtype"
    if b[3] is not None and a[3] is not None and b[3] != a[3]:
        return "weak_type"
    if b[2] != a[2]:
        return "sharding"
    return "unknown"


# ---------------------------------------------------------------- argument paths

_C_PATH = re.compile(r"^\[(?P<side>[01])\](?P<rest>.*)$")
_AB_PATH = re.compile(r"^(?P<side>args|kwargs)(?P<rest>.*)$")
_INDEX = re.compile(r"^\[(?P<i>\d+)\](?P<rest>.*)$")
_KEY = re.compile(r"^\[(?P<q>['\"])(?P<k>.*?)(?P=q)\](?P<rest>.*)$")


def _arg_path(raw: str, param_names: Sequence[str] | None, static_argnums: Collection[int], jax_c: bool) -> str:
    """A pytree path as JAX prints it, written as our signatures write it (`n`, `p['a'][1]`).

    C (`input path [0][1]`) counts every positional argument, static ones included (they
    are `Static` nodes of the tree). A and B (`args[0]`) count only the dynamic ones: JAX
    removed the static arguments before flattening, hence `static_argnums`.
    """
    m = (_C_PATH if jax_c else _AB_PATH).match(raw)
    if m is None:
        return raw
    positional = m.group("side") in ("0", "args")
    rest = m.group("rest")
    if positional:
        idx = _INDEX.match(rest)
        if idx is None:
            return "args" + rest
        i = int(idx.group("i")) if len(idx.group("i")) < 9 else -1
        if not jax_c:
            dynamic = [p for p in range(len(param_names or ()) + i + 1) if p not in static_argnums]
            i = dynamic[i] if 0 <= i < len(dynamic) else i
        names = param_names or ()
        base = names[i] if 0 <= i < len(names) else f"args[{idx.group('i')}]"
        return base + idx.group("rest")
    key = _KEY.match(rest)
    if key is None:
        return "kwargs" + rest
    return key.group("k") + key.group("rest")


def _static_name(position: int, param_names: Sequence[str] | None, static_argnums: Collection[int]) -> str:
    """B lists static values in argnum order, without names."""
    nums = sorted(static_argnums)
    if position < len(nums) and param_names and 0 <= nums[position] < len(param_names):
        return param_names[nums[position]]
    if position < len(nums):
        return f"args[{nums[position]}]"
    return ""


# ---------------------------------------------------------------- pytree nodes

_CLASS = re.compile(r"<class '(?:[\w.]*\.)?([^'.]+)'>")
_STATIC_NODE = re.compile(r"^<class '[\w.]*Static'> with pytree metadata Static\(val=(?P<v>.*)\)$", re.S)
_KEY_SET = re.compile(r", with the symmetric difference of key sets: (?P<keys>\{.*\})$")
_DICTS = ("dict", "OrderedDict", "defaultdict")


def _node(thing: str) -> str:
    """JAX's description of a pytree node, without the `<class '…'>` noise."""
    text = _CLASS.sub(lambda m: m.group(1), thing.strip())
    if text == "NoneType":
        return "None"
    for name in _DICTS:
        if text.startswith(name + " with pytree metadata "):
            return name + " with keys " + text[len(name + " with pytree metadata ") :]
    return text


def _tree_change(path: str, now: str, before: str, why: str) -> Change:
    sb, sn = _STATIC_NODE.match(before.strip()), _STATIC_NODE.match(now.strip())
    if sb and sn:
        return Change(path, "static", sb.group("v"), sn.group("v"))
    after = _node(now)
    keys = _KEY_SET.search(why)
    if keys:
        after += f" (keys on one side only: {keys.group('keys')})"
    return Change(path, "pytree", _node(before), after)


# ---------------------------------------------------------------- line patterns

_HEADER = re.compile(
    r"^TRACING CACHE MISS at (?P<file>.*?):(?P<line>\d+)(?::(?P<col>\d+))?"
    r"(?: \((?P<caller>.*?)\))?(?: costing (?P<ms>\d+(?:\.\d+)?) ms)?(?: because)?:?\s*$"
)
_FUNC_ID = re.compile(r"^(?P<name>.*) id=(?P<id>\d+)(?: defined at (?P<file>.*?))?(?::(?P<line>\d+))?$")
_FOR = re.compile(r"^for (?P<name>.+?)(?: defined at (?P<file>.*?))?(?::(?P<line>\d+))?$")
_WHY = (
    r"(?P<why>(?:their Python types differ|the lengths do not match|the numbers of children do not match"
    r"|the pytree node metadata does not match).*)"
)
_TREE_A = re.compile(r"^\* at (?P<path>.+?), seen (?P<before>.+?) but now given (?P<now>.+?),\s+so " + _WHY + "$")
_TYPE_A = re.compile(r"^\* at (?P<path>.+?), seen (?P<before>.+?), but now given (?P<now>.+)$")
_TREE_BC = re.compile(
    r"^\* at (?P<c>input path )?(?P<path>.+?), now (?P<now>.+?) and before (?P<before>.+?), so " + _WHY + "$"
)
_TYPE_BC = re.compile(r"^\* at (?P<path>.+?), now (?P<now>.+?) and before (?P<before>.+)$")
_NOW_BEFORE = re.compile(r"^now (?P<now>.*) and before (?P<before>.*)$")
_STATIC_NUMS = re.compile(r"^dynamic argnums now (?P<now>.*) and before (?P<before>.*)$")
_ARGS_KWARGS = re.compile(r"^(?P<side>now|before) (?P<n>\d+) args and kwargs with keys (?P<keys>.*)$")
_CTX_B = re.compile(r"^\[(?P<i>\d+)\]: now (?P<now>.*?) and before (?P<before>.*?)(?:, and)?$")
_CTX_C = re.compile(r"^\* (?P<name>\S+) differs: now (?P<now>.*) and before (?P<before>.*)$")
_CTX_COUNT = re.compile(r"^\* number of tracing context (?P<what>values|names) differs: (?P<rest>.*)$")
_CTX_COUNT_VALUES = re.compile(r"^now (?P<now>\d+) and before (?P<before>\d+)$")
_PASSING_A = re.compile(
    r"^never seen passing (?P<n>\d+) positional args and (?P<m>\d+) keyword args with keys:"
    r"\s*(?P<keys>.*)$"
)
_CLOSEST_A = re.compile(r"^closest seen passes (?P<m>\d+) keyword args with keys:\s*(?P<keys>.*)$")
# JAX words some sentences as a guess; those are kept whole as hints (shown as "JAX suggests"), never as a
# reason. In JAX 0.4.30-0.10 the only one is "but seen another function defined on the same line; maybe the
# function is / being re-defined repeatedly, preventing caching?": JAX says it when a never-seen function is
# traced from a call line that traced another function before (any function: `for fn in (f, g): fn(x)`).
_HEDGE = re.compile(r"\b(?:maybe|possibly|perhaps|probably|likely)\b", re.I)
_SENTENCE_END = (".", "?", "!")
_POSITIONS = re.compile(r"^\d+(?:\s*,\s*\d+)*$")
_OTHER_DIFF = re.compile(r"^different (?P<field>.+?):$")
_SKIP = (
    "types now:",
    "now: ",
    "before: ",
    "!= before:",
    "where weak_type=",
    "weak_type=False means",
    "See http",
    "compare to tuple returned by",
    "being re-defined repeatedly",
    "all previously seen cache keys",
)


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and len(text) < 25 else None


def split_top_level(text: str) -> list[str]:
    """Split `2, 'v, w', (1, 2)` on commas outside quotes and brackets (B's static values)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _static_kwargs(text: str) -> dict[str, str]:
    """B prints static kwargs as `{mode: 'b', n: 3}` (keys unquoted)."""
    inner = text.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1]
    out = {}
    for part in split_top_level(inner):
        key, sep, value = part.partition(": ")
        if sep:
            out[key.strip()] = value.strip()
    return out


class _Parser:
    """Line-by-line state machine: headers set a section, detail lines add changes."""

    def __init__(self, param_names: Sequence[str] | None, static_argnums: Collection[int]) -> None:
        self.names = list(param_names) if param_names else None
        self.static = set(static_argnums)
        self.section = ""
        self.function: str | None = None
        self.defined: tuple[str | None, int | None] = (None, None)
        self.function_id: int | None = None
        self.never_seen = False
        self.redefined = False
        self.hints: list[str] = []
        self.hint_open = False  # the last hint's sentence goes on on the next line
        self.changes: list[Change] = []
        self.details: list[str] = []
        self.passing_now: str | None = None  # A: "never seen passing N positional args …" waits for its keys
        self.args_kwargs: dict[str, str] = {}  # B: "different number of args and kwargs" now/before lines
        self.context_seen = False  # 0.9 says only "Tracing context doesn't match", naming no flag

    def add(self, change: Change) -> None:
        if change not in self.changes:
            self.changes.append(change)

    def path(self, raw: str, jax_c: bool) -> str:
        return _arg_path(raw.strip(), self.names, self.static, jax_c)

    def feed(self, raw_line: str) -> None:
        line = raw_line.strip()
        if len(line) > _MAX_LINE:  # a huge static value's repr: the nested lazy patterns would crawl
            return
        if line.startswith("* key with "):
            line = line[len("* key with ") :]
        if self.section == "never_seen" and self.function is None and line:
            m = _FUNC_ID.match(line)
            if m:
                self.function, self.function_id = m.group("name").strip(), _int(m.group("id"))
                self.defined = (m.group("file") or None, _int(m.group("line")))
                return
        if self.passing_now is not None and self.section == "passing":
            self._feed_passing(line)
            return
        if not line:
            return
        if self._hint(line):
            return
        if self.section == "closest_kwargs":
            self._closest_kwargs(line)
            return
        if self._header(line):
            return
        if line.startswith("*"):
            self._bullet(line)
            return
        self._detail(line)

    def _hint(self, line: str) -> bool:
        """Keep a hedged sentence of JAX's (and its continuation lines) as a hint; True if `line` was one."""
        if self.hint_open:
            self.hints[-1] += " " + line
        elif self.section in ("", "never_seen") and _HEDGE.search(line) and not line.startswith(("*", "now", "before")):
            self.hints.append(line[4:] if line.startswith("but ") else line)
            self.redefined |= line.startswith("but seen another function defined on the same line")
        else:
            return False
        self.hint_open = not self.hints[-1].endswith(_SENTENCE_END)
        return True

    # -- A's keyword-argument report: the keys sit on the next line, which may be empty
    def _feed_passing(self, line: str) -> None:
        self.section = ""  # one keys line at most; "closest seen …" then comes through _header
        if line.startswith("closest seen"):
            self._closest_kwargs(line)
        elif line:
            self.passing_now = f"{self.passing_now} and keyword args {line}"

    def _closest_kwargs(self, line: str) -> None:
        if line == "closest seen is passing no keyword args":
            self.add(Change("", "pytree", "no keyword args", self.passing_now))
            self.passing_now = None
            self.section = ""
            return
        m = _CLOSEST_A.match(line)
        if m:
            self.section = "closest_kwargs"
            if m.group("keys"):
                self._closest_kwargs(m.group("keys"))
            return
        if self.section == "closest_kwargs":  # the keys line
            self.add(Change("", "pytree", f"keyword args {line}", self.passing_now))
            self.passing_now = None
            self.section = ""

    def _header(self, line: str) -> bool:
        low = line.lower()
        if line == "never seen function:":
            self.section, self.never_seen = "never_seen", True
            return True
        if self.function is None and not self.never_seen and line.startswith("for "):
            m = _FOR.match(line)
            if m:
                self.function = m.group("name").strip()
                self.defined = (m.group("file") or None, _int(m.group("line")))
                return True
        m = _PASSING_A.match(line)
        if m:
            n, count = m.group("n"), m.group("m")
            self.passing_now = f"{n} positional args" + ("" if count != "0" else " and no keyword args")
            self.section = "passing"
            if m.group("keys"):
                self.passing_now += f" and keyword args {m.group('keys')}"
            return True
        if line.startswith("closest seen passes ") or line == "closest seen is passing no keyword args":
            if self.passing_now is not None:
                self._closest_kwargs(line)
            return True
        sections = (
            ("different input types", "types"),
            ("never seen input type signature", "types"),
            ("closest seen input type signature", "types"),
            ("different input pytree", "pytree"),
            ("never seen input pytree", "pytree"),
            ("closest seen input pytree", "pytree"),
            ("different value of static args", "static_args"),
            ("different value of static kwargs", "static_kwargs"),
            ("different static_argnums", "static_argnums"),
            ("different number of args and kwargs", "args_kwargs"),
            ("different tracing context", "context"),
            ("tracing context doesn't match", "context"),
            ("closest seen context tuple differs at positions", "context_positions"),
        )
        for start, section in sections:
            if low.startswith(start):
                self.section = section
                self.context_seen |= section.startswith("context")
                return True
        if line.startswith("Debug info doesn't match"):
            self.section = "debug"
            self.details.append("JAX's debug info for the function differs (argument names or source)")
            return True
        if "explanation unavailable" in low:
            if not self.details or not self.details[-1].startswith("JAX found"):
                self.details.append("JAX could not explain this miss (explanation unavailable)")
            return True
        m = _OTHER_DIFF.match(line)  # B: "different fun_params:" and other fields it cannot explain
        if m:
            self.section = "other"
            self.details.append(f"JAX found a different {m.group('field')} and could not explain it")
            return True
        return line.startswith(_SKIP)

    def _bullet(self, line: str) -> None:
        m = _CTX_COUNT.match(line)
        if m:
            counts = _CTX_COUNT_VALUES.match(m.group("rest"))
            before, after = (counts.group("before"), counts.group("now")) if counts else (None, None)
            self.add(Change(f"number of tracing context {m.group('what')}", "context", before, after))
            return
        m = _CTX_C.match(line)
        if m and self.section == "context":
            self.add(Change(m.group("name"), "context", m.group("before"), m.group("now")))
            return
        m = _TREE_A.match(line)
        if m:
            self.add(_tree_change(self.path(m.group("path"), False), m.group("now"), m.group("before"), m.group("why")))
            return
        m = _TYPE_A.match(line)
        if m:
            self._type(m.group("path"), m.group("now"), m.group("before"))
            return
        m = _TREE_BC.match(line)
        if m:
            path = self.path(m.group("path"), bool(m.group("c")))
            self.add(_tree_change(path, m.group("now"), m.group("before"), m.group("why")))
            return
        m = _TYPE_BC.match(line)
        if m:
            self._type(m.group("path"), m.group("now"), m.group("before"))

    def _type(self, path: str, now: str, before: str) -> None:
        now, before = _URL_TAIL.sub("", now.strip()), _URL_TAIL.sub("", before.strip())
        self.add(Change(path.strip(), type_change_kind(before, now), before, now))

    def _detail(self, line: str) -> None:
        section = self.section
        if section == "static_args" and (m := _NOW_BEFORE.match(line)):
            now, before = split_top_level(m.group("now")), split_top_level(m.group("before"))
            if len(now) != len(before):
                self.add(Change("", "static", m.group("before"), m.group("now")))
                return
            for i, (n, b) in enumerate(zip(now, before)):
                if n != b:
                    self.add(Change(_static_name(i, self.names, self.static), "static", b, n))
        elif section == "static_kwargs" and (m := _NOW_BEFORE.match(line)):
            now, before = _static_kwargs(m.group("now")), _static_kwargs(m.group("before"))
            if not now and not before:
                self.add(Change("", "static", m.group("before"), m.group("now")))
            for key in sorted(set(now) | set(before)):
                if now.get(key) != before.get(key):
                    self.add(Change(key, "static", before.get(key), now.get(key)))
        elif section == "static_argnums" and (m := _STATIC_NUMS.match(line)):
            self.add(
                Change(
                    "static_argnums",
                    "static",
                    f"dynamic argnums {m.group('before')}",
                    f"dynamic argnums {m.group('now')}",
                )
            )
        elif section == "args_kwargs" and (m := _ARGS_KWARGS.match(line)):
            self.args_kwargs[m.group("side")] = f"{m.group('n')} args and kwargs with keys {m.group('keys')}"
            if len(self.args_kwargs) == 2:
                self.add(Change("", "pytree", self.args_kwargs["before"], self.args_kwargs["now"]))
        elif section == "context" and (m := _CTX_B.match(line)):
            self.add(Change(f"trace context [{m.group('i')}]", "context", m.group("before"), m.group("now")))
        elif section == "context_positions" and _POSITIONS.match(line):
            for i in re.split(r"\s*,\s*", line):
                self.add(Change(f"trace context [{i}]", "context", None, None))
            self.section = "context"

    def result(self, header: re.Match | None, text: str) -> Explanation:
        if self.context_seen and not any(c.kind == "context" for c in self.changes):
            self.add(Change("trace context", "context", None, None))
        self._drop_derived_argnums()
        if self.never_seen:  # a fact: JAX's tracing cache holds nothing for this function object
            kind = "first"
        else:
            kind = main_kind([c.kind for c in self.changes])
        if self.passing_now is not None:  # A's keyword report cut short
            self.add(Change("", "pytree", None, self.passing_now))
            kind = main_kind([c.kind for c in self.changes])
        detail = "; ".join(dict.fromkeys(self.details)) or None
        if kind == "unknown" and detail is None and not self.never_seen and not self.changes:
            detail = "JAX's explanation names no difference"
        return Explanation(
            function=self.function,
            call_site=(header.group("file"), int(header.group("line"))) if header else None,
            kind=kind,
            changes=tuple(self.changes),
            redefined_hint=self.redefined,
            text=text,
            defined_file=self.defined[0],
            defined_line=self.defined[1],
            function_id=self.function_id,
            cost_ms=float(header.group("ms")) if header and header.group("ms") else None,
            detail=detail,
            hints=tuple(self.hints),
        )

    def _drop_derived_argnums(self) -> None:
        """JAX 0.5 and 0.6 also report "different static_argnums" when a call passes more or fewer
        arguments: the positions JAX lists as dynamic are counted from the call, so they change with
        the arguments, and JAX reports the input pytree that changed beside it. That line is JAX's
        bookkeeping of the same change, not a static_argnums the user changed: where the pytree
        change is reported, it is the reason given."""
        if any(c.kind == "pytree" for c in self.changes):
            self.changes[:] = [c for c in self.changes if c.path != "static_argnums"]


def _record(text: str) -> str | None:
    """The first record in `text`, from `TRACING CACHE MISS` to the next record (if several were joined)."""
    start = text.find(_MARK)
    if start < 0:
        return None
    record = text[start:]
    nxt = record.find(_MARK, len(_MARK))
    if nxt > 0:  # cut at the start of the line holding the next record (a logger prefix may precede it)
        record = record[: record.rfind("\n", 0, nxt) + 1]
    return record.rstrip()


def parse_explanation(
    text: str, param_names: Sequence[str] | None = None, *, static_argnums: Collection[int] = ()
) -> Explanation | None:
    """Parse one `jax_explain_cache_misses` record; None when `text` holds none.

    `param_names`: the function's positional parameter names, to write JAX's raw input
    paths (`[0][1]`, `args[0]`) as argument names. `static_argnums`: needed only for JAX
    0.4-0.8, whose `args[i]` paths and static-value lists skip the static arguments.
    Unknown lines are skipped; the parse never raises on any text.
    """
    if not isinstance(text, str):
        return None
    record = _record(text)
    if record is None:
        return None
    lines = record.split("\n")
    header = _HEADER.match(lines[0].strip())  # None: an unknown first line; the rest may still parse
    parser = _Parser(param_names, static_argnums)
    for line in lines[1:]:
        parser.feed(line)
    return parser.result(header, record)
