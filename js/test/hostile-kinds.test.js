// @vitest-environment jsdom
// Issue 8 in jsdom, for every kind the bundle draws (hostile.test.js covers the graph view
// alone): each real fixture document of a kind gets a hostile string appended to every
// free-text field, the view is mounted through `mount` (kind dispatch, as the bundle does)
// and clicked through; no string may become an element, an attribute or a handler, and
// each one must be readable as text. The same run in a real browser, with real captures,
// is tests/browser/test_hostile_content.py; this corpus mirrors tests/hostile_strings.py.
import { describe, it, expect } from "vitest";
import { fixture } from "./helpers.js";
import { useMounting, click } from "./mounting.js";
import { useRecordingCanvas } from "./timeline-helpers.js";

const render = useMounting();
useRecordingCanvas(); // jsdom has no canvas: the timeline draws on a recording context

const OFFSITE = "203.0.113.9";
const LONG = "long<" + Array.from({ length: 14300 }, (_, i) => String(i).padStart(6, "0") + ".").join("") + "<img src=x onerror=window.__pwned=1>>long";
/** name -> text; the same strings as tests/hostile_strings.py (CORPUS). */
const CORPUS = {
  script: "<script>window.__pwned=1</script>",
  img_onerror: '<img src=x onerror="window.__pwned=1">',
  svg_onload: "<svg/onload=window.__pwned=1><circle r=5></svg>",
  javascript_url: "javascript:window.__pwned=1",
  iframe_srcdoc: '"><iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
  close_script: "</script><script>window.__pwned=1</script><!--",
  attr_double: '" onmouseover="window.__pwned=1" autofocus onfocus="window.__pwned=1" x="',
  attr_single: "' onmouseover='window.__pwned=1' x='",
  style_close: `</style><style>*{background:url(http://${OFFSITE}/css.png)}</style><img src=x onerror=window.__pwned=1>`,
  svg_text: "</text></svg><script>window.__pwned=1</script><svg><text>]]>",
  template: "${window.__pwned=1}{{constructor.constructor('window.__pwned=1')()}}<%= 7*7 %>#{7*7}",
  dialog: "<details open ontoggle=alert(document.domain)><summary>x</summary></details>",
  entities: "&lt;b&gt;bold&lt;/b&gt; &amp;amp; &#x3C;i&#x3E; &nbsp;",
  css_url: `<div style="background:url(//${OFFSITE}/bg.png)">bg</div><a href="http://${OFFSITE}/">a</a>`,
  control: "ctl<" + Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)).join("") + "\x7f\x85\u200b\u200e\u202e\u2028\u2029\ufeff>ctl",
  astral: "astral<\u{1F600}\u{1D518}\u{20BB7}>astral",
  lone_surrogate: "lone<\ud800|\udfff|\udc80>lone",
  long_line: LONG,
};

// Ids, references to ids and enumerations the views switch on (tests/hostile_strings.py: STRUCTURAL_KEYS).
const STRUCTURAL = new Set(["schema", "kind", "id", "origin", "state", "severity", "how", "phase", "from", "def", "root",
  "group", "node", "var", "mesh", "entry", "residual", "user", "producer", "forward_var", "backward_vars", "consumers", "outs",
  "invars", "constvars", "subgroups", "encoding", "packed", "axis_types", "role", "graph", "first", "last", "array", "call",
  "collective", "forward", "backward", "lane"]);
const ID_VALUE = /^(?:[a-z]{1,2}\d+(?:\.\d+)*|d\d+-(?:forward|backward|program))$/;
const ID_KEY = /^(?:[a-z]\d+(?:\.\d+)*|\d+)$/;
const FREE_TEXT_MAPS = new Set(["params", "errors"]);

/** A copy of `doc` with a corpus string appended to every free-text string, in turn; and which went in. */
function injectEverywhere(doc, names = Object.keys(CORPUS)) {
  let i = 0;
  const used = new Set();
  const bad = (text) => {
    const name = names[i++ % names.length];
    used.add(name);
    return text + CORPUS[name];
  };
  const walk = (value, key) => {
    if (Array.isArray(value)) return value.map((v) => walk(v, key));
    if (value && typeof value === "object") {
      const out = {};
      for (const [k, v] of Object.entries(value)) {
        const nk = key === "params" ? bad(k) : k;
        if (key != null && ID_KEY.test(k) && !FREE_TEXT_MAPS.has(key)) out[nk] = v && typeof v === "object" ? walk(v, null) : v;
        else out[nk] = walk(v, k);
      }
      return out;
    }
    if (typeof value === "string") return STRUCTURAL.has(key) || ID_VALUE.test(value) ? value : bad(value);
    return value;
  };
  return { doc: walk(structuredClone(doc), null), used };
}

