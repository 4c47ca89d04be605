/**
 * The sharding kind for the bundle entries (widgets/mount.js): DOM grids and, for very
 * big grids, plain canvases; no graph layout, so no layout engine, no dagre.
 */
import { shardingView } from "./view.js";
import { sharding as shardingCss } from "../ui/styles.js";

export default { kind: "sharding", versions: [1], view: shardingView, css: [shardingCss], layout: null };
