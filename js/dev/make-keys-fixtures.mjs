/**
 * Writes js/test/fixtures/keys-small.json: a real `kind: "keys"` document (docs/schema.md)
 * recorded by the Python side (dev/keys_fixtures.py, run with the repository's venv).
 *
 *   node dev/make-keys-fixtures.mjs
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const venv = resolve(repo, ".venv/bin/python");
const python = existsSync(venv) ? venv : "python3";
const env = { ...process.env, JAX_PLATFORMS: "cpu" };
const text = execFileSync(python, [resolve(here, "keys_fixtures.py")], { cwd: repo, env, maxBuffer: 64 << 20, encoding: "utf8" });
const doc = JSON.parse(text);
const out = resolve(here, "../test/fixtures/keys-small.json");
writeFileSync(out, JSON.stringify(doc) + "\n");
console.log(`${out}: ${doc.nodes.length} nodes, ${doc.runs.length} runs, ${doc.findings.length} findings`);
