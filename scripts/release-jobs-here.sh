#!/usr/bin/env bash
# The release workflow's build jobs, run here as a runner runs them (SPEC §10): each step of
# .github/workflows/release.yml's `build` job, read from the file, with CI=true and the matrix
# entry's environment, in a fresh clone of HEAD (scripts/release-jobs/run.py). So the workflow
# that cannot run here is shown to pass as written: the dist build, the glibc floor check, the
# binary's demo, the test suite less what scripts/release-test-skips.txt leaves to CI, the
# archive and the npm copy.
#
# Usage: scripts/release-jobs-here.sh [linux] [windows]     (default: linux)
# linux: the x86_64-unknown-linux-gnu entry, with the machine's toolchain.
# windows: the windows entry, built for x86_64-pc-windows-gnu with Debian's toolchain and its
# tests run under wine (cargo's target runner), in the wine prefix scripts/windows-check.sh
# sets up (run it first; .ci/run does). MSVC itself cannot be had here.
# Build products go to target/release-jobs/ (reused by a second run); the clone to $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# The fresh clone lives outside this checkout: cargo would read this Cargo.toml above it.
WORK=${TMPDIR:-/tmp}/vibelearn-release-jobs
python3 -c 'import yaml' 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-yaml >/dev/null; }
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(linux)
for job in "${jobs[@]}"; do
    started=$SECONDS
    case "$job" in
        linux)
            CARGO_TARGET_DIR=$ROOT/target/release-jobs/linux python3 scripts/release-jobs/run.py linux "$WORK/linux-src"
            ;;
        windows)
            [ -f "$ROOT/target/wine/system.reg" ] || { echo "run scripts/windows-check.sh first (it makes the wine prefix)" >&2; exit 1; }
            RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo PATH="/usr/bin:$PATH:/usr/lib/wine" RUSTC_BOOTSTRAP=1 \
                CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
                CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine64 CARGO_FLAGS="-Zbuild-std=std,panic_abort" \
                CARGO_TARGET_DIR=$ROOT/target/windows WINEPREFIX=$ROOT/target/wine WINEDEBUG=-all \
                WINEDLLOVERRIDES="bcryptprimitives=n,b" RUST_TEST_THREADS=2 \
                python3 scripts/release-jobs/run.py windows "$WORK/windows-src"
            ;;
        *) echo "unknown job $job (linux, windows)" >&2; exit 2 ;;
    esac
    echo "release job $job took $((SECONDS - started)) s"
done
