#!/usr/bin/env bash
# test_helm.sh - Helm 4 against `fakeapi serve`: install, upgrade (changing
# values, dropping a ConfigMap key and an annotation), history, rollback,
# uninstall, reinstall under the same name and list, of the chart
# fixtures/charts/kh-demo (a CRD in crds/, a custom resource of it, a
# ConfigMap, a Secret, a Service and a Deployment), then the same upgrade and
# rollback of a second release applied client-side, and --wait.  After each step kubectl
# checks what the server holds.  Helm comes from scripts/clients.sh's cache;
# without it the whole script is skipped.  TAP on stdout.
#
# Helm 4 applies server-side (PATCH application/apply-patch+yaml, with a field
# manager): a key or an annotation that the new manifest no longer has is
# removed because the server tracks field ownership (managedFields).
. "$(dirname "$0")/lib.sh"
need_helm

CHART=$(cd "$(dirname "$0")/../../fixtures/charts/kh-demo" && pwd) ||
    bail "fixtures/charts/kh-demo not found"

server_start
D=$SERVER_DIR
# Helm's own state (repositories, cache, plugins) stays in the run's directory.
export HELM_CACHE_HOME="$D/helm/cache" HELM_CONFIG_HOME="$D/helm/config" \
    HELM_DATA_HOME="$D/helm/data"

hm() { # helm ARGS... against this server, never hanging
    timeout "$KC_TIMEOUT" "$HELM" --kubeconfig "$KUBECONFIG_FILE" -n default "$@"
}
jp() { # KIND/NAME JSONPATH
    kc -n default get "$1" -o "jsonpath=$2"
}
# The value of one annotation or data key; dots in KEY are escaped for jsonpath.
cm_data() { jp cm/demo-config "{.data.${1//./\\.}}"; }
cm_ann() { jp cm/demo-config "{.metadata.annotations.${1//./\\.}}"; }
cm_both() { printf '%s|%s' "$(cm_data mode)" "$(cm_data drop)"; }
# helm list's table without the padding of its columns.
helm_list() { hm list | sed 's/ *\t/\t/g; s/ *$//'; }
secret_password() { jp secret/demo-secret '{.data.password}' | base64 -d; }
# Absent: the object (or key) must not be there.  `kubectl get` of a missing
# object fails with NotFound.
gone() { expect_fail 'NotFound|not found' kc -n default get "$@"; }
release_secrets() {
    kc -n default get secrets -l owner=helm,name=demo \
        -o 'jsonpath={range .items[*]}{.metadata.name} {.metadata.labels.status}{"\n"}{end}'
}


check "helm is Helm 4" expect_out '^v4\.' "$HELM" version --short

# --- install -----------------------------------------------------------------
check "helm install" expect_out 'STATUS: deployed' hm install demo "$CHART"
check "the CRD from crds/ is established" \
    expect_out 'True' kc get crd widgets.demo.kube-harness.io \
    -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}'
check "the custom resource has the chart's values" \
    expect_eq '3 red' jp widget/demo-widget '{.spec.size} {.spec.color}'
check "the ConfigMap has both keys" \
    expect_eq 'blue|this key goes away on upgrade' \
    cm_both
check "the ConfigMap has both annotations and Helm's ownership marks" \
    expect_eq 'team-a yes demo default Helm' \
    jp cm/demo-config '{.metadata.annotations.demo\.kube-harness\.io/owner} {.metadata.annotations.demo\.kube-harness\.io/temporary} {.metadata.annotations.meta\.helm\.sh/release-name} {.metadata.annotations.meta\.helm\.sh/release-namespace} {.metadata.labels.app\.kubernetes\.io/managed-by}'
check "the Secret holds the password (stringData stored as data)" \
    expect_eq 's3cret' secret_password
check "the Service maps port 80 to 8080" \
    expect_eq 'ClusterIP 80 8080' jp svc/demo-svc '{.spec.type} {.spec.ports[0].port} {.spec.ports[0].targetPort}'
check "the Deployment has the image and replicas" \
    expect_eq 'nginx:1.25 1' jp deploy/demo-web '{.spec.template.spec.containers[0].image} {.spec.replicas}'
check "the release is recorded as secret sh.helm.release.v1.demo.v1" \
    expect_eq 'sh.helm.release.v1.demo.v1 deployed' release_secrets
