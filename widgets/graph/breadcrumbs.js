/**
 * Breadcrumbs (.jm-breadcrumbs): where the selected element sits — function ›
 * owner eqn › sub-jaxpr › scope … › eqn. In a 50k-eqn program the canvas shows a
 * small window; the path says which layer / loop body that window is in, and each
 * crumb (a button) selects and centres its container.
 */
import { h, clear } from "../ui/dom.js";
import { ancestors } from "./model.js";
import * as ids from "./ids.js";

/** Short label of one element of the tree. */
export function crumbLabel(ix, key) {
  if (key === ix.root) return String(ix.fn.name ?? "function");
  const kind = ids.kindOf(key);
  if (kind === "group") {
    const g = ix.groups.get(ids.body(key));
    return g ? String(g.label || g.id) : key;
  }
  if (kind === "node") {
    const n = ix.nodes.get(ids.body(key));
    return n ? String(n.prim) : key;
  }
  if (kind === "scope") {
    const sc = ix.scopes.get(key);
    return sc ? sc.name : key;
  }
  if (kind === "port") {
    const v = ix.vars.get(ids.body(key));
    return v ? `${v.def === "const" ? "const" : "in"} ${v.name}` : key;
  }
  if (kind === "output") return `out ${ids.splitOutput(key)[1]}`;
  const label = ix.labels && ix.labels.get && ix.labels.get(key); // containers added by other modules
  return label ? String(label) : key;
}

/** The path of `key`, outermost first and `key` last: [{key, label}]. Root only for null. */
export function crumbPath(ix, key) {
  if (!ix.root) return [];
  if (!key || (!ix.parent.has(key) && key !== ix.root)) return [{ key: ix.root, label: crumbLabel(ix, ix.root) }];
  return [...ancestors(ix, key).reverse(), key].map((k) => ({ key: k, label: crumbLabel(ix, k) }));
}

/**
 * The breadcrumb bar. `onPick(key)` for a click on a crumb (the root crumb passes
 * the root key). Returns {el, update(ix, key)}.
 */
export function createBreadcrumbs(ref, onPick) {
  const el = h("nav", { class: "jm-breadcrumbs", "aria-label": "selection path" }, null, ref);
  el.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest(".jm-crumb");
    if (b && el.contains(b)) onPick(b.getAttribute("data-key"));
  });
  return {
    el,
    update(ix, key) {
      clear(el);
      // Nothing selected: the path would be the function alone, which the drawing's own
      // header already names, and it would cover that header.
      el.hidden = !key;
      const path = crumbPath(ix, key);
      path.forEach((c, i) => {
        if (i) el.appendChild(h("span", { class: "jm-crumb-sep", "aria-hidden": "true" }, "›", ref));
        el.appendChild(h("button", {
          type: "button", class: "jm-crumb", "data-key": c.key, title: c.label,
          "aria-current": i === path.length - 1 && key ? "true" : false,
        }, c.label.length > 28 ? c.label.slice(0, 27) + "…" : c.label, ref));
      });
    },
  };
}
