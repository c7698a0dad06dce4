#!/usr/bin/env bash
# The scale benchmark's reads half (issue 43 §6; docs/PERFORMANCE.md "Reads at scale"): a
# learner's history grown to 1 / 50 / 300 / 1,000 analysed sessions (`vl-load history`: ~15
# questions a session, 5 sessions and up to 100 answers a simulated day, the last day today),
# then the reads a learner pays for on every message or command, each the median of RUNS runs:
# `vl statusline` (scoped to a project, and from a directory that is no project), `vl status`,
# `vl gaps`, `vl quiz next --json` (whole processes, start to exit), and the dashboard's
# overview and profile reads in process (`vl-load reads`: the routes' functions; the HTTP
# handler around them is a few lines).
# Usage: scripts/scale-bench.sh [SIZES] [RUNS]   e.g. scripts/scale-bench.sh "1 50 300 1000" 11
# Release build (`cargo build --release --features dev-tools`) unless PROFILE=debug.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES="${1:-1 50 300 1000}"
RUNS="${2:-11}"
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = release ]; then
    cargo build --locked --release --features dev-tools --bins >&2
    BIN=target/release
else
    cargo build --locked --features dev-tools --bins >&2
    BIN=target/debug
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export VIBELEARN_PROVIDER=offline

# The median wall time in ms of RUNS runs of "$@" with stdin from $INPUT (or nothing).
median_ms() {
    local times=()
    for _ in $(seq "$RUNS"); do
        local start end
        start=$(date +%s%N)
        "$@" <"${INPUT:-/dev/null}" >/dev/null 2>&1 || true
        end=$(date +%s%N)
        times+=("$(( (end - start) / 1000 ))")
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

echo "{\"cwd\":\"/home/dev/work/project-0\"}" >"$WORK/here.json"
echo "{\"cwd\":\"/tmp/not-a-project\"}" >"$WORK/elsewhere.json"
printf '| sessions | questions | answers | statusline (project / elsewhere) | vl status | vl gaps | vl quiz next --json | overview / profile (in process) | database |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for n in $SIZES; do
    dir="$WORK/h$n"
    grown=$("$BIN/vl-load" history "$dir" "$n")
    export VIBELEARN_DATA_DIR="$dir"
    # One untimed read first, so every size starts from a warm page cache.
    "$BIN/vl" status >/dev/null 2>&1 || true
    here=$(INPUT="$WORK/here.json" median_ms "$BIN/vl" statusline)
    elsewhere=$(INPUT="$WORK/elsewhere.json" median_ms "$BIN/vl" statusline)
    status=$(median_ms "$BIN/vl" status)
    gaps=$(median_ms "$BIN/vl" gaps)
    next=$(median_ms "$BIN/vl" quiz next --json)
    reads=$("$BIN/vl-load" reads "$dir" "$RUNS")
    field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1"; }
    overview=$(printf '%.1f' "$(field "$reads" overview_ms)")
    profile=$(printf '%.1f' "$(field "$reads" profile_ms)")
    bytes=$(du -sk "$dir" | cut -f1)
    printf '| %s | %s | %s | %s / %s ms | %s ms | %s ms | %s ms | %s / %s ms | %s MB |\n' \
        "$n" "$(field "$grown" questions)" "$(field "$grown" answers)" "$here" "$elsewhere" "$status" "$gaps" \
        "$next" "$overview" "$profile" "$(( bytes / 1024 ))"
done
