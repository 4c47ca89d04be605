"""Hostile strings (issue 8) and the ways a user's cell puts them into real documents.

The corpus is what an attacker, or an unlucky notebook, can put into any string jaxmagic
shows: markup that runs script if it is ever parsed as HTML (each one sets `window.__pwned`
or opens a dialog, so a test can tell), strings that break out of attributes, style sheets,
SVG or the page's own `<script>` blocks, template syntax, entities that must stay literal,
URLs that would leave the machine, control and bidi characters, a 100,000-character line,
lone surrogates (a Python `str` may hold them; UTF-8 cannot), and astral characters that
must survive untouched.

`hostile_cell_documents(payload)` runs a real cell under `jaxmagic.capture` that feeds the
payload through every channel a user has: a function's `__name__`/`__qualname__`, the cell's
file name and its source lines, `jax.named_scope`, a string static argument, pytree dict
keys, mesh axis names, namespace names (keys, globals), a trace-time print, a failing
jitted call, a failing gradient split (a capture note) and the exception the cell raises.
A channel that plain JAX (or Python) itself refuses for a payload is left out, and the
result says which: that is JAX's limit, not jaxmagic's.

`inject_everywhere(doc, payloads)` covers what users cannot reach today: it appends a
payload to every free-text string of a real document (ids, references and enumerations are
left alone so the document still means something).
"""

from __future__ import annotations

import itertools
import json
import linecache
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .jax_versions import auto_mesh

PWNED = "__pwned"  # every script payload sets window.__pwned (or opens a dialog)
OFFSITE = "203.0.113.9"  # TEST-NET-3: a request to it means injected markup fetched something


@dataclass(frozen=True)
class Hostile:
    """One hostile string. `shown` is what a page must show as text for it, after the
    browser's own `String.prototype.toWellFormed()` (lone surrogates -> U+FFFD)."""

    name: str
    text: str
    note: str

    @property
    def shown(self) -> str:
        """The text a reader must see: the payload itself, lone surrogates as U+FFFD."""
        return well_formed(self.text)

    @property
    def is_long(self) -> bool:
        return len(self.text) > 10_000


