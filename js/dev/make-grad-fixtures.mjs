/**
 * Writes js/test/fixtures/grad-{mlp,remat,custom,multi,jit}.json: real `kind: "grad"`
 * documents (docs/schema.md) of small programs, recorded by the Python side
 * (dev/grad_fixtures.py, run with the repository's venv): eager splits with gradient
 * values, a checkpoint, a custom_jvp rule, grad / vjp / jvp / vmap in one cell with an
 * Inf gradient, and a jitted train step. Grad documents are the Python model's
 * output, so they are recorded rather than made by hand.
 *
 *   node dev/make-grad-fixtures.mjs
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const venv = resolve(repo, ".venv/bin/python");
const python = existsSync(venv) ? venv : "python3";
const text = execFileSync(python, [resolve(here, "grad_fixtures.py")], { cwd: repo, maxBuffer: 64 << 20, encoding: "utf8" });
for (const [name, doc] of Object.entries(JSON.parse(text))) {
  const out = resolve(here, `../test/fixtures/grad-${name}.json`);
  writeFileSync(out, JSON.stringify(doc) + "\n");
  console.log(`${out}: ${doc.entries.length} entries, ${(JSON.stringify(doc).length / 1024).toFixed(0)} KB`);
}
