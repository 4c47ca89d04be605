/**
 * Export of the current drawing as a standalone SVG file: computed styles are
 * copied inline (the file must look the same without our stylesheet or Jupyter's
 * CSS variables) and the view box is set to the drawing's bounds.
 */
import { s } from "../ui/dom.js";

const PROPS = [
  "fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray", "stroke-opacity",
  "opacity", "font-family", "font-size", "font-weight", "paint-order", "stroke-linejoin", "display",
];

/** Serialise `svg` (whose content is in `.jm-viewport`) framed to `bbox`. */
export function svgText(svg, bbox, background) {
  return svgExport(svg, bbox, background).text;
}

/** The standalone SVG and its size in px: `{text, w, h}` (the PNG export draws it at w×h). */
export function svgExport(svg, bbox, background) {
  const clone = svg.cloneNode(true);
  const src = [svg, ...svg.querySelectorAll("*")];
  const dst = [clone, ...clone.querySelectorAll("*")];
  const view = svg.ownerDocument.defaultView;
  src.forEach((el, i) => {
    const cs = view.getComputedStyle(el);
    const style = PROPS.map((p) => [p, cs.getPropertyValue(p)]).filter(([, v]) => v).map(([p, v]) => `${p}:${v}`).join(";");
    if (style) dst[i].setAttribute("style", style);
  });
  for (const hit of clone.querySelectorAll(".jm-edge-hit")) hit.remove();
  const m = 16;
  const vp = clone.querySelector(".jm-viewport");
  if (vp) vp.setAttribute("transform", `translate(${m - bbox.x},${m - bbox.y})`);
  const w = Math.ceil(bbox.w + 2 * m), h = Math.ceil(bbox.h + 2 * m);
  clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  clone.setAttribute("width", w);
  clone.setAttribute("height", h);
  clone.setAttribute("viewBox", `0 0 ${w} ${h}`);
  clone.insertBefore(s("rect", { width: w, height: h, fill: background || "#ffffff" }, null, svg), clone.firstChild);
  return { text: new view.XMLSerializer().serializeToString(clone), w, h };
}

/** A file name made only of safe characters. */
export const fileName = (name, ext) => (String(name || "jaxmagic").replace(/[^\w.-]+/g, "_").slice(0, 60) || "jaxmagic") + ext;
