/**
 * Every style sheet of the front end, as text (esbuild's text loader; a vitest plugin
 * does the same in tests). Each kind (`graph/kind.js` and the like) lists the sheets it needs and
 * widgets/mount.js injects them as one <style> into each widget root, with every rule
 * scoped under `.jm-root`, so nothing leaks into the notebook.
 *
 * Why one module: the bundler emits a module's imports together, so the sheets a bundle
 * keeps sit side by side and gzip shares their patterns (1.5 KB less than sheets placed
 * next to each view); sheets a bundle does not use are left out of it.
 */
import theme from "./theme.css";
import graph from "../graph/graph.css";
import scale from "../graph/scale.css";
import timeline from "../timeline/timeline.css";
import grad from "../grad/grad.css";

export { theme, graph, scale, timeline, grad };
export { default as sharding } from "../sharding/sharding.css";
export { default as keys } from "../keys/keys.css";
export { default as listed } from "../graph/listed.css";
