/**
 * The grad kind for the bundle entries (widgets/mount.js): the grad view embeds the
 * graph viewer, so it needs the graph CSS (first, so grad rules override it) and the
 * graph kind's layout engine, shared by the forward and backward graphs.
 */
import { acquireLayout } from "../ui/layout-client.js";
import { gradView } from "./view.js";
import { graph as graphCss, scale as scaleCss, grad as gradCss } from "../ui/styles.js";

// The graph kind's CSS and layout engine, taken from where it takes them (importing the kind
// would bundle the parts of the graph view that only a %%jaxpr document shows).
export default { kind: "grad", versions: [1], view: gradView, css: [graphCss, scaleCss, gradCss], layout: acquireLayout };
