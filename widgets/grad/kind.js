/**
 * The grad kind for the bundle entries (widgets/mount.js): the grad view embeds the
 * graph viewer, so it needs the graph CSS (first, so grad rules override it) and the
 * graph kind's layout engine, shared by the forward and backward graphs.
 */
import graph from "../graph/kind.js";
import { gradView } from "./view.js";
import { grad as gradCss } from "../styles.js";

export default { kind: "grad", versions: [1], view: gradView, css: [...graph.css, gradCss], layout: graph.layout };
