/**
 * Build: bundle the layout worker first, inline it into the main bundle (virtual
 * module "virtual:layout-worker": the worker bundle wrapped in one function, whose
 * source text becomes the worker's Blob and which the page can also call directly
 * as the main-thread fallback), then bundle widgets/index.js into
 * jaxmagic/static/jaxmagic.js: one ESM file, no network imports, no wasm.
 *
 * Why a function and not a string literal: dagre is ~17 KB gzipped; a string copy
 * for the worker plus a code copy for the fallback cost ~35 KB of the 50 KB budget
 * (gzip's 32 KB window cannot share them). One copy serves both.
 * CSS files are minified and imported as text. Fails when the gzipped bundle
 * exceeds the size budget.
 *
 *   node build.mjs              # production build
 *   node build.mjs --no-minify  # readable output for debugging
 */
import { build, transform } from "esbuild";
import { gzipSync } from "node:zlib";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..");
const out = resolve(repo, "jaxmagic/static/jaxmagic.js");
const minify = !process.argv.includes("--no-minify");
const LIMIT_KB = 80; // docs/design.md: why 80 and not the first 50

const common = {
  bundle: true,
  minify,
  target: "es2020",
  legalComments: "none",
  logLevel: "warning",
  absWorkingDir: here,
  nodePaths: [resolve(here, "node_modules")], // widgets/ resolves packages from js/
};

// 1. The worker, as a classic script (Blob workers are classic by default).
const worker = await build({
  ...common,
  entryPoints: [resolve(here, "src/layout-worker.js")],
  format: "iife",
  globalName: "__jmLayoutWorker",
  write: false,
});
const workerSrc = worker.outputFiles[0].text;
const workerModule = `export default function jmLayoutWorker() {\n${workerSrc}\nreturn __jmLayoutWorker;\n}\n`;

// 2. The widget.
const inline = {
  name: "jaxmagic-inline",
  setup(b) {
    b.onResolve({ filter: /^virtual:layout-worker$/ }, (a) => ({ path: a.path, namespace: "jm-virtual" }));
    b.onLoad({ filter: /.*/, namespace: "jm-virtual" }, () => ({ contents: workerModule, loader: "js" }));
    b.onLoad({ filter: /\.css$/ }, async (a) => {
      const css = readFileSync(a.path, "utf8");
      const text = minify ? (await transform(css, { loader: "css", minify: true })).code : css;
      return { contents: text, loader: "text" };
    });
  },
};
const main = await build({
  ...common,
  entryPoints: [resolve(repo, "widgets/index.js")],
  format: "esm",
  write: false,
  plugins: [inline],
});
const code = main.outputFiles[0].text;
if (/(?:from|import)\s*\(?\s*["'`](?:https?:)?\/\//.test(code)) throw new Error("network import in bundle");

mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, code);
const kb = (n) => (n / 1024).toFixed(1);
const gz = gzipSync(code, { level: 9 }).length;
console.log(
  `jaxmagic.js: ${kb(code.length)} KB, ${kb(gz)} KB gzipped ` +
    `(layout worker ${kb(gzipSync(workerSrc, { level: 9 }).length)} KB of it); budget ${LIMIT_KB} KB gzipped`,
);
if (gz > LIMIT_KB * 1024) {
  console.error(`FAIL: bundle is ${kb(gz)} KB gzipped, over the ${LIMIT_KB} KB budget`);
  process.exit(1);
}
