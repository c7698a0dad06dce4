#!/usr/bin/env bash
# The fault suite (issue 9): each scenario runs a real worker under load through one fault,
# then prints what was acknowledged / stored / executed / duplicated / lost, whether
# /api/health kept answering, and the scenario's own checks (did the fault happen, did the
# worker recover). A scenario passes with lost = 0, duplicated = 0, every health probe
# answered and every check true; the script exits non-zero if any scenario fails.
#   disk-full     the data dir on a 4 MB tmpfs, filled, then grown
#   write-lock    a second process holds the write lock past the busy timeout
#   read-only     chattr +i on the database and its WAL (on a loop-mounted ext4: tmpfs ignores
#                 the flag for open descriptors), then -i
#   clock-jump    the worker's wall clock (libfaketime) jumps -1 h and +1 h
#   llm-upstream  fake LLM and upstream servers cycling through every failure
# Needs root (mount, chattr); without it, says so and exits 0 having run nothing.
#   scripts/fault-suite.sh [SCENARIO…]          (PROFILE=debug to reuse a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = release ]; then cargo build --release --locked --features dev-tools --bins >/dev/null; else cargo build --locked --features dev-tools --bins >/dev/null; fi
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(disk-full write-lock read-only clock-jump llm-upstream)

# libfaketime for clock-jump (preloaded into the worker only).
find_faketime() { dpkg -L libfaketime 2>/dev/null | grep '/libfaketime\.so\.1$' | head -n1; }
FAKETIME_LIB=$(find_faketime || true)
if [ -z "$FAKETIME_LIB" ] && [[ " ${scenarios[*]} " == *" clock-jump "* ]]; then
    apt-get install -y libfaketime >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y libfaketime >/dev/null 2>&1; } || true
    FAKETIME_LIB=$(find_faketime || true)
    [ -z "$FAKETIME_LIB" ] && echo "note: libfaketime could not be installed; clock-jump will be skipped"
fi
export FAKETIME_LIB

# Mounts a fresh file system for SCENARIO on DIR; prints the loop image to remove, if any.
# Besides disk-full's 4 MB, 512 MB: the load writes a few KiB per event at thousands of events
# a second, and only the scenario's own fault may happen (64 MB filled up mid-run).
mount_for() {
    local scenario=$1 dir=$2
    case "$scenario" in
        disk-full) mount -t tmpfs -o size=4m tmpfs "$dir" ;;
        read-only)
            local image; image=$(mktemp /var/tmp/vl-fault-ext4.XXXXXX)
            truncate -s 512M "$image" && mkfs.ext4 -q -F "$image" && mount -o loop "$image" "$dir" || { rm -f "$image"; return 1; }
            echo "$image" ;;
        *) mount -t tmpfs -o size=512m tmpfs "$dir" ;;
    esac
}

status=0
for scenario in "${scenarios[@]}"; do
    dir=$(mktemp -d)
    if ! image=$(mount_for "$scenario" "$dir" 2>/dev/null); then
        echo "fault suite skipped: cannot mount a file system here (needs root)"; rmdir "$dir"; exit 0
    fi
    result=$("target/$PROFILE/vl-load" faults "$scenario" "$dir")
    chattr -i "$dir/vibelearn.db" "$dir/vibelearn.db-wal" 2>/dev/null || true
    umount "$dir" 2>/dev/null || true; rmdir "$dir" 2>/dev/null || true
    [ -n "$image" ] && rm -f "$image"
    python3 - "$result" <<'PY' || status=1
import json, sys
r = json.loads(sys.argv[1])
print(f"fault: {r['scenario']}")
if "skipped" in r:
    print(f"  skipped: {r['skipped']}")
    sys.exit(0)
for key in ["acknowledged", "stored", "executed", "duplicated", "lost", "refused", "health_checks", "health_unanswered", "health_slowest_ms", "degraded_seen", "ingested_by_the_runner"]:
    print(f"  {key:<18} {r.get(key, '-')}")
if r["lost"]:
    print(f"  lost examples      {r['lost_examples']}")
for key, value in r.get("details", {}).items():
    print(f"  {key:<18} {json.dumps(value, sort_keys=True)}")
for key, value in r.get("checks", {}).items():
    print(f"  check {key}: {'yes' if value else 'NO'}")
ok = (r["lost"] == 0 and r["duplicated"] == 0 and r["health_unanswered"] == 0 and r["acknowledged"] > 0
      and all(r.get("checks", {}).values()))
print("  result             " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
done
exit $status
