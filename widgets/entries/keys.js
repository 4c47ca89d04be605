/**
 * Bundle entry for keys documents (%%prng): the PRNG key tree, built to
 * jaxmagic/static/jaxmagic-keys.js: the widget's `_esm` for this kind (jaxmagic/views/widget.py).
 * Same interface as every entry (widgets/mount.js): anywidget default export, `mount`, `mountAll`.
 * No graph viewer, no dagre, no layout worker.
 */
import { frontEnd } from "../mount.js";
import keys from "../keys/kind.js";

const { mount, mountAll, widget } = frontEnd([keys]);
export { mount, mountAll };
export default widget;
