#!/bin/sh
# explore.sh SCENARIO FILE SEEDS JOBS [fail]: explore FILE over SEEDS (N..M)
# with JOBS jobs; passes only if every seed passed (with `fail`: only if
# every seed failed, for a deliberately buggy controller). Prints the summary line and
# the time it took, for the figures in docs/scenarios.md.
set -u
exe=$1 file=$2 seeds=$3 jobs=$4 expect=${5:-pass}
first=${seeds%..*} last=${seeds#*..}
want=$((last - first + 1))
start=$(date +%s)
out=$("$exe" explore "$file" --seeds "$seeds" --jobs "$jobs" 2>&1)
rc=$?
end=$(date +%s)
printf '%s\n' "$out" | grep -v '^explore .*progress' | tail -n 40
echo "explore.sh: $want seeds in $((end - start)) s with $jobs jobs (exit code $rc)"
if [ "$expect" = fail ]; then
    if printf '%s\n' "$out" | grep -q ": $want seeds, 0 passed, $want failed"; then
        exit 0
    fi
    echo "explore.sh: FAIL: not every seed failed (expected the bug to be found in each)"
    exit 1
fi
if [ "$rc" -ne 0 ]; then
    echo "explore.sh: FAIL: exit code $rc"
    exit 1
fi
if ! printf '%s\n' "$out" | grep -q ": $want seeds, $want passed, 0 failed\$"; then
    echo "explore.sh: FAIL: no \"$want seeds, $want passed, 0 failed\" summary"
    exit 1
fi
