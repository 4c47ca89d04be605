/**
 * PNG export: the exported SVG text (export.js, styles inlined) drawn onto a canvas
 * at the screen's device pixel ratio, or an existing canvas (the canvas renderer's)
 * as it is. Everything stays in the page: the SVG goes in through a Blob URL, so no
 * request leaves it and the canvas is not tainted.
 */

/** Browser limits are ~16k px a side and ~268M px in all; stay well inside both. */
export const MAX_SIDE = 16000;
export const MAX_PIXELS = 40e6;

/** Scale for a w×h drawing: the pixel ratio, reduced until the bitmap fits the caps. */
export function pngScale(w, h, dpr = 1) {
  if (!(w > 0 && h > 0)) return 0;
  return Math.min(dpr || 1, MAX_SIDE / w, MAX_SIDE / h, Math.sqrt(MAX_PIXELS / (w * h)));
}

/** `canvas.toBlob` as a promise. */
export function canvasBlob(canvas) {
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("the browser could not encode the PNG"))), "image/png"));
}

/** PNG Blob of a drawn canvas (transparent where nothing is drawn) on `background`. */
export function canvasToPng(src, background, doc = src.ownerDocument) {
  const c = doc.createElement("canvas");
  c.width = src.width;
  c.height = src.height;
  const ctx = c.getContext("2d");
  ctx.fillStyle = background || "#ffffff";
  ctx.fillRect(0, 0, c.width, c.height);
  ctx.drawImage(src, 0, 0);
  return canvasBlob(c);
}

/** PNG Blob of `svgText` (a standalone SVG of `w`×`h` user units). */
export async function svgToPng(svgText, w, h, doc = globalThis.document) {
  const view = doc.defaultView;
  const k = pngScale(w, h, view.devicePixelRatio);
  if (!k) throw new Error("nothing to export");
  const url = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
  try {
    const img = new view.Image();
    await new Promise((resolve, reject) => {
      img.onload = resolve;
      img.onerror = () => reject(new Error("the browser could not draw the SVG"));
      img.src = url;
    });
    const canvas = doc.createElement("canvas");
    canvas.width = Math.max(1, Math.round(w * k));
    canvas.height = Math.max(1, Math.round(h * k));
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await canvasBlob(canvas);
  } finally {
    URL.revokeObjectURL(url);
  }
}
