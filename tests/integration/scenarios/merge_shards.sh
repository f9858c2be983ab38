#!/bin/sh
# merge_shards.sh SCENARIO FILE SEEDS: explore FILE over SEEDS (N..M) whole,
# then as four shards (--shard K/4, one through CI_NODE_INDEX as GitLab's
# `parallel:` gives it, one through JOB_COMPLETION_INDEX as a Kubernetes
# Indexed Job does), and check that `scenario merge` of the
# shards' reports equals the merge of the whole run's report: the same runs,
# verdicts, trace hashes, failing seeds and replay commands (times aside),
# from the JSON reports, the JUnit reports and a mix. Then the inputs merge
# refuses: a missing shard, a shard of another campaign, a report cut
# short, a file that does not exist, shards that disagree.
set -u
exe=$1 file=$2 seeds=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/merge-shards.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fails=0
fail() {
    echo "merge_shards.sh: FAIL: $*"
    fails=$((fails + 1))
}
# The reports without their times (the only thing that may differ).
untimed() {
    sed -e 's/"time": *[0-9.e+-]*/"time":T/g' -e 's/ time="[0-9.]*"/ time="T"/g' "$1"
}
same() { # same A B WHAT
    if ! untimed "$1" >"$dir/a" || ! untimed "$2" >"$dir/b" || ! cmp -s "$dir/a" "$dir/b"; then
        fail "$3 differ:"
        diff "$dir/a" "$dir/b" | head -n 20
    fi
}
expect_2() { # expect_2 WANT-IN-MESSAGE REPORT...
    want=$1
    shift
    "$exe" merge "$@" >"$dir/out" 2>"$dir/err"
    rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "merge $* exited $rc, not 2"
    elif ! grep -q -- "$want" "$dir/err"; then
        fail "merge $*: the message lacks \"$want\": $(cat "$dir/err")"
    else
        echo "refused as it should: $(cat "$dir/err")"
    fi
}

"$exe" explore "$file" --seeds "$seeds" --jobs 2 --json "$dir/all.json" --junit "$dir/all.xml" \
    >"$dir/all.out" 2>&1
whole=$?
tail -n 1 "$dir/all.out"
[ "$whole" -le 1 ] || fail "the whole exploration exited $whole"
for k in 0 1; do
    "$exe" explore "$file" --seeds "$seeds" --shard "$k/4" --jobs 2 \
        --json "$dir/s$k.json" --junit "$dir/s$k.xml" >"$dir/s$k.out" 2>&1
    [ $? -le 1 ] || fail "shard $k/4 exited with 2: $(cat "$dir/s$k.out")"
done
# The third shard as a GitLab `parallel: 4` job sees it (counted from 1).
CI_NODE_INDEX=3 CI_NODE_TOTAL=4 "$exe" explore "$file" --seeds "$seeds" --jobs 2 \
    --json "$dir/s2.json" --junit "$dir/s2.xml" >"$dir/s2.out" 2>&1
[ $? -le 1 ] || fail "shard 2/4 (CI_NODE_INDEX) exited with 2: $(cat "$dir/s2.out")"
# The last shard as a pod of an Indexed Job sees it.
JOB_COMPLETION_INDEX=3 SCN_SHARD_COUNT=4 "$exe" explore "$file" --seeds "$seeds" --jobs 2 \
    --json "$dir/s3.json" --junit "$dir/s3.xml" >"$dir/s3.out" 2>&1
[ $? -le 1 ] || fail "shard 3/4 (JOB_COMPLETION_INDEX) exited with 2: $(cat "$dir/s3.out")"

"$exe" merge "$dir/all.json" --json "$dir/whole.json" --junit "$dir/whole.xml" >"$dir/whole.out"
[ $? -eq "$whole" ] || fail "merge of the whole report: exit code other than explore's ($whole)"
"$exe" merge "$dir/s3.json" "$dir/s1.json" "$dir/s0.json" "$dir/s2.json" \
    --json "$dir/m.json" --junit "$dir/m.xml" >"$dir/m.out"
