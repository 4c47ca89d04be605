/**
 * Search records for one function: eqn nodes match on primitive, scope names and
 * the whole scope path (`layer_3/attention`), the names of the vars they define,
 * and their source location; input/const ports match on their var name. See
 * widgets/ui/search.js for the matching rules. Built on the first search of a function
 * (~50 ms for 50k eqns), after which a query takes ~10 ms.
 */
import * as ids from "./ids.js";

export function searchRecords(ix) {
  const recs = [];
  for (const n of ix.fn.nodes || []) {
    if (!ix.parent.has(ids.node(n.id))) continue;
    recs.push({
      id: ids.node(n.id),
      text: [n.prim, ...(n.scope || []), (n.scope || []).length > 1 ? n.scope.join("/") : null].filter((x) => x != null),
      exact: (n.outs || []).map((v) => (ix.vars.get(v) || {}).name).filter((x) => x && x !== "_"),
      locs: n.src ? [n.src] : [],
    });
  }
  for (const [, p] of ix.ports) {
    for (const k of [...p.ins, ...p.consts]) {
      recs.push({ id: k, exact: [(ix.vars.get(ids.body(k)) || {}).name] });
    }
  }
  return recs;
}
