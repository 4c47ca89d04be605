/**
 * Build: bundle the layout worker first, inline it into the bundles that lay out graphs
 * (virtual module "virtual:layout-worker": the worker bundle wrapped in one function,
 * whose source text becomes the worker's Blob and which the page can also call directly
 * as the main-thread fallback), then bundle each entry into one ESM file in
 * jaxmagic/static/ (no network imports, no wasm):
 *
 *   widgets/index.js            -> jaxmagic.js        every kind: self-contained pages
 *   widgets/entries/<kind>.js   -> jaxmagic-<kind>.js one kind: that kind's widget `_esm`
 *
 * Why per kind: every widget carries its bundle as `_esm` (and a saved notebook keeps one
 * copy per widget), and a timeline does not need dagre's 20 KB. Adding
 * widgets/entries/<kind>.js is all a new kind's bundle needs; the Python widget finds the
 * bundles by file name (jaxmagic/views/widget.py).
 *
 * Why a function and not a string literal: dagre is ~17 KB gzipped; a string copy
 * for the worker plus a code copy for the fallback cost ~35 KB of the 50 KB budget
 * (gzip's 32 KB window cannot share them). One copy serves both.
 * CSS files are minified and imported as text. Fails when a gzipped bundle exceeds
 * its size budget; prints every size.
 *
 *   node build.mjs              # production build
 *   node build.mjs --no-minify  # readable output for debugging
 */
import { build, transform } from "esbuild";
import { gzipSync } from "node:zlib";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..");
const outDir = resolve(repo, "jaxmagic/static");
const entriesDir = resolve(repo, "widgets/entries");
const minify = !process.argv.includes("--no-minify");
/** docs/design.md, "One bundle per document kind": a kind's bundle is every widget's `_esm`; the all-kinds one is loaded once per page. */
// 93 (was 89): the views as small modules over explicit state objects (issue 25): a minifier shortens closure
// variables but keeps property names, +2 KB for the grad bundle (which embeds the graph viewer); 89 (was 88): the findings list every view shows, graph included (widgets/ui/findings.js); 88 (was 84): deferred levels asked of the kernel (widgets/ui/requests.js) and culled canvas drawing; 84 (was 80): framing, legends and theme-aware canvases in every view (the grad bundle embeds the graph viewer).
const KIND_LIMIT_KB = 93;
// 147 (was 142): the same split, +2.5 KB, and the shared formatting module (widgets/ui/format.js); 142 (was 136): the graph canvas's grid index, pan cache and cut curves (widgets/graph/spatial.js, canvas.js, curve.js); 136 (was 130): the five views with playback, presentation mode, framing, legends and theme watching; a page loads this bundle once.
const ALL_KINDS_LIMIT_KB = 147;
// The loader each widget carries besides its packed bundle: an inflater and an import.
const LOADER_LIMIT_KB = 5;

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
  entryPoints: [resolve(here, "../widgets/ui/layout-worker.js")],
  format: "iife",
  globalName: "__jmLayoutWorker",
  write: false,
});
const workerSrc = worker.outputFiles[0].text;
const workerModule = `export default function jmLayoutWorker() {\n${workerSrc}\nreturn __jmLayoutWorker;\n}\n`;

// 2. The bundles: one esbuild run, one self-contained file per entry (no shared chunks:
// anywidget loads one ESM text per widget).
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
const kinds = readdirSync(entriesDir).filter((f) => f.endsWith(".js")).map((f) => basename(f, ".js")).sort();
const bundles = [
  { out: "jaxmagic", entry: resolve(repo, "widgets/index.js"), limit: ALL_KINDS_LIMIT_KB },
  ...kinds.map((k) => ({ out: `jaxmagic-${k}`, entry: resolve(entriesDir, `${k}.js`), limit: KIND_LIMIT_KB })),
];
const result = await build({
  ...common,
  entryPoints: bundles.map((b) => ({ in: b.entry, out: b.out })),
  outdir: outDir,
  format: "esm",
  write: false,
  plugins: [inline],
});

// 3. Check, write (removing bundles of entries that no longer exist), report.
mkdirSync(outDir, { recursive: true });
const names = new Set(bundles.map((b) => `${b.out}.js`));
for (const f of readdirSync(outDir)) if (/^jaxmagic(-.+)?\.js$/.test(f) && !names.has(f)) rmSync(resolve(outDir, f));
const kb = (n) => (n / 1024).toFixed(1);
const gzSize = (text) => gzipSync(text, { level: 9 }).length;
const failures = [];
console.log(`layout worker: ${kb(gzSize(workerSrc))} KB gzipped (in the bundles of kinds that lay out graphs)`);
for (const b of bundles) {
  const file = result.outputFiles.find((o) => basename(o.path) === `${b.out}.js`);
  const code = file.text;
  if (/(?:from|import)\s*\(?\s*["'`](?:https?:)?\/\//.test(code)) throw new Error(`network import in ${b.out}.js`);
  writeFileSync(file.path, code);
  const gz = gzSize(code);
  console.log(`${b.out}.js: ${kb(code.length)} KB, ${kb(gz)} KB gzipped; budget ${b.limit} KB gzipped`);
  if (gz > b.limit * 1024) failures.push(`${b.out}.js is ${kb(gz)} KB gzipped, over its ${b.limit} KB budget`);
}
// 4. The loader every widget's `_esm` is (widgets/packed-loader.js): the Python side puts its kind's
// bundle, gzipped and base64-encoded, in place of the placeholder.
const loader = await build({ ...common, entryPoints: [resolve(repo, "widgets/packed-loader.js")], format: "esm", write: false });
const loaderCode = loader.outputFiles[0].text;
if (!loaderCode.includes('"__JAXMAGIC_PACKED__"')) throw new Error("packed-loader.js lost its placeholder");
writeFileSync(resolve(outDir, "packed-loader.js"), loaderCode);
console.log(`packed-loader.js: ${kb(loaderCode.length)} KB, ${kb(gzSize(loaderCode))} KB gzipped; budget ${LOADER_LIMIT_KB} KB gzipped`);
if (gzSize(loaderCode) > LOADER_LIMIT_KB * 1024) failures.push(`packed-loader.js is over its ${LOADER_LIMIT_KB} KB budget`);
if (failures.length) {
  for (const f of failures) console.error(`FAIL: ${f}`);
  process.exit(1);
}
