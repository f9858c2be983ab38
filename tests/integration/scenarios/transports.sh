#!/bin/sh
# transports.sh SCENARIO EXAMPLES_DIR SEEDS: every example scenario, each
# seed in SEEDS (N..M), run once with its managers reaching the server
# in-process (the default) and once over loopback HTTP (--http): the two
# trace files must be byte-identical, and so must the verdicts. The
# in-process transport is a shortcut, never a different run.
set -u
exe=$1 dir=$2 seeds=$3
first=${seeds%..*} last=${seeds#*..}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0 bad=0
for f in "$dir"/*.yaml; do
    s=$first
    while [ "$s" -le "$last" ]; do
        "$exe" run "$f" --seed "$s" --trace "$tmp/in.trace" >"$tmp/in.out" 2>&1
        rc_in=$?
        "$exe" run "$f" --seed "$s" --trace "$tmp/http.trace" --http >"$tmp/http.out" 2>&1
        rc_http=$?
        runs=$((runs + 1))
        name=$(basename "$f")
        if [ "$rc_in" -ne "$rc_http" ]; then
            echo "transports.sh: FAIL: $name seed $s: exit code $rc_in in-process, $rc_http over HTTP"
            tail -n 5 "$tmp/in.out" "$tmp/http.out"
            bad=$((bad + 1))
        elif [ "$rc_in" -gt 1 ] || [ ! -s "$tmp/in.trace" ]; then
            echo "transports.sh: FAIL: $name seed $s: no run (exit code $rc_in)"
            tail -n 5 "$tmp/in.out"
            bad=$((bad + 1))
        elif ! cmp -s "$tmp/in.trace" "$tmp/http.trace"; then
            echo "transports.sh: FAIL: $name seed $s: the traces differ; first difference:"
            diff "$tmp/in.trace" "$tmp/http.trace" | head -n 6
            bad=$((bad + 1))
        fi
        s=$((s + 1))
    done
done
echo "transports.sh: $runs runs compared, $bad differ"
[ "$runs" -gt 0 ] && [ "$bad" -eq 0 ]
