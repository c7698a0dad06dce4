#!/usr/bin/env bash
# Runs issue 40's corpus (tests/fixtures/corpus) in each ecosystem's real toolchain, where this
# machine has it: for every session, the project as it was when the recorded command failed must
# fail, each line of the recorded error that names the failure must appear in the real output, and
# the project after the fix must pass. A developer's check, not a CI step (it needs Go ≥ 1.22,
# pytest, Node with vitest, Ruby with RSpec, a JDK with JUnit 5's console launcher, cargo);
# a session whose toolchain is missing is reported as "not run", never as passed.
#
# Usage: scripts/corpus-check.sh [session-name ...]     (default: every session)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node_tools=${CORPUS_NODE_MODULES:-}   # a node_modules with vitest@1 and typescript@5

run_in() { # session dir -> the command's output, exit status kept
    local name=$1 dir=$2
    case $name in
        go-*) (cd "$dir" && GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod go vet ./... && GOTOOLCHAIN=local GOPROXY=off go test ./...) ;;
        python-*) (cd "$dir" && COLUMNS=120 python3 -m pytest -q -p no:cacheprovider) ;;
        typescript-*) (cd "$dir" && ln -sfn "$node_tools" node_modules \
            && node_modules/.bin/tsc --noEmit --skipLibCheck -p . && node_modules/.bin/vitest run) ;;
        ruby-*) (cd "$dir" && ruby -r"$root/scripts/corpus/data_polyfill.rb" -S rspec --order defined) ;;
        java-*) (cd "$dir" && rm -rf out && javac -d out -cp "$JUNIT_CP" $(find src -name '*.java') \
            && java -jar "$JUNIT_CONSOLE" -cp "out:$JUNIT_CP" --scan-classpath --disable-banner --details=tree) ;;
        rust-*) (cd "$dir" && CARGO_TARGET_DIR="$work/rust-target" cargo test --offline --quiet) ;;
        *) return 127 ;;
    esac
}

has_tool() {
    case $1 in
        go-*) command -v go >/dev/null && go version | grep -qE 'go1\.(2[2-9]|[3-9][0-9])' ;;
        python-*) python3 -c 'import pytest' 2>/dev/null ;;
        typescript-*) [ -x "$node_tools/.bin/vitest" ] ;;
        ruby-*) command -v rspec >/dev/null ;;
        java-*) [ -f "${JUNIT_CONSOLE:=/usr/share/java/junit-platform-console-standalone.jar}" ] && command -v javac >/dev/null \
            && JUNIT_CP=${JUNIT_CP:-/usr/share/java/junit-jupiter-params.jar} ;;
        rust-*) command -v cargo >/dev/null ;;
        *) return 1 ;;
    esac
}

# The lines of a recorded error that say what failed (assertions, diffs, error codes), which a
# real run must print too; the rest (timings, paths, banners, Maven's own framing: the JUnit
# console launcher runs the Java tests here) differs from machine to machine.
telling_lines() {
    grep -E 'want|expected|got:|Error|error\[|FAIL|--- FAIL|assert|Failure' "$1" \
        | grep -vE '^\[(INFO|ERROR)\]|Time elapsed|Duration|Start at|[0-9.]+s\)?$|^\s+at |[0-9]+ms|/home/|^FAIL\s*$|→' \
        | sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' | sort -u
}

sessions=("$@")
[ ${#sessions[@]} -gt 0 ] || mapfile -t sessions < <(ls tests/fixtures/corpus | grep -v baseline | sed 's/\.json$//')
status=0
for name in "${sessions[@]}"; do
    if ! has_tool "$name"; then echo "$name: not run (toolchain missing)"; continue; fi
    dir="$work/$name"
    python3 scripts/corpus/replay.py "tests/fixtures/corpus/$name.json" "$dir"
    before=$(run_in "$name" "$dir/before" 2>&1); before_rc=$?
    after=$(run_in "$name" "$dir/after" 2>&1); after_rc=$?
    missing=$(telling_lines "$dir/error.txt" | while IFS= read -r line; do
        grep -qF -- "$line" <<<"$before" || echo "    $line"; done)
    if [ $before_rc -ne 0 ] && [ $after_rc -eq 0 ] && [ -z "$missing" ]; then
        echo "$name: real (fails as recorded, passes after the fix)"
    else
        status=1
        echo "$name: DIFFERS (before exit $before_rc, after exit $after_rc)"
        [ -n "$missing" ] && printf '  recorded but not printed:\n%s\n' "$missing"
        [ $after_rc -ne 0 ] && printf '  after the fix:\n%s\n' "$(tail -20 <<<"$after")"
    fi
done
exit $status
