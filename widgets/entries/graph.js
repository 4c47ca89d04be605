/**
 * Bundle entry for graph documents (%%jaxpr), built to
 * jaxmagic/static/jaxmagic-graph.js: the widget's `_esm` for this kind (jaxmagic/views/widget.py).
 * Same interface as every entry (widgets/mount.js): anywidget default export, `mount`, `mountAll`.
 */
import { frontEnd } from "../mount.js";
import graph from "../graph/kind.js";

const { mount, mountAll, widget } = frontEnd([graph]);
export { mount, mountAll };
export default widget;
