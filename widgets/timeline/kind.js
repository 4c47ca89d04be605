/**
 * The timeline kind for the bundle entries (widgets/mount.js): one canvas, no graph
 * layout, so no layout engine (its bundle carries neither dagre nor the worker).
 */
import { timelineView } from "./view.js";
import { timeline as timelineCss } from "../ui/styles.js";

export default { kind: "timeline", versions: [1], view: timelineView, css: [timelineCss], layout: null };