def well_formed(text: str) -> str:
    """What `String.prototype.toWellFormed()` makes of a Python string: lone surrogates become U+FFFD."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


def has_lone_surrogate(text: str) -> bool:
    return re.search("[\ud800-\udfff]", text) is not None


_CONTROLS = "".join(chr(c) for c in range(0x00, 0x20)) + "\x7f\x85\u200b\u200e\u202e\u2028\u2029\ufeff"
_LONG_BODY = "".join(f"{i:06d}." for i in range(14_300))  # 100,100 characters: where a cut falls is readable

CORPUS: tuple[Hostile, ...] = (
    Hostile("script", "<script>window.__pwned=1</script>", "a script element"),
    Hostile("img_onerror", '<img src=x onerror="window.__pwned=1">', "an event handler on a broken image"),
    Hostile("svg_onload", "<svg/onload=window.__pwned=1><circle r=5></svg>", "SVG with onload"),
    Hostile("javascript_url", "javascript:window.__pwned=1", "a URL that runs script when followed"),
    Hostile(
        "iframe_srcdoc",
        '"><iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
        "leaves an attribute, then a frame with script",
    ),
    Hostile("close_script", "</script><script>window.__pwned=1</script><!--", "ends the page's own <script> block"),
    Hostile(
        "attr_double",
        '" onmouseover="window.__pwned=1" autofocus onfocus="window.__pwned=1" x="',
        "breaks out of a double-quoted attribute",
    ),
    Hostile("attr_single", "' onmouseover='window.__pwned=1' x='", "breaks out of a single-quoted attribute"),
    Hostile(
        "style_close",
        f"</style><style>*{{background:url(http://{OFFSITE}/css.png)}}</style><img src=x onerror=window.__pwned=1>",
        "ends a style sheet, fetches off-site",
    ),
    Hostile(
        "svg_text", "</text></svg><script>window.__pwned=1</script><svg><text>]]>", "ends an SVG text node and the SVG"
    ),
    Hostile(
        "template",
        "${window.__pwned=1}{{constructor.constructor('window.__pwned=1')()}}<%= 7*7 %>#{7*7}",
        "template-literal and template-engine syntax",
    ),
    Hostile(
        "dialog",
        "<details open ontoggle=alert(document.domain)><summary>x</summary></details>",
        "opens a dialog by itself if parsed",
    ),
    Hostile("entities", "&lt;b&gt;bold&lt;/b&gt; &amp;amp; &#x3C;i&#x3E; &nbsp;", "must stay literal, never decoded"),
    Hostile(
        "css_url",
        f'<div style="background:url(//{OFFSITE}/bg.png)">bg</div><a href="http://{OFFSITE}/">a</a>',
        "markup that would leave the machine",
    ),
    Hostile("control", "ctl<" + _CONTROLS + ">ctl", "C0 controls, DEL, NEL, zero-width, RTL override, line separators"),
    Hostile("astral", "astral<\U0001f600\U0001d518\U00020bb7>astral", "well-formed surrogate pairs: must stay"),
    Hostile("lone_surrogate", "lone<\ud800|\udfff|\udc80>lone", "invalid Unicode: must show U+FFFD"),
    Hostile(
        "long_line",
        "long<" + _LONG_BODY + "<img src=x onerror=window.__pwned=1>>long",
        "a 100,000-character line ending in markup",
    ),
)
BY_NAME = {h.name: h for h in CORPUS}
XSS = tuple(h for h in CORPUS if h.name not in {"control", "astral", "lone_surrogate", "long_line", "entities"})


# --------------------------------------------------------------------------------------
# a real cell that feeds one payload through every channel a user has
# --------------------------------------------------------------------------------------

CELL_TEMPLATE = """\
import jax, jax.numpy as jnp
P = {lit}
def body(params, x, mode):
    with jax.named_scope(P):
        y = jnp.tanh(x @ params[{lit}]) * len(mode)
    print({lit})
    return y
step = jax.jit(body, static_argnames=("mode",))
def loss(params, x):
    with jax.named_scope(P):
        return jnp.sum(jnp.sin(x @ params[{lit}]) ** 2)
"""

RUN_TEMPLATE = """\
out = step(params, x, mode=P)
out = step(params, x, mode=P + "!")
value, grads = jax.value_and_grad(loss)(params, x)
jax.grad(split_fails)(params, x)
try:
    failing(x)
except ValueError:
    pass
outside[0](x)
sharded_out = on_mesh(sharded)
sub = jax.random.split(globals()[P])
jax.random.normal(sub[0], (2,))
jax.random.uniform(sub[0], (2,))
raise RuntimeError({lit})
"""


@dataclass
class CellResult:
    """The documents of one hostile cell, and the channels the payload went through."""

    payload: Hostile
    docs: dict[str, dict]
    channels: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # channel -> why plain JAX/Python refused it
    error: BaseException | None = None


def _named(fn: Callable, name: str) -> Callable:
    fn.__name__ = fn.__qualname__ = name
    return fn


def _register_source(filename: str, source: str) -> None:
    """What IPython does for a cell: its lines are in linecache, so tracebacks and
    `Source.code` read them."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _refusal(probe: Callable[[], Any]) -> str | None:
    """Why plain JAX or Python refuses `probe()` (outside any capture), or None."""
    try:
        probe()
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc)[:120]}"
    return None


def mesh_axis_compiles(text: str) -> bool:
    """XLA aborts the *process* compiling a program over a mesh axis named with a backslash,
    a control character or non-ASCII text (jax 0.10.2: `absl::CUnescape` check failure in
    `xla::sdy::parseStringAttr`), so such names get no jitted call: only a placed array."""
    return all(0x20 <= ord(c) < 0x7F for c in text) and "\\" not in text


