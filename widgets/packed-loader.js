/**
 * The `_esm` every widget carries: its kind's bundle gzipped and base64-encoded in one string
 * (`PACKED`, filled in by jaxmagic/views/widget.py), and this loader, which inflates it and
 * imports it once per page.
 *
 * Why: a saved notebook (JupyterLab's "save widget state", nbclient/papermill runs) keeps every
 * widget's `_esm`, and the plain bundles were ~62% of a saved demo (2.7 of 4.4 MB, 34 models).
 * Packed (gzip, then base64 to travel as JSON text), each copy is about half. A code model shared by all widgets would store one copy,
 * but then a view renders only when the host's widget manager has restored that second model
 * first, which no test here can prove for Colab or VS Code; this works wherever anywidget does
 * (anywidget itself imports `_esm` from a Blob URL, so the inflated bundle is imported the same
 * way). Inflation uses DecompressionStream, or fflate's gunzip where it is missing (widgets/ui/gunzip.js).
 */
import { gunzipText } from "./ui/gunzip.js";

const PACKED = "__JAXMAGIC_PACKED__";

/** Inflated bundles by payload, per page: N widgets of one kind inflate and import it once. */
const modules = (globalThis.__jaxmagicPacked ??= new Map());

function base64Bytes(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

/** The bundle's module (its default export is the anywidget widget), imported once per page. */
export function load(packed = PACKED) {
  let module = modules.get(packed);
  if (!module) {
    module = gunzipText(base64Bytes(packed)).then(async (source) => {
      const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
      try {
        return await import(/* @vite-ignore */ url);
      } finally {
        URL.revokeObjectURL(url);
      }
    });
    module.catch(() => modules.delete(packed)); // a failed load is tried again by the next view
    modules.set(packed, module);
  }
  return module;
}

export default {
  async render(context) {
    const { default: widget } = await load();
    return widget.render(context);
  },
};
