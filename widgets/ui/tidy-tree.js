/**
 * d3-hierarchy's tidy tree (Reingold-Tilford with Buchheim's linear-time walk), re-exported
 * from js/src so that modules under widgets/ reach the package through js/node_modules by
 * ordinary resolution, in the build and in vitest alike (as widgets/ui/layout.js does for dagre).
 */
export { hierarchy, tree } from "d3-hierarchy";
