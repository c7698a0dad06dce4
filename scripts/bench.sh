#!/usr/bin/env bash
# Benchmarks (not tests): gathers every measurement the issues name into one Markdown table,
# median of RUNS runs, with the machine it ran on; writes docs/PERFORMANCE.md and prints it.
#   scripts/bench.sh            RUNS=3 by default
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-3}"
# The `dist` profile (fat LTO): the build users install.
cargo build --profile dist --locked --features dev-tools --bins >/dev/null
L=target/dist/vl-load
VL=target/dist/vl
OUT=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$OUT"' EXIT

source scripts/free-port.sh

# start_worker SYNC -> sets WDIR, WPORT, WPID
start_worker() {
    WDIR=$(mktemp -d -p "$OUT"); WPORT=$(free_port)
    VIBELEARN_DATA_DIR="$WDIR" VIBELEARN_WORKER_PORT="$WPORT" VIBELEARN_PROVIDER=offline VIBELEARN_SYNCHRONOUS="$1" \
        "$VL" worker run >/dev/null 2>&1 &
    WPID=$!
    python3 - "$WPORT" <<'PY'
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/api/readiness", timeout=1); break
    except Exception: time.sleep(0.05)
PY
}
stop_worker() { kill "$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$WPID/status"; }

record() { echo "$1|$2" >> "$OUT/results"; }   # name|json

for run in $(seq "$RUNS"); do
    echo "run $run/$RUNS" >&2
    for sync in FULL NORMAL; do
        for p in 1 16 64; do record "enqueue_${sync}_$p" "$($L enqueue $p 20000 $sync)"; done
    done
    record noop "$($L noop 20000 4)"
    record latency "$($L latency 300)"
    record static "$($L static 5)"
    record stats "$($L stats 100000)"
    for sync in FULL NORMAL; do
        start_worker "$sync"
        sleep 0.5
        record "rss_idle_$sync" "{\"kb\": $(rss_kb)}"
        for c in 1 16 64; do
            VIBELEARN_DATA_DIR="$WDIR" $L http "$WPORT" "$c" 200 >/dev/null 2>&1   # warm the connections' first-use costs
            record "http_${sync}_$c" "$(VIBELEARN_DATA_DIR="$WDIR" $L http "$WPORT" "$c" 6000 2>/dev/null)"
        done
        record "rss_load_$sync" "{\"kb\": $(rss_kb)}"
        if [ "$sync" = FULL ]; then
            record pipeline "$(VIBELEARN_DATA_DIR="$WDIR" $L pipeline "$WPORT" 200)"
            record hook_up "$(VIBELEARN_DATA_DIR="$WDIR" $L hook 200 "$WPORT")"
        fi
        stop_worker
    done
    record hook_down "$($L hook 200 down)"
done

