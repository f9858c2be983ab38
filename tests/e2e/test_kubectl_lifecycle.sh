#!/usr/bin/env bash
# test_kubectl_lifecycle.sh - how objects go away, seen through kubectl:
# namespace deletion, garbage collection of dependents, finalizers, and
# --dry-run=server.  TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

# --- deleting a namespace removes what was in it ------------------------------
cat >"$D/ns.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: doomed
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: doomed
data:
  k: v
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  namespace: doomed
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: l
  namespace: doomed
spec:
  holderIdentity: me
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: survivor
  namespace: default
EOF
check "apply a namespace with objects in it" expect_out 'lease.coordination.k8s.io/l created' \
    kc apply -f "$D/ns.yaml"
check "the objects are there" expect_eq 'configmap/a
configmap/b' kc -n doomed get cm -o name
check "delete namespace (kubectl waits until it is gone)" \
    expect_out 'namespace "doomed" deleted' kc delete namespace doomed
check "the namespace is gone" expect_fail 'namespaces "doomed" not found' kc get namespace doomed
check "its configmaps are gone" expect_eq '' kc get cm -A -o 'jsonpath={range .items[?(@.metadata.namespace=="doomed")]}{.metadata.name} {end}'
check "its lease is gone" expect_eq '' kc get leases -A -o 'jsonpath={range .items[?(@.metadata.namespace=="doomed")]}{.metadata.name} {end}'
check "objects in other namespaces stay" expect_eq 'configmap/survivor' kc -n default get cm survivor -o name
check "creating in a deleted namespace is NotFound" \
    expect_fail 'namespaces "doomed" not found' kc -n doomed create -f - <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}'

# A namespace held by a finalizer of an object inside stays Terminating.
cat >"$D/ns2.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: held
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: anchor
  namespace: held
  finalizers: [example.com/hold]
EOF
check "apply a namespace holding a finalized object" expect_out 'configmap/anchor created' \
    kc apply -f "$D/ns2.yaml"
check "delete namespace --wait=false" expect_out 'namespace "held" deleted' \
    kc delete namespace held --wait=false
check "the namespace is Terminating" \
    wait_for 5 expect_eq 'Terminating' kc get namespace held -o 'jsonpath={.status.phase}'
check "creating in a Terminating namespace is Forbidden" \
    expect_fail 'Forbidden|being terminated' kc -n held create -f - <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}'
check "remove the finalizer" expect_out 'patched' \
    kc -n held patch cm anchor --type=merge -p '{"metadata":{"finalizers":null}}'
check "then the namespace goes" kc wait namespace/held --for=delete --timeout=10s
check "and the namespace is gone" expect_fail 'not found' kc get namespace held

# --- deleting an owner removes its dependents ---------------------------------
cat >"$D/deploy.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: owner
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: owner}
  template:
    metadata:
      labels: {app: owner}
    spec:
      containers:
      - name: c
        image: busybox
EOF
check "create the owner deployment" expect_out 'created' kc create -f "$D/deploy.yaml"
run kc -n default get deploy owner -o 'jsonpath={.metadata.uid}'
uid=$OUT
[ -n "$uid" ] || bail "no uid for deployment owner: $OUT"
for n in dep1 dep2; do
    cat >"$D/$n.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: $n
  namespace: default
  ownerReferences:
  - apiVersion: apps/v1
    kind: Deployment
    name: owner
    uid: $uid
EOF
done
check "create dependents with an ownerReference to the deployment's uid" \
    expect_out 'configmap/dep2 created' kc create -f "$D/dep1.yaml" -f "$D/dep2.yaml"
check "dependents are kept while the owner exists" \
    expect_eq 'configmap/dep1
configmap/dep2' kc -n default get cm dep1 dep2 -o name
check "delete the owner" expect_out 'deployment.apps "owner" deleted' kc -n default delete deploy owner
check "its dependents are garbage-collected" \
    wait_for 5 expect_fail 'not found' kc -n default get cm dep1
check "all its dependents are gone" wait_for 5 expect_fail 'not found' kc -n default get cm dep2

