/**
 * Bundle entry for grad documents (%%grad_graph): the graph viewer embedded twice, built to
 * jaxmagic/static/jaxmagic-grad.js: the widget's `_esm` for this kind (jaxmagic/views/widget.py).
 * Same interface as every entry (widgets/mount.js): anywidget default export, `mount`, `mountAll`.
 */
import { frontEnd } from "../mount.js";
import grad from "../grad/kind.js";

const { mount, mountAll, widget } = frontEnd([grad]);
export { mount, mountAll };
export default widget;
