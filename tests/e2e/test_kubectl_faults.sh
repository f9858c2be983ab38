#!/usr/bin/env bash
# test_kubectl_faults.sh - `fakeapi serve --faults FILE` seen through kubectl:
# the injected errors reach the user with their status, reason and message;
# what a rule does not match works as usual; the rules and their hit counts
# are on /fakeapi/v1/faults; --trace records the fired faults; a malformed
# fault file stops the server with a message naming the field.  TAP on stdout.
. "$(dirname "$0")/lib.sh"

T=$E2E_TMP
cat >"$T/faults.yaml" <<'EOF'
# kubectl's creates of ConfigMaps fail; updates (PUT) of "locked" conflict.
rules:
  - match: {verb: create, resource: configmaps, client: kubectl}
    action:
      error:
        status: 503
        message: "injected: configmap creation is down for maintenance"
  - match: {verb: update, resource: configmaps, namespace: default, name: locked}
    action:
      error:
        status: 409
        reason: Conflict
        message: "injected: locked was changed by someone else"
  - match: {verb: get, resource: secrets, name: vault}
    when: {first: 1}
    action:
      error: {status: 403, message: "injected: not today"}
EOF
cat >"$T/locked.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: locked
  namespace: default
data:
  v: one
---
apiVersion: v1
kind: Secret
metadata:
  name: vault
  namespace: default
stringData:
  k: v
EOF

server_start --faults "$T/faults.yaml" --load "$T/locked.yaml" --trace "$T/trace.jsonl"
D=$SERVER_DIR

# --- an injected error on create ----------------------------------------------
check "kubectl create configmap shows the injected 503 with its message" \
    expect_fail 'injected: configmap creation is down for maintenance' \
    kc create configmap fresh --from-literal=a=b
check "... and nothing was created" \
    expect_fail 'NotFound|not found' kc get configmap fresh
cat >"$D/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: fromfile
  namespace: default
data:
  a: b
EOF
check "kubectl create -f shows the injected error as ServiceUnavailable" \
    expect_fail 'Error from server \(ServiceUnavailable\).*injected: configmap creation is down' \
    kc create -f "$D/cm.yaml"

# --- a 409 on update ----------------------------------------------------------
cat >"$D/locked2.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: locked
  namespace: default
data:
  v: two
EOF
check "kubectl replace shows the injected 409 Conflict with its message" \
    expect_fail 'Error from server \(Conflict\).*injected: locked was changed by someone else' \
    kc replace -f "$D/locked2.yaml"
check "... and the object is unchanged" \
    expect_eq 'one' kc get configmap locked -o 'jsonpath={.data.v}'
check "what no rule matches works: kubectl label (a patch) on the same object" \
    expect_out 'configmap/locked labeled' kc label configmap locked tier=gold
check "kubectl get configmaps works (only creates are faulted)" \
    expect_out '^locked ' kc get configmaps

# --- when: first 1 --------------------------------------------------------------
check "the first get of the secret is Forbidden with the injected message" \
    expect_fail 'Error from server \(Forbidden\).*injected: not today' kc get secret vault
check "the second get of the secret succeeds" \
    expect_out '^vault +Opaque' kc get secret vault

# --- the control endpoint and the trace -----------------------------------------
check "/fakeapi/v1/faults lists the rules with their hit counts" \
    expect_out '"fired": *2' kc get --raw /fakeapi/v1/faults
check "/metrics counts the faults fired" \
    expect_out '^fakeapi_faults_fired_total\{rule="1"\} 2$' kc get --raw /metrics
check "a rule added through the control endpoint takes effect" \
    expect_out '"fired"' kc create --raw /fakeapi/v1/faults -f - <<<'{"match":{"verb":"delete","resource":"configmaps"},"action":{"error":{"status":500,"reason":"InternalError","message":"injected: deletes are broken"}}}'
check "kubectl delete shows it" \
    expect_fail 'injected: deletes are broken' kc delete configmap locked --wait=false
check "the trace records the fired faults and the requests" \
    expect_out '"kind":"fault"' cat "$T/trace.jsonl"
check "the trace records kubectl's failed create with its code" \
    expect_out '"code":503.*"kind":"request"' cat "$T/trace.jsonl"

# --- a malformed fault file ------------------------------------------------------
cat >"$T/bad.yaml" <<'EOF'
- match: {verb: get}
  action:
    error: {status: 200}
EOF
check "a malformed fault file stops fakeapi serve with the field named" \
    expect_fail 'action\.error\.status' timeout 10 "$E2E_FAKEAPI" serve --port 0 --faults "$T/bad.yaml"

finish
