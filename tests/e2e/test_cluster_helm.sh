#!/usr/bin/env bash
# test_cluster_helm.sh - Helm 4's --wait against a cluster that moves
# (`fakeapi serve --cluster`, docs/cluster.md): the chart fixtures/charts/kh-demo
# (a Deployment and a Service among others) installed, upgraded to a new
# image and rolled back, each with --wait, which returns only once the
# Deployment controller reports the rollout complete (kstatus for the
# watcher, the new ReplicaSet's ready pods for the legacy check); the
# Deployment's history as kubectl shows it.  Helm comes from
# scripts/clients.sh's cache; without it the script is skipped.  TAP on stdout.
. "$(dirname "$0")/lib.sh"
need_helm

CHART=$(cd "$(dirname "$0")/../../fixtures/charts/kh-demo" && pwd) ||
    bail "fixtures/charts/kh-demo not found"

cat >"$E2E_TMP/cluster.yaml" <<'YAML'
nodes: 2
YAML
server_start --cluster="$E2E_TMP/cluster.yaml"
D=$SERVER_DIR
export HELM_CACHE_HOME="$D/helm/cache" HELM_CONFIG_HOME="$D/helm/config" \
    HELM_DATA_HOME="$D/helm/data"

hm() { # helm ARGS... against this server, never hanging
    timeout "$KC_TIMEOUT" "$HELM" --kubeconfig "$KUBECONFIG_FILE" -n default "$@"
}
jp() { # KIND/NAME JSONPATH
    kc -n default get "$1" -o "jsonpath=$2"
}
# The Deployment as `kubectl rollout status` would judge it, right now.
rolled_out() {
    jp deployment/demo-web '{.spec.replicas}/{.status.updatedReplicas}/{.status.availableReplicas}/{.status.replicas}'
}
images() {
    jp pods '{range .items[?(@.metadata.labels.app\.kubernetes\.io/instance=="demo")]}{.spec.containers[0].image}{" "}{end}'
}
revisions() { kc rollout history deployment/demo-web | awk '$1 ~ /^[0-9]+$/ {printf "%s ", $1}'; }

check "helm install --wait=watcher returns once the Deployment is available" \
    expect_out 'STATUS: deployed' hm install demo "$CHART" --set replicas=3 \
    --wait=watcher --timeout 60s
check "when it returns, the rollout is complete" expect_eq '3/3/3/3' rolled_out
check "the Deployment says Available and NewReplicaSetAvailable" \
    expect_eq 'True NewReplicaSetAvailable' \
    jp deployment/demo-web '{.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Progressing")].reason}'
check "the Service has the three pods as endpoints" \
    wait_for 30 expect_out '^([0-9.]+ ){3}$' jp endpoints/demo-svc '{range .subsets[*].addresses[*]}{.ip}{" "}{end}'

check "helm upgrade to a new image with --wait=legacy" \
    expect_out 'STATUS: deployed' hm upgrade demo "$CHART" --set replicas=3 \
    --set image.tag=1.26 --wait=legacy --timeout 60s
check "when it returns, the new ReplicaSet's pods are ready" \
    expect_eq 3 jp deployment/demo-web '{.status.readyReplicas}'
check "the rollout finishes with every pod on the new image" \
    wait_for 30 expect_eq 'nginx:1.26 nginx:1.26 nginx:1.26 ' images
check "the Deployment is at revision 2" \
    expect_eq 2 jp deployment/demo-web '{.metadata.annotations.deployment\.kubernetes\.io/revision}'

check "helm rollback --wait" \
    expect_out 'Rollback was a success' hm rollback demo 1 --wait=watcher --timeout 60s
check "when it returns, the rollout is complete" expect_eq '3/3/3/3' rolled_out
check "every pod is back on the first image" \
    wait_for 30 expect_eq 'nginx:1.25 nginx:1.25 nginx:1.25 ' images
check "the first ReplicaSet came back as revision 3: the history is 2 3" \
    expect_eq '2 3 ' revisions

check "helm uninstall" expect_out 'release "demo" uninstalled' hm uninstall demo --wait
check "the pods go with the Deployment" \
    wait_for 30 expect_eq '' images

finish
