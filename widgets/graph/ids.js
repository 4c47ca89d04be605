/**
 * Element ids of the graph view: the only module that builds or reads them.
 *
 * Every drawn or folded element of a function (model.js) has a string id made of a
 * two-character prefix and a body. Document ids are arbitrary strings, so the prefix
 * is what keeps them apart from the ids made up by the view: a document id only ever
 * follows "G:", "N:" or "P:" (and the group id inside "O:"), and the made-up ids
 * ("S:", "R:", "U:", "K:", "Q:") are a prefix and integers. A body may contain ":"
 * (a hostile document id); ids are parsed by prefix and, for outputs, by the last ":".
 *
 * The strings themselves are part of the view's surface (map keys, layout cache keys,
 * `data-*` attributes read back by tests), so they must stay exactly as built here.
 */

/** The prefix of each kind of element, by kind name. */
export const PREFIX = Object.freeze({
  group: "G:",
  node: "N:",
  port: "P:",
  output: "O:",
  scope: "S:",
  repeat: "R:",
  unit: "U:",
  chunk: "K:",
  bundle: "Q:",
});

/** @typedef {"group"|"node"|"port"|"output"|"scope"|"repeat"|"unit"|"chunk"|"bundle"} IdKind */

/**
 * What `parse` returns. `id` is the document id of a group, node or port (input or
 * const var), `group`/`index` the group and position of an output port, `n` the
 * counter of a made-up box (scope, repeat, chunk, bundle), `repeat`/`n` those of a unit.
 * @typedef {{kind: IdKind, id?: string, group?: string, index?: number, repeat?: number, n?: number}} ParsedId
 */

const COLON = 58;
/** @type {Map<number, IdKind>} first char code -> kind */
const KIND_BY_CODE = new Map(Object.entries(PREFIX).map(([kind, p]) => [p.charCodeAt(0), /** @type {IdKind} */ (kind)]));

/** First char codes of the made-up boxes (isMadeBox runs per element per frame). */
const MADE_CODES = new Set([PREFIX.scope, PREFIX.repeat, PREFIX.unit, PREFIX.chunk, PREFIX.bundle].map((p) => p.charCodeAt(0)));

/** A predicate for one prefix (char codes: cheap enough for per-frame loops). */
const has = (prefix) => {
  const c = prefix.charCodeAt(0);
  return (/** @type {unknown} */ key) => typeof key === "string" && key.charCodeAt(0) === c && key.charCodeAt(1) === COLON;
};

/** A sub-jaxpr (the function's root or one an eqn owns): a box with its ports. */
export const group = (/** @type {string} */ groupId) => PREFIX.group + groupId;
/** One eqn of the document; expanded, it holds the groups of its sub-jaxprs. */
export const node = (/** @type {string} */ nodeId) => PREFIX.node + nodeId;
/** An input or const port of a group: the var it brings in. */
export const port = (/** @type {string} */ varId) => PREFIX.port + varId;
/** The `index`-th output port of a group. */
export const output = (/** @type {string} */ groupId, /** @type {number} */ index) => PREFIX.output + groupId + ":" + index;
/** A box for one contiguous run of eqns under one name scope (the n-th made). */
export const scope = (/** @type {number} */ n) => PREFIX.scope + n;
/** A run of identical layers folded into one box (the n-th of `fn.repeats`). */
export const repeat = (/** @type {number} */ n) => PREFIX.repeat + n;
/** One unit (layer) `j` of repeat `n`, when a unit is more than one item. */
export const unit = (/** @type {number} */ n, /** @type {number} */ j) => PREFIX.unit + n + ":" + j;
/** A chunk: consecutive items of an over-long container (the n-th made). */
export const chunk = (/** @type {number} */ n) => PREFIX.chunk + n;
/** A port bundle: consecutive ports of a side with too many (the n-th made). */
export const bundle = (/** @type {number} */ n) => PREFIX.bundle + n;

export const isGroup = has(PREFIX.group);
export const isNode = has(PREFIX.node);
export const isPort = has(PREFIX.port);
export const isOutput = has(PREFIX.output);
export const isScope = has(PREFIX.scope);
export const isRepeat = has(PREFIX.repeat);
export const isUnit = has(PREFIX.unit);
export const isChunk = has(PREFIX.chunk);
export const isBundle = has(PREFIX.bundle);
/** An input, const or output port (what sits in a group's port columns), bundles aside. */
export const isAnyPort = (/** @type {unknown} */ key) => isPort(key) || isOutput(key);
/** What sits in a group's port column: an input, const or output port, or a port bundle. */
export const isPortColumn = (/** @type {unknown} */ key) => isAnyPort(key) || isBundle(key);
/** A made-up box that folds items: scope, repeat, unit, chunk or port bundle. */
export const isMadeBox = (/** @type {unknown} */ key) =>
  typeof key === "string" && key.charCodeAt(1) === COLON && MADE_CODES.has(key.charCodeAt(0));

/** The kind of an id, or null for a string that is no element id. */
export function kindOf(/** @type {unknown} */ key) {
  if (typeof key !== "string" || key.charCodeAt(1) !== COLON) return null;
  return KIND_BY_CODE.get(key.charCodeAt(0)) ?? null;
}

/**
 * The one-letter kind an open container carries (`kind` of the layout tree and of placed
 * containers: "G", "N", "S", "R", "U", "K"; drawn as `data-box-kind` and `.jm-cbox-<letter>`).
 */
export const letter = (/** @type {string} */ key) => key[0];

/** The body after the prefix: the document id of a group, node or port. */
export const body = (/** @type {string} */ key) => key.slice(2);

/** "O:<group id>:<i>" -> [group id, i]; group ids may contain ":". */
export function splitOutput(/** @type {string} */ key) {
  const j = key.lastIndexOf(":");
  return /** @type {[string, number]} */ ([key.slice(2, j), Number(key.slice(j + 1))]);
}

/**
 * An id taken apart (inverse of the constructors above), or null for a string that
 * is no element id.
 * @param {unknown} key
 * @returns {ParsedId | null}
 */
export function parse(key) {
  const kind = kindOf(key);
  if (!kind) return null;
  const k = /** @type {string} */ (key);
  if (kind === "group" || kind === "node" || kind === "port") return { kind, id: body(k) };
  if (kind === "output") {
    const [g, index] = splitOutput(k);
    return { kind, group: g, index };
  }
  if (kind === "unit") {
    const [r, j] = body(k).split(":");
    return { kind, repeat: Number(r), n: Number(j) };
  }
  return { kind, n: Number(body(k)) };
}