# Orphan propagation keeps the dependents and strips the ownerReference.
check "create the owner again" expect_out 'created' kc create -f "$D/deploy.yaml"
run kc -n default get deploy owner -o 'jsonpath={.metadata.uid}'
uid=$OUT
sed "s/uid: .*/uid: $uid/" "$D/dep1.yaml" >"$D/dep1b.yaml"
check "create a dependent" expect_out 'created' kc create -f "$D/dep1b.yaml"
check "delete --cascade=orphan" expect_out 'deleted' kc -n default delete deploy owner --cascade=orphan
check "the orphan stays" kc -n default get cm dep1
check "the orphan lost its ownerReference" \
    wait_for 5 expect_eq '' kc -n default get cm dep1 -o 'jsonpath={.metadata.ownerReferences}'

# A dependent whose owner never existed is collected too.
cat >"$D/stray.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: stray
  namespace: default
  ownerReferences:
  - apiVersion: apps/v1
    kind: Deployment
    name: ghost
    uid: 00000000-0000-0000-0000-000000000001
EOF
check "create a dependent of a missing owner" expect_out 'created' kc create -f "$D/stray.yaml"
check "it is garbage-collected" wait_for 5 expect_fail 'not found' kc -n default get cm stray

# --- finalizers hold an object until patched away -----------------------------
cat >"$D/fin.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: fin
  namespace: default
  finalizers: [example.com/keep]
EOF
check "create an object with a finalizer" expect_out 'created' kc create -f "$D/fin.yaml"
check "delete --wait=false" expect_out 'configmap "fin" deleted' kc -n default delete cm fin --wait=false
check "the object is still there" kc -n default get cm fin
check "with a deletionTimestamp" \
    expect_out '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' kc -n default get cm fin -o 'jsonpath={.metadata.deletionTimestamp}'
check "delete with a short wait times out while the finalizer holds it" \
    expect_fail 'timed out|deadline' kc -n default delete cm fin --timeout=2s
check "adding a new finalizer while deleting is refused" \
    expect_fail 'Forbidden|Invalid|finalizer' kc -n default patch cm fin --type=json \
    -p '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/more"}]'
bg_start waitfin 20 kubectl --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$D/cache" \
    -n default wait cm/fin --for=delete --timeout=15s
sleep 0.5
check "patch the finalizer away" expect_out 'patched' \
    kc -n default patch cm fin --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'
bg_wait "$waitfin_pid"
st=$?
OUT=$(cat "$waitfin_out")
tap_result $st "then the object goes (wait --for=delete returns)"
check "the object is gone" expect_fail 'not found' kc -n default get cm fin

# --- --dry-run=server writes nothing ------------------------------------------
cat >"$D/dry.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: dry
  namespace: default
data:
  k: v
EOF
check "create --dry-run=server" expect_out 'configmap/dry created \(server dry run\)' \
    kc create -f "$D/dry.yaml" --dry-run=server
check "dry-run create wrote nothing" expect_fail 'not found' kc -n default get cm dry
check "apply --dry-run=server" expect_out 'configmap/dry created \(server dry run\)' \
    kc apply -f "$D/dry.yaml" --dry-run=server
check "dry-run apply wrote nothing" expect_fail 'not found' kc -n default get cm dry
check "create it for real" expect_out 'configmap/dry created' kc create -f "$D/dry.yaml"
run kc -n default get cm dry -o 'jsonpath={.metadata.resourceVersion}'
rv=$OUT
check "patch --dry-run=server" expect_out 'configmap/dry patched' \
    kc -n default patch cm dry --type=merge -p '{"data":{"k":"changed"}}' --dry-run=server
check "dry-run patch changed nothing" expect_eq "v $rv" \
    kc -n default get cm dry -o 'jsonpath={.data.k} {.metadata.resourceVersion}'
check "label --dry-run=server" expect_out 'labeled \(server dry run\)' \
    kc -n default label cm dry x=y --dry-run=server
check "dry-run label changed nothing" expect_eq '' kc -n default get cm dry -o 'jsonpath={.metadata.labels.x}'
# kubectl 1.34 and later name the namespace: "deleted from default namespace".
check "delete --dry-run=server" expect_out 'deleted( from [a-z0-9-]+ namespace)? \(server dry run\)' \
    kc -n default delete cm dry --dry-run=server
# kubectl sends dryRun in the DeleteOptions body ({"dryRun":["All"]}), not the query.
check "dry-run delete kept the object" expect_eq "v $rv" \
    kc -n default get cm dry -o 'jsonpath={.data.k} {.metadata.resourceVersion}'
check "a dry-run create of an invalid object is still rejected" \
    expect_fail 'Invalid|invalid' kc create --dry-run=server -f - <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name","namespace":"default"}}'

finish
