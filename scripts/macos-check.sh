#!/usr/bin/env bash
# macOS without a Mac (SPEC §10): `cargo check` of the binaries and the tests for both Apple
# targets, with Debian's toolchain and std rebuilt from its sources (-Zbuild-std), as
# scripts/windows-check.sh does for Windows. Nothing links, so no SDK is needed: the C that ring
# and bundled SQLite compile goes to a stand-in compiler (scripts/macos/cc-stand-in). What this
# cannot show (a link, a run) the release workflow's macOS jobs do on real Macs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
started=$SECONDS

missing=()
for package in rustc-web cargo-web rust-web-src; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

export RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=$ROOT/target/macos SDKROOT=/nonexistent-sdk
for target in aarch64-apple-darwin x86_64-apple-darwin; do
    var=${target//-/_}
    export "CC_$var=$ROOT/scripts/macos/cc-stand-in" "AR_$var=ar"
    echo "== macos-check: cargo check --target $target (at $((SECONDS - started)) s)"
    /usr/bin/cargo check --locked --target "$target" -Zbuild-std=std,panic_abort --bins --tests --all-features --quiet
done
echo "== macos-check: both Apple targets check clean (at $((SECONDS - started)) s)"
