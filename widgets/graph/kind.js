/**
 * The graph kind for the bundle entries (widgets/mount.js): the graph view, the
 * document versions it reads (2 adds optional fields to 1), its CSS, and the shared
 * layout engine (a worker running dagre) its drawings are laid out by.
 */
import { acquireLayout } from "../../js/src/layout-client.js";
import { graphView } from "./view.js";
import { graph as graphCss, scale as scaleCss } from "../styles.js";

export default { kind: "graph", versions: [1, 2], view: graphView, css: [graphCss, scaleCss], layout: acquireLayout };
