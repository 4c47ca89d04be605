/**
 * Which scope boxes / sub-jaxpr owners are expanded.
 *
 * The expansion state is a Set of element keys ("S:…" scopes, "N:…" owner eqns).
 * A group box is always open when its owner is; the root group is always open.
 */
import { isCollapsible, ancestors } from "./model.js";
import * as ids from "./ids.js";

/** Default cap on eqn nodes shown before anything is expanded by hand. */
export const DEFAULT_BUDGET = 250;
/** Default cap on drawn items (eqns and boxes): chunk and unit boxes count too. */
export const ITEM_BUDGET = 400;

/** Items shown directly when `key` is open (an owner shows its sub-groups' items). */
function directItems(ix, key) {
  const its = ix.items.get(key) || [];
  return ids.isNode(key) ? its.flatMap((g) => ix.items.get(g) || []) : its;
}

/** Eqn nodes that become visible when `key` opens (its children start collapsed). */
function revealed(ix, key) {
  let n = 0;
  for (const k of directItems(ix, key)) if (ids.isNode(k)) n++;
  return n;
}

/**
 * Breadth-first default expansion: open containers in BFS order while the number of
 * visible eqn nodes stays within `budget` and drawn items within ITEM_BUDGET. A
 * container that would overflow stays closed (and so does everything under it);
 * smaller ones later in the queue may open. A function that fits in the budget opens
 * completely but for its runs of repeated layers ("R:"), which always stay folded
 * (and what is inside them closed): one box for 24 identical layers is their point,
 * and the caption says so (captions/graph.py).
 */
export function defaultExpansion(ix, budget = DEFAULT_BUDGET) {
  if (!ix.root) return new Set();
  if ((ix.count.get(ix.root) || 0) <= budget) {
    const all = allCollapsibles(ix);
    for (const k of all) if (ids.isRepeat(k) || ancestors(ix, k).some((a) => ids.isRepeat(a))) all.delete(k);
    if (visibleItemCount(ix, all) <= ITEM_BUDGET) return all;
  }
  const expanded = new Set();
  let visible = revealed(ix, ix.root);
  let shown = directItems(ix, ix.root).length;
  const queue = directItems(ix, ix.root).filter((k) => isCollapsible(ix, k));
  for (let i = 0; i < queue.length; i++) {
    const k = queue[i];
    if (ids.isRepeat(k)) continue;
    const add = revealed(ix, k);
    const more = directItems(ix, k).length - 1;
    if (visible + add > budget || shown + more > ITEM_BUDGET) continue;
    expanded.add(k);
    visible += add;
    shown += more;
    for (const c of directItems(ix, k)) if (isCollapsible(ix, c)) queue.push(c);
  }
  return expanded;
}

/** Number of drawn items (eqns, boxes, not ports) for an expansion state. */
export function visibleItemCount(ix, expanded) {
  let n = 0;
  const walk = (key) => {
    for (const k of directItems(ix, key)) {
      n++;
      if (isCollapsible(ix, k) && expanded.has(k)) walk(k);
    }
  };
  if (ix.root) walk(ix.root);
  return n;
}

/**
 * Every collapsible element (what "Expand all" opens), except port bundles: they
 * hold no eqns, and a signature of 1,400 params is no easier to read unfolded.
 */
export function allCollapsibles(ix) {
  const out = new Set();
  for (const k of ix.parent.keys()) if (isCollapsible(ix, k) && !ids.isBundle(k)) out.add(k);
  return out;
}

/** Number of eqn nodes drawn for an expansion state (each visible eqn is one `.jm-eqn`). */
export function visibleEqnCount(ix, expanded) {
  let n = 0;
  const walk = (key) => {
    for (const k of directItems(ix, key)) {
      if (ids.isNode(k)) n++;
      if (isCollapsible(ix, k) && expanded.has(k)) walk(k);
    }
  };
  if (ix.root) walk(ix.root);
  return n;
}

/** Add to `expanded` every collapsed ancestor of `key`, so that `key` becomes visible. */
export function reveal(ix, expanded, key) {
  let changed = false;
  for (const a of ancestors(ix, key)) {
    if (isCollapsible(ix, a) && !expanded.has(a)) {
      expanded.add(a);
      changed = true;
    }
  }
  return changed;
}
