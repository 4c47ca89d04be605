/**
 * The graph kind for the bundle entries (widgets/mount.js): the graph view, the
 * document versions it reads (2 adds optional fields to 1), its CSS, and the shared
 * layout engine (a worker running dagre) its drawings are laid out by.
 */
import { acquireLayout } from "../ui/layout-client.js";
import { graphView } from "./view.js";
import { listedControl } from "./listed.js";
import { graph as graphCss, scale as scaleCss, listed as listedCss } from "../ui/styles.js";

/** The view with its control for functions listed without their graph (not in the grad bundle: it embeds graphView). */
const view = (root, doc, engine, opts) => graphView(root, doc, engine, { ...opts, listed: listedControl });

export default { kind: "graph", versions: [1, 2], view, css: [graphCss, scaleCss, listedCss], layout: acquireLayout };