check "helm list shows the release deployed at revision 1" \
    expect_out '^demo[[:space:]]+default[[:space:]]+1[[:space:]].*deployed[[:space:]]+kh-demo-0\.1\.0' hm list
check "helm status" expect_out 'STATUS: deployed' hm status demo

# --- upgrade -----------------------------------------------------------------
cat >"$D/upgrade.yaml" <<'EOF'
replicas: 2
image:
  tag: "1.26"
config:
  mode: green
  drop: null
annotations:
  demo.kube-harness.io/temporary: null
widget:
  size: 5
EOF
check "helm upgrade with new values" \
    expect_out 'STATUS: deployed' hm upgrade demo "$CHART" -f "$D/upgrade.yaml"
check "helm get values shows what the upgrade set" \
    expect_out 'tag: "?1\.26' hm get values demo
check "the Deployment has the new image and replicas" \
    expect_eq 'nginx:1.26 2' jp deploy/demo-web '{.spec.template.spec.containers[0].image} {.spec.replicas}'
check "the custom resource has the new size" \
    expect_eq '5 red' jp widget/demo-widget '{.spec.size} {.spec.color}'
check "the ConfigMap has the changed key" expect_eq 'green' cm_data mode
# Removing what the new manifest dropped needs the server to know that Helm's
# field manager owned it (managedFields).
check "Helm's field manager owns the ConfigMap's fields" \
    expect_out 'helm:Apply' kc -n default get cm demo-config --show-managed-fields \
    -o 'jsonpath={range .metadata.managedFields[*]}{.manager}:{.operation} {end}'
check "the ConfigMap key the upgrade dropped is gone" \
    expect_eq '' cm_data drop
check "the annotation the upgrade kept is still there" \
    expect_eq 'team-a' cm_ann demo.kube-harness.io/owner
check "the annotation the upgrade dropped is gone" \
    expect_eq '' cm_ann demo.kube-harness.io/temporary
# The chart's checksum of its ConfigMap in revision REV's manifest.
manifest_checksum() { hm get manifest demo --revision "$1" | sed -n 's/^ *checksum\/config: *//p'; }
checksum_rolled() {
    local r1 r2 live
    r1=$(manifest_checksum 1) r2=$(manifest_checksum 2)
    live=$(jp deploy/demo-web '{.spec.template.metadata.annotations.checksum/config}')
    echo "revision 1: $r1, revision 2: $r2, live: $live"
    [ -n "$r1" ] && [ "$r1" != "$r2" ] && [ "$live" = "$r2" ]
}
check "the pod template has revision 2's config checksum, not revision 1's" checksum_rolled
check "helm list shows revision 2" expect_out '^demo[[:space:]]+default[[:space:]]+2[[:space:]].*deployed' hm list

# --- history and rollback ----------------------------------------------------
check "helm history: revision 1 superseded, 2 deployed" \
    expect_out '^1 .*superseded.*Install complete' hm history demo
check "helm history lists revision 2 as deployed" \
    expect_out '^2 .*deployed.*Upgrade complete' hm history demo
check "helm rollback to revision 1" expect_out 'Rollback was a success' hm rollback demo 1
check "after the rollback the Deployment is back to the first image and replicas" \
    expect_eq 'nginx:1.25 1' jp deploy/demo-web '{.spec.template.spec.containers[0].image} {.spec.replicas}'
check "after the rollback the custom resource is back to size 3" \
    expect_eq '3 red' jp widget/demo-widget '{.spec.size} {.spec.color}'
check "after the rollback the ConfigMap has the first value and the dropped key again" \
    expect_eq 'blue|this key goes away on upgrade' \
    cm_both
check "after the rollback the dropped annotation is back" \
    expect_eq 'yes' cm_ann demo.kube-harness.io/temporary
check "helm history: revision 3 is the rollback, deployed" \
    expect_out '^3 .*deployed.*Rollback to 1' hm history demo
check "three release secrets, the last one deployed" \
    expect_eq 'sh.helm.release.v1.demo.v1 superseded
sh.helm.release.v1.demo.v2 superseded
sh.helm.release.v1.demo.v3 deployed' release_secrets

# --- the same upgrade applied client-side ---------------------------------------
# With --server-side=false Helm sends a three-way strategic merge patch (old
# manifest, new manifest, live object), which removes what the new manifest
# dropped: strict here.
csa() { jp "$1" "$2"; }
check "helm install --server-side=false (a second release)" \
    expect_out 'STATUS: deployed' hm install csa "$CHART" --server-side=false
