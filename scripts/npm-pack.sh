#!/usr/bin/env bash
# Builds the npm packages (SPEC §10, channel 1) into target/npm/:
#   vibelearn-<version>.tgz                 the launcher (npm/vibelearn/bin/vl.js), with one
#                                           optional dependency per OS/CPU; no install script
#   vibelearn-<platform>-<arch>-<version>.tgz  @vibelearn/<platform>-<arch>: the binaries (vl and
#                                           the vl-worker it runs the worker with), with "os"
#                                           and "cpu" so npm installs only the matching one
#
# Usage: scripts/npm-pack.sh [PLATFORM-ARCH=BINARY ... | --from DIR]
#   With no arguments, builds and packs what this machine can build: linux-x64 (cargo, profile
#   $PROFILE, default dist) and win32-x64 (Debian's toolchain, as scripts/windows-check.sh).
#   With arguments, packs the given binaries as they are (the release workflow passes the ones
#   each OS built; the tests pass their own debug build): each BINARY is a vl, and the vl-worker
#   beside it goes with it. --from DIR packs DIR/<platform-arch>/vl (or vl.exe) and its
#   vl-worker for each folder there (what scripts/release-build.sh leaves with NPM_KEY set).
# Packs with `npm pack` when npm is there; never publishes (the release workflow does).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PROFILE=${PROFILE:-dist}
OUT=$ROOT/target/npm
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
# Every OS/CPU the release builds (SPEC §10 targets), as npm names them.
ALL=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64)

declare -A BINARIES=()
if (($# == 0)); then
    echo "== npm-pack: building linux-x64 (profile $PROFILE)"
    cargo build --locked --profile "$PROFILE" --bin vl --bin vl-worker --quiet
    BINARIES[linux-x64]=$ROOT/target/$PROFILE/vl
    echo "== npm-pack: building win32-x64 (profile $PROFILE)"
    (
        export RUSTC=/usr/bin/rustc CARGO=/usr/bin/cargo PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1
        export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc CARGO_TARGET_DIR=$ROOT/target/windows
        /usr/bin/cargo build --locked --profile "$PROFILE" --target x86_64-pc-windows-gnu -Zbuild-std=std,panic_abort \
            --bin vl --bin vl-worker --quiet
    )
    BINARIES[win32-x64]=$ROOT/target/windows/x86_64-pc-windows-gnu/$PROFILE/vl.exe
elif [ "$1" = --from ]; then
    for dir in "${2:?--from needs a folder}"/*/; do
        key=$(basename "$dir")
        for exe in vl vl.exe; do
            [ -f "$dir$exe" ] && BINARIES[$key]=$(cd "$dir" && pwd)/$exe
        done
    done
else
    for pair in "$@"; do
        BINARIES[${pair%%=*}]=${pair#*=}
    done
fi

rm -rf "$OUT" && mkdir -p "$OUT/stage"
for key in "${!BINARIES[@]}"; do
    [[ " ${ALL[*]} " == *" $key "* ]] || { echo "unknown platform-arch $key (one of ${ALL[*]})" >&2; exit 2; }
    [ -f "${BINARIES[$key]}" ] || { echo "no binary at ${BINARIES[$key]}" >&2; exit 1; }
    worker=$(dirname "${BINARIES[$key]}")/vl-worker
    [[ "$key" == win32-* ]] && worker=$worker.exe
    [ -f "$worker" ] || { echo "no vl-worker beside ${BINARIES[$key]} (looked for $worker)" >&2; exit 1; }
done

# One package per OS/CPU that has a binary.
for key in "${!BINARIES[@]}"; do
    os=${key%-*} cpu=${key#*-}
    suffix=
    [ "$os" = win32 ] && suffix=.exe
    dir=$OUT/stage/$key
    mkdir -p "$dir/bin"
    cp "${BINARIES[$key]}" "$dir/bin/vl$suffix"
    cp "$(dirname "${BINARIES[$key]}")/vl-worker$suffix" "$dir/bin/vl-worker$suffix"
    chmod 755 "$dir/bin/vl$suffix" "$dir/bin/vl-worker$suffix"
    python3 - "$dir" "$key" "$os" "$cpu" "$VERSION" "$suffix" <<'PY'
import json, sys
dir, key, os_name, cpu, version, suffix = sys.argv[1:]
package = {
    "name": f"@vibelearn/{key}",
    "version": version,
    "description": f"The VibeLearn binaries (vl, vl-worker) for {os_name} {cpu} (installed by the vibelearn package)",
    "license": "MIT",
    "os": [os_name],
    "cpu": [cpu],
    "files": [f"bin/vl{suffix}", f"bin/vl-worker{suffix}"],
    "preferUnplugged": True,
}
json.dump(package, open(f"{dir}/package.json", "w"), indent=2)
PY
done

# The launcher package: an optional dependency on every OS/CPU, of this exact version.
dir=$OUT/stage/vibelearn
mkdir -p "$dir/bin"
cp npm/vibelearn/bin/vl.js "$dir/bin/vl.js"
chmod 755 "$dir/bin/vl.js"
python3 - "$dir" "$VERSION" "${ALL[@]}" <<'PY'
import json, sys
dir, version, *keys = sys.argv[1:]
package = {
    "name": "vibelearn",
    "version": version,
    "description": "Turns AI-assisted coding sessions into spaced-repetition learning material",
    "license": "MIT",
    "bin": {"vibelearn": "bin/vl.js", "vl": "bin/vl.js"},
    "files": ["bin/vl.js"],
    "engines": {"node": ">=18"},
    "optionalDependencies": {f"@vibelearn/{key}": version for key in keys},
}
json.dump(package, open(f"{dir}/package.json", "w"), indent=2)
PY

if command -v npm >/dev/null 2>&1; then
    for dir in "$OUT"/stage/*/; do
        (cd "$OUT" && npm pack --silent "$dir" >/dev/null)
    done
    ls -l "$OUT"/*.tgz
else
    echo "npm is not installed: the packages are staged in $OUT/stage, not packed" >&2
    exit 1
fi
