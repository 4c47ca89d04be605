/**
 * Indexes one `Function` of a graph document (docs/schema.md) into the lookup
 * structures the view needs: the element tree (groups, scope boxes, eqn nodes,
 * ports), derived edges, eqn counts and line lookups.
 *
 * Element keys are prefixed ("G:", "N:", "S:", "P:", "O:") so document ids, which
 * are arbitrary strings, can never collide with the ids made up here.
 */

export const gKey = (id) => "G:" + id;
export const nKey = (id) => "N:" + id;
export const pKey = (varId) => "P:" + varId;
export const oKey = (groupId, i) => "O:" + groupId + ":" + i;

/**
 * Derive edges with the schema's single rule: one edge per var use, from the var's
 * definition (eqn node, or input/const port) to the consuming eqn or output port.
 * Uses of unknown vars are skipped (malformed input must not break the view).
 * @returns {{var: string, from: string, to: string, group: string}[]}
 */
export function deriveEdges(fn) {
  const vars = new Map((fn.vars || []).map((v) => [v.id, v]));
  const defKey = (v) => (v.def === "in" || v.def === "const" ? pKey(v.id) : nKey(v.def));
  const edges = [];
  for (const n of fn.nodes || []) {
    for (const op of n.ins || []) {
      const v = op && op.var != null ? vars.get(op.var) : null;
      if (v) edges.push({ var: v.id, from: defKey(v), to: nKey(n.id), group: n.group });
    }
  }
  for (const g of fn.groups || []) {
    (g.outvars || []).forEach((op, i) => {
      const v = op && op.var != null ? vars.get(op.var) : null;
      if (v) edges.push({ var: v.id, from: defKey(v), to: oKey(g.id, i), group: g.id });
    });
  }
  return edges;
}

/**
 * Build the element tree of a function.
 * Containers: "G:" groups (ports + direct items), "S:" scope boxes (items),
 * "N:" owner nodes when expanded (their subgroups). `parent` maps every element to
 * the element that holds it, so visibility questions are simple ancestor walks.
 */
export function indexFunction(fn) {
  const groups = new Map((fn.groups || []).map((g) => [g.id, g]));
  const nodes = new Map((fn.nodes || []).map((n) => [n.id, n]));
  const vars = new Map((fn.vars || []).map((v) => [v.id, v]));
  const parent = new Map();
  const items = new Map(); // container key -> ordered child keys (nodes/scopes/groups)
  const ports = new Map(); // group key -> {ins, consts, outs}
  const scopes = new Map(); // "S:i" -> {key, group, path, name}
  const count = new Map(); // element key -> eqns inside (recursive); nodes count themselves
  const byGroup = new Map();
  for (const n of fn.nodes || []) {
    if (!byGroup.has(n.group)) byGroup.set(n.group, []);
    byGroup.get(n.group).push(n);
  }

  let scopeCounter = 0;
  const seen = new Set();
  /** Walk a group (reachable from the root only, each once) and its sub-groups. */
  const visitGroup = (gid, parentKey) => {
    const g = groups.get(gid);
    if (!g || seen.has(gid)) return null;
    seen.add(gid);
    const gk = gKey(gid);
    if (parentKey) parent.set(gk, parentKey);
    const p = {
      ins: (g.invars || []).filter((v) => vars.has(v)).map(pKey),
      consts: (g.constvars || []).filter((v) => vars.has(v)).map(pKey),
      outs: (g.outvars || []).map((_, i) => oKey(gid, i)),
    };
    for (const k of [...p.ins, ...p.consts, ...p.outs]) parent.set(k, gk);
    ports.set(gk, p);
    items.set(gk, []);
    const scopeOf = new Map([["", gk]]); // joined path -> container key
    const containerFor = (path) => {
      let cur = gk;
      for (let i = 0; i < path.length; i++) {
        const joined = JSON.stringify(path.slice(0, i + 1));
        let sk = scopeOf.get(joined);
        if (!sk) {
          sk = "S:" + scopeCounter++;
          scopeOf.set(joined, sk);
          scopes.set(sk, { key: sk, group: gid, path: path.slice(0, i + 1), name: String(path[i]) });
          parent.set(sk, cur);
          items.get(cur).push(sk);
          items.set(sk, []);
        }
        cur = sk;
      }
      return cur;
    };
    for (const n of byGroup.get(gid) || []) {
      const path = Array.isArray(n.scope) ? n.scope : [];
      const ck = path.length ? containerFor(path) : gk;
      const nk = nKey(n.id);
      parent.set(nk, ck);
      items.get(ck).push(nk);
      const subs = [];
      for (const sg of n.subgroups || []) if (visitGroup(sg, nk)) subs.push(gKey(sg));
      if (subs.length) items.set(nk, subs);
    }
    return gk;
  };
  const rootKey = visitGroup(fn.root, null);

  // Recursive eqn counts, bottom-up over the tree.
  const countOf = (k) => {
    if (count.has(k)) return count.get(k);
    let c = k.startsWith("N:") ? 1 : 0;
    for (const ch of items.get(k) || []) c += countOf(ch);
    count.set(k, c);
    return c;
  };
  if (rootKey) countOf(rootKey);

  const lines = (fn.nodes || [])
    .filter((n) => Number.isInteger(n.line) && parent.has(nKey(n.id)))
    .map((n) => ({ line: n.line, id: n.id }))
    .sort((a, b) => a.line - b.line);

  return {
    fn, groups, nodes, vars, parent, items, ports, scopes, count, lines,
    root: rootKey,
    edges: deriveEdges(fn).filter((e) => parent.has(e.from) && parent.has(e.to)),
  };
}

/** True for elements that can be expanded/collapsed: scope boxes and eqns owning sub-jaxprs. */
export function isCollapsible(ix, key) {
  return key.startsWith("S:") || (key.startsWith("N:") && ix.items.has(key));
}

/** Ancestors of `key`, nearest first (excluding the key itself). */
export function ancestors(ix, key) {
  const out = [];
  for (let k = ix.parent.get(key); k; k = ix.parent.get(k)) out.push(k);
  return out;
}

/** The visible element standing for `key`: its outermost collapsed ancestor, else itself. */
export function visibleRep(ix, key, expanded) {
  let rep = key;
  for (const a of ancestors(ix, key)) if (isCollapsible(ix, a) && !expanded.has(a)) rep = a;
  return rep;
}

/** Node whose eqn starts at the nearest line at or above `line` (null if none). */
export function nodeAtLine(ix, line) {
  let best = null;
  for (const l of ix.lines) {
    if (l.line > line) break;
    best = l.id;
  }
  return best;
}

/** Human text for an operand: `name: aval` for vars, `lit: aval` for literals. */
export function operandText(ix, op) {
  if (!op) return "?";
  if (op.var != null) {
    const v = ix.vars.get(op.var);
    return v ? `${v.name}: ${v.aval}` : String(op.var);
  }
  return op.aval ? `${op.lit}: ${op.aval}` : String(op.lit);
}

/** `file:line` of a Source (basename only when `short`), or "". */
export function srcText(src, short) {
  if (!src || !src.file) return "";
  const f = short ? String(src.file).split(/[\\/]/).pop() : String(src.file);
  return src.line != null ? `${f}:${src.line}` : f;
}
