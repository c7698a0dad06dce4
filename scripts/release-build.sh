#!/usr/bin/env bash
# One release target, on its own OS (the release workflow's build jobs; SPEC §10): builds `vl`
# and `vl-worker` (which runs the worker and the demo for it, src/executables.rs) with the `dist`
# profile, checks and runs them, runs the test suite natively (unless SKIP_TESTS=1) less the
# tests scripts/release-test-skips.txt leaves to CI, and archives the two with
# scripts/release-archive.sh into dist/.
#
# Linux (`*-linux-gnu`): built with cargo-zigbuild against glibc GLIBC_FLOOR (default 2.17), zig
# from the `ziglang` PyPI package, both installed here if missing; scripts/check-glibc.sh then
# refuses a binary that needs a newer glibc (each of the two).
#
# Usage: scripts/release-build.sh TARGET            e.g. x86_64-unknown-linux-gnu
# Environment: PROFILE (default dist), SKIP_TESTS=1, NPM_KEY (npm's <platform>-<arch> for this
# target: the two binaries are also copied to npm-bin/NPM_KEY/ for `scripts/npm-pack.sh --from
# npm-bin`), CARGO_FLAGS (more flags for cargo, e.g. -Zbuild-std for the Windows build under
# wine), GLIBC_FLOOR, BINARY_RUNNER (what runs the built binary for its --version and demo on a
# machine of another CPU, e.g. qemu-aarch64; wine64 is taken for a Windows target on Linux),
# RETRY_FAILED_ALONE=1 (a failed test is run again alone and counts only if it fails alone too:
# for the run under wine here).
# scripts/release-jobs-here.sh runs the workflow's build jobs with it here.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/release-build.sh TARGET}
profile=${PROFILE:-dist}
out_dir=$profile
[ "$profile" = dev ] && out_dir=debug
suffix=
[[ "$target" == *windows* ]] && suffix=.exe
exe=vl$suffix worker_exe=vl-worker$suffix
read -r -a extra <<<"${CARGO_FLAGS:-}"
target_dir=${CARGO_TARGET_DIR:-target}
started=$SECONDS
step() { echo "== release-build $target: $* (at $((SECONDS - started)) s)"; }

if [ -z "${CARGO_FLAGS:-}" ] && command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target"
fi
build=(cargo build)
build_target=$target
if [[ "$target" == *-linux-gnu ]]; then
    floor=${GLIBC_FLOOR:-2.17}
    python3 -m ziglang version >/dev/null 2>&1 || python3 -m pip install --quiet ziglang \
        || python3 -m pip install --quiet --break-system-packages ziglang
    command -v cargo-zigbuild >/dev/null || cargo install --locked --quiet cargo-zigbuild
    build=(cargo zigbuild)
    build_target=$target.$floor
fi
step "building vl and vl-worker ($profile)"
"${build[@]}" --locked --profile "$profile" --target "$build_target" --bin vl --bin vl-worker "${extra[@]}"
binary=$target_dir/$target/$out_dir/$exe
worker=$target_dir/$target/$out_dir/$worker_exe
if [[ "$target" == *-linux-gnu ]]; then
    scripts/check-glibc.sh "$binary" "$floor"
    scripts/check-glibc.sh "$worker" "$floor"
fi
# The binaries run: their version, and the demo (vl hands it to vl-worker) in a throwaway data
# dir (no network, no key).
runner=()
[[ "$target" == *windows* && "$(uname -s)" == Linux ]] && runner=(wine64)
[ -n "${BINARY_RUNNER:-}" ] && read -r -a runner <<<"$BINARY_RUNNER"
"${runner[@]}" "$binary" --version
"${runner[@]}" "$worker" --version
# Under a foreign-CPU runner (qemu-user without binfmt_misc, as scripts/release-jobs-here.sh
# runs aarch64) vl's exec of vl-worker goes to this machine's kernel, which cannot run it; there
# the demo is run by vl-worker itself (the same command line, src/executables.rs). A native run
# keeps the hand-over from vl.
demo_binary=$binary
[ -n "${BINARY_RUNNER:-}" ] && demo_binary=$worker
demo_dir=$(mktemp -d)
VIBELEARN_DATA_DIR=$demo_dir VIBELEARN_PROVIDER=offline "${runner[@]}" "$demo_binary" demo >/dev/null
rm -rf "$demo_dir"
if [ "${SKIP_TESTS:-}" != 1 ]; then
    skips=()
    while IFS= read -r line; do
        case "$line" in
            '#'* | '') ;;
            windows:*) [[ "$target" == *windows* ]] && skips+=(--skip "${line#windows: }") ;;
            *) skips+=(--skip "$line") ;;
        esac
    done <scripts/release-test-skips.txt
    step "tests, less those left to CI: ${skips[*]}"
    if [ "${RETRY_FAILED_ALONE:-}" != 1 ]; then
        cargo test --locked --target "$target" "${extra[@]}" -- "${skips[@]}"
    else
        # Under wine (scripts/release-jobs-here.sh windows only): a process start costs ~0.15 s
        # and, with tests running at once, can fail outright (CreateProcess's "Internal error",
        # 1359, seen here). As in windows-check.sh, a failed test is run again alone and counts
        # only if it fails alone too; a run that reports no result, or fewer names than
        # failures, fails.
        log=$(mktemp)
        cargo test --locked --no-fail-fast --target "$target" "${extra[@]}" -- "${skips[@]}" 2>&1 | tee "$log" || true
        # Every test binary started reports a result (one that crashed does not).
        started=$(grep -cE '^ +(Running|Doc-tests) ' "$log" || true)
        reported=$(grep -c '^test result: ' "$log" || true)
        [ "$started" -gt 0 ] && [ "$started" -eq "$reported" ] \
            || { echo "$started test binaries started, $reported reported a result" >&2; exit 1; }
        source scripts/failed-tests.sh
        names=$(failed_tests "$log") || exit 1
        mapfile -t failed < <(printf '%s' "$names")
        rm -f "$log"
        for name in "${failed[@]}"; do
            step "running $name again, alone"
            alone=$(cargo test --locked --target "$target" "${extra[@]}" -- --exact "$name" --test-threads 1 2>&1) || true
            echo "$alone"
            grep -q '^test result: ok. 1 passed' <<<"$alone" || { echo "$name fails alone too" >&2; exit 1; }
        done
    fi
fi
scripts/release-archive.sh "$target" "$binary"
if [ -n "${NPM_KEY:-}" ]; then
    mkdir -p "npm-bin/$NPM_KEY"
    cp "$binary" "npm-bin/$NPM_KEY/$exe"
    cp "$worker" "npm-bin/$NPM_KEY/$worker_exe"
fi
step "done"
