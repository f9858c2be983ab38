#!/bin/sh
# diff_shrink.sh SCENARIO FIXED_PLUGIN ECHO_PLUGIN SRCDIR - `scenario diff` and
# `scenario shrink` as a user runs them: exit codes 0/1/2, the report, the
# written scenario replaying its failure.
set -u
scn=$1 plugin=$2 echo_plugin=$3 src=$4
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

# the replay command names the program that ran and the plugins it loaded
cat >"$tmp/echo-fails.yaml" <<EOF
name: echo-fails
controllers: [echo]
fixtures:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: hello, namespace: default, annotations: {echo: hi}}}
steps:
  - advance: 10s
  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: hello, path: .data.echo, equals: bye}}
EOF
expect_rc 1 "$scn" run "$tmp/echo-fails.yaml" --plugin "$echo_plugin" --seed 4
grep -qF "replay: $scn replay $tmp/echo-fails.yaml --seed 4 --trace trace.jsonl --plugin $echo_plugin" "$tmp/out" ||
    fail "the replay command does not load the plugin"
expect_rc 1 "$scn" explore "$tmp/echo-fails.yaml" --plugin "$echo_plugin" --seeds 1..2
grep -qF "replay: $scn replay $tmp/echo-fails.yaml --seed 2 --trace trace.jsonl --plugin $echo_plugin" "$tmp/out" ||
    fail "explore's replay command does not load the plugin"

# diff: the fixed controller from a plugin against the buggy one
expect_rc 1 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --against "$plugin"
# run A, the one replayed, has the scenario's own controllers: no --against
grep -qF "replay: $scn replay $ex/singleton-buggy.yaml --seed 2 --trace trace.jsonl" "$tmp/out" ||
    fail "no replay command (diff)"
grep -q -- "--plugin" "$tmp/out" && fail "the replacing plugin is in the replay command"
grep -q '^DIFFER singleton-buggy' "$tmp/out" || fail "no DIFFER line"
grep -q 'ConfigMap default/demo-data (v1): only in B' "$tmp/out" || fail "no object diff"
grep -q '.status.configMapName: "demo-<generated-1>" -> "demo-data"' "$tmp/out" || fail "no field diff"
# the same with two registered controllers
expect_rc 1 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --controllers singleton-buggy=singleton-fixed
grep -q 'only in B' "$tmp/out" || fail "no object diff (--controllers)"
# the dedup variant names its ConfigMap as the buggy one does: the states
# agree (names masked) until the buggy one keeps a second ConfigMap
expect_rc 1 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --controllers singleton-buggy=singleton-dedup
grep -q 'first difference at step 4 (line 30' "$tmp/out" || fail "not the divergence at step 4"
grep -q 'ConfigMap default/demo-<generated-3> (v1): only in A' "$tmp/out" || fail "no extra ConfigMap"
# a controller against itself: equal
expect_rc 0 "$scn" diff "$ex/singleton-fixed.yaml" --seed 2 --controllers singleton-fixed=singleton-fixed
grep -q '^EQUAL singleton-fixed' "$tmp/out" || fail "not EQUAL"
# ignoring what differs makes the states equal while both run; A stopped
# (failed) before the patches B went on to make, so the ends differ
expect_rc 1 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --controllers singleton-buggy=singleton-fixed \
    --ignore 'ConfigMap:.' --ignore 'Singleton:.status'
grep -q 'first difference at the end' "$tmp/out" || fail "ignore did not mask"
grep -q '.spec.data.greeting: "hello" -> "hi"' "$tmp/out" || fail "no end-state diff"
grep -q 'configMapName' "$tmp/out" && fail "an ignored field is reported"
# bad input
expect_rc 2 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --controllers singleton-buggy=nope
grep -q 'no controller named nope' "$tmp/out" || fail "no message for an unknown controller"
expect_rc 2 "$scn" diff "$ex/singleton-buggy.yaml" --controllers singleton-buggy=singleton-fixed
expect_rc 2 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2
expect_rc 2 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --controllers singleton-buggy=singleton-fixed --ignore 'metadata.uid'
grep -q 'starts with' "$tmp/out" || fail "no message for a bad spec"
expect_rc 2 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --against "$echo_plugin"
grep -q 'nothing replaces' "$tmp/out" || fail "no message for a plugin that replaces nothing"
expect_rc 2 "$scn" diff "$tmp/missing.yaml" --seed 2 --controllers singleton-buggy=singleton-fixed
expect_rc 2 "$scn" diff "$ex/singleton-buggy.yaml" --seed 2 --against "$tmp/missing.so"

# shrink: 200 steps, one relevant
expect_rc 0 "$scn" shrink "$src/tests/fixtures/shrink/noisy-200.yaml" --seed 1 --same-failure -o "$tmp/min.yaml"
grep -q 'steps 200 -> 1,' "$tmp/out" || fail "not shrunk to one step"
grep -qF "replay: $scn replay $tmp/min.yaml --seed 1" "$tmp/out" || fail "no replay command"
expect_rc 1 "$scn" run "$tmp/min.yaml"
grep -q 'found 5' "$tmp/out" || fail "the shrunk scenario does not fail the same way"
grep -q 'replicas: 5' "$tmp/min.yaml" || fail "the relevant step is gone"
# bad input
expect_rc 2 "$scn" shrink "$ex/singleton-fixed.yaml" --seed 2 -o "$tmp/x.yaml"
grep -q 'passes with seed 2' "$tmp/out" || fail "no message for a passing scenario"
[ ! -e "$tmp/x.yaml" ] || fail "wrote a file for a passing scenario"
expect_rc 2 "$scn" shrink "$ex/singleton-buggy.yaml" --seed 2 --budget soon
expect_rc 2 "$scn" shrink "$ex/singleton-buggy.yaml"
expect_rc 2 "$scn" shrink "$tmp/missing.yaml" --seed 2
expect_rc 2 "$scn" shrink "$ex/singleton-buggy.yaml" --seed 2 -o "$tmp/no/such/dir/x.yaml"
echo ok
