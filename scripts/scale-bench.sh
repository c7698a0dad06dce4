#!/usr/bin/env bash
# The scale benchmark's reads half (issue 43 §6; docs/PERFORMANCE.md "Reads at scale"): a
# learner's history grown to 1 / 50 / 300 / 1,000 analysed sessions (`vl-load history`: ~15
# questions a session, 5 sessions and up to 100 answers a simulated day, the last day today),
# then the reads a learner pays for on every message or command, each the median of RUNS runs:
# `vl statusline` (scoped to a project, and from a directory that is no project), `vl status`,
# `vl gaps`, `vl quiz next --json`, the SessionStart hook with the worker up as in daily use
# (`vl hook claude-code session-start`: the worker's proof and the due count; whole processes,
# start to exit), and the dashboard's
# overview and profile reads in process (`vl-load reads`: the routes' functions; the HTTP
# handler around them is a few lines).
# Usage: scripts/scale-bench.sh [SIZES] [RUNS]   e.g. scripts/scale-bench.sh "1 50 300 1000" 11
#        scripts/scale-bench.sh sessions [FILE-COUNTS] [RUNS]   (the session-size half, below)
# Release build (`cargo build --release --features dev-tools`) unless PROFILE=debug, or the
# binaries in BIN=<dir> as they are (vl, vl-load; another commit's, for a before/after table).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES="${1:-1 50 300 1000}"
RUNS="${2:-11}"
PROFILE="${PROFILE:-release}"
if [ -n "${BIN:-}" ]; then
    # Binaries built elsewhere (another commit's, for a before/after table): used as they are.
    [ -x "$BIN/vl" ] && [ -x "$BIN/vl-load" ] || { echo "BIN=$BIN holds no vl and vl-load" >&2; exit 1; }
elif [ "$PROFILE" = release ]; then
    cargo build --locked --release --features dev-tools --bins >&2
    BIN=target/release
else
    cargo build --locked --features dev-tools --bins >&2
    BIN=target/debug
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export VIBELEARN_PROVIDER=offline

# The session-size half (issue 43 §4, §6; docs/PERFORMANCE.md "Sessions at scale"):
# `scripts/scale-bench.sh sessions ["5 50 200 1000 3000"] [RUNS]`. Each size is a session of that
# many written files through the real hooks into a fresh worker (`vl-load session-size`):
# the time each analysis job ran, Stop→done, the hooks' p50 and the worker's peak RSS.
sessions_bench() {
    python3 - "$BIN/vl-load" "$2" $1 <<'PY'
import json, statistics, subprocess, sys
load, runs, sizes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"Medians of {runs} runs a size (a fresh worker and data dir each run).\n")
print("| files | static patterns | questions | hook p50 | stack | static | concepts | quiz | quiz per file | Stop→done | worker peak RSS |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    results = [json.loads(subprocess.run([load, "session-size", n], capture_output=True, text=True).stdout) for _ in range(runs)]
    for r in results:
        if not r["succeeded"]:
            print(f"session of {n} files: not every step succeeded: {r}", file=sys.stderr)
    m = lambda key: statistics.median(r[key] for r in results)
    print(f"| {int(n):,} | {results[0]['patterns']:,} | {results[0]['questions']} | {m('hook_p50_ms'):.1f} ms | {m('stack_ms'):.0f} ms "
          f"| {m('static_ms'):.0f} ms | {m('concepts_ms'):.0f} ms | {m('quiz_ms'):.0f} ms | {m('quiz_ms') * 1000 / int(n):.0f} µs "
          f"| {m('stop_to_done_ms'):.0f} ms | {m('peak_rss_mb'):.1f} MB |")
PY
}
if [ "${1:-}" = sessions ]; then
    sessions_bench "${2:-5 50 200 1000 3000}" "${3:-3}"
    exit 0
fi

# "WALL CPU": the medians in ms of RUNS runs of "$@" with stdin from $INPUT (or nothing), wall
# time and the process's CPU time (user + system, from the kernel's accounting: on a shared,
# loaded machine the wall time is mostly waiting for a core; the CPU time is the cost).
median_ms() {
    python3 - "$RUNS" "${INPUT:-/dev/null}" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
runs, stdin, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
wall, cpu = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stdin, "rb") as f:
        subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall.append((time.perf_counter() - start) * 1000)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
print(f"{statistics.median(wall):.1f} {statistics.median(cpu):.1f}")
PY
}
# "WALL (CPU)" of one median_ms result.
both() { read -r w c <<<"$1"; printf '%s (%s)' "$w" "$c"; }

echo "{\"cwd\":\"/home/dev/work/project-0\"}" >"$WORK/here.json"
echo "{\"cwd\":\"/tmp/not-a-project\"}" >"$WORK/elsewhere.json"
# No session id: the hook says what is due and records no session in the history it measures.
echo "{\"cwd\":\"/home/dev/work/project-0\",\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}" >"$WORK/start.json"
source scripts/free-port.sh
# The SessionStart hook with a worker up on the history: "WALL CPU" as median_ms prints it.
session_start_ms() {
    local port pid
    port=$(free_port)
    VIBELEARN_WORKER_PORT=$port "$BIN/vl" worker start >/dev/null 2>&1
    VIBELEARN_WORKER_PORT=$port INPUT="$WORK/start.json" median_ms "$BIN/vl" hook claude-code session-start
    VIBELEARN_WORKER_PORT=$port "$BIN/vl" worker stop >/dev/null 2>&1 || true
}
printf 'Milliseconds, median of %s runs: wall (CPU). `vl --version` is the process floor.\n\n' "$RUNS"
printf '| sessions | questions | answers | statusline (project / elsewhere) | vl status | vl gaps | vl quiz next --json | SessionStart (worker up) | overview / profile (in process) | vl --version | database |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
for n in $SIZES; do
    dir="$WORK/h$n"
    grown=$("$BIN/vl-load" history "$dir" "$n")
    export VIBELEARN_DATA_DIR="$dir"
    # One untimed read first, so every size starts from a warm page cache.
    "$BIN/vl" status >/dev/null 2>&1 || true
    here=$(both "$(INPUT="$WORK/here.json" median_ms "$BIN/vl" statusline)")
    elsewhere=$(both "$(INPUT="$WORK/elsewhere.json" median_ms "$BIN/vl" statusline)")
    status=$(both "$(median_ms "$BIN/vl" status)")
    gaps=$(both "$(median_ms "$BIN/vl" gaps)")
    next=$(both "$(median_ms "$BIN/vl" quiz next --json)")
    start=$(both "$(session_start_ms)")
    floor=$(both "$(median_ms "$BIN/vl" --version)")
    reads=$("$BIN/vl-load" reads "$dir" "$RUNS")
    field() { sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p" <<<"$1"; }
    ms() { printf '%.1f (%.1f)' "$(field "$reads" "${1}_ms")" "$(field "$reads" "${1}_cpu_ms")"; }
    overview=$(ms overview)
    profile=$(ms profile)
    bytes=$(du -sk "$dir" | cut -f1)
    printf '| %s | %s | %s | %s / %s | %s | %s | %s | %s | %s / %s | %s | %s MB |\n' \
        "$n" "$(field "$grown" questions)" "$(field "$grown" answers)" "$here" "$elsewhere" "$status" "$gaps" \
        "$next" "$start" "$overview" "$profile" "$floor" "$(( bytes / 1024 ))"
done
