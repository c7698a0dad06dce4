#!/usr/bin/env bash
# Crash safety: 16 clients POST observations while the worker is killed with SIGKILL and
# restarted, ROUNDS times; then every acknowledged event must be stored and have run exactly
# once in effect. Prints acknowledged / stored / executed / duplicated / lost; exits non-zero
# on any loss or duplicate.
#   scripts/crash-test.sh [ROUNDS] [CLIENTS]      (PROFILE=debug to reuse a debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-10}"
CLIENTS="${2:-16}"
PROFILE="${PROFILE:-release}"
if [ "$PROFILE" = release ]; then cargo build --release --locked --features dev-tools --bins >/dev/null; else cargo build --locked --features dev-tools --bins >/dev/null; fi
result=$("target/$PROFILE/vl-load" crash "$ROUNDS" "$CLIENTS")
python3 - "$result" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print(f"crash test: {r['rounds']} SIGKILL rounds, {r['clients']} clients")
for key in ["sent", "acknowledged", "stored", "executed", "duplicated", "lost", "attempts_rescued", "ingested_by_the_runner"]:
    print(f"  {key:<17} {r[key]}")
ok = r["lost"] == 0 and r["duplicated"] == 0 and r["stored"] == r["acknowledged"] == r["executed"] and r["acknowledged"] > 0
print("  result            " + ("PASS" if ok else "FAIL " + str(r["lost_examples"])))
sys.exit(0 if ok else 1)
PY
