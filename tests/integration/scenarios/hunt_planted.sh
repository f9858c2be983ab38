#!/bin/sh
# hunt_planted.sh SCENARIO SRCDIR NAME [BUDGET] - `scenario hunt` finds the
# planted bug NAME of examples/hunt within BUDGET (default 60s; more under
# the sanitizers) and nothing in its fixed
# twin: backup, pool and team from their base scenarios
# (scenarios/examples/hunt-NAME.yaml and hunt-NAME-fixed.yaml), frontend
# from its CRD (--crd: the empty ports list the schema allows).
set -u
scn=$1 src=$2 name=$3 budget=${4:-60s}
ex=$src/scenarios/examples fx=$src/fixtures/hunt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" 2>/dev/null; exit 1; }

hunt() { # WANT-RC VARIANT
    if [ "$name" = frontend ]; then
        set -- "$1" --crd "$fx/frontend-crd.yaml" --controller "hunt-frontend-$2" \
            --cr "$fx/frontend.yaml" --budget "$3"
    else
        f=$ex/hunt-$name.yaml
        [ "$2" = fixed ] && f=$ex/hunt-$name-fixed.yaml
        set -- "$1" "$f" --budget "$3"
    fi
    want=$1; shift
    "$scn" hunt "$@" --jobs 2 -o "$tmp/findings" --json "$tmp/hunt.json" >"$tmp/out" 2>&1
    rc=$?
    [ "$rc" -eq "$want" ] || fail "exit $rc, not $want: scenario hunt $*"
}

# the buggy controller: at least one finding, each with a written scenario
hunt 1 buggy "$budget"
n=$(jq '.findings | length' "$tmp/hunt.json")
[ "$n" -ge 1 ] || fail "no finding in the JSON report"
grep -q '^FINDING 1 \[' "$tmp/out" || fail "no FINDING line"
jq -r '.findings[].path' "$tmp/hunt.json" | while read -r p; do
    [ -s "$p" ] || fail "finding scenario $p not written"
done
case $name in
frontend) grep -q '^FINDING .*\[reconcile-errors/baseline\].*spec.ports=\[\]' "$tmp/out" ||
    fail "the empty ports list is not found as a persistent reconcile error" ;;
backup) grep -q '^FINDING .*/crash\]' "$tmp/out" || fail "no crash finding" ;;
pool) grep -q '^FINDING .*/stale\]' "$tmp/out" || fail "no stale finding" ;;
team) grep -q '^FINDING .*/unobserved\]' "$tmp/out" || fail "no unobserved finding" ;;
esac
echo "buggy: $n findings; $(grep '^hunt:' "$tmp/out")"

# the fixed one: nothing (a CRD campaign has more runs than 30 s allow)
rm -rf "$tmp/findings"
[ "$name" = frontend ] && budget=30s
hunt 0 fixed "$budget"
grep -q '^hunt: 0 findings' "$tmp/out" || fail "no summary line"
echo "fixed: $(grep '^hunt:' "$tmp/out")"