def hostile_cell_documents(
    payload: Hostile,
    kinds: Iterable[str] = ("graph", "timeline", "grad", "sharding", "keys"),
) -> CellResult:
    """Run a real cell that puts `payload` everywhere a user can, and build every kind's document."""
    import jax
    import jax.numpy as jnp

    import jaxmagic

    P = payload.text
    lit = repr(P)
    refused: dict[str, str] = {}
    cell_file = f"<cell {P}>"
    probe = "import jax, jax.numpy as jnp\ny = jax.jit(lambda v: jnp.sin(v) + 1)(jnp.ones(2))\n"
    if (why := _refusal(lambda: exec(compile(probe, cell_file, "exec"), {}))) is not None:
        refused["file name"] = why
        cell_file = "<cell hostile>"
    defs = CELL_TEMPLATE.format(lit=lit)
    run = RUN_TEMPLATE.format(lit=lit)
    source = defs + run
    _register_source(cell_file, source)

    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    ns[P] = jax.random.key(0)  # a key bound under the payload's name
    ns["params"] = {P: jnp.ones((3, 3)) * 0.1}
    ns["x"] = jnp.linspace(-1.0, 1.0, 6).reshape(2, 3)

    exec(compile(defs, cell_file, "exec"), ns)

    def body_plain(params: dict, x: Any, mode: str) -> Any:  # without the name scope, for refused scopes
        return jnp.tanh(x @ params[P]) * len(mode)

    lower_body = lambda: jax.jit(ns["body"], static_argnames=("mode",)).lower(ns["params"], ns["x"], mode=P)
    if (why := _refusal(lower_body)) is not None:
        refused["named_scope in a jitted function"] = why
        ns["body"] = body_plain
    named_body = _named(ns["body"], P)
    if (why := _refusal(lambda: jax.jit(named_body, static_argnames=("mode",)))) is not None:
        refused["jitted function name"] = why
        named_body = _named(ns["body"], "body")
    ns["step"] = jax.jit(named_body, static_argnames=("mode",))
    if (why := _refusal(lambda: jax.grad(ns["loss"])(ns["params"], ns["x"]))) is not None:
        refused["named_scope in a gradient"] = why

        def loss_plain(params: dict, x: Any) -> Any:
            return jnp.sum(jnp.sin(x @ params[P]) ** 2)

        ns["loss"] = loss_plain
    _named(ns["loss"], P)

    # A gradient whose split fails: the capture traces it once more and notes the error.
    calls = {"n": 0}

    def split_fails(params: dict, x: Any) -> Any:
        calls["n"] += 1
        if calls["n"] > 1:
            raise ValueError(P)
        return jnp.sum(x @ params[P])

    ns["split_fails"] = _named(split_fails, P)

    def fails(x: Any) -> Any:
        raise ValueError(P)

    ns["failing"] = jax.jit(_named(fails, P) if "jitted function name" not in refused else fails)
    outside = jax.jit(_named(lambda x: jnp.cos(x) + 1.0, P if "jitted function name" not in refused else "outside"))
    ns["outside"] = [outside]  # not a top-level name: compiled outside the recorded calls (a note)

    # Mesh axis names: a placed array always, a jitted call over it only where XLA survives the name.
    try:
        mesh = auto_mesh((jax.device_count(),), (P,))
        spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(P))
        ns["sharded"] = {P: jax.device_put(jnp.ones((jax.device_count(), 2)), spec)}
        on_mesh_ok = mesh_axis_compiles(P)
        if not on_mesh_ok:
            refused["jitted call over a mesh axis"] = (
                "XLA aborts the process on this axis name (see mesh_axis_compiles)"
            )
        elif (why := _refusal(lambda: jax.jit(lambda a: a * 2.0)(ns["sharded"][P]))) is not None:
            refused["jitted call over a mesh axis"] = (
                why  # JAX 0.12 on a quote in the name: "Unexpected XLA sharding override"
            )
            on_mesh_ok = False
    except Exception as exc:
        refused["mesh axis name"] = f"{type(exc).__name__}: {exc}"
        ns["sharded"] = {P: jnp.ones((jax.device_count(), 2))}
        on_mesh_ok = True
    ns["on_mesh"] = jax.jit(lambda tree: jax.tree.map(lambda a: a * 2.0, tree)) if on_mesh_ok else (lambda tree: tree)

    error: BaseException | None = None
    try:
        with jaxmagic.capture(ns, grads=True, shardings=True) as cap:
            exec(compile(run, cell_file, "exec"), ns)
    except RuntimeError as exc:
        error = exc
    docs = {kind: jaxmagic.document(cap, kind) for kind in kinds}
    channels = [c for c in CHANNELS if c not in refused]
    return CellResult(payload=payload, docs=docs, channels=channels, refused=refused, error=error)


