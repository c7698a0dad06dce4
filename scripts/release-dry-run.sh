#!/usr/bin/env bash
# The release workflow's publishing half, here (CI runs it): the Linux and Windows debug builds
# that CI has just made stand in for the release builds; they are archived with their checksums
# (scripts/release-archive.sh), packed for npm (scripts/npm-pack.sh --from), and put through
# scripts/release-publish.sh with DRY_RUN=1, which verifies the sums and packs every npm package
# without publishing. The build half (scripts/release-build.sh) is the one the Linux CI already
# does with `cargo build`; it runs on each OS in the workflow.
set -euo pipefail
cd "$(dirname "$0")/.."
linux=target/debug/vl
windows=target/windows/x86_64-pc-windows-gnu/debug/vl.exe
# Each with the vl-worker beside it, which the archives and the npm packages carry too.
for built in "$linux" "${linux%/vl}/vl-worker" "$windows" "${windows%/vl.exe}/vl-worker.exe"; do
    [ -f "$built" ] || { echo "build first: $built (cargo build; scripts/windows-check.sh)" >&2; exit 1; }
done
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
rm -rf dist npm-bin
trap 'rm -rf dist npm-bin' EXIT
scripts/release-archive.sh x86_64-unknown-linux-gnu "$linux"
scripts/release-archive.sh x86_64-pc-windows-gnu "$windows"
mkdir -p npm-bin/linux-x64 npm-bin/win32-x64
cp "$linux" "${linux%/vl}/vl-worker" npm-bin/linux-x64/
cp "$windows" "${windows%/vl.exe}/vl-worker.exe" npm-bin/win32-x64/
scripts/npm-pack.sh --from npm-bin
DRY_RUN=1 scripts/release-publish.sh "v$version"
