/**
 * Bundle entry for sharding documents (%%sharding): meshes, block grids and calls, built to
 * jaxmagic/static/jaxmagic-sharding.js: the widget's `_esm` for this kind (jaxmagic/views/widget.py).
 * Same interface as every entry (widgets/mount.js): anywidget default export, `mount`, `mountAll`.
 * No graph viewer, no dagre, no layout worker.
 */
import { frontEnd } from "../mount.js";
import sharding from "../sharding/kind.js";

const { mount, mountAll, widget } = frontEnd([sharding]);
export { mount, mountAll };
export default widget;
