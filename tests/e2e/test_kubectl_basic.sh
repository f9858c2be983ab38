#!/usr/bin/env bash
# test_kubectl_basic.sh - everyday kubectl commands against `fakeapi serve`:
# discovery, create/apply/get/label/annotate/patch/replace/scale/delete/wait,
# and the imperative create commands.  TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

# --- discovery -------------------------------------------------------------
check "version shows the server gitVersion" \
    expect_out 'Server Version: v1\.[0-9]+\.[0-9]+' kc version
check "api-resources lists configmaps (cm)" \
    expect_out '^configmaps +cm +v1 +true +ConfigMap' kc api-resources
check "api-resources lists deployments (deploy, apps/v1)" \
    expect_out '^deployments +deploy +apps/v1 +true +Deployment' kc api-resources
check "api-resources lists leases (coordination.k8s.io/v1)" \
    expect_out '^leases +coordination\.k8s\.io/v1 +true +Lease' kc api-resources
check "api-versions lists apps/v1" expect_out '^apps/v1$' kc api-versions
check "api-versions lists coordination.k8s.io/v1" \
    expect_out '^coordination\.k8s\.io/v1$' kc api-versions

# --- create ----------------------------------------------------------------
check "create namespace" expect_out 'namespace/e2e created' kc create namespace e2e
check "get the namespace made by kubectl create namespace" \
    expect_out '^e2e +Active' kc get namespace e2e

cat >"$D/ns.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: basic
EOF
check "create -f namespace" expect_out 'namespace/basic created' kc create -f "$D/ns.yaml"

cat >"$D/cm1.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
  namespace: basic
  labels:
    app: one
data:
  greeting: hello
EOF
check "create -f configmap" expect_out 'configmap/cm1 created' kc create -f "$D/cm1.yaml"
check "create -f again is AlreadyExists" \
    expect_fail 'AlreadyExists|already exists' kc create -f "$D/cm1.yaml"

# --- apply -----------------------------------------------------------------
cat >"$D/deploy.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: basic
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
EOF
check "apply -f creates a deployment" \
    expect_out 'deployment.apps/web created' kc apply -f "$D/deploy.yaml"
sed -e 's/nginx:1.25/nginx:1.27/' -e 's/replicas: 1/replicas: 2/' "$D/deploy.yaml" >"$D/deploy2.yaml"
check "apply -f a change configures it" \
    expect_out 'deployment.apps/web configured' kc apply -f "$D/deploy2.yaml"
check "apply change visible (image)" \
    expect_eq 'nginx:1.27' kc -n basic get deploy web -o 'jsonpath={.spec.template.spec.containers[0].image}'
check "apply change visible (replicas)" \
    expect_eq '2' kc -n basic get deploy web -o 'jsonpath={.spec.replicas}'
check "apply -f unchanged" expect_out 'deployment.apps/web unchanged' kc apply -f "$D/deploy2.yaml"
check "apply keeps last-applied-configuration" \
    expect_out 'nginx:1\.27' kc -n basic get deploy web \
    -o 'jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}'

# --- get -------------------------------------------------------------------
for i in 2 3; do
    cat >"$D/cm$i.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm$i
  namespace: basic
  labels:
    app: other
    idx: "$i"
data:
  k: v$i
EOF
done
cat >"$D/cm0.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm0
  namespace: default
EOF
check "apply -f a configmap in default" expect_out 'configmap/cm0 created' kc apply -f "$D/cm0.yaml"
check "apply -f two more configmaps" \
    expect_out 'configmap/cm3 created' kc apply -f "$D/cm2.yaml" -f "$D/cm3.yaml"
check "get by name" expect_out '^cm1 +1 ' kc -n basic get configmap cm1
check "get shows a table with NAME/DATA/AGE (or NAME/AGE)" \
    expect_out '^NAME +(DATA +)?AGE' kc -n basic get cm
check "get -o json" expect_out '"greeting": "hello"' kc -n basic get cm cm1 -o json
check "get -o json of a list is a List with 3 items" \
    expect_eq 'List 3' kc -n basic get cm -o go-template='{{.kind}} {{len .items}}'
check "get -o yaml" expect_out '^  greeting: hello$' kc -n basic get cm cm1 -o yaml
check "get -o name" expect_eq 'configmap/cm1
configmap/cm2
configmap/cm3' kc -n basic get cm -o name
check "get -A shows the namespace column" \
    expect_out '^basic +cm2 ' kc get cm -A
check "get -A lists across namespaces" \
    expect_out '^default +cm0 ' kc get cm -A
check "get -l app=other" expect_eq 'configmap/cm2
configmap/cm3' kc -n basic get cm -l app=other -o name
check "get -l app!=other" expect_eq 'configmap/cm1' kc -n basic get cm -l 'app!=other' -o name
check "get -l 'idx in (3)'" expect_eq 'configmap/cm3' kc -n basic get cm -l 'idx in (3)' -o name
check "get a missing object is NotFound" \
    expect_fail 'NotFound.*configmaps "nope" not found' kc -n basic get cm nope