rc=$?
cat "$dir/m.out"
[ "$rc" -eq "$whole" ] || fail "merge of the shards exited $rc, the whole run $whole"
same "$dir/whole.json" "$dir/m.json" "the JSON reports of the whole run and of the merged shards"
same "$dir/whole.xml" "$dir/m.xml" "the JUnit reports of the whole run and of the merged shards"
# The failing seeds of the summary lines: explore's and merge's.
want=$(sed -n 's/.*failing seeds: //p' "$dir/all.out")
got=$(sed -n 's/.*; failing: //p' "$dir/m.out")
[ "$want" = "$got" ] || fail "failing seeds: explore says \"$want\", merge \"$got\""
n=$(grep -c '"verdict"' "$dir/m.json")
first=${seeds%..*} last=${seeds#*..}
[ "$n" -eq $((last - first + 1)) ] || fail "the merged report holds $n runs"
# Every failing seed comes with the command that replays it.
for s in $want; do
    grep -q "replay: .* replay .* --seed $s " "$dir/m.out" || fail "no replay command for seed $s"
done
# The whole run's own report holds the same runs (in the order they ended).
sed -n 's/^ *{"file".*"seed":\([0-9]*\),"verdict":"\([a-z]*\)".*"trace":"\([0-9a-f]*\)".*/\1 \2 \3/p' \
    "$dir/all.json" | sort -n >"$dir/a.runs"
sed -n 's/^ *{"file".*"seed":\([0-9]*\),"verdict":"\([a-z]*\)".*"trace":"\([0-9a-f]*\)".*/\1 \2 \3/p' \
    "$dir/m.json" >"$dir/m.runs"
cmp -s "$dir/a.runs" "$dir/m.runs" || fail "seeds, verdicts and traces differ from the whole run's"

# The JUnit reports alone, and a mix (a shard twice: its JSON and its JUnit).
"$exe" merge "$dir"/s*.xml --junit "$dir/mx.xml" >/dev/null
same "$dir/whole.xml" "$dir/mx.xml" "the JUnit reports merged from JUnit"
"$exe" merge "$dir/s0.json" "$dir/s1.xml" "$dir/s2.json" "$dir/s3.xml" "$dir/s0.xml" \
    --json "$dir/mix.json" --junit "$dir/mix.xml" >/dev/null
same "$dir/whole.xml" "$dir/mix.xml" "the JUnit reports merged from a mix"

# `run` shards files, not seeds: two files, two shards, merged, equal the
# whole run (the fixed Singleton beside the scenario, and the scenario).
other=$(dirname "$file")/singleton-fixed.yaml
"$exe" run "$other" "$file" --seed 2 --json "$dir/run.json" >/dev/null 2>&1
for k in 0 1; do
    "$exe" run "$other" "$file" --seed 2 --shard "$k/2" --json "$dir/run$k.json" >/dev/null 2>&1
done
"$exe" merge "$dir/run.json" --json "$dir/run-whole.json" >/dev/null
"$exe" merge "$dir/run1.json" "$dir/run0.json" --json "$dir/run-merged.json" >"$dir/run.out"
same "$dir/run-whole.json" "$dir/run-merged.json" "the merged run reports"
grep -q '^merge: 2 reports (2 shards), 2 runs' "$dir/run.out" ||
    fail "merge of two run shards: $(cat "$dir/run.out")"

# What merge refuses, naming the file.
expect_2 "1 of the 4 shards is missing" "$dir/s0.json" "$dir/s1.json" "$dir/s3.json"
"$exe" explore "$file" --seeds 1..8 --shard 2/4 --json "$dir/other.json" >/dev/null 2>&1
expect_2 "other.json is shard 2/4" "$dir/s0.json" "$dir/s1.json" "$dir/other.json" "$dir/s3.json"
head -c 700 "$dir/s1.json" >"$dir/cut.json"
expect_2 "cut.json: " "$dir/s0.json" "$dir/cut.json" "$dir/s2.json" "$dir/s3.json"
expect_2 "nothing.json: cannot read it" "$dir/s0.json" "$dir/nothing.json"
sed -e '0,/"verdict":"pass"/s//"verdict":"fail"/' "$dir/s1.json" >"$dir/liar.json"
expect_2 "the reports disagree" "$dir"/s?.json "$dir/liar.json"
sed -e 's/"index":1/"index":2/' "$dir/s1.json" >"$dir/wrong.json"
expect_2 "wrong.json: seed" "$dir/s0.json" "$dir/s1.xml" "$dir/wrong.json" "$dir/s3.json"
printf 'not a report\n' >"$dir/text.txt"
expect_2 "text.txt: neither a JSON nor a JUnit" "$dir/text.txt"

# Bad input leaves no JSON report (merge then finds the shard missing), and
# no temporary file stays behind.
"$exe" explore "$dir/nothing.yaml" --seeds 1..4 --json "$dir/bad.json" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "explore of a missing file exited $rc, not 2"
[ ! -e "$dir/bad.json" ] || fail "explore with bad input left a JSON report"
"$exe" explore "$file" --seeds 1..4 --json "$dir/no/such/dir/r.json" >"$dir/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--json $dir/no/such/dir/r.json: cannot write it" "$dir/out" ||
    fail "an unwritable --json path: exit $rc, $(cat "$dir/out")"
ls "$dir" | grep -q '\.\(json\|xml\)\.' && fail "temporary files left: $(ls "$dir")"

[ "$fails" -eq 0 ] || exit 1
echo "merge_shards.sh: the four shards merge into the whole run"
