#!/usr/bin/env bash
# test_cluster_helm.sh - Helm 4 against a cluster that moves (`fakeapi serve
# --cluster`): `helm install --wait` of fixtures/charts/kh-demo (a
# Deployment and a Service among its objects) completes because the
# Deployment rolls out, the Service's Endpoints list the pods, and an
# upgrade that changes the image rolls out again under --wait.  Helm comes
# from scripts/clients.sh's cache; without it the whole script is skipped.
# TAP on stdout.
. "$(dirname "$0")/lib.sh"
need_helm

CHART=$(cd "$(dirname "$0")/../../fixtures/charts/kh-demo" && pwd) ||
    bail "fixtures/charts/kh-demo not found"

server_start --cluster
D=$SERVER_DIR
export HELM_CACHE_HOME="$D/helm/cache" HELM_CONFIG_HOME="$D/helm/config" \
    HELM_DATA_HOME="$D/helm/data"

hm() { # helm ARGS... against this server, never hanging
    timeout "$KC_TIMEOUT" "$HELM" --kubeconfig "$KUBECONFIG_FILE" -n default "$@"
}
jp() { # KIND/NAME JSONPATH
    kc -n default get "$1" -o "jsonpath=$2"
}
endpoint_count() {
    jp endpoints/demo-svc '{range .subsets[*].addresses[*]}{.ip}{"\n"}{end}' | grep -c .
}

check "helm install --wait completes: the Deployment rolls out" \
    expect_out 'STATUS: deployed' hm install demo "$CHART" --set replicas=3 --wait --timeout 60s
check "the Deployment has three available replicas" \
    expect_eq '3' jp deploy/demo-web '{.status.availableReplicas}'
check "the Service's Endpoints list the three pods" \
    wait_for 20 expect_eq 3 endpoint_count
check "the Endpoints point at the chart's port" \
    expect_eq '8080' jp endpoints/demo-svc '{.subsets[0].ports[0].port}'
check "helm upgrade --wait with a new image rolls out" \
    expect_out 'STATUS: deployed' hm upgrade demo "$CHART" --set replicas=3 --set image.tag=1.27 \
    --wait --timeout 60s
check "every pod of the Deployment runs the new image" \
    wait_for 20 expect_eq 'nginx:1.27 nginx:1.27 nginx:1.27 ' \
    jp pods '{range .items[?(@.metadata.labels.app\.kubernetes\.io/instance=="demo")]}{.spec.containers[0].image}{" "}{end}'
check "helm install --wait=watcher completes too" \
    expect_out 'STATUS: deployed' hm install other "$CHART" --set replicas=2 --wait=watcher \
    --timeout 60s
check "helm uninstall" expect_out 'uninstalled' hm uninstall demo other

finish
