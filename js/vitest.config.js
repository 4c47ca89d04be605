/**
 * Tests run the sources unbundled. Two build-time conveniences need stand-ins:
 * CSS imports become text (esbuild's text loader in the build), and the inlined
 * worker function returns widgets/ui/layout.js directly (there is no Worker in node or
 * jsdom, so layouts run on the main thread, as under a strict CSP).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// widgets/ lives beside js/, so its bare imports resolve from js/node_modules (as the build's nodePaths do)
const fromHere = (name) => fileURLToPath(new URL(`./node_modules/${name}`, import.meta.url));
const PACKAGES = ["@dagrejs/dagre", "d3-hierarchy", "fflate"];

export default defineConfig({
  plugins: [
    {
      name: "jaxmagic-test-shims",
      enforce: "pre",
      resolveId(id, importer) {
        if (id === "virtual:layout-worker") return "\0jm-worker";
        // ".js" last: an id ending in ".css" is emptied by vitest's own CSS handling.
        if (id.endsWith(".css") && importer) return "\0jm-css:" + new URL(id, "file://" + importer).pathname + ".js";
        return null;
      },
      load(id) {
        if (id === "\0jm-worker") {
          const layout = JSON.stringify(new URL("../widgets/ui/layout.js", import.meta.url).pathname);
          return `import * as L from ${layout}; export default function jmLayoutWorker() { return L; }`;
        }
        if (id.startsWith("\0jm-css:")) return "export default " + JSON.stringify(readFileSync(id.slice(8, -3), "utf8")) + ";";
        return null;
      },
    },
  ],
  resolve: { alias: PACKAGES.map((name) => ({ find: new RegExp(`^${name}$`), replacement: fromHere(name) })) },
  server: { fs: { allow: [".."] } },
  // One test file per core: vitest's default (cores - 1) ran the suite one file at a time on two cores
  // while the other core waited (the main process only gathers results): 174-186 s, now 108 s in CI.
  // A test that takes 1.5 s alone may take several times that on a machine busy with other work:
  // 20 s before a test counts as hung (vitest's default is 5 s).
  test: { include: ["test/**/*.test.js"], maxWorkers: availableParallelism(), testTimeout: 20_000 },
});