check "get deploy by short name" expect_out '^web ' kc -n basic get deploy web

# --- label / annotate ------------------------------------------------------
check "label" expect_out 'configmap/cm1 labeled' kc -n basic label cm cm1 tier=gold
check "label visible" expect_eq 'gold' kc -n basic get cm cm1 -o 'jsonpath={.metadata.labels.tier}'
check "label --overwrite" expect_out 'configmap/cm1 labeled' kc -n basic label cm cm1 tier=silver --overwrite
check "label without --overwrite refuses" \
    expect_fail "already has a value" kc -n basic label cm cm1 tier=bronze
check "label remove (tier-)" expect_out 'configmap/cm1 (un)?labeled' kc -n basic label cm cm1 tier-
check "label removed" expect_eq '' kc -n basic get cm cm1 -o 'jsonpath={.metadata.labels.tier}'
check "annotate" expect_out 'configmap/cm1 annotated' kc -n basic annotate cm cm1 owner=team-a
check "annotation visible" expect_eq 'team-a' kc -n basic get cm cm1 -o 'jsonpath={.metadata.annotations.owner}'

# --- patch -----------------------------------------------------------------
check "patch (strategic) a container image" \
    expect_out 'deployment.apps/web patched' kc -n basic patch deploy web \
    -p '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}}}'
check "strategic patch merged the container by name" \
    expect_eq 'nginx nginx:1.28' kc -n basic get deploy web \
    -o 'jsonpath={.spec.template.spec.containers[*].name} {.spec.template.spec.containers[*].image}'
check "patch (strategic) adds a second container" \
    expect_out 'patched' kc -n basic patch deploy web \
    -p '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}'
# New list items come first, as apimachinery's mergeSortedSlice orders them.
check "strategic patch kept both containers" \
    expect_eq 'side nginx' kc -n basic get deploy web -o 'jsonpath={.spec.template.spec.containers[*].name}'
check "patch --type=merge" expect_out 'configmap/cm1 patched' \
    kc -n basic patch cm cm1 --type=merge -p '{"data":{"greeting":"hi","extra":"x"}}'
check "merge patch result" expect_eq 'hi x' \
    kc -n basic get cm cm1 -o 'jsonpath={.data.greeting} {.data.extra}'
check "patch --type=merge with null deletes a key" expect_out 'patched' \
    kc -n basic patch cm cm1 --type=merge -p '{"data":{"extra":null}}'
check "merge patch null removed the key" expect_eq '' \
    kc -n basic get cm cm1 -o 'jsonpath={.data.extra}'
check "patch --type=json" expect_out 'configmap/cm1 patched' kc -n basic patch cm cm1 --type=json \
    -p '[{"op":"replace","path":"/data/greeting","value":"hey"},{"op":"add","path":"/data/new","value":"n"}]'
check "json patch result" expect_eq 'hey n' \
    kc -n basic get cm cm1 -o 'jsonpath={.data.greeting} {.data.new}'
check "patch --type=json failing test op is rejected" \
    expect_fail 'test|Invalid|invalid|failed' kc -n basic patch cm cm1 --type=json \
    -p '[{"op":"test","path":"/data/greeting","value":"nope"}]'
check "patch a missing object is NotFound" \
    expect_fail 'not found' kc -n basic patch cm nope --type=merge -p '{"data":{"a":"b"}}'

# --- replace ---------------------------------------------------------------
kc -n basic get cm cm2 -o yaml >"$D/cm2-live.yaml" 2>&1 || bail "get cm2 -o yaml"
sed -i 's/^  k: v2$/  k: replaced/' "$D/cm2-live.yaml"
check "replace -f" expect_out 'configmap/cm2 replaced' kc replace -f "$D/cm2-live.yaml"
check "replace result" expect_eq 'replaced' kc -n basic get cm cm2 -o 'jsonpath={.data.k}'
check "replace -f with a stale resourceVersion is a Conflict" \
    expect_fail 'Conflict|modified' kc replace -f "$D/cm2-live.yaml"
check "replace --force" expect_out 'configmap/cm2 replaced' kc replace --force -f "$D/cm2.yaml"
check "replace --force result" expect_eq 'v2' kc -n basic get cm cm2 -o 'jsonpath={.data.k}'

# --- scale -----------------------------------------------------------------
check "scale deployment" expect_out 'deployment.apps/web scaled' kc -n basic scale deploy web --replicas=5
check "scale set spec.replicas" expect_eq '5' kc -n basic get deploy web -o 'jsonpath={.spec.replicas}'
check "scale --current-replicas mismatch refused" \
    expect_fail 'Expected replicas to be 3' kc -n basic scale deploy web --current-replicas=3 --replicas=1

