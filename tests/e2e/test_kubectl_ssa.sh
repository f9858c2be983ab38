#!/usr/bin/env bash
# test_kubectl_ssa.sh - kubectl's server-side apply against fakeapi: fields
# dropped from a manifest go, a second field manager is refused a field
# another owns unless it forces, `--show-managed-fields` lists the managers,
# and `kubectl apply` (client-side) then `--server-side` moves ownership
# to the server-side manager. TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

cat >"$D/cm1.yaml" <<'EOF_'
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  annotations:
    keep: "1"
    drop: "2"
data:
  a: "1"
  b: "2"
EOF_
cat >"$D/cm2.yaml" <<'EOF_'
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  annotations:
    keep: "1"
data:
  a: "1"
EOF_
cat >"$D/cm-alice.yaml" <<'EOF_'
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
data:
  a: changed
EOF_

check "apply --server-side creates" \
    expect_out 'configmap/demo serverside-applied' kc apply --server-side -f "$D/cm1.yaml"
check "apply --server-side again without b and one annotation" \
    expect_out 'configmap/demo serverside-applied' kc apply --server-side -f "$D/cm2.yaml"
check "the dropped data key is gone" \
    expect_eq '{"a":"1"}' kc get configmap demo -o 'jsonpath={.data}'
check "the dropped annotation is gone, the kept one stays" \
    expect_eq '{"keep":"1"}' kc get configmap demo -o 'jsonpath={.metadata.annotations}'
check "a second field manager changing an owned field is refused" \
    expect_fail 'Apply failed with 1 conflict: conflict with "kubectl": \.data\.a' \
    kc apply --server-side --field-manager=alice -f "$D/cm-alice.yaml"
check "the refused apply changed nothing" \
    expect_eq '1' kc get configmap demo -o 'jsonpath={.data.a}'
check "with --force-conflicts it wins" \
    expect_out 'configmap/demo serverside-applied' \
    kc apply --server-side --field-manager=alice --force-conflicts -f "$D/cm-alice.yaml"
check "the forced value is stored" \
    expect_eq 'changed' kc get configmap demo -o 'jsonpath={.data.a}'
check "--show-managed-fields shows both managers" \
    expect_out 'manager: alice' kc get configmap demo -o yaml --show-managed-fields
check "... kubectl keeps the annotation it still applies" \
    expect_out 'manager: kubectl' kc get configmap demo -o yaml --show-managed-fields
check "... alice owns data.a as an Apply" \
    expect_eq 'alice:Apply:{"f:data":{"f:a":{}}}' \
    kc get configmap demo --show-managed-fields \
    -o 'jsonpath={range .metadata.managedFields[?(@.manager=="alice")]}{.manager}:{.operation}:{.fieldsV1}{end}'

cat >"$D/deploy1.yaml" <<'EOF_'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1
        ports:
        - containerPort: 80
EOF_
sed 's/nginx:1/nginx:2/' "$D/deploy1.yaml" >"$D/deploy2.yaml"

check "client-side apply creates a Deployment" \
    expect_out 'deployment.apps/web created' kc apply -f "$D/deploy1.yaml"
check "client-side apply recorded kubectl-client-side-apply" \
    expect_out 'manager: kubectl-client-side-apply' kc get deployment web -o yaml --show-managed-fields
check "apply --server-side over it migrates without conflicts" \
    expect_out 'deployment.apps/web serverside-applied' kc apply --server-side -f "$D/deploy2.yaml"
check "the new image is stored" \
    expect_eq 'nginx:2' kc get deployment web -o 'jsonpath={.spec.template.spec.containers[0].image}'
check "kubectl now owns the container as an Apply" \
    expect_out 'Apply' kc get deployment web --show-managed-fields \
    -o 'jsonpath={range .metadata.managedFields[?(@.manager=="kubectl")]}{.operation}{end}'
check "kubectl-client-side-apply owns nothing any more" \
    expect_eq '' kc get deployment web --show-managed-fields \
    -o 'jsonpath={range .metadata.managedFields[?(@.manager=="kubectl-client-side-apply")]}{.fieldsV1}{end}'
check "the last-applied annotation follows the server-side apply" \
    expect_out 'nginx:2' kc get deployment web \
    -o 'jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}'
sed '/ports:/,/containerPort/d' "$D/deploy2.yaml" >"$D/deploy3.yaml"
check "apply --server-side with the container's port dropped" \
    expect_out 'deployment.apps/web serverside-applied' kc apply --server-side -f "$D/deploy3.yaml"
check "... removes the port" \
    expect_eq '' kc get deployment web -o 'jsonpath={.spec.template.spec.containers[0].ports}'

finish
