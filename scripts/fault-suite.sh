#!/usr/bin/env bash
# Storage faults under load: the data directory on a small tmpfs that fills up (disk full),
# a second process holding the write lock past the busy timeout, or a read-only remount. Each scenario prints acknowledged / stored / executed /
# duplicated / lost and whether /api/health kept answering; exits non-zero on any loss.
# Needs root (mount); without it, says so and exits 0 having run nothing.
#   scripts/fault-suite.sh          (PROFILE=debug to reuse a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = release ]; then cargo build --release --locked --bins >/dev/null; else cargo build --locked --bins >/dev/null; fi
status=0
for scenario in disk-full write-lock read-only; do
    dir=$(mktemp -d)
    size=4m; [ "$scenario" != disk-full ] && size=64m
    if ! mount -t tmpfs -o "size=$size" tmpfs "$dir" 2>/dev/null; then
        echo "fault suite skipped: cannot mount a tmpfs here (needs root)"; rmdir "$dir"; exit 0
    fi
    result=$("target/$PROFILE/vl-load" faults "$scenario" "$dir")
    umount "$dir" 2>/dev/null || true; rmdir "$dir" 2>/dev/null || true
    python3 - "$result" <<'PY' || status=1
import json, sys
r = json.loads(sys.argv[1])
print(f"fault: {r['scenario']}")
if "skipped" in r:
    print(f"  skipped: {r['skipped']}")
    sys.exit(0)
for key in ["acknowledged", "stored", "executed", "duplicated", "lost", "refused", "health_checks", "health_unanswered", "degraded_seen"]:
    print(f"  {key:<18} {r[key]}")
ok = r["lost"] == 0 and r["duplicated"] == 0 and r["health_unanswered"] == 0 and r["acknowledged"] > 0
print("  result             " + ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
done
exit $status
