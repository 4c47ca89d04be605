/**
 * Bundle entry for timeline documents (%%trace): no dagre, no layout worker, built to
 * jaxmagic/static/jaxmagic-timeline.js: the widget's `_esm` for this kind (jaxmagic/views/widget.py).
 * Same interface as every entry (widgets/mount.js): anywidget default export, `mount`, `mountAll`.
 */
import { frontEnd } from "../mount.js";
import timeline from "../timeline/kind.js";

const { mount, mountAll, widget } = frontEnd([timeline]);
export { mount, mountAll };
export default widget;
