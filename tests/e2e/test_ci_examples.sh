#!/usr/bin/env bash
# test_ci_examples.sh - the CI examples of examples/ci (docs/scenarios.md,
# "Sharding"): every file parses as YAML and shards the same way it says
# (the Indexed Job's completions = SCN_SHARD_COUNT, the matrix's shards =
# --shard K/N, GitLab's `parallel`); the Indexed Job manifest passes
# `kubectl apply --dry-run=server`, and applied to a cluster that moves
# (`fakeapi serve --cluster`) the Job gets one pod per completion index, each
# told its index (JOB_COMPLETION_INDEX) and the shard count, and completes;
# so does the merge Job. (The simulated pods do not run their commands.)
# TAP on stdout.
. "$(dirname "$0")/lib.sh"

CI=$(cd "$(dirname "$0")/../../examples/ci" && pwd)

# The YAML files as python3's yaml reads them, as one JSON line each (a
# YAML parser other than ours, as CI systems have), or a skip without it.
yaml_json() { # FILE: a JSON array of its documents
    python3 -c 'import json, sys, yaml
print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))' "$1"
}
if python3 -c 'import yaml' 2>/dev/null; then
    for f in explore-job.yaml github-actions.yml gitlab-ci.yml; do
        check "examples/ci/$f parses as YAML" yaml_json "$CI/$f"
    done
    pyq() { # FILE PYTHON-EXPRESSION over d (the documents)
        python3 -c 'import sys, yaml
d = list(yaml.safe_load_all(open(sys.argv[1])))
print(eval(sys.argv[2]))' "$1" "$2"
    }
    check "the Indexed Job: completions = parallelism = SCN_SHARD_COUNT = 4" \
        expect_eq '4 4 4 Indexed' pyq "$CI/explore-job.yaml" \
        '"%s %s %s %s" % (d[1]["spec"]["completions"], d[1]["spec"]["parallelism"], [e["value"] for e in d[1]["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "SCN_SHARD_COUNT"][0], d[1]["spec"]["completionMode"])'
    check "the merge Job waits for 4 shard reports" \
        expect_out '-ge 4 ' pyq "$CI/explore-job.yaml" \
        'd[2]["spec"]["template"]["spec"]["initContainers"][0]["args"][0]'
    check "the GitHub matrix: shards 0..3 of --shard K/4" \
        expect_eq '[0, 1, 2, 3] --shard ${{ matrix.shard }}/4' pyq "$CI/github-actions.yml" \
        '"%s %s" % (d[0]["jobs"]["explore"]["strategy"]["matrix"]["shard"], "--shard ${{ matrix.shard }}/4" if any("--shard ${{ matrix.shard }}/4" in s.get("run", "") for s in d[0]["jobs"]["explore"]["steps"]) else "no --shard")'
    check "the GitHub merge job needs the matrix and downloads every shard" \
        expect_eq "['explore'] scenario-shard-*" pyq "$CI/github-actions.yml" \
        '"%s %s" % ([d[0]["jobs"]["merge"]["needs"]] if isinstance(d[0]["jobs"]["merge"]["needs"], str) else d[0]["jobs"]["merge"]["needs"], [s["with"]["pattern"] for s in d[0]["jobs"]["merge"]["steps"] if "download-artifact" in s.get("uses", "")][0])'
    check "GitLab: parallel 4, no --shard (CI_NODE_INDEX decides)" \
        expect_eq '4 False' pyq "$CI/gitlab-ci.yml" \
        '"%s %s" % (d[0]["explore"]["parallel"], any("--shard" in s for s in d[0]["explore"]["script"] if isinstance(s, str)))'
else
    skip "examples/ci parse as YAML" "python3 has no yaml module"
fi

cat >"$E2E_TMP/cluster.yaml" <<'YAML'
nodes: 3
YAML
server_start --cluster="$E2E_TMP/cluster.yaml"

job_pods() { # the explore Job's pods: index, index variable's source, shard count, phase
    kc get pods -l batch.kubernetes.io/job-name=scenario-explore \
        --sort-by='.metadata.annotations.batch\.kubernetes\.io/job-completion-index' \
        -o 'jsonpath={range .items[*]}{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}:{.spec.containers[0].env[?(@.name=="JOB_COMPLETION_INDEX")].valueFrom.fieldRef.fieldPath}:{.spec.containers[0].env[?(@.name=="SCN_SHARD_COUNT")].value}:{.status.phase} {end}'
}
ann="metadata.annotations['batch.kubernetes.io/job-completion-index']"

check "kubectl apply --dry-run=server accepts explore-job.yaml" \
    expect_out 'job.batch/scenario-explore created \(server dry run\)' \
    kc apply --dry-run=server -f "$CI/explore-job.yaml"
check "the dry run created nothing" \
    expect_eq '' kc get jobs -o name
check "kubectl apply explore-job.yaml" \
    expect_out 'job.batch/scenario-merge created' kc apply -f "$CI/explore-job.yaml"
check "the Indexed Job completes" \
    expect_out 'condition met' kc wait --for=condition=complete job/scenario-explore --timeout=60s
check "one pod per index 0..3, each told its index and the shard count" \
    expect_eq "0:$ann:4:Succeeded 1:$ann:4:Succeeded 2:$ann:4:Succeeded 3:$ann:4:Succeeded " job_pods
check "every index completed" \
    expect_eq '0-3' kc get job scenario-explore -o 'jsonpath={.status.completedIndexes}'
check "the merge Job completes" \
    expect_out 'condition met' kc wait --for=condition=complete job/scenario-merge --timeout=60s

finish
