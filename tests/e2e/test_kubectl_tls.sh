#!/usr/bin/env bash
# test_kubectl_tls.sh - `fakeapi serve --tls --tls-require-client-cert`: the
# kubeconfig it writes trusts its CA and logs in with its client certificate;
# kubectl works through it; a client without the certificate gets no answer.
# TAP on stdout.
. "$(dirname "$0")/lib.sh"

# lib.sh asks /version with curl and no CA, which a TLS server that wants
# client certificates never answers: ask with the kubeconfig instead.
server_answers() {
    timeout 5 kubectl --kubeconfig "$KUBECONFIG_FILE" \
        --cache-dir "$SERVER_DIR/cache" get --raw /version >/dev/null 2>&1
}

server_start --tls --tls-require-client-cert
D=$SERVER_DIR
KC=$KUBECONFIG_FILE

# kubeconfig field -> its base64 data decoded into a file.
field_to_file() {
    sed -n "s/^ *$1: *//p" "$KC" | head -1 | base64 -d >"$2"
}
field_to_file certificate-authority-data "$D/ca.pem"
field_to_file client-certificate-data "$D/client.pem"
field_to_file client-key-data "$D/client-key.pem"

# --- the kubeconfig ----------------------------------------------------------
check "the server URL is https" expect_out '^https://127\.0\.0\.1:[0-9]+$' echo "$SERVER_URL"
check "the kubeconfig trusts a CA (certificate-authority-data)" \
    grep -q '^ *certificate-authority-data: [A-Za-z0-9+/=]' "$KC"
check "the kubeconfig does not skip verification" expect_fail '' grep -q insecure "$KC"
check "the kubeconfig holds a client certificate and key" \
    expect_out '^2$' grep -cE '^ *client-(certificate|key)-data: [A-Za-z0-9+/=]' "$KC"
check "the kubeconfig is private (mode 600)" expect_eq 600 stat -c %a "$KC"
if command -v openssl >/dev/null 2>&1; then
    check "the client certificate is fakeapi-admin in system:masters" \
        expect_out 'O ?= ?system:masters, CN ?= ?fakeapi-admin' \
        openssl x509 -in "$D/client.pem" -noout -subject
    check "the CA signed the client certificate" \
        openssl verify -CAfile "$D/ca.pem" "$D/client.pem"
else
    skip "the client certificate is fakeapi-admin in system:masters" "no openssl"
    skip "the CA signed the client certificate" "no openssl"
fi

# --- kubectl over https --------------------------------------------------------
check "version over https" expect_out 'Server Version: v1\.[0-9]+\.[0-9]+' kc version
check "get namespaces" expect_out '^default +Active' kc get namespaces
check "create configmap" expect_out 'configmap/tls-cm created' \
    kc create configmap tls-cm --from-literal=k=v
check "get the configmap back" expect_eq v kc get configmap tls-cm -o 'jsonpath={.data.k}'
check "apply a manifest" expect_out 'configmap/applied (created|serverside-applied)' \
    kc apply -f - <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: applied
data:
  a: b
EOF
check "delete the configmap" expect_out 'configmap "tls-cm" deleted' kc delete configmap tls-cm

# --- without the client certificate ---------------------------------------------
sed '/client-certificate-data\|client-key-data/d; s/^  user:$/  user:\n    token: nobody/' \
    "$KC" >"$D/nocert.kubeconfig"
# (one request: kubectl's discovery would retry the EOF for 20 s)
check "kubectl without the client certificate gets no answer" \
    expect_fail 'EOF|connect' timeout "$KC_TIMEOUT" kubectl --kubeconfig "$D/nocert.kubeconfig" \
    --cache-dir "$D/cache-nocert" --request-timeout 3s get --raw /version
if command -v curl >/dev/null 2>&1; then
    check "curl with the CA but no client certificate gets no answer" \
        expect_fail '' curl -fsS --max-time 5 --cacert "$D/ca.pem" "$SERVER_URL/version"
    check "curl with the CA and the client certificate" \
        expect_out '"gitVersion"' curl -fsS --max-time 5 --cacert "$D/ca.pem" \
        --cert "$D/client.pem" --key "$D/client-key.pem" "$SERVER_URL/version"
    check "curl without the CA fails verification" \
        expect_fail 'certificate' curl -fsS --max-time 5 "$SERVER_URL/version"
else
    skip "curl with the CA but no client certificate gets no answer" "no curl"
    skip "curl with the CA and the client certificate" "no curl"
    skip "curl without the CA fails verification" "no curl"
fi

finish
