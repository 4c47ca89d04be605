/**
 * Writes js/test/fixtures/sharding-{small,256}.json: real `kind: "sharding"` documents
 * (docs/schema.md) recorded by the Python side (dev/sharding_fixtures.py, run with the
 * repository's venv), one process per document because JAX fixes the number of simulated
 * devices when it starts: 8 devices for `small`, 256 for `256`.
 *
 *   node dev/make-sharding-fixtures.mjs
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const venv = resolve(repo, ".venv/bin/python");
const python = existsSync(venv) ? venv : "python3";
for (const [name, devices] of [["small", 8], ["256", 256]]) {
  const env = { ...process.env, XLA_FLAGS: `--xla_force_host_platform_device_count=${devices}`, JAX_PLATFORMS: "cpu" };
  const text = execFileSync(python, [resolve(here, "sharding_fixtures.py"), name], { cwd: repo, env, maxBuffer: 64 << 20, encoding: "utf8" });
  const doc = JSON.parse(text);
  const out = resolve(here, `../test/fixtures/sharding-${name}.json`);
  writeFileSync(out, JSON.stringify(doc) + "\n");
  console.log(`${out}: ${doc.arrays.length} arrays, ${doc.calls.length} calls, ${(text.length / 1024).toFixed(0)} KB`);
}
