#!/usr/bin/env node
// `vibelearn` / `vl` from npm: runs the native binary that the optional dependency for this OS
// and CPU carries (@vibelearn/<platform>-<arch>). No install script: npm installs only the
// optional dependency whose "os" and "cpu" match, and this launcher finds it.
"use strict";
const { spawnSync } = require("child_process");

const pkg = `@vibelearn/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "vl.exe" : "vl";
let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch (_) {
  console.error(
    `vibelearn: no binary for ${process.platform}-${process.arch}: the package ${pkg} is not installed. ` +
      "Reinstall without --no-optional / --omit=optional, or use a release archive or `cargo install`."
  );
  process.exit(1);
}
const result = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  console.error(`vibelearn: cannot run ${binary}: ${result.error.message}`);
  process.exit(1);
}
if (result.signal) {
  process.kill(process.pid, result.signal);
}
process.exit(result.status === null ? 1 : result.status);
