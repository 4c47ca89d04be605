/**
 * The colour of each device, as the document says: the Python side decides it once
 * (jaxmagic/model/device_colors.py: OKLCH hues in the primary mesh's order) and writes it
 * into the sharding document (`devices[i].color`), so the mesh, every array's blocks, the
 * collectives' device chips and the text/html fallback (views/static_sharding.py) all give
 * a device the same colour. One palette serves light and dark pages (mid-light colours).
 */

const HEX = /^#[0-9a-fA-F]{6}$/;

/**
 * Map device id -> `#rrggbb`, in the order of `doc.devices` (by id); a device whose colour
 * is missing or is not a `#rrggbb` is left out (drawn as model.js NO_DEVICE).
 */
export function devicePalette(doc) {
  const palette = new Map();
  for (const d of Array.isArray(doc.devices) ? doc.devices : []) {
    if (d && Number.isInteger(d.id) && typeof d.color === "string" && HEX.test(d.color)) palette.set(d.id, d.color);
  }
  return palette;
}
