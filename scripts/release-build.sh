#!/usr/bin/env bash
# One release target, on its own OS (the release workflow's build jobs; SPEC §10): builds `vl`
# with the `dist` profile, runs the test suite natively (unless SKIP_TESTS=1), and archives the
# binary with scripts/release-archive.sh into dist/.
#
# Usage: scripts/release-build.sh TARGET            e.g. x86_64-unknown-linux-gnu
# Environment: PROFILE (default dist; `dev` for a quick local try), SKIP_TESTS=1, NPM_KEY (npm's
# <platform>-<arch> for this target: the binary is also copied to npm-bin/NPM_KEY/ for
# `scripts/npm-pack.sh --from npm-bin`).
# Runs here as it runs on a CI runner: `PROFILE=dev SKIP_TESTS=1 scripts/release-build.sh
# x86_64-unknown-linux-gnu`.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/release-build.sh TARGET}
profile=${PROFILE:-dist}
out_dir=$profile
[ "$profile" = dev ] && out_dir=debug
exe=vl
[[ "$target" == *windows* ]] && exe=vl.exe

echo "== release-build: $target, profile $profile"
if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi
cargo build --locked --profile "$profile" --target "$target" --bin vl
if [ "${SKIP_TESTS:-}" != 1 ]; then
    cargo test --locked --target "$target"
fi
scripts/release-archive.sh "$target" "target/$target/$out_dir/$exe"
if [ -n "${NPM_KEY:-}" ]; then
    mkdir -p "npm-bin/$NPM_KEY"
    cp "target/$target/$out_dir/$exe" "npm-bin/$NPM_KEY/$exe"
fi
