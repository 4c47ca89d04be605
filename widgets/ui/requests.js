/**
 * A view's requests to its kernel (jaxmagic/views/requests.py): heavy parts of a document
 * (StableHLO/HLO text, level links, XLA's cost) are computed when the user asks for them.
 *
 * `createRequester(model)` sends `{jm: "request", id, what, args}` as an anywidget custom
 * message and resolves with the reply's data (one gzip-compressed JSON buffer). Nothing tells a
 * widget that its kernel is gone (a saved notebook opened without one, a restarted kernel), and a
 * busy kernel answers only after its running cell: so a request that has no answer after
 * `slowMs` reports it is waiting (`onWaiting`), and gives up after `timeoutMs` with the sentence
 * the view shows. A failed send gives up at once.
 */
import { gunzipText } from "./gunzip.js";

export const KERNEL_GONE = "No answer from the kernel: reconnect the kernel to load the HLO (StableHLO, HLO and XLA's cost analysis are computed in the kernel when asked for).";
export const WAITING = "Still waiting for the kernel: it may be busy running a cell, or gone (then reconnect the kernel to load the HLO).";

/**
 * KERNEL_GONE and WAITING speak of the HLO; a request for something else says what it would
 * load: `retold(KERNEL_GONE, "its graph")` is "No answer from the kernel: reconnect the kernel to load its graph."
 */
export const retold = (text, thing) => String(text).replace(/load the HLO( \(.*\))?/, `load ${thing}`);

/** The bytes of one message buffer (DataView, ArrayBuffer or typed array). */
function bytesOf(buffer) {
  if (buffer instanceof Uint8Array) return buffer;
  if (ArrayBuffer.isView(buffer)) return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  if (buffer instanceof ArrayBuffer) return new Uint8Array(buffer);
  return null;
}

/**
 * `{request(what, args, {onWaiting}) -> Promise<data>, dispose()}` for an anywidget `model`.
 * Without a model (a static page) every request rejects with `why`.
 */
export function createRequester(model, { slowMs = 8000, timeoutMs = 120000, why = KERNEL_GONE } = {}) {
  const pending = new Map(); // id -> {resolve, reject, timers}
  let next = 1;
  const settle = (id) => {
    const p = pending.get(id);
    if (!p) return null;
    pending.delete(id);
    for (const t of p.timers) clearTimeout(t);
    return p;
  };
  const onMessage = (msg, buffers) => {
    if (!msg || msg.jm !== "reply") return;
    const p = settle(msg.id);
    if (!p) return;
    if (!msg.ok) return p.reject(new Error(String(msg.error || "the kernel could not answer")));
    const bytes = bytesOf(buffers && buffers[0]);
    if (!bytes) return p.reject(new Error("the kernel's answer carried no data"));
    gunzipText(bytes).then((text) => JSON.parse(text)).then(p.resolve, (err) => p.reject(new Error(`the kernel's answer was unreadable: ${err && err.message}`)));
  };
  const live = !!(model && typeof model.send === "function" && typeof model.on === "function");
  if (live) model.on("msg:custom", onMessage);

  /**
   * @param {string} what
   * @param {object} [args]
   * @param {{onWaiting?: Function}} [options] `onWaiting` runs when the kernel is slow to answer
   */
  function request(what, args = {}, { onWaiting } = {}) {
    if (!live) return Promise.reject(new Error(why));
    return new Promise((resolve, reject) => {
      const id = next++;
      const timers = [
        setTimeout(() => { if (pending.has(id) && onWaiting) onWaiting(WAITING); }, slowMs),
        setTimeout(() => { const p = settle(id); if (p) p.reject(new Error(why)); }, timeoutMs),
      ];
      pending.set(id, { resolve, reject, timers });
      try {
        model.send({ jm: "request", id, what, args });
      } catch (err) {
        settle(id);
        reject(new Error(why));
      }
    });
  }

  return {
    request,
    dispose() {
      if (live && typeof model.off === "function") model.off("msg:custom", onMessage);
      for (const id of [...pending.keys()]) settle(id).reject(new Error("the view was closed"));
    },
  };
}
