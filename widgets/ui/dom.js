/**
 * Tiny element helpers.
 *
 * Every string from a jaxmagic document is untrusted (function names, source lines,
 * params). These helpers are the only way views create DOM, and they only ever use
 * `createElement(NS)`, `setAttribute` and text nodes, so document data can never
 * become markup. There is deliberately no helper that accepts HTML.
 */

export const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Set attributes and append children. Attribute values are stringified; `null`,
 * `undefined` and `false` skip the attribute. Children may be nodes, strings
 * (become text nodes), numbers, or nested arrays; null/false children are skipped.
 */
function fill(node, attrs, children) {
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      node.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(node, children);
  return node;
}

/** Append children (nodes, strings as text, arrays flattened). */
export function append(node, children) {
  if (children == null || children === false) return node;
  if (Array.isArray(children)) {
    for (const c of children) append(node, c);
  } else if (typeof children === "object" && children.nodeType) {
    node.appendChild(children);
  } else {
    node.appendChild(node.ownerDocument.createTextNode(String(children)));
  }
  return node;
}

/** Document to create nodes in: the one of `ref` when given, else the global one. */
function docOf(ref) {
  return (ref && ref.ownerDocument) || globalThis.document;
}

/** Create an HTML element: `h("div", {class: "x"}, ["text", child])`. */
export function h(tag, attrs, children, ref) {
  return fill(docOf(ref).createElement(tag), attrs, children);
}

/** Create an SVG element; same calling convention as `h`. */
export function s(tag, attrs, children, ref) {
  return fill(docOf(ref).createElementNS(SVG_NS, tag), attrs, children);
}

/** Remove all children of a node. */
export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

/** Toggle `cls` on every element in `root` matching `selector`. */
export function setClassAll(root, selector, cls, on) {
  for (const e of root.querySelectorAll(selector)) e.classList.toggle(cls, on);
}

/**
 * Offer `data` (text or a Blob) as a file download. Uses a Blob URL so nothing
 * leaves the page.
 */
export function download(name, data, type) {
  const blob = data instanceof Blob ? data : new Blob([data], { type });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: name });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