CHANNELS = (
    "file name",
    "source lines",
    "jitted function name",
    "named_scope in a jitted function",
    "named_scope in a gradient",
    "static argument",
    "pytree dict key",
    "mesh axis name",
    "jitted call over a mesh axis",
    "namespace names",
    "trace-time print",
    "failing jitted call",
    "failing gradient split (note)",
    "cell exception",
)


# --------------------------------------------------------------------------------------
# every free-text field of a real document
# --------------------------------------------------------------------------------------

# Strings that are ids, references to ids, or enumerations the front end switches on.
STRUCTURAL_KEYS = frozenset(
    {
        "schema",
        "kind",
        "id",
        "origin",
        "state",
        "severity",
        "how",
        "phase",
        "from",
        "def",
        "root",
        "group",
        "node",
        "var",
        "mesh",
        "entry",
        "residual",
        "user",
        "producer",
        "forward_var",
        "backward_vars",
        "consumers",
        "outs",
        "invars",
        "constvars",
        "subgroups",
        "encoding",
        "packed",
        "axis_types",
        "role",
        "graph",
        "first",
        "last",
        "array",
        "call",
        "collective",
        "forward",
        "backward",
        "lane",
    }
)
_ID_VALUE = re.compile(r"^(?:[a-z]{1,2}\d+(?:\.\d+)*|d\d+-(?:forward|backward|program))$")
_ID_KEY = re.compile(r"^(?:[a-z]\d+(?:\.\d+)*|\d+)$")
FREE_TEXT_MAPS = frozenset({"params", "errors"})  # maps whose keys or id-like keys hold free text


def inject_everywhere(doc: dict, payloads: Iterable[Hostile]) -> tuple[dict, dict[str, int]]:
    """A copy of `doc` with a payload appended to every free-text string (and every
    `params` key), payloads taken in turn. Returns the copy and how often each payload went in.

    Appending, not replacing, keeps prefixes that a view may read (`f32[3]`), so what is
    tested is the hostile text, not a view's answer to a nonsense aval.
    """
    cycle = itertools.cycle(list(payloads))
    used: dict[str, int] = {}

    def bad(text: str) -> str:
        h = next(cycle)
        used[h.name] = used.get(h.name, 0) + 1
        return text + h.text

    def walk(value: Any, key: str | None, parent_key: str | None) -> Any:
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                nk = bad(k) if key == "params" else k
                if key is not None and _ID_KEY.match(str(k)) and key not in FREE_TEXT_MAPS:
                    out[nk] = v if not isinstance(v, (dict, list)) else walk(v, None, key)
                else:
                    out[nk] = walk(v, k, key)
            return out
        if isinstance(value, list):
            return [walk(v, key, parent_key) for v in value]
        if isinstance(value, str):
            if key in STRUCTURAL_KEYS or _ID_VALUE.match(value):
                return value
            return bad(value)
        return value

    return walk(json.loads(json.dumps(doc)), None, None), used
