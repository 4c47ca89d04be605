/**
 * Search records for one function: eqn nodes match on primitive, scope names,
 * the names of the vars they define, and their source location; input/const ports
 * match on their var name. See js/src/search.js for the matching rules.
 */
import { nKey, pKey } from "./model.js";

export function searchRecords(ix) {
  const recs = [];
  for (const n of ix.fn.nodes || []) {
    if (!ix.parent.has(nKey(n.id))) continue;
    recs.push({
      id: nKey(n.id),
      text: [n.prim, ...(n.scope || [])].filter((x) => x != null),
      exact: (n.outs || []).map((v) => (ix.vars.get(v) || {}).name).filter((x) => x && x !== "_"),
      locs: n.src ? [n.src] : [],
    });
  }
  for (const [, p] of ix.ports) {
    for (const k of [...p.ins, ...p.consts]) {
      recs.push({ id: k, exact: [(ix.vars.get(k.slice(2)) || {}).name] });
    }
  }
  return recs;
}
