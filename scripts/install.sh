#!/bin/sh
# Installs VibeLearn from a release archive (SPEC §10, channel 2), for Linux and macOS:
# downloads vibelearn-<version>-<target>.tar.gz and its .sha256, checks the checksum, unpacks
# it in a temporary folder and runs `vl install <ARGS>` (default: claude-code), which copies vl
# and the vl-worker beside it to ~/.vibelearn/bin and registers the hooks. Nothing is left in
# the temporary folder.
#
#   curl -fsSL <release>/install.sh | sh                      # Claude Code
#   curl -fsSL <release>/install.sh | sh -s -- cursor         # Cursor
#
# VIBELEARN_RELEASE_URL: where the archives are (default: the latest GitHub release of
# VIBELEARN_REPO, vibelearn/vibelearn). VIBELEARN_VERSION: the version (default: read from
# the release's `version.txt`).
set -eu

repo=${VIBELEARN_REPO:-vibelearn/vibelearn}
base=${VIBELEARN_RELEASE_URL:-https://github.com/$repo/releases/latest/download}

fail() { echo "vibelearn install: $*" >&2; exit 1; }

case "$(uname -s)" in
    Linux) os=unknown-linux-gnu ;;
    Darwin) os=apple-darwin ;;
    *) fail "$(uname -s) is not supported by this script; on Windows use install.ps1" ;;
esac
case "$(uname -m)" in
    x86_64 | amd64) cpu=x86_64 ;;
    aarch64 | arm64) cpu=aarch64 ;;
    *) fail "no build for $(uname -m)" ;;
esac
target="$cpu-$os"

fetch() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL "$1" -o "$2"
    elif command -v wget >/dev/null 2>&1; then
        wget -q "$1" -O "$2"
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256() { # FILE -> hex digest
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=${VIBELEARN_VERSION:-}
if [ -z "$version" ]; then
    fetch "$base/version.txt" "$work/version.txt" || fail "cannot read $base/version.txt"
    version=$(tr -d ' \r\n' < "$work/version.txt")
fi
name="vibelearn-$version-$target"
fetch "$base/$name.tar.gz" "$work/$name.tar.gz" || fail "cannot download $base/$name.tar.gz"
fetch "$base/$name.tar.gz.sha256" "$work/$name.tar.gz.sha256" || fail "cannot download its checksum"
expected=$(cut -d' ' -f1 < "$work/$name.tar.gz.sha256")
actual=$(sha256 "$work/$name.tar.gz")
[ "$expected" = "$actual" ] || fail "$name.tar.gz does not match its checksum ($actual, expected $expected); nothing installed"
tar -xzf "$work/$name.tar.gz" -C "$work"
[ "$#" -gt 0 ] || set -- claude-code
"$work/$name/vl" install "$@"
