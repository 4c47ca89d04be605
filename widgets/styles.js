/**
 * All CSS of the widget as one string (esbuild's text loader; a vitest plugin does
 * the same in tests). It is injected as one <style> into each widget root, with
 * every rule scoped under `.jm-root`, so nothing leaks into the notebook.
 */
import theme from "../js/src/theme.css";
import graph from "./graph/graph.css";
import scale from "./graph/scale.css";
import timeline from "./timeline/timeline.css";
import grad from "./grad/grad.css";

export default theme + "\n" + graph + "\n" + scale + "\n" + timeline + "\n" + grad;
