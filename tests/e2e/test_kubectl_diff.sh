#!/usr/bin/env bash
# test_kubectl_diff.sh - server-side dry run as kubectl uses it: `kubectl
# diff` (a dryRun=All patch per object) shows nothing for what is applied and
# only the changed value otherwise (no resourceVersion hunk), `apply
# --dry-run=server`, `create --dry-run=server` and `delete --dry-run=server`
# change nothing; and the health endpoints as `kubectl get --raw` reads them.
# TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
M="$SERVER_DIR/manifests"
mkdir -p "$M"

cat >"$M/app.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  color: blue
  size: "3"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
EOF
sed 's/color: blue/color: green/' "$M/app.yaml" >"$M/color.yaml"
sed 's/replicas: 2/replicas: 5/' "$M/app.yaml" >"$M/replicas.yaml"

rv() { kc get "$1" "$2" -o 'jsonpath={.metadata.resourceVersion}'; }

check "kubectl apply -f a ConfigMap and a Deployment" kc apply -f "$M/app.yaml"
cm_rv=$(rv configmap settings)
dep_rv=$(rv deployment web)

# With the server's defaults in the live Deployment, kubectl computes a patch
# from the OpenAPI v3 schemas: until they carry the nested types it warns.
check_known "OpenAPI v3 without nested built-in schemas" '^warning: error calculating patch from openapi v3 spec' \
    "kubectl diff of what is applied: exit 0, no output" expect_eq "" kc diff -f "$M/app.yaml"

# kubectl diff exits 1 when there are differences.
diff_of() {
    OUT=$(kc diff -f "$1" 2>&1)
    DIFF_ST=$?
}
diff_of "$M/color.yaml"
[ $DIFF_ST -eq 1 ] && printf '%s\n' "$OUT" | grep -qx -- '-  color: blue' &&
    printf '%s\n' "$OUT" | grep -qx -- '+  color: green'
tap_result $? "kubectl diff after a change shows it (exit 1)"
# Changed lines other than the value itself and the diff's own headers.
others() { printf '%s\n' "$OUT" | grep -E '^[-+]' | grep -vE '^(---|\+\+\+) ' | grep -vE "$1"; }
! printf '%s\n' "$OUT" | grep -E '^[-+] ' | grep -qE 'resourceVersion|managedFields|uid:'
tap_result $? "no resourceVersion, uid or managedFields hunk"
color_out=$OUT
# The changed lines besides the value; fails (printing them) if any.
only_value() {
    local extra
    extra=$(OUT=$color_out others '^[-+]  color: ')
    printf '%s\n' "$extra"
    [ -z "$extra" ]
}
check_known "a ConfigMap has no metadata.generation (built-in defaulting)" '^[-+]  generation: ' \
    "only the changed value" only_value
OUT=$color_out

diff_of "$M/replicas.yaml"
[ $DIFF_ST -eq 1 ] && printf '%s\n' "$OUT" | grep -qx -- '+  replicas: 5' &&
    [ -z "$(others '^[-+]  (replicas|generation): ')" ]
tap_result $? "a Deployment's diff: replicas, and generation as the real server bumps it"

check "kubectl diff wrote nothing" \
    expect_eq "$cm_rv $dep_rv" echo "$(rv configmap settings)" "$(rv deployment web)"
OUT=$(kc get configmap settings -o 'jsonpath={.data.color}')
[ "$OUT" = blue ]
tap_result $? "the ConfigMap still holds the applied value"

check "kubectl apply --dry-run=server of a change" \
    expect_out 'configmap/settings configured \(server dry run\)' kc apply --dry-run=server -f "$M/color.yaml"
check "kubectl apply --dry-run=server -o yaml answers the stored resourceVersion" \
    expect_out "resourceVersion: \"$cm_rv\"" kc apply --dry-run=server -f "$M/color.yaml" -o yaml
check "after apply --dry-run=server: same resourceVersion, same data" \
    expect_eq "$cm_rv blue" kc get configmap settings -o 'jsonpath={.metadata.resourceVersion} {.data.color}'

# (kubectl prints the answer to its second dry run, of the annotation alone.
# Over a client-side-applied object it also warns, as against a real server,
# that moving the last-applied annotation to its own manager conflicted: the
# dry run's annotation is not the stored one.)
check "kubectl apply --server-side --dry-run=server answers the stored resourceVersion" \
    expect_out "^settings $cm_rv\$" kc apply --server-side --dry-run=server -f "$M/color.yaml" \
    -o 'jsonpath={.items[0].metadata.name} {.items[0].metadata.resourceVersion}'
check "after apply --server-side --dry-run=server: unchanged" \
    expect_eq "$cm_rv blue" kc get configmap settings -o 'jsonpath={.metadata.resourceVersion} {.data.color}'

# (and without generation: a ConfigMap has none)
check "kubectl create --dry-run=server answers without uid or resourceVersion" \
    expect_eq "fresh|||" kc create configmap fresh --from-literal=a=b --dry-run=server \
    -o 'jsonpath={.metadata.name}|{.metadata.uid}|{.metadata.resourceVersion}|{.metadata.generation}'
check "and stores nothing" expect_fail 'NotFound|not found' kc get configmap fresh

check "kubectl delete --dry-run=server" \
    expect_out 'configmap "settings" deleted( from default namespace)? \(server dry run\)' \
    kc delete configmap settings --dry-run=server
check "after delete --dry-run=server: still there, same resourceVersion" \
    expect_eq "$cm_rv" kc get configmap settings -o 'jsonpath={.metadata.resourceVersion}'
check "kubectl delete --dry-run=server of a Deployment keeps it" \
    sh -c "$(printf '%q ' timeout 30 kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$SERVER_DIR/cache") delete deployment web --dry-run=server &&
           test \"\$($(printf '%q ' timeout 30 kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$SERVER_DIR/cache") get deployment web -o 'jsonpath={.metadata.resourceVersion}')\" = $dep_rv"

# The health endpoints, as kubectl reads them.
check "kubectl get --raw /readyz?verbose lists the checks and passes" \
    expect_out '^\[\+\]ping ok$' kc get --raw '/readyz?verbose'
check "... and ends 'readyz check passed'" \
    sh -c "$(printf '%q ' timeout 30 kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$SERVER_DIR/cache") get --raw '/readyz?verbose' | tail -1 | grep -qx 'readyz check passed'"
check "kubectl get --raw /livez answers ok" expect_eq "ok" kc get --raw /livez
check "kubectl get --raw /healthz/etcd answers ok" expect_eq "ok" kc get --raw /healthz/etcd

finish
