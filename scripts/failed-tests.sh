# Sourced by scripts/windows-check.sh and scripts/release-build.sh, which run a test that
# failed under wine again alone: `failed_tests LOG` prints the names of the tests libtest
# reported failed in LOG (one or more binaries' output), one per line, and fails when the
# number of names differs from the failures the `test result:` lines count.
failed_tests() {
    local names count read
    names=$(sed -n '/^failures:$/,/^test result/p' "$1" | grep -E '^    [a-z0-9_]+(::[a-z0-9_]+)+$' | sed 's/^ *//' | sort -u || true)
    count=$(awk '/^test result: / { for (i = 1; i < NF; i++) if ($(i + 1) == "failed;") n += $i } END { print n + 0 }' "$1")
    read=$(grep -c . <<<"$names" || true)
    [ "$read" -eq "$count" ] || { echo "$count tests failed but $read names were read" >&2; return 1; }
    [ -z "$names" ] || printf '%s\n' "$names"
}
