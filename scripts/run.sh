#!/bin/sh
# The main job: install, build, run the example scenarios (real controllers
# against the fake API server under a virtual clock and a seeded scheduler),
# show an exploration finding a bug, and say how to start a server for kubectl.
set -e
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build --werror >/dev/null
ninja -C build >/dev/null
echo "== example scenarios (seed 1) =="
status=0
build/scenarios/scenario run scenarios/examples/replicaset-basic.yaml \
    scenarios/examples/replicaset-faults.yaml scenarios/examples/leader-failover.yaml \
    scenarios/examples/cronjob-day.yaml scenarios/examples/cronjob-count.yaml \
    scenarios/examples/singleton-fixed.yaml scenarios/examples/webapp-node-failure.yaml \
    --seed 1 || status=$?
echo
echo "== exploring 200 seeds of a deliberately buggy controller =="
build/scenarios/scenario explore scenarios/examples/singleton-buggy.yaml --seeds 1..200 \
    --jobs 2 | tail -n 3 || true
echo "== and of the fixed one =="
build/scenarios/scenario explore scenarios/examples/singleton-fixed.yaml --seeds 1..200 \
    --jobs 2 | tail -n 1 || status=1
echo
echo "== a cluster that moves: an operator whose Ready must follow its Deployment =="
build/scenarios/scenario explore scenarios/examples/webapp-buggy.yaml --seeds 1..20 --jobs 2 \
    | tail -n 1 || true
echo
echo "== hunting: a crash at each write, stale and withheld views, errors (scenario hunt) =="
tmp=$(mktemp -d)
build/scenarios/scenario hunt scenarios/examples/hunt-backup.yaml --jobs 2 -o "$tmp" \
    | grep -E '^(FINDING|hunt:)' || true
echo "== and the fixed controller =="
build/scenarios/scenario hunt scenarios/examples/hunt-backup-fixed.yaml --jobs 2 --no-write \
    | tail -n 1 || status=1
rm -rf "$tmp"
echo
echo "A fake API server for kubectl: build/fakeapi/fakeapi serve --kubeconfig build/kubeconfig"
echo "  then: kubectl --kubeconfig build/kubeconfig get namespaces"
echo "  (with --cluster, Deployments roll out and Pods run: docs/cluster.md)"
exit $status
