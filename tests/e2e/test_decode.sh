#!/usr/bin/env bash
# test_decode.sh - bodies and patches that the kind's Go type could not
# decode, sent by kubectl, are refused with the API server's words, and the
# official Python client (when installed) can still list what is stored.
# TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

check "create a valid ConfigMap" \
    expect_out 'configmap/ok created' kc create configmap ok --from-literal=a=b

cat >"$D/bad-data.yaml" <<'EOF_'
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad
data: x
EOF_
check "create -f with data a string is refused" \
    expect_fail 'cannot unmarshal string into Go struct field ConfigMap\.data of type map\[string\]string' \
    kc create -f "$D/bad-data.yaml"
check "apply -f with data a string is refused" \
    expect_fail 'cannot unmarshal string into Go struct field ConfigMap\.data' kc apply -f "$D/bad-data.yaml"

cat >"$D/bad-secret.yaml" <<'EOF_'
apiVersion: v1
kind: Secret
metadata:
  name: bad
data:
  password: not-base64
EOF_
check "create -f with Secret data not base64 is refused" \
    expect_fail 'illegal base64 data at input byte 3' kc create -f "$D/bad-secret.yaml"

check "strategic merge patch making data a string is refused" \
    expect_fail 'cannot restore map from string' kc patch configmap ok -p '{"data":"x"}'
check "merge patch making immutable a string is refused" \
    expect_fail 'cannot unmarshal string into Go struct field ConfigMap\.immutable of type bool' \
    kc patch configmap ok --type=merge -p '{"immutable":"yes"}'
check "JSON patch making labels a string is refused" \
    expect_fail 'cannot unmarshal string into Go struct field ObjectMeta\.metadata\.labels' \
    kc patch configmap ok --type=json -p '[{"op":"add","path":"/metadata/labels","value":"x"}]'

cat >"$D/bad-ok.yaml" <<'EOF_'
apiVersion: v1
kind: ConfigMap
metadata:
  name: ok
data: x
EOF_
check "server-side apply making data a string is refused" \
    expect_fail 'failed to create typed patch object \(default/ok; /v1, Kind=ConfigMap\): \.data: expected map' \
    kc apply --server-side -f "$D/bad-ok.yaml"
check "a patch renaming the object is refused" \
    expect_fail 'the name of the object \(other\) does not match the name on the URL \(ok\)' \
    kc patch configmap ok --type=merge -p '{"metadata":{"name":"other"}}'
check "generateName a/b is refused" \
    expect_fail 'metadata\.generateName: Invalid value: "a/b": a lowercase RFC 1123 subdomain' \
    kc create -f - <<'EOF_'
apiVersion: v1
kind: ConfigMap
metadata:
  generateName: a/b
EOF_

check "only the valid ConfigMap is stored, unchanged" \
    expect_eq 'ok {"a":"b"}' kc get configmaps -o 'jsonpath={range .items[*]}{.metadata.name} {.data}{end}'

PY=/usr/bin/python3
if "$PY" -c 'import kubernetes' >/dev/null 2>&1; then
    check "the Python client lists the namespace's ConfigMaps and Secrets" \
        expect_eq 'ok' "$PY" -c '
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
names = [c.metadata.name for c in v1.list_namespaced_config_map("default").items]
v1.list_namespaced_secret("default")
print(",".join(names))
' "$KUBECONFIG_FILE"
else
    skip "the Python client lists the namespace" "python3-kubernetes is not installed"
fi

finish
