#!/usr/bin/env bash
# test_restart.sh - `fakeapi serve --db FILE` keeps its objects across a
# restart, and resourceVersions keep growing.  TAP on stdout.
. "$(dirname "$0")/lib.sh"

DB="$E2E_TMP/store.db"

server_start --db "$DB"
D=$SERVER_DIR
cat >"$D/objs.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: keep
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: persisted
  namespace: keep
  labels: {app: kept}
data:
  k: v
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: keep
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              count: {type: integer}
EOF
check "apply objects to a --db server" expect_out 'customresourcedefinition.apiextensions.k8s.io/gadgets.example.com created' \
    kc apply -f "$D/objs.yaml"
check "the CRD is established" \
    kc wait crd/gadgets.example.com --for=condition=Established --timeout=10s
printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g1\n  namespace: keep\nspec:\n  count: 7\n' >"$D/g1.yaml"
check "create a custom object" expect_out 'gadget.example.com/g1 created' kc apply -f "$D/g1.yaml"
check "delete an object before the restart" expect_out 'deleted' kc -n keep delete deploy web
check "create it again (new uid)" expect_out 'created' kc apply -f "$D/objs.yaml"
run kc -n keep get cm persisted -o 'jsonpath={.metadata.uid}'
uid_before=$OUT
run kc -n keep get deploy web -o 'jsonpath={.metadata.uid}'
deploy_uid_before=$OUT
# The largest resourceVersion in OUT: the list's own (the store's revision)
# is never below any item's.
max_rv() {
    printf '%s' "$OUT" | grep -o '"resourceVersion":"[0-9]*"' | grep -o '[0-9][0-9]*' |
        sort -n | tail -1
}
run kc get --raw /api/v1/namespaces/keep/configmaps
rv_before=$(max_rv)
[ -n "$rv_before" ] || bail "no list resourceVersion: $OUT"

server_stop
st=$?
tap_result $st "the first server exits with status 0 after SIGTERM"
[ -s "$DB" ]
OUT="$(ls -l "$E2E_TMP")"
tap_result $? "the database file exists"

server_start --db "$DB"
check "after the restart: the namespace is there" expect_out '^keep +Active' kc get ns keep
check "after the restart: the configmap is there" expect_eq 'v' kc -n keep get cm persisted -o 'jsonpath={.data.k}'
check "after the restart: same uid" expect_eq "$uid_before" kc -n keep get cm persisted -o 'jsonpath={.metadata.uid}'
check "after the restart: the deployment is there with its spec" expect_eq "3 $deploy_uid_before" \
    kc -n keep get deploy web -o 'jsonpath={.spec.replicas} {.metadata.uid}'
check "after the restart: label selectors work" expect_eq 'configmap/persisted' kc -n keep get cm -l app=kept -o name
check "after the restart: the CRD's kind is served" expect_eq '7' \
    kc -n keep get gadget g1 -o 'jsonpath={.spec.count}'
check "after the restart: the CRD's kind is in discovery" \
    expect_out '^gadgets +example\.com/v1 +true +Gadget' kc api-resources --api-group=example.com
run kc get --raw /api/v1/namespaces/keep/configmaps
rv_list=$(max_rv)
[ -n "$rv_list" ] && [ "$rv_list" -ge "$rv_before" ]
OUT="before: $rv_before after: $rv_list"
tap_result $? "after the restart: the list resourceVersion did not go back"
check "a write after the restart" expect_out 'patched' \
    kc -n keep patch cm persisted --type=merge -p '{"data":{"k":"after"}}'
run kc -n keep get cm persisted -o 'jsonpath={.metadata.resourceVersion}'
rv_after=$OUT
[ -n "$rv_after" ] && [ "$rv_after" -gt "$rv_before" ]
OUT="before: $rv_before after: $rv_after"
tap_result $? "the new write's resourceVersion is greater than any before the restart"
check "a new object after the restart" expect_out 'created' \
    kc -n keep create -f - <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fresh"}}'
run kc -n keep get cm fresh -o 'jsonpath={.metadata.resourceVersion}'
[ -n "$OUT" ] && [ "$OUT" -gt "$rv_after" ]
tap_result $? "and its resourceVersion is greater still"
check "delete after the restart" expect_out 'deleted' kc -n keep delete cm fresh

server_stop
st=$?
tap_result $st "the second server exits with status 0 after SIGTERM"

server_start --db "$DB"
check "after a second restart: the write is there" expect_eq 'after' \
    kc -n keep get cm persisted -o 'jsonpath={.data.k}'
check "after a second restart: the deleted object stays deleted" \
    expect_fail 'not found' kc -n keep get cm fresh

finish
