#!/usr/bin/env bash
# The release workflow's build jobs, run here as a runner runs them (SPEC §10): each step of
# .github/workflows/release.yml's `build` job, read from the file, with CI=true and the matrix
# entry's environment, in a fresh clone of HEAD (scripts/release-jobs/run.py). So the workflow
# that cannot run here is shown to pass as written: the dist build, the glibc floor check, the
# binary's demo, the test suite less what scripts/release-test-skips.txt leaves to CI, the
# archive and the npm copy.
#
# Usage: scripts/release-jobs-here.sh [linux] [windows] [linux-arm64]     (default: linux)
# linux: the x86_64-unknown-linux-gnu entry, with the machine's toolchain.
# windows: the windows entry, built for x86_64-pc-windows-gnu with Debian's toolchain and its
# tests run under wine (cargo's target runner), in the wine prefix and the build dir
# (target/windows) scripts/windows-check.sh sets up: run it first, as .ci/run does. A test that
# fails under wine is run again alone (RETRY_FAILED_ALONE, as windows-check does). Only the
# crate itself is compiled again (the clone is another path), and the dist profile's
# dependencies the first time. MSVC itself cannot be had here.
# linux-arm64: the aarch64-unknown-linux-gnu entry, with Debian's rustc-web and std rebuilt
# from rust-web-src (-Zbuild-std; rustup's toolchain has no aarch64 std and cannot fetch one),
# linked by zig against glibc 2.17, checked, and its --version and demo run under qemu-user;
# then the unit tests, built for aarch64, under qemu-user. The integration tests are left to
# the arm64 runner (below). .ci/run runs this entry (docs/PLATFORMS.md has what it costs).
# Build products go to target/release-jobs/ (reused by a second run); the clone to $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# The fresh clone lives outside this checkout: cargo would read this Cargo.toml above it.
WORK=${TMPDIR:-/tmp}/vibelearn-release-jobs
python3 -c 'import yaml' 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-yaml >/dev/null; }
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(linux)

# Debian's toolchain (rustc-web, its std sources), for the entries built with -Zbuild-std.
debian_toolchain() {
    local missing=()
    for package in rustc-web cargo-web rust-web-src "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' || missing+=("$package")
    done
    if ((${#missing[@]})); then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

for job in "${jobs[@]}"; do
    started=$SECONDS
    case "$job" in
        linux)
            CARGO_TARGET_DIR=$ROOT/target/release-jobs/linux python3 scripts/release-jobs/run.py linux "$WORK/linux-src"
            ;;
        windows)
            [ -f "$ROOT/target/wine/system.reg" ] || { echo "run scripts/windows-check.sh first (it makes the wine prefix)" >&2; exit 1; }
            export WINEPREFIX=$ROOT/target/wine WINEDEBUG=-all WINEDLLOVERRIDES="bcryptprimitives=n,b"
            export PATH="$PATH:/usr/lib/wine"  # wineserver lives there
            # As in windows-check.sh: wineserver started with no pipes of ours (else the first
            # wine process starts it holding this script's stdout and stderr), stopped at the end.
            wineserver -k </dev/null >/dev/null 2>&1 || true
            wineserver -w </dev/null >/dev/null 2>&1 || true
            wineserver -p </dev/null >/dev/null 2>&1
            trap 'wineserver -k </dev/null >/dev/null 2>&1 || true' EXIT
            RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 \
                CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
                CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine64 CARGO_FLAGS="-Zbuild-std=std,panic_abort" \
                CARGO_TARGET_DIR=$ROOT/target/windows RUST_TEST_THREADS=2 RETRY_FAILED_ALONE=1 \
                python3 scripts/release-jobs/run.py windows "$WORK/windows-src"
            ;;
        linux-arm64)
            debian_toolchain qemu-user libc6-arm64-cross
            qemu="qemu-aarch64 -L /usr/aarch64-linux-gnu"
            arm64=(RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1
                CARGO_TARGET_DIR="$ROOT/target/release-jobs/linux-arm64")
            env "${arm64[@]}" CARGO_FLAGS="-Zbuild-std=std,panic_abort" SKIP_TESTS=1 BINARY_RUNNER="$qemu" \
                python3 scripts/release-jobs/run.py linux-arm64 "$WORK/linux-arm64-src"
            # Then the crate's unit tests, built for aarch64 and run under qemu-user, in the
            # job's clone. Not the integration tests: they start `vl` as a child process, which
            # an x86_64 kernel runs only with qemu registered in binfmt_misc, and under
            # emulation their timeouts would be the test. Skipped: the three tests that bound
            # the wall time of a large input at native speed, to catch a quadratic scan (10 s or
            # 20 s for 3 to 10 MB; 24 to 44 s under qemu's debug build).
            echo "== linux-arm64: the unit tests under qemu-user"
            (cd "$WORK/linux-arm64-src" && env "${arm64[@]}" CI=true \
                CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$qemu" \
                cargo-zigbuild test --locked --target aarch64-unknown-linux-gnu.2.17 -Zbuild-std=std,panic_abort --lib \
                -- --skip static_rules::tests::large_input_is_linear \
                --skip static_rules::tests::long_minified_line_is_fast_and_snippet_is_cut \
                --skip privacy::tests::large_input_with_many_tags_is_linear)
            ;;
        *) echo "unknown job $job (linux, windows, linux-arm64)" >&2; exit 2 ;;
    esac
    echo "release job $job took $((SECONDS - started)) s"
done
