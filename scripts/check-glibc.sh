#!/usr/bin/env bash
# Checks that a Linux `vl` runs on every distribution still supported (SPEC §10): either it is
# static (no program interpreter), or no symbol it imports needs a glibc newer than the floor
# (default 2.17: RHEL/CentOS 7, Amazon Linux 2, Debian 8 and every later one). Prints the
# newest glibc version it needs; exits 1 above the floor.
#
# Usage: scripts/check-glibc.sh BINARY [FLOOR]
set -euo pipefail
binary=${1:?usage: scripts/check-glibc.sh BINARY [FLOOR]}
floor=${2:-2.17}
command -v readelf >/dev/null || { echo "readelf is needed (binutils)" >&2; exit 1; }
if ! readelf -lW "$binary" | grep -q 'Requesting program interpreter'; then
    echo "$binary: static (no program interpreter)"
    exit 0
fi
needed=$(readelf --dyn-syms -W "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
[ -n "$needed" ] || { echo "$binary: imports no versioned glibc symbol" >&2; exit 1; }
newest=$(printf '%s\n%s\n' "$needed" "$floor" | sort -V | tail -1)
if [ "$newest" != "$floor" ]; then
    echo "$binary needs glibc $needed, above the floor $floor:" >&2
    readelf --dyn-syms -W "$binary" | grep -E "GLIBC_($(printf '%s' "$needed" | sed 's/\./\\./g'))( |$)" | head -5 >&2
    exit 1
fi
echo "$binary: needs glibc $needed at most (floor $floor)"
