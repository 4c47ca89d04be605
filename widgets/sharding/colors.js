/**
 * A stable colour per device, the same in the mesh, in every array's blocks and in the
 * collectives' device chips.
 *
 * The choice: devices are put in the row-major order of the *primary* mesh (the concrete
 * mesh with most devices; devices outside it follow by id), and device i of n gets hue
 * 30° + 360°·i/n in OKLCH, a perceptual space, so every hue is equally light and no
 * device stands out by accident. Up to 12 devices that is the whole difference: 8 devices
 * are 45° apart at one lightness and chroma. Beyond 12, hue steps alone get too close, so
 * lightness cycles through three levels with the index: two devices next to each other in
 * the mesh (i and i+1 along the last axis, i and i+cols along the one before) differ in
 * lightness and hue whenever cols is not a multiple of 3, and by hue (360°·cols/n) when it
 * is. 256 devices cannot all be told apart by colour; neighbours can, and the id is always
 * in the cell and the hover text. Colours are mid-light, so dark text reads on every one,
 * on light and dark pages alike.
 */

/** OKLab [L, a, b] to linear sRGB. */
function labToLinear(L, a, b) {
  const l = (L + 0.3963377774 * a + 0.2158037573 * b) ** 3;
  const m = (L - 0.1055613458 * a - 0.0638541728 * b) ** 3;
  const s = (L - 0.0894841775 * a - 1.291485548 * b) ** 3;
  return [
    4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s,
    -1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s,
    -0.0041960863 * l - 0.7034186147 * m + 1.707614701 * s,
  ];
}

const encode = (x) => (x <= 0.0031308 ? 12.92 * x : 1.055 * x ** (1 / 2.4) - 0.055);
const decode = (x) => (x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4);

/** `#rrggbb` of OKLCH (L 0–1, chroma, hue in degrees); chroma is lowered until the colour fits sRGB. */
export function oklchHex(L, C, hue) {
  const rad = (hue * Math.PI) / 180;
  let rgb;
  for (let c = C; c >= 0; c -= 0.005) {
    rgb = labToLinear(L, c * Math.cos(rad), c * Math.sin(rad));
    if (rgb.every((x) => x >= -1e-4 && x <= 1 + 1e-4)) break;
  }
  return "#" + rgb.map((x) => Math.round(Math.min(1, Math.max(0, encode(x))) * 255).toString(16).padStart(2, "0")).join("");
}

/** OKLab [L, a, b] of `#rrggbb` (to measure how far apart two colours look). */
export function hexLab(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => decode(parseInt(hex.slice(i, i + 2), 16) / 255));
  const l = Math.cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
  const m = Math.cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
  const s = Math.cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

/** Colour of device i of n (see the module comment). */
export function deviceHex(i, n) {
  const L = n <= 12 ? 0.72 : [0.66, 0.84, 0.75][i % 3];
  return oklchHex(L, n <= 12 ? 0.14 : 0.13, 30 + (360 * i) / Math.max(1, n));
}

/**
 * Device ids in colour order: the primary mesh's devices row-major, then every other
 * device by id (`doc.devices`, and holders of blocks the list missed).
 */
export function deviceOrder(doc) {
  const meshes = (doc.meshes || []).filter((m) => Array.isArray(m.devices));
  const primary = meshes.reduce((best, m) => (!best || m.devices.length > best.devices.length ? m : best), null);
  const order = [...new Set(primary ? primary.devices : [])];
  const seen = new Set(order);
  const rest = new Set((doc.devices || []).map((d) => d.id));
  for (const a of doc.arrays || []) for (const b of a.blocks || []) for (const d of b.devices || []) rest.add(d);
  for (const d of [...rest].sort((x, y) => x - y)) if (!seen.has(d)) order.push(d);
  return order;
}

/** Map device id -> `#rrggbb`. */
export function devicePalette(doc) {
  const order = deviceOrder(doc);
  return new Map(order.map((d, i) => [d, deviceHex(i, order.length)]));
}
