/**
 * gzip bytes -> text, in every host. Packed documents (jaxmagic/views/wire.py) travel
 * gzip+base64. The browser's DecompressionStream inflates them natively; some webviews lack
 * it (or ship one that throws), and a document must not fail to show for that, so fflate's
 * gunzip (tree-shaken to the inflater, ~2 KB gzipped) inflates the same bytes on the main
 * thread at once. No network either way.
 */
import { gunzipSync } from "fflate";

/** The native gzip stream of `bytes`, or null where the page has none (the fallback is used then). */
function nativeStream(bytes) {
  if (typeof DecompressionStream !== "function" || typeof Blob === "undefined" || typeof Response === "undefined") return null;
  return new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
}

/** gzip `bytes` (Uint8Array) -> their UTF-8 text: native stream first, bundled decoder when it is missing or throws. */
export async function gunzipText(bytes) {
  try {
    const stream = nativeStream(bytes);
    if (stream) return await new Response(stream).text();
  } catch (err) {
    // fall through: the same bytes through the bundled decoder
  }
  return new TextDecoder().decode(gunzipSync(bytes));
}