# Grounded questions (issue 16): deterministic (offline provider), so measured once per fixture session.
echo "grounding" >&2
$L grounding tests/fixtures/sessions/*.json > "$OUT/grounding.json"
# The catalogue's coverage (issue 31): deterministic too, once over every fixture session.
echo "coverage" >&2
$L coverage tests/fixtures/sessions/*.json > "$OUT/coverage.json"

python3 - "$OUT/results" "$OUT/grounding.json" "$OUT/coverage.json" <<'PY' > "$OUT/generated.md"
import json, os, platform, statistics, subprocess, sys
rows = {}
for line in open(sys.argv[1]):
    name, data = line.rstrip("\n").split("|", 1)
    rows.setdefault(name, []).append(json.loads(data))
def med(name, key):
    vals = [r[key] for r in rows.get(name, []) if key in r]
    return statistics.median(vals) if vals else float("nan")
def spread(name, key):
    """The run-to-run range of a throughput, shown after its median."""
    vals = [r[key] for r in rows.get(name, []) if key in r]
    return f" [{min(vals):,.0f}–{max(vals):,.0f}]" if len(vals) > 1 else ""
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
print("# Performance\n")
print(f"Measured by `scripts/bench.sh` (median of {len(rows.get('noop', []))} runs, [min–max] of the runs after throughputs) on {os.cpu_count()} × {cpu}, "
      f"{platform.system()} {platform.release()}, `{subprocess.run(['rustc', '--version'], capture_output=True, text=True).stdout.strip()}`.\n")
print("| measurement | result | target |")
print("|---|---|---|")
def row(what, value, target=""):
    print(f"| {what} | {value} | {target} |")
for sync in ["FULL", "NORMAL"]:
    for p in [1, 16, 64]:
        n = f"enqueue_{sync}_{p}"
        row(f"durable in-process enqueue, {p} producers, synchronous={sync}", f"{med(n,'per_sec'):,.0f}/s{spread(n,'per_sec')} (p50 {med(n,'p50_ms'):.2f} ms, p99 {med(n,'p99_ms'):.2f} ms)", "≥ 10,000/s at 64" if p == 64 and sync == "FULL" else "")
row("no-op jobs end to end (4 threads, no lanes, batch 32)", f"{med('noop','committed_per_sec'):,.0f}/s{spread('noop','committed_per_sec')}", "≥ 10,000/s")
row("enqueue → start latency, light load", f"p50 {med('latency','p50_ms'):.2f} ms, p99 {med('latency','p99_ms'):.2f} ms", "p50 ≤ 1 ms, p99 ≤ 5 ms")
for sync in ["FULL", "NORMAL"]:
    for c in [1, 16, 64]:
        n = f"http_{sync}_{c}"
        row(f"HTTP observation POSTs, {c} keep-alive connections, {sync}", f"{med(n,'per_sec'):,.0f}/s{spread(n,'per_sec')} (p50 {med(n,'p50_ms'):.1f} ms, p99 {med(n,'p99_ms'):.1f} ms, max {med(n,'max_ms'):.0f} ms)", "≥ 3,000/s, p99 ≤ 20 ms at 16 (FULL)" if c == 16 and sync == "FULL" else "")
row("worker RSS idle", f"{med('rss_idle_FULL','kb')/1024:.1f} MB", "≤ 15 MB")
row("worker RSS after HTTP load", f"{max(med('rss_load_FULL','kb'), med('rss_load_NORMAL','kb'))/1024:.1f} MB", "≤ 40 MB")
row("hook `vl hook claude-code observation`, worker up", f"p50 {med('hook_up','p50_ms'):.1f} ms, p99 {med('hook_up','p99_ms'):.1f} ms", "p50 ≤ 5 ms, p99 ≤ 20 ms")
row("hook, worker down (direct enqueue)", f"p50 {med('hook_down','p50_ms'):.1f} ms, p99 {med('hook_down','p99_ms'):.1f} ms", "p50 ≤ 30 ms")
row("`GET /api/jobs/stats` query at 100,000 jobs (best of 7)", f"{med('stats','best_ms'):.2f} ms", "≤ 5 ms")
row("static analysis throughput", f"{med('static','lines_per_sec'):,.0f} lines/s ({med('static','mb_per_sec'):.1f} MB/s)", "")
row("200-event session: stack + static steps", f"{med('pipeline','stack_plus_static_ms'):.0f} ms", "< 200 ms")
row("200-event session: whole pipeline (offline provider)", f"{med('pipeline','pipeline_ms'):.0f} ms", "")
print("\n## Grounded questions\n")
print("Each fixture session in `tests/fixtures/sessions` through the offline pipeline: the questions whose code")
print("is verified to come from the session's files (a quote, a blank its answer restores, a mutation whose")
print("reversal restores the file), as `GET /api/vibelearn/sessions/:id/summary` reports them.\n")
print("| session | questions | grounded | share | quote / blank / mutation | question types | target |")
print("|---|---|---|---|---|---|---|")
for s in json.load(open(sys.argv[2]))["sessions"]:
    if "error" in s:
        print(f"| {s['session']} | error: {s['error']} | | | | | |")
        continue
    k = s["by_kind"]
    share = f"{s['share'] * 100:.0f} %" if s["share"] is not None else "—"
    print(f"| {s['session']} | {s['questions']} | {s['grounded']} | {share} | {k['quote']} / {k['blank']} / {k['mutation']} | {s['types']} | ≥ 90 % grounded |")
print("\n## Catalogue coverage\n")
print("The static signals found in each fixture session's files, and how many map to a concept of the")
print("offline catalogue (`vl-load coverage`); the unmapped ones by pattern type.\n")
print("| session | signals | mapped | share | unmapped |")
print("|---|---|---|---|---|")
cov = json.load(open(sys.argv[3]))
for s in cov["sessions"] + [dict(cov["total"], session="all sessions")]:
    if "error" in s:
        print(f"| {s['session']} | error: {s['error']} | | | |")
        continue
    share = f"{s['share'] * 100:.0f} %" if s["share"] is not None else "—"
    unmapped = ", ".join(f"{k} {v}" for k, v in s["unmapped"].items()) or "—"
    print(f"| {s['session']} | {s['signals']} | {s['mapped']} | {share} | {unmapped} |")
PY

# docs/PERFORMANCE.md: the tables above replace everything before the marker line; the prose
# after it (how these are measured, what they depend on) is kept.
python3 - "$OUT/generated.md" docs/PERFORMANCE.md <<'PY'
import sys
marker = "<!-- Everything above is written by scripts/bench.sh; what follows is kept. -->"
generated = open(sys.argv[1], encoding="utf-8").read().rstrip("\n")
try:
    old = open(sys.argv[2], encoding="utf-8").read()
except FileNotFoundError:
    old = ""
kept = old.split(marker, 1)[1] if marker in old else ""
open(sys.argv[2], "w", encoding="utf-8").write(f"{generated}\n\n{marker}\n{kept.lstrip(chr(10))}")
PY
cat "$OUT/generated.md"
