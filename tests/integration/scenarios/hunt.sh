#!/bin/sh
# hunt.sh SCENARIO SRCDIR - `scenario hunt` as a user runs it: exit codes
# 0/1/2, the text report, the JSON and JUnit files, and a finding's
# scenario that `scenario run` replays (exit 1, the same failure).
set -u
scn=$1 src=$2
ex=$src/scenarios/examples
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" 2>/dev/null; exit 1; }

expect_rc() { # WANT CMD...
    want=$1; shift
    "$@" >"$tmp/out" 2>&1
    rc=$?
    [ "$rc" -eq "$want" ] || fail "exit $rc, not $want: $*"
}

# the fixed Singleton: nothing found, every class tried
expect_rc 0 "$scn" hunt "$ex/singleton-fixed.yaml" --budget 60s -o "$tmp/none" \
    --json "$tmp/none.json" --junit "$tmp/none.xml"
grep -q '^hunt: 0 findings in [0-9]* runs (baseline 1, crash [1-9][0-9]*, stale [1-9][0-9]*, unobserved [1-9][0-9]*, error [1-9][0-9]*)' "$tmp/out" ||
    fail "no summary line"
[ "$(jq '.findings | length' "$tmp/none.json")" -eq 0 ] || fail "findings in the JSON"
[ "$(jq '.notTried' "$tmp/none.json")" -eq 0 ] || fail "runs not tried"
grep -q '<testcase name="singleton-fixed: differential"' "$tmp/none.xml" || fail "JUnit: no passed oracle"
[ ! -e "$tmp/none" ] || [ -z "$(ls "$tmp/none")" ] || fail "files written without findings"

# the buggy one, without the lost answers its scenario adds: found
cat >"$tmp/buggy.yaml" <<YAML
name: buggy-plain
controllers: [singleton-buggy]
fixtures: [$src/fixtures/singleton/crd.yaml, $src/fixtures/singleton/basic.yaml]
steps:
  - wait: {for: {count: {apiVersion: v1, kind: ConfigMap, namespace: default, selector: singleton=demo, equals: 1}}, timeout: 1m}
  - patch: {apiVersion: example.com/v1, kind: Singleton, namespace: default, name: demo, patch: {spec: {data: {greeting: hi}}}}
  - advance: 1m
invariants:
  - {count: {apiVersion: v1, kind: ConfigMap, namespace: default, selector: singleton=demo, atMost: 1}}
YAML
expect_rc 0 "$scn" run "$tmp/buggy.yaml" --seed 2
expect_rc 1 "$scn" hunt "$tmp/buggy.yaml" --seeds 1..3 --jobs 2 -o "$tmp/found" \
    --json "$tmp/found.json" --junit "$tmp/found.xml"
grep -q '^FINDING 1 \[checks/' "$tmp/out" || fail "no FINDING line"
n=$(jq '.findings | length' "$tmp/found.json")
[ "$n" -ge 1 ] || fail "no finding in the JSON"
[ "$(grep -c '^FINDING' "$tmp/out")" -eq "$n" ] || fail "text and JSON disagree"
[ "$(grep -c '<failure' "$tmp/found.xml")" -eq "$n" ] || fail "JUnit: not one failure per finding"
file=$(jq -r '.findings[0].scenario' "$tmp/found.json")
seed=$(jq -r '.findings[0].seed' "$tmp/found.json")
replay=$(jq -r '.findings[0].replay' "$tmp/found.json")
[ -f "$file" ] || fail "no scenario file $file"
[ "$replay" = "$scn run $file --seed $seed" ] || fail "replay command: $replay"
expect_rc 1 $replay
grep -q 'to be at most 1, found 2' "$tmp/out" || fail "the replay does not fail the same way"

# --shrink: the finding's scenario is scn_shrink's, and still fails
expect_rc 1 "$scn" hunt "$tmp/buggy.yaml" --seeds 3 --classes crash --shrink -o "$tmp/shrunk" \
    --json "$tmp/shrunk.json"
[ "$(jq '.findings[0].shrunk' "$tmp/shrunk.json")" = true ] || fail "not shrunk"
expect_rc 1 $(jq -r '.findings[0].replay' "$tmp/shrunk.json")

# one class only
expect_rc 0 "$scn" hunt "$ex/singleton-fixed.yaml" --classes crash --no-write
grep -q 'stale 0, unobserved 0, error 0' "$tmp/out" || fail "--classes crash ran other classes"

# bad input
expect_rc 2 "$scn" hunt
expect_rc 2 "$scn" hunt "$ex/singleton-fixed.yaml" --budget soon
expect_rc 2 "$scn" hunt "$ex/singleton-fixed.yaml" --classes nope
expect_rc 2 "$scn" hunt "$ex/singleton-fixed.yaml" --seeds 5..1
expect_rc 2 "$scn" hunt "$tmp/missing.yaml"
printf 'name: x\nsteps: [{sleep: 1}]\n' >"$tmp/bad.yaml"
expect_rc 2 "$scn" hunt "$tmp/bad.yaml"
grep -q 'bad.yaml:2: steps\[0\].sleep: unknown step' "$tmp/out" || fail "no file:line message"
echo ok