/** Clicks a reader makes, per kind (first of each). */
const CLICKS = {
  timeline: [".jm-tl-finding", ".jm-tl-table tr[data-lane] td"],
  grad: [".jm-grad-chip", ".jm-grad-pane g.jm-eqn", ".jm-grad-finding", ".jm-grad-leaf"],
  sharding: [".jm-sh-array .jm-sh-cell", ".jm-sh-mesh .jm-sh-cell", ".jm-sh-coll", ".jm-sh-finding"],
  keys: [".jm-k-svg .jm-k-item .jm-k-shape", ".jm-k-finding"],
};
const DANGEROUS = "script, iframe, frame, object, embed, img, link, meta, base, form, video, audio, source, template, foreignObject";

/** Until the view has drawn (grad: both graph panes laid out). */
async function drawn(el, kind) {
  for (let i = 0; i < 400; i++) {
    await new Promise((r) => setTimeout(r, 5));
    if (kind !== "grad") return;
    const c = [...el.querySelectorAll(".jm-grad-pane .jm-canvas")];
    if (c.length && c.every((x) => x.hasAttribute("data-draws")) && !el.querySelector(".jm-status.jm-busy")) return;
  }
  throw new Error(`${kind} view did not draw`);
}

/** Every way a string could have become markup, as a list of findings (empty: none). */
function markupIn(el) {
  const found = [...el.querySelectorAll(DANGEROUS)].map((e) => `<${e.localName}>`);
  for (const e of el.querySelectorAll("*")) {
    for (const a of e.attributes) {
      if (a.name.startsWith("on") || a.name === "srcdoc") found.push(`${e.localName}[${a.name}]`);
      if (/^\s*(javascript|vbscript):/i.test(a.value) && /href|src|action|data/.test(a.name)) found.push(`${e.localName}[${a.name}=${a.value.slice(0, 30)}]`);
      if (a.name === "style" && /url\(|expression\(/.test(a.value)) found.push(`${e.localName}[style]`);
    }
    if (e.localName === "style" && (e.textContent.includes("__pwned") || e.textContent.includes(OFFSITE))) found.push("payload in a <style>");
  }
  return found;
}

/** The view's text as a reader gets it (style sheets aside), as the browser's well-formed string. */
function textOf(el) {
  const parts = [];
  const walk = el.ownerDocument.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) if (!n.parentElement.closest("style")) parts.push(n.data);
  return parts.join("\ue000").toWellFormed(); // a separator no corpus string holds
}

const FIXTURES = [
  ["timeline", "timeline-small"], ["grad", "grad-mlp"], ["grad", "grad-jit"], ["grad", "grad-custom"],
  ["sharding", "sharding-small"], ["keys", "keys-small"], ["keys", "keys-handmade"],
];

describe("hostile strings in every free-text field, every kind", () => {
  for (const [kind, name] of FIXTURES) {
    it(`${name}: nothing becomes markup, every string is readable`, async () => {
      const real = fixture(name);
      expect(real.kind).toBe(kind);
      const base = { ...real, notes: [...(real.notes || []), "a note"],
        error: { type: "ValueError", message: "boom", file: "cell.py", line: 3, code: "f(x)" } };
      const { doc, used } = injectEverywhere(base);
      expect(used.size).toBe(Object.keys(CORPUS).length); // every string went into this document
      doc.notes.push(...Object.values(CORPUS)); // and each one, whole, where every kind shows it
      const el = render(doc);
      await drawn(el, kind);
      for (const selector of CLICKS[kind]) {
        const target = el.querySelector(selector);
        if (!target) continue;
        target.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
        click(target);
        await drawn(el, kind);
      }
      expect(markupIn(el)).toEqual([]);
      expect(globalThis.__pwned).toBeUndefined();

      const text = textOf(el);
      expect(el.querySelector(".jm-title").textContent.toWellFormed()).toBe(doc.title.toWellFormed());
      expect(text).toContain(doc.error.message.toWellFormed().slice(0, 2000));
      for (const note of doc.notes) expect(text).toContain(note.toWellFormed());
      expect(text).toContain("lone<\ufffd|\ufffd|\ufffd>lone"); // lone surrogates are U+FFFD, not dropped
      expect(text).toContain(CORPUS.astral); // a well-formed pair is left alone
      expect(text).toContain(CORPUS.entities); // never decoded
    });
  }

  it("the checks can fail: markup put in as HTML is found", () => {
    const el = render(fixture("keys-small"));
    const probe = el.ownerDocument.createElement("div");
    el.appendChild(probe);
    for (const name of ["script", "img_onerror", "iframe_srcdoc", "style_close", "css_url", "dialog"]) {
      probe.innerHTML = "<span title='x'>" + CORPUS[name] + "</span>";
      expect(markupIn(el).length, name).toBeGreaterThan(0);
    }
    probe.textContent = CORPUS.img_onerror;
    expect(markupIn(el)).toEqual([]);
  });
});