check "helm upgrade of it (client-side, as it was installed)" \
    expect_out 'STATUS: deployed' hm upgrade csa "$CHART" -f "$D/upgrade.yaml"
check "client-side: the ConfigMap has only the changed key left" \
    expect_eq '{"mode":"green"}' csa cm/csa-config '{.data}'
check "client-side: the dropped annotation is gone, the kept one stays" \
    expect_eq 'team-a|' csa cm/csa-config \
    '{.metadata.annotations.demo\.kube-harness\.io/owner}|{.metadata.annotations.demo\.kube-harness\.io/temporary}'
check "client-side: the Deployment and the custom resource are upgraded" \
    expect_eq 'nginx:1.26 2 5' sh -c "echo \"\$1 \$2\"" _ \
    "$(csa deploy/csa-web '{.spec.template.spec.containers[0].image} {.spec.replicas}')" \
    "$(csa widget/csa-widget '{.spec.size}')"
check "client-side: helm rollback brings the dropped key and annotation back" \
    expect_out 'Rollback was a success' hm rollback csa 1
check "client-side: after the rollback the ConfigMap is as installed" \
    expect_eq 'blue|this key goes away on upgrade|yes' csa cm/csa-config \
    '{.data.mode}|{.data.drop}|{.metadata.annotations.demo\.kube-harness\.io/temporary}'
check "helm list shows both releases" \
    expect_out '^csa[[:space:]]+default[[:space:]]+3[[:space:]].*deployed' hm list

# --- --wait: Helm 4's watcher (watch-list, then kstatus) ---------------------------
# Without a controller a Deployment never becomes ready, so the chart without
# it is ready at once and the chart with it times out on the Deployment.
check "helm install --wait=watcher of what needs no controller" \
    expect_out 'STATUS: deployed' hm install waited "$CHART" --set deployment.enabled=false \
    --wait=watcher --timeout 30s
check "helm install --wait=watcher times out on the Deployment no controller makes ready" \
    expect_fail 'Deployment/default/notready-web not ready\. status: InProgress' \
    hm install notready "$CHART" --wait=watcher --timeout 2s
check "helm list --failed shows that release" \
    expect_out '^notready[[:space:]].*failed' hm list --failed

# --- uninstall -----------------------------------------------------------------
check "helm uninstall" expect_out 'release "demo" uninstalled' hm uninstall demo
check "the ConfigMap is gone" gone cm demo-config
check "the Secret is gone" gone secret demo-secret
check "the Service is gone" gone svc demo-svc
check "the Deployment is gone" gone deploy demo-web
check "the custom resource is gone" gone widget demo-widget
check "the CRD stays (Helm never deletes crds/)" kc get crd widgets.demo.kube-harness.io
check "no release secret is left" expect_eq '' release_secrets
# helm list's names: demo gone, the other releases still there.
demo_unlisted() {
    local names
    names=$(hm list -q) || return 1
    echo "$names"
    ! grep -qx demo <<<"$names" && grep -qx csa <<<"$names"
}
check "helm list no longer has the release" demo_unlisted

# --- reinstall under the same name ---------------------------------------------
check "helm install again under the same name" expect_out 'REVISION: 1' hm install demo "$CHART" \
    --set widget.color=blue
check "the reinstalled custom resource has the new value" \
    expect_eq '3 blue' jp widget/demo-widget '{.spec.size} {.spec.color}'
check "the reinstalled Deployment is there with the chart's defaults" \
    expect_eq 'nginx:1.25 1' jp deploy/demo-web '{.spec.template.spec.containers[0].image} {.spec.replicas}'
check "helm list -o json shows the reinstalled release at revision 1" \
    expect_out '"name":"demo","namespace":"default","revision":"?1"?,' hm list -o json
check "helm uninstall the reinstalled release" expect_out 'uninstalled' hm uninstall demo
check "its Deployment is gone" gone deploy demo-web
check "helm uninstall the client-side release" expect_out 'release "csa" uninstalled' hm uninstall csa
check "its objects are gone" gone cm csa-config
check "helm uninstall the waited and the failed releases" \
    expect_out 'release "notready" uninstalled' hm uninstall waited notready
check "helm list is empty" expect_eq 'NAME	NAMESPACE	REVISION	UPDATED	STATUS	CHART	APP VERSION' \
    helm_list

finish
