/**
 * Which scope boxes / sub-jaxpr owners are expanded.
 *
 * The expansion state is a Set of element keys ("S:…" scopes, "N:…" owner eqns).
 * A group box is always open when its owner is; the root group is always open.
 */
import { isCollapsible, ancestors } from "./model.js";

/** Default cap on eqn nodes shown before anything is expanded by hand. */
export const DEFAULT_BUDGET = 250;

/** Items shown directly when `key` is open (an owner shows its sub-groups' items). */
function directItems(ix, key) {
  const its = ix.items.get(key) || [];
  return key.startsWith("N:") ? its.flatMap((g) => ix.items.get(g) || []) : its;
}

/** Eqn nodes that become visible when `key` opens (its children start collapsed). */
function revealed(ix, key) {
  return directItems(ix, key).filter((k) => k.startsWith("N:")).length;
}

/**
 * Breadth-first default expansion: open containers in BFS order while the number of
 * visible eqn nodes stays within `budget`. A container that would overflow stays
 * closed (and so does everything under it); smaller ones later in the queue may open.
 */
export function defaultExpansion(ix, budget = DEFAULT_BUDGET) {
  const expanded = new Set();
  if (!ix.root) return expanded;
  let visible = revealed(ix, ix.root);
  const queue = directItems(ix, ix.root).filter((k) => isCollapsible(ix, k));
  for (let i = 0; i < queue.length; i++) {
    const k = queue[i];
    const add = revealed(ix, k);
    if (visible + add > budget) continue;
    expanded.add(k);
    visible += add;
    for (const c of directItems(ix, k)) if (isCollapsible(ix, c)) queue.push(c);
  }
  return expanded;
}

/** Every collapsible element (what "Expand all" opens). */
export function allCollapsibles(ix) {
  const out = new Set();
  for (const k of ix.parent.keys()) if (isCollapsible(ix, k)) out.add(k);
  return out;
}

/** Number of eqn nodes drawn for an expansion state (each visible eqn is one `.jm-eqn`). */
export function visibleEqnCount(ix, expanded) {
  let n = 0;
  const walk = (key) => {
    for (const k of directItems(ix, key)) {
      if (k.startsWith("N:")) n++;
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
