/**
 * jaxmagic front end, every kind (bundled to jaxmagic/static/jaxmagic.js). Self-contained
 * pages load this one bundle once, whatever kinds they mix (jaxmagic/views/static_html.py);
 * widgets load their kind's own bundle (widgets/entries/, jaxmagic/views/widget.py) and
 * fall back to this one for kinds without one.
 *
 * - anywidget: `export default { render({ model, el }) }` renders `model.get("doc")`
 *   and re-renders on `change:doc`.
 * - static pages: `mount(el, doc)`; and when the page sets
 *   `window.__jaxmagic_static = true` before loading this module, every
 *   `<script type="application/json" data-jaxmagic-doc>` gets a view right after it.
 *
 * The logic is shared with the per-kind entries: widgets/mount.js.
 */
import { frontEnd } from "./mount.js";
import graph from "./graph/kind.js";
import timeline from "./timeline/kind.js";
import grad from "./grad/kind.js";
import sharding from "./sharding/kind.js";
import keys from "./keys/kind.js";

const { mount, mountAll, widget } = frontEnd([graph, timeline, grad, sharding, keys]);
export { mount, mountAll };
export default widget;