# --- status subresource and wait --for=jsonpath -----------------------------
cat >"$D/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: p1
  namespace: basic
  labels:
    app: pod
spec:
  containers:
  - name: c
    image: busybox
EOF
check "create -f pod" expect_out 'pod/p1 created' kc create -f "$D/pod.yaml"
if need_kubectl 24; then
    bg_start waitrun 20 kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$D/cache" \
        -n basic wait pod/p1 --for=jsonpath='{.status.phase}'=Running --timeout=15s
    sleep 0.5
    check "patch --subresource=status" expect_out 'pod/p1 patched' \
        kc -n basic patch pod p1 --subresource=status --type=merge -p '{"status":{"phase":"Running"}}'
    bg_wait "$waitrun_pid"
    st=$?
    OUT=$(cat "$waitrun_out")
    tap_result $st "wait --for=jsonpath={.status.phase}=Running returns after the status patch"
    check "status patch visible" expect_eq 'Running' kc -n basic get pod p1 -o 'jsonpath={.status.phase}'
    patch_main_then_phase() {
        kc -n basic patch pod p1 --type=merge \
            -p '{"status":{"phase":"Failed"},"metadata":{"labels":{"x":"y"}}}' >/dev/null &&
            kc -n basic get pod p1 -o 'jsonpath={.status.phase}'
    }
    check "patch of the main resource leaves status alone" expect_eq 'Running' patch_main_then_phase
    check "wait --for=jsonpath already true returns at once" \
        expect_out 'condition met' kc -n basic wait pod/p1 --for=jsonpath='{.status.phase}'=Running --timeout=5s
else
    for d in "patch --subresource=status" "wait --for=jsonpath returns after the status patch" \
        "status patch visible" "patch of the main resource leaves status alone" \
        "wait --for=jsonpath already true"; do
        skip "$d" "needs kubectl >= 1.24"
    done
fi

# --- delete ----------------------------------------------------------------
check "delete (kubectl waits for the object to go)" \
    expect_out 'configmap "cm3" deleted' kc -n basic delete cm cm3
check "deleted object is gone" expect_fail 'NotFound|not found' kc -n basic get cm cm3
check "delete a missing object is NotFound" expect_fail 'not found' kc -n basic delete cm cm3
check "delete --ignore-not-found" kc -n basic delete cm cm3 --ignore-not-found
check "delete -l app=other" expect_out 'configmap "cm2" deleted' kc -n basic delete cm -l app=other
check "delete -l left the others" expect_eq 'configmap/cm1' kc -n basic get cm -o name
check "delete deployment" expect_out 'deployment.apps "web" deleted' kc -n basic delete deploy web

# wait --for=delete: a background wait, then the delete.
kc -n basic create -f "$D/cm3.yaml" >/dev/null 2>&1 || bail "recreate cm3"
bg_start waitdel 20 kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$D/cache" \
    -n basic wait cm/cm3 --for=delete --timeout=15s
sleep 0.5
check "delete --wait=false" expect_out 'configmap "cm3" deleted' kc -n basic delete cm cm3 --wait=false
bg_wait "$waitdel_pid"
st=$?
OUT=$(cat "$waitdel_out")
tap_result $st "wait --for=delete returns once the object is deleted"
check "wait --for=delete on a missing object returns at once" \
    kc -n basic wait cm/cm3 --for=delete --timeout=5s

# --- imperative create (protobuf bodies) -----------------------------------
check "create configmap --from-literal" \
    expect_out 'configmap/lit created' kc -n basic create configmap lit --from-literal=a=1 --from-literal=b=two
check "configmap --from-literal data" expect_eq '1 two' \
    kc -n basic get cm lit -o 'jsonpath={.data.a} {.data.b}'
check "create secret generic --from-literal" \
    expect_out 'secret/sec created' kc -n basic create secret generic sec --from-literal=password=s3cret
check "secret data is base64" expect_eq "$(printf s3cret | base64)" \
    kc -n basic get secret sec -o 'jsonpath={.data.password}'
check "create namespace, then delete it" expect_out 'namespace "e2e" deleted' kc delete namespace e2e

# --- where it listens ------------------------------------------------------
# 203.0.113.1 (TEST-NET-3) is no address of this machine: the warning comes
# before the bind fails, and nothing is sent anywhere.
check "serve --host that is not loopback warns on stderr" \
    expect_fail 'warning: --host 203\.0\.113\.1 is not a loopback address' \
    timeout 10 "$E2E_FAKEAPI" serve --host 203.0.113.1 --port 0
bg_start lh 30 "$E2E_FAKEAPI" serve --host localhost --port 0
check "serve --host localhost listens on 127.0.0.1" \
    wait_for 5 grep -q 'serving the Kubernetes API at http://127\.0\.0\.1:' "$lh_out"
check "serve --host localhost does not warn" expect_fail '' grep -q warning "$lh_out"
bg_stop "$lh_pid"

finish
