#!/bin/sh
# hunt_examples.sh SCENARIO DIR NAME SEEDS MESSAGE: the planted bug NAME of
# examples/hunt (docs/scenarios.md, "Planted bugs for `scenario hunt`"),
# explored over SEEDS (N..M) with the scenarios of DIR:
#   hunt-NAME.yaml and hunt-NAME-fixed.yaml        (base, buggy and fixed)   pass in every seed
#   hunt-NAME-shown-fixed.yaml                     (the perturbation, fixed) passes in every seed
#   hunt-NAME-shown.yaml                           (the perturbation, buggy) fails in every seed,
#                                                  each failure saying MESSAGE
set -u
exe=$1 dir=$2 name=$3 seeds=$4 message=$5
first=${seeds%..*} last=${seeds#*..}
want=$((last - first + 1))
status=0

explore() {
    "$exe" explore "$dir/$1.yaml" --seeds "$seeds" --jobs 2 2>&1
}

for f in "hunt-$name" "hunt-$name-fixed" "hunt-$name-shown-fixed"; do
    out=$(explore "$f")
    summary=$(printf '%s\n' "$out" | grep "^explore .*: $want seeds")
    echo "$summary"
    case $summary in
    *": $want seeds, $want passed, 0 failed") ;;
    *)
        printf '%s\n' "$out" | tail -n 20
        echo "hunt_examples.sh: FAIL: $f.yaml must pass in every seed"
        status=1
        ;;
    esac
done

out=$(explore "hunt-$name-shown")
summary=$(printf '%s\n' "$out" | grep "^explore .*: $want seeds")
echo "$summary"
case $summary in
*": $want seeds, 0 passed, $want failed;"*) ;;
*)
    printf '%s\n' "$out" | tail -n 20
    echo "hunt_examples.sh: FAIL: hunt-$name-shown.yaml must fail in every seed"
    status=1
    ;;
esac
fails=$(printf '%s\n' "$out" | grep -c '^FAIL seed=')
right=$(printf '%s\n' "$out" | grep '^FAIL seed=' | grep -cF -- "$message")
printf '%s\n' "$out" | grep '^FAIL seed=' | head -n 1
if [ "$fails" -ne "$want" ] || [ "$right" -ne "$want" ]; then
    echo "hunt_examples.sh: FAIL: $right of $fails failures (of $want seeds) say: $message"
    status=1
fi
exit $status
