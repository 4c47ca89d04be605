/**
 * The keys kind for the bundle entries (widgets/mount.js): one SVG tree laid out with
 * d3-hierarchy's tidy tree; no graph layout, so no layout engine, no dagre.
 */
import { keysView } from "./view.js";
import { keys as keysCss } from "../ui/styles.js";

export default { kind: "keys", versions: [1], view: keysView, css: [keysCss], layout: null };
